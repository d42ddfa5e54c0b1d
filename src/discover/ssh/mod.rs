//! SSH discovery: what the operating system sees (names, by-id paths, live links), merged
//! with what the BMC said.
//!
//! `exec` connects and runs the probe; `probe` holds the script and its parsers;
//! `reconcile` merges the OS view into the Redfish record of the same server.

pub mod exec;
pub mod fold;
pub mod probe;
pub mod reconcile;
mod run;
pub mod site_file;

pub use run::{HostOutcome, HostSpec, HostSpecError, Options, discover, node_from_probe};
