//! The risk of losing data: the fleet Monte Carlo, copysets, and the closed forms they are
//! checked against.

mod closed_form;
mod copysets;
mod fleet;
mod monte_carlo;

pub use closed_form::{
    choose, key, mttdl, mttdl_monte_carlo, p_loss_copyset, p_loss_independent, p_loss_random,
    wilson,
};
pub use copysets::{Copysets, copysets_of, what_if_monte_carlo};
pub use fleet::fleet_risk;
pub use monte_carlo::{FleetRisk, RiskResult, monte_carlo};
