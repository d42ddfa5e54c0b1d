//! What is left on every node and disk, and Longhorn's storage rules for one replica on
//! one disk (storage-minimal-available-percentage, storage-over-provisioning-percentage).

use super::workload::Volume;
use crate::simulate::fleet::Topology;
use crate::simulate::scenario::Platform;

/// Free capacity of every node; cloned per failure scenario.
#[derive(Debug, Clone)]
pub struct Free {
    pub cpu: Vec<f64>,
    pub mem: Vec<f64>,
    /// Per node, per disk: (scheduled bytes, used bytes).
    pub(crate) disk: Vec<Vec<(f64, f64)>>,
    /// Per node: the room left on its emptiest disk (kept in step with `disk`).
    pub(crate) node_room: Vec<f64>,
}

impl Free {
    /// A copy of the nodes' CPU and memory only, no disks: all that restarting VMs reads
    /// (`pick_node`, `pick_node_indexed`).
    pub(crate) fn cpu_and_memory(&self) -> Free {
        Free {
            cpu: self.cpu.clone(),
            mem: self.mem.clone(),
            disk: Vec::new(),
            node_room: Vec::new(),
        }
    }

    /// Record a replica on (node, disk).
    pub(crate) fn add_replica(&mut self, topo: &Topology, n: usize, d: usize, vol: &Volume) {
        self.disk[n][d].0 += vol.size;
        self.disk[n][d].1 += vol.data;
        self.node_room[n] = self.room(topo, n);
    }

    /// Forget a replica on (node, disk).
    pub(crate) fn remove_replica(&mut self, topo: &Topology, n: usize, d: usize, vol: &Volume) {
        self.disk[n][d].0 -= vol.size;
        self.disk[n][d].1 -= vol.data;
        self.node_room[n] = self.room(topo, n);
    }

    /// The room left on node n's emptiest disk that takes replicas (a disk Longhorn closed
    /// to scheduling has infinite sizes scheduled and offers none).
    pub(crate) fn room(&self, topo: &Topology, n: usize) -> f64 {
        topo.hosts[n]
            .disks
            .iter()
            .zip(&self.disk[n])
            .filter(|(_, s)| s.0.is_finite())
            .map(|(max, s)| max - s.1)
            .fold(0.0, f64::max)
    }
}

/// How Longhorn chooses among the disks a new replica may go on
/// (`scheduler/replica_scheduler.go` `scheduleReplicaToDisk`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DiskChoice {
    /// Up to v1.10: the disk with the most `storageAvailable - storageReserved`
    /// (`getDiskWithMostUsableStorage`); what is merely scheduled does not count, so in a
    /// burst the same disk wins until over-provisioning refuses it.
    MostAvailable,
    /// From v1.11: the node, then the disk, whose usable space
    /// (`available - reserved - scheduled`) after taking the replica leaves the candidates
    /// most even (`getDiskWithMostBalanceScore`, `selectBestNode`, `selectBestDisk`).
    BalanceScore,
}

impl DiskChoice {
    /// The rule of a Longhorn version.
    pub(crate) fn of(longhorn: (u32, u32)) -> DiskChoice {
        if longhorn >= (1, 11) {
            DiskChoice::BalanceScore
        } else {
            DiskChoice::MostAvailable
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            DiskChoice::MostAvailable => {
                "the disk with the most available space less its reserved space as it was before the failure (getDiskWithMostUsableStorage; the new, still empty replicas do not lower it), so the same disk takes one replica after another until the over-provisioning rule refuses it"
            }
            DiskChoice::BalanceScore => {
                "the node, then the disk, that leaves usable space most even (getDiskWithMostBalanceScore)"
            }
        }
    }
}

/// Longhorn's rules for where one replica may go: the storage rules per disk, the
/// anti-affinity settings, and how a disk is chosen among those allowed.
#[derive(Debug, Clone, Copy)]
pub struct StorageRules {
    pub(crate) min_available: f64,
    pub(crate) overprovision: f64,
    /// `replica-zone-soft-anti-affinity`, `replica-soft-anti-affinity`,
    /// `replica-disk-soft-anti-affinity`.
    pub(crate) zone_soft: bool,
    pub(crate) node_soft: bool,
    pub(crate) disk_soft: bool,
    pub choice: DiskChoice,
}

impl StorageRules {
    pub(crate) fn from(p: &Platform) -> StorageRules {
        StorageRules {
            min_available: p.minimal_available_pct / 100.0,
            overprovision: p.overcommit_storage_pct / 100.0,
            zone_soft: p.replica_zone_soft_anti_affinity,
            node_soft: p.replica_soft_anti_affinity,
            disk_soft: p.replica_disk_soft_anti_affinity,
            choice: match p.replica_disk_choice {
                Some(crate::simulate::scenario::DiskRule::MostAvailable) => {
                    DiskChoice::MostAvailable
                }
                Some(crate::simulate::scenario::DiskRule::BalanceScore) => DiskChoice::BalanceScore,
                None => DiskChoice::of(crate::simulate::scenario::longhorn_of(p).0),
            },
        }
    }

    /// Whether a replica of `size` bytes (nominal) holding `data` bytes (actual) may go on a
    /// disk of `max` bytes that has `sched` bytes scheduled and `used` bytes used: the data
    /// must leave more than the minimal available share free, and the scheduled sizes must
    /// stay within the over-provisioning share (Longhorn's `IsSchedulableToDisk`). Placement,
    /// headroom re-homing and the rebuild model all ask this one question, per disk.
    pub(crate) fn fits(&self, max: f64, (sched, used): (f64, f64), size: f64, data: f64) -> bool {
        max > 0.0
            && max - used - data > max * self.min_available
            && sched + size <= max * self.overprovision
    }
}
