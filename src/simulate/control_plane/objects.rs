//! The objects a Harvester fleet keeps in etcd, by kind: how many per VM, volume, replica
//! and node, and how many bytes each takes there. A planned fleet is counted from the
//! model (KubeVirt makes a VMI and a virt-launcher Pod per running VM; Longhorn a Volume,
//! an Engine and one Replica per copy for each disk, with the PVC, PV and
//! VolumeAttachment of the CSI driver; every node has its Node, Lease and Longhorn Node
//! and its system pods). A dump's census replaces the model's count and size wherever it
//! holds the kind, and adds the kinds the model does not know (they stay as they are when
//! clusters are added). Sizes in etcd are the calibrated ones per kind; a dump's measured
//! JSON size is turned into etcd bytes with the calibrated factor of its storage (JSON
//! for custom resources, protobuf for built-in kinds).

use serde::Serialize;

use super::figures::{
    CAL_ATTACHMENT, CAL_CORE_PER_JSON, CAL_CR_PER_JSON, CAL_ENGINE, CAL_POD, CAL_PV, CAL_PVC,
    CAL_REPLICA, CAL_VM, CAL_VMI, CAL_VOLUME, LEASE_BYTES, LONGHORN_NODE_JSON, NODE_JSON,
};
use super::fleet::Counts;
use crate::live::census::Census;

/// What a kind's count follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Per {
    Vm,
    RunningVm,
    Volume,
    AttachedVolume,
    Replica,
    Node,
    /// Virt-launcher pods (one per running VM) and the system pods of every node.
    Pods,
}

/// A kind the model counts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ModelKind {
    /// The census name (`live::census::kind_name`).
    pub(crate) name: &'static str,
    pub(crate) per: Per,
    pub(crate) etcd_bytes: f64,
    /// Where the size comes from, in words.
    pub(crate) size_from: &'static str,
}

/// The kinds the model counts, in the order a VM makes them.
pub(crate) const MODEL: &[ModelKind] = &[
    ModelKind {
        name: "VirtualMachine (kubevirt.io)",
        per: Per::Vm,
        etcd_bytes: CAL_VM,
        size_from: "calibrated",
    },
    ModelKind {
        name: "VirtualMachineInstance (kubevirt.io)",
        per: Per::RunningVm,
        etcd_bytes: CAL_VMI,
        size_from: "calibrated",
    },
    ModelKind {
        name: "Pod (v1)",
        per: Per::Pods,
        etcd_bytes: CAL_POD,
        size_from: "calibrated",
    },
    ModelKind {
        name: "PersistentVolumeClaim (v1)",
        per: Per::Volume,
        etcd_bytes: CAL_PVC,
        size_from: "calibrated",
    },
    ModelKind {
        name: "PersistentVolume (v1)",
        per: Per::Volume,
        etcd_bytes: CAL_PV,
        size_from: "calibrated",
    },
    ModelKind {
        name: "Volume (longhorn.io)",
        per: Per::Volume,
        etcd_bytes: CAL_VOLUME,
        size_from: "calibrated",
    },
    ModelKind {
        name: "Engine (longhorn.io)",
        per: Per::Volume,
        etcd_bytes: CAL_ENGINE,
        size_from: "calibrated",
    },
    ModelKind {
        name: "Replica (longhorn.io)",
        per: Per::Replica,
        etcd_bytes: CAL_REPLICA,
        size_from: "calibrated",
    },
    ModelKind {
        name: "VolumeAttachment (storage.k8s.io)",
        per: Per::AttachedVolume,
        etcd_bytes: CAL_ATTACHMENT,
        size_from: "calibrated",
    },
    ModelKind {
        name: "Node (v1)",
        per: Per::Node,
        etcd_bytes: NODE_JSON * CAL_CORE_PER_JSON,
        size_from: "reference x factor",
    },
    ModelKind {
        name: "Lease (coordination.k8s.io)",
        per: Per::Node,
        etcd_bytes: LEASE_BYTES,
        size_from: "estimate",
    },
    ModelKind {
        name: "Node (longhorn.io)",
        per: Per::Node,
        etcd_bytes: LONGHORN_NODE_JSON * CAL_CR_PER_JSON,
        size_from: "reference x factor",
    },
];

/// How many of a kind the counts make.
pub(crate) fn model_count(per: Per, c: &Counts, system_pods_per_node: f64) -> f64 {
    match per {
        Per::Vm => c.vms,
        Per::RunningVm => c.running,
        Per::Volume => c.volumes,
        Per::AttachedVolume => c.attached,
        Per::Replica => c.replicas,
        Per::Node => c.nodes,
        Per::Pods => c.running + c.nodes * system_pods_per_node,
    }
}

/// Whether a census kind (`Kind (group)`) is a built-in kind stored as protobuf.
fn built_in(name: &str) -> bool {
    let group = name
        .rsplit_once('(')
        .map_or("", |(_, g)| g.trim_end_matches(')'));
    group == "v1"
        || group.ends_with(".k8s.io")
        || ["apps", "batch", "autoscaling", "policy"].contains(&group)
}

