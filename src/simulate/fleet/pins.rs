//! What the rolling upgrade needs to know of a running fleet beyond its placement: per VM,
//! what pins it to its node or keeps it from live-migrating; per node, its labels and
//! whether it is a management node; the volumes' names and wanted replica counts; and
//! Harvester's `kubevirt-migration` setting.

use std::collections::BTreeMap;

use crate::live::{NodeRequirement, Vmi};

/// Per VM: read from its VMI (all empty for a VM that only owns a volume).
#[derive(Debug, Clone, Default)]
pub struct VmPins {
    pub host_devices: Vec<String>,
    pub node_selector: Vec<(String, String)>,
    pub node_affinity: Vec<Vec<NodeRequirement>>,
    /// `spec.evictionStrategy`; `None`: unset (the cluster default).
    pub eviction: Option<String>,
    /// LiveMigratable False: its reason.
    pub migratable_reason: Option<String>,
}

impl VmPins {
    pub fn of(v: &Vmi) -> VmPins {
        VmPins {
            host_devices: v.host_devices.clone(),
            node_selector: v.node_selector.clone(),
            node_affinity: v.node_affinity.clone(),
            eviction: v.eviction_strategy.clone(),
            migratable_reason: v.migratable_reason.clone(),
        }
    }

    /// Whether a node with `labels` meets the VM's node selector and required node
    /// affinity (no terms: any node).
    pub fn fits(&self, labels: &BTreeMap<String, String>) -> bool {
        self.node_selector
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && (self.node_affinity.is_empty()
                || self
                    .node_affinity
                    .iter()
                    .any(|t| t.iter().all(|r| r.matches(labels))))
    }
}

/// The rolling upgrade's view of the fleet's nodes and volumes.
#[derive(Debug, Clone, Default)]
pub struct FleetPins {
    /// Per VM, in placement order.
    pub vms: Vec<VmPins>,
    /// Per host: its labels.
    pub labels: Vec<BTreeMap<String, String>>,
    /// Witness nodes (no VMs, no replicas): upgraded in the etcd tier.
    pub witnesses: Vec<String>,
    /// Per volume: its name and `spec.numberOfReplicas` (0: not stated).
    pub volume_names: Vec<String>,
    pub wanted_replicas: Vec<u32>,
    /// Harvester's `kubevirt-migration` setting (JSON), when the dump has one.
    pub kubevirt_migration: Option<String>,
}

/// Whether a node's labels make it a management node (control plane or etcd).
pub fn is_management(labels: &BTreeMap<String, String>) -> bool {
    [
        "node-role.kubernetes.io/control-plane",
        "node-role.kubernetes.io/master",
        "node-role.kubernetes.io/etcd",
    ]
    .iter()
    .any(|k| labels.get(*k).is_some_and(|v| v == "true"))
}
