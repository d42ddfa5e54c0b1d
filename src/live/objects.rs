//! The objects of a dump, typed: the fields the capacity analyses use, each read as
//! untrusted text (absent, `"null"`, floats and quantities all handled), and findings for
//! what does not add up (a VMI on a node the dump does not have, a replica on an unknown
//! disk, a volume with fewer replicas than it asks for).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::pins::NodeRequirement;

/// One object of the dump, with where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Object<'f, J = Value> {
    pub(crate) file: &'f str,
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
    pub(crate) value: J,
    /// Its size as compact JSON, `managedFields` left out.
    pub(crate) bytes: u64,
}

impl<J> Object<'_, J> {
    /// `namespace/name` or `name`, as errors name it.
    pub(crate) fn id(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Node {
    pub name: String,
    /// Allocatable CPU, millicores (the scheduler's view).
    pub cpu_milli: Option<f64>,
    pub memory_bytes: Option<f64>,
    pub(crate) pods: Option<f64>,
    pub(crate) zone: Option<String>,
    /// `spec.unschedulable` (cordoned).
    pub(crate) cordoned: bool,
    /// `harvesterhci.io/maintain-status`: `running` or `completed`.
    pub(crate) maintenance: Option<String>,
    pub ready: Option<bool>,
    /// A `DiskPressure`, `PIDPressure`, `MemoryPressure` or `NetworkUnavailable` condition
    /// is True: Longhorn marks the node not Ready (`KubernetesNodePressure`).
    pub(crate) pressure: bool,
    /// Label `kubevirt.io/schedulable`: `false` when virt-handler is not ready there, so no
    /// VMI can land on it.
    pub(crate) vm_schedulable: Option<bool>,
    /// Witness nodes run etcd only and hold no VMs.
    pub witness: bool,
    /// Its labels (the rolling upgrade reads roles from them and matches VMs' node
    /// selectors and required node affinity against them).
    #[serde(skip)]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Vmi {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) node: Option<String>,
    pub(crate) phase: Option<String>,
    pub cpu_request_milli: Option<f64>,
    pub(crate) memory_request_bytes: Option<f64>,
    pub(crate) cpu_limit_milli: Option<f64>,
    pub(crate) memory_limit_bytes: Option<f64>,
    /// cores x sockets x threads, a 0 counting as 1.
    pub vcpus: u32,
    /// `guestcluster.harvesterhci.io/name`: the Rancher cluster it is a node of.
    pub guest_cluster: Option<String>,
    /// `LiveMigratable` condition; `None` when the VMI does not say.
    pub(crate) live_migratable: Option<bool>,
    pub(crate) claims: Vec<String>,
    /// The label selector of a required pod anti-affinity on `kubernetes.io/hostname`
    /// (VMs matching it may not share a host), as canonical JSON.
    pub anti_affinity: Option<String>,
    /// The LiveMigratable condition's reason when it is False.
    #[serde(skip)]
    pub migratable_reason: Option<String>,
    /// `spec.evictionStrategy` (unset: the cluster's, `None` in KubeVirt).
    #[serde(skip)]
    pub eviction_strategy: Option<String>,
    /// Host devices and GPUs (vGPUs) passed through: `hostDevice x (vendor/dev)`.
    #[serde(skip)]
    pub host_devices: Vec<String>,
    /// `spec.nodeSelector` as `key=value`.
    #[serde(skip)]
    pub node_selector: Vec<(String, String)>,
    /// Required node affinity: any term matches when all its requirements do.
    #[serde(skip)]
    pub node_affinity: Vec<Vec<NodeRequirement>>,
}

impl Vmi {
    /// Only Scheduled and Running instances occupy a node.
    pub(crate) fn occupies(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Scheduled" | "Running"))
    }
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Vm {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) run_strategy: Option<String>,
    /// Not `Halted` (or the deprecated `running: true`).
    pub(crate) wants_running: bool,
    pub(crate) cpu_limit_milli: Option<f64>,
    pub(crate) memory_limit_bytes: Option<f64>,
    pub(crate) guest_cluster: Option<String>,
    /// Label `harvesterhci.io/maintain-mode-strategy`: `Migrate` (default) or a shutdown.
    pub(crate) maintain_strategy: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct LonghornDisk {
    pub(crate) name: String,
    pub(crate) uuid: Option<String>,
    pub(crate) path: Option<String>,
    pub maximum: Option<f64>,
    pub(crate) available: Option<f64>,
    pub reserved: Option<f64>,
    pub(crate) scheduled: Option<f64>,
    pub(crate) allow_scheduling: bool,
    pub schedulable: Option<bool>,
    /// The disk's `Ready` condition.
    pub(crate) ready: Option<bool>,
    pub(crate) tags: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct LonghornNode {
    pub(crate) name: String,
    pub(crate) allow_scheduling: bool,
    pub zone: Option<String>,
    pub disks: Vec<LonghornDisk>,
    /// The node's `Ready` and `Schedulable` conditions (Longhorn schedules to a node only
    /// when both are True).
    pub(crate) ready: Option<bool>,
    pub(crate) schedulable: Option<bool>,
    pub(crate) tags: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Volume {
    pub(crate) name: String,
    pub size: Option<f64>,
    /// `status.actualSize`: bytes written, snapshots included (the rebuild payload).
    pub(crate) actual_size: Option<f64>,
    pub replicas: Option<u32>,
    pub state: Option<String>,
    pub(crate) robustness: Option<String>,
    pub(crate) node: Option<String>,
    pub(crate) pvc: Option<String>,
    /// `spec.nodeSelector` and `spec.diskSelector`: tags a node and a disk must carry.
    pub(crate) node_selector: Vec<String>,
    pub(crate) disk_selector: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Replica {
    pub(crate) name: String,
    pub(crate) volume: Option<String>,
    pub(crate) node: Option<String>,
    pub(crate) disk_uuid: Option<String>,
    pub(crate) state: Option<String>,
}

/// Settings by name: Longhorn's and Harvester's (an empty Harvester value means its default).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Settings {
    pub longhorn: BTreeMap<String, String>,
    pub(crate) harvester: BTreeMap<String, String>,
}

/// A kind the dump does not hold, and which analysis needs it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Missing {
    pub kind: &'static str,
    pub(crate) needed_for: &'static str,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct LiveState {
    pub nodes: Vec<Node>,
    pub(crate) vms: Vec<Vm>,
    pub vmis: Vec<Vmi>,
    pub longhorn_nodes: Vec<LonghornNode>,
    pub volumes: Vec<Volume>,
    pub replicas: Vec<Replica>,
    pub settings: Settings,
    /// Rancher provisioning Clusters and machine configs (kept whole for the importer),
    /// ClusterRequests, golden images and their backing images (for the delivery model).
    #[serde(skip)]
    pub(crate) rancher: Vec<Value>,
    pub missing: Vec<Missing>,
    /// Objects of a known kind in an API version rackplan does not read, by name.
    pub skipped: Vec<String>,
    /// Files skipped, objects that could not be read.
    pub notes: Vec<String>,
    /// What does not add up, in the operator's words.
    pub findings: Vec<String>,
    /// The newest timestamp any object read records (RFC 3339): about when the dump was
    /// taken, for a reader of the review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_object: Option<String>,
    /// Every object read, of any kind, counted by kind with its size: what the control
    /// plane stores.
    pub census: super::census::Census,
    /// The API server's and etcd's metrics pages saved beside the dump, when it has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<super::metrics::ControlPlaneMetrics>,
}
