//! Placement like the real schedulers: the workload, the free table, where KubeVirt's
//! scheduler puts a VM and where Longhorn puts a replica.

mod free;
mod placement;
mod replica_scheduler;
mod vm_scheduler;
mod workload;

pub use free::{Free, StorageRules};
pub use placement::Placement;
pub use replica_scheduler::{
    Dirty, INDEX_FROM, RoomIndex, best_disk, pick_disk, pick_disk_indexed,
};
pub use vm_scheduler::{ScoreIndex, pick_node, pick_node_indexed};
pub use workload::{Vm, Volume, workload};