/// etcd bytes of one object of `name` that measures `json` bytes as compact JSON.
pub(crate) fn etcd_bytes_of_json(name: &str, json: f64) -> f64 {
    json * if built_in(name) {
        CAL_CORE_PER_JSON
    } else {
        CAL_CR_PER_JSON
    }
}

/// One kind of the fleet's objects.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KindRow {
    pub kind: String,
    /// Objects now.
    pub count: f64,
    /// Where the count comes from: `dump` (the census), `model`, or `model (the dump has
    /// none)`.
    pub count_from: String,
    /// Bytes one object takes in etcd (key and value), and where that comes from:
    /// `calibrated`, `estimate`, `reference x factor` (a reference object's JSON size
    /// times the calibrated etcd bytes per JSON byte of its storage), `dump x factor`.
    pub etcd_bytes: f64,
    pub size_from: String,
    /// Objects per VM and per volume now (`None` when the fleet has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_vm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_volume: Option<f64>,
}

/// The objects of the fleet, and how each kind grows.
#[derive(Debug, Clone)]
pub(crate) struct Objects {
    pub(crate) rows: Vec<KindRow>,
    /// Per row: what it grows with (`None`: it stays as it is).
    pub(crate) grows: Vec<Option<Per>>,
    pub(crate) system_pods_per_node: f64,
}

impl Objects {
    /// The model's kinds for counts `c`, with a census's counts and sizes where it has
    /// the kind, and its other kinds as they are.
    pub(crate) fn new(c: &Counts, system_pods_per_node: f64, census: Option<&Census>) -> Objects {
        let mut rows = Vec::new();
        let mut grows = Vec::new();
        let per = |x: f64, of: f64| (of > 0.0).then(|| x / of);
        let mut seen = std::collections::BTreeSet::new();
        for k in MODEL {
            let modelled = model_count(k.per, c, system_pods_per_node);
            let tally = census.and_then(|s| s.kinds.get(k.name));
            let (count, count_from, bytes, size_from) = match (census, tally) {
                (Some(_), Some(t)) if t.count > 0 => (
                    t.count as f64,
                    "dump".to_string(),
                    etcd_bytes_of_json(k.name, t.json_bytes as f64 / t.count as f64),
                    "dump x factor".to_string(),
                ),
                (Some(_), _) => (
                    modelled,
                    "model (the dump has none)".to_string(),
                    k.etcd_bytes,
                    k.size_from.to_string(),
                ),
                (None, _) => (
                    modelled,
                    "model".to_string(),
                    k.etcd_bytes,
                    k.size_from.to_string(),
                ),
            };
            seen.insert(k.name);
            rows.push(KindRow {
                kind: k.name.to_string(),
                count,
                count_from,
                etcd_bytes: bytes,
                size_from,
                per_vm: per(count, c.vms),
                per_volume: per(count, c.volumes),
            });
            grows.push(Some(k.per));
        }
        if let Some(s) = census {
            for (name, t) in &s.kinds {
                if seen.contains(name.as_str()) || t.count == 0 {
                    continue;
                }
                let count = t.count as f64;
                rows.push(KindRow {
                    kind: name.clone(),
                    count,
                    count_from: "dump".into(),
                    etcd_bytes: etcd_bytes_of_json(name, t.json_bytes as f64 / count),
                    size_from: "dump x factor".into(),
                    per_vm: per(count, c.vms),
                    per_volume: per(count, c.volumes),
                });
                grows.push(None);
            }
        }
        Objects {
            rows,
            grows,
            system_pods_per_node,
        }
    }

    /// Count of each row after `n` more clusters of `d`.
    pub(crate) fn counts_at(&self, d: &Counts, n: f64) -> Vec<f64> {
        self.rows
            .iter()
            .zip(&self.grows)
            .map(|(r, g)| match g {
                Some(per) => r.count + n * model_count(*per, d, self.system_pods_per_node),
                None => r.count,
            })
            .collect()
    }

    /// Bytes objects of `counts` (of `counts_at`) take in etcd, keys and values.
    pub(crate) fn stored(&self, counts: &[f64]) -> f64 {
        counts
            .iter()
            .zip(&self.rows)
            .map(|(c, r)| c * r.etcd_bytes)
            .sum()
    }

    /// The kind with most objects among `counts` (of `counts_at`): (name, count).
    pub(crate) fn largest(&self, counts: &[f64]) -> (String, f64) {
        counts
            .iter()
            .zip(&self.rows)
            .max_by(|a, b| a.0.total_cmp(b.0).then(b.1.kind.cmp(&a.1.kind)))
            .map_or((String::new(), 0.0), |(c, r)| (r.kind.clone(), *c))
    }

    /// The etcd bytes of a model kind's object (the dump's when it measured it).
    pub(crate) fn bytes_of(&self, name: &str) -> f64 {
        self.rows
            .iter()
            .find(|r| r.kind == name)
            .map_or(0.0, |r| r.etcd_bytes)
    }
}
