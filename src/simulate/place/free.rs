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
    pub disk: Vec<Vec<(f64, f64)>>,
    /// Per node: the room left on its emptiest disk (kept in step with `disk`).
    pub node_room: Vec<f64>,
}

impl Free {
    /// Record a replica on (node, disk).
    pub fn add_replica(&mut self, topo: &Topology, n: usize, d: usize, vol: &Volume) {
        self.disk[n][d].0 += vol.size;
        self.disk[n][d].1 += vol.data;
        self.node_room[n] = self.room(topo, n);
    }

    /// Forget a replica on (node, disk).
    pub fn remove_replica(&mut self, topo: &Topology, n: usize, d: usize, vol: &Volume) {
        self.disk[n][d].0 -= vol.size;
        self.disk[n][d].1 -= vol.data;
        self.node_room[n] = self.room(topo, n);
    }

    /// The room left on node n's emptiest disk that takes replicas (a disk Longhorn closed
    /// to scheduling has infinite sizes scheduled and offers none).
    pub fn room(&self, topo: &Topology, n: usize) -> f64 {
        topo.hosts[n]
            .disks
            .iter()
            .zip(&self.disk[n])
            .filter(|(_, s)| s.0.is_finite())
            .map(|(max, s)| max - s.1)
            .fold(0.0, f64::max)
    }
}

/// Longhorn's storage rules for one replica on one disk.
#[derive(Debug, Clone, Copy)]
pub struct StorageRules {
    pub min_available: f64,
    pub overprovision: f64,
}

impl StorageRules {
    pub fn from(p: &Platform) -> StorageRules {
        StorageRules {
            min_available: p.minimal_available_pct / 100.0,
            overprovision: p.overcommit_storage_pct / 100.0,
        }
    }

    /// Whether a replica of `size` bytes (nominal) holding `data` bytes (actual) may go on a
    /// disk of `max` bytes that has `sched` bytes scheduled and `used` bytes used: the data
    /// must leave more than the minimal available share free, and the scheduled sizes must
    /// stay within the over-provisioning share (Longhorn's `IsSchedulableToDisk`). Placement,
    /// headroom re-homing and the rebuild model all ask this one question, per disk.
    pub fn fits(&self, max: f64, (sched, used): (f64, f64), size: f64, data: f64) -> bool {
        max > 0.0
            && max - used - data > max * self.min_available
            && sched + size <= max * self.overprovision
    }

    /// Replica data a disk can take at most under the minimal-available rule.
    pub fn data_capacity(&self, max: f64) -> f64 {
        max * (1.0 - self.min_available)
    }
}
