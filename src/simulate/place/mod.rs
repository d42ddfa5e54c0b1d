//! Placement like the real schedulers: the workload, the free table, where KubeVirt's
//! scheduler puts a VM and where Longhorn puts a replica.

mod free;
mod migration;
mod placement;
mod replenish;
#[cfg(test)]
mod replenish_tests;
mod replica_scheduler;
mod room_index;
mod vm_scheduler;
mod workload;

pub use free::{DiskChoice, Free, StorageRules};
pub use migration::{MigrationConfig, MigrationLink, Outcome, copy_rate, evacuate, migrate};
pub use placement::{INDEX_FROM, Placement};
pub(crate) use replenish::{BurstHow, BurstIndex, Replacement, create_burst, replace_lost};
pub(crate) use replica_scheduler::{best_disk, mix, node_open, pick_disk};
pub(crate) use vm_scheduler::{REINDEX_AFTER, ScoreIndex, pick_node, pick_node_indexed};
pub use workload::{Vm, Volume, workload};
