//! The fleet a study runs on: hosts in racks and power domains, from a scenario's node
//! classes, a site's inventory, or the running fleet of a dump with its settings.

mod dump_settings;
mod expiries;
mod from_dump;
mod from_site;
mod pins;
mod topology;

pub(crate) use dump_settings::{Assumption, platform};
pub use expiries::Expiry;
pub(crate) use expiries::scheduled as scheduled_expiries;
pub use from_dump::{AdoptError, LiveFleet, LiveSummary, adopt, summary};
pub(crate) use from_site::site_topology;
pub(crate) use pins::{VmPins, is_management};
pub use topology::{Host, Tags, Topology};
