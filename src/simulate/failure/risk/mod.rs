//! The risk of losing data: the fleet model estimated by conditional Monte Carlo (the
//! rare-event method) or simulated plainly, copysets, and the closed forms they are checked
//! against.

mod closed_form;
mod conditional;
mod copysets;
mod cross_checks;
mod estimate;
mod fleet;
mod monte_carlo;

pub use closed_form::{
    choose, fixed_window_rate, key, mttdl, mttdl_chain, mttdl_monte_carlo, p_loss_copyset,
    p_loss_independent, p_loss_random, wilson,
};
pub use conditional::{Counted, RareEstimate, Stratum, conditional};
pub use copysets::{Copysets, EXACT_BUDGET, copysets_of, what_if_monte_carlo};
pub use estimate::{
    CONDITIONAL, EXACT_EXPECTATION, PLAIN, Rate, RiskResult, data_loss, estimate,
    expected_vm_downtime,
};
pub use fleet::fleet_risk;
pub use monte_carlo::{FleetRisk, HOURS_PER_YEAR, Plain, monte_carlo};
