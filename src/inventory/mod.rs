//! The inventory: one record per physical server, discovered facts kept apart from what
//! people annotate.
//!
//! `model` is plain serde data with the exact field names of `nodes.yaml`; `store` reads and
//! writes the file (atomically, through `fsio`). Discovery modules (Redfish, SSH) produce
//! records; the merge rules that keep annotations live with the store.

pub(crate) mod model;
pub mod store;
pub(crate) mod text;
pub use model::DerivedPath;
pub use model::Inventory;
pub use model::LinkState;
pub use model::Node;
pub use model::Protocol;
pub use model::Stale;
pub(crate) use model::{
    Bios, BiosSetting, BiosState, Bmc, Cpu, Disk, Firmware, Gpu, Lldp, LldpPeer, LldpSource, Media,
    Nic, PathOrigin, Sources,
};
mod stamp;

pub(crate) use stamp::utc_now;
