//! Check and plan: hold nodes against their profiles, assign roles, hostnames and addresses.
//!
//! `findings` is the vocabulary of problems; `check` produces them; `roles` decides which
//! node does what; `allocations` is `allocations.yaml` (the lock), the record that makes planning idempotent,
//! and `allocate` the algorithm that extends it:
//! whatever it holds is kept, new nodes get the next free names and addresses, and nothing
//! is renumbered or freed without being asked.

pub(crate) mod acknowledge;
pub mod allocate;
pub(crate) mod allocations;
pub mod bios;
pub mod cabling;
mod catalogue_check;
pub mod check;
pub mod compliance;
pub(crate) mod derive;
pub(crate) mod disk_paths;
pub mod drift;
pub(crate) mod findings;
pub(crate) mod fit;
pub(crate) mod inputs;
#[cfg(test)]
mod plan_tests;
pub(crate) mod roles;

pub use allocations::{Allocation, Lock};
pub use findings::{Finding, Severity};
pub use inputs::{Inputs, LoadError, load_inputs};
