//! SSH discovery: what the operating system sees (names, by-id paths, live links), merged
//! with what the BMC said.
//!
//! `exec` connects and runs the probe; `probe` holds the script and its parsers;
//! `reconcile` merges the OS view into the Redfish record of the same server.

pub(crate) mod exec;
pub(crate) mod fold;
pub(crate) mod probe;
pub(crate) mod reconcile;
mod run;
pub(crate) mod site_file;

pub(crate) use run::{HostOutcome, HostSpec, Options, discover};
