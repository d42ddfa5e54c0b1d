//! Check and plan: hold nodes against their profiles, assign roles, hostnames and addresses.
//!
//! `findings` is the vocabulary of problems; `check` produces them; `roles` decides which
//! node does what; `lock` is `allocations.yaml`, the record that makes planning idempotent:
//! whatever it holds is kept, new nodes get the next free names and addresses, and nothing
//! is renumbered or freed without being asked.

pub mod check;
pub mod findings;
pub mod lock;
pub mod roles;

pub use findings::{Finding, Severity};
pub use lock::{Allocation, Lock, PlanOutcome};

use crate::inventory::Inventory;
use crate::profile::Profiles;
use crate::site::LoadedSite;

/// Everything `check`, `plan` and `render` read.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub site: LoadedSite,
    pub profiles: Profiles,
    pub inventory: Inventory,
    pub inventory_source: crate::files::yaml::Source,
    pub lock: Lock,
}
