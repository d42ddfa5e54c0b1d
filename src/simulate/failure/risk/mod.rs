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
mod strata;

pub use closed_form::p_loss_copyset;
pub use closed_form::p_loss_random;
pub(crate) use closed_form::{fixed_window_rate, mttdl, mttdl_chain, p_loss_independent, wilson};
pub use conditional::Stratum;
pub use copysets::{Copysets, EXACT_BUDGET, copysets_of, what_if_monte_carlo};
pub use estimate::Rate;
pub use estimate::estimate;
pub use estimate::expected_vm_downtime;
pub(crate) use estimate::{EXACT_EXPECTATION, RiskResult, data_loss};
pub use fleet::fleet_risk;
pub use monte_carlo::{FleetRisk, HOURS_PER_YEAR, Plain, monte_carlo};
