//! The inventory: one record per physical server, discovered facts kept apart from what
//! people annotate.
//!
//! `model` is plain serde data with the exact field names of `nodes.yaml`; `store` reads and
//! writes the file (atomically, through `fsio`). Discovery modules (Redfish, SSH) produce
//! records; the merge rules that keep annotations live with the store.

pub mod model;
pub mod store;
pub mod text;
pub use model::{
    Annotations, Bios, BiosSetting, BiosState, Bmc, Cpu, DerivedPath, Disk, Firmware, Gpu,
    Inventory, LinkState, Media, Nic, Node, PathOrigin, Protocol, Sources, Stale,
};
mod stamp;

pub use stamp::{rfc3339, utc_now};
