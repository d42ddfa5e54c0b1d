//! The objects of a dump, typed: the fields the capacity analyses use, each read as
//! untrusted text (absent, `"null"`, floats and quantities all handled), and findings for
//! what does not add up (a VMI on a node the dump does not have, a replica on an unknown
//! disk, a volume with fewer replicas than it asks for).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::pins::{NodeRequirement, false_reason, host_devices, node_affinity, string_map};
use super::quantity::{bytes, millicores, text};

/// One object of the dump, with where it came from.
#[derive(Debug, Clone)]
pub struct Object {
    pub file: String,
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub value: Value,
}

impl Object {
    /// `namespace/name` or `name`, as errors name it.
    pub fn id(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Node {
    pub name: String,
    /// Allocatable CPU, millicores (the scheduler's view).
    pub cpu_milli: Option<f64>,
    pub memory_bytes: Option<f64>,
    pub pods: Option<f64>,
    pub zone: Option<String>,
    /// `spec.unschedulable` (cordoned).
    pub cordoned: bool,
    /// `harvesterhci.io/maintain-status`: `running` or `completed`.
    pub maintenance: Option<String>,
    pub ready: Option<bool>,
    /// A `DiskPressure`, `PIDPressure`, `MemoryPressure` or `NetworkUnavailable` condition
    /// is True: Longhorn marks the node not Ready (`KubernetesNodePressure`).
    pub pressure: bool,
    /// Label `kubevirt.io/schedulable`: `false` when virt-handler is not ready there, so no
    /// VMI can land on it.
    pub vm_schedulable: Option<bool>,
    /// Witness nodes run etcd only and hold no VMs.
    pub witness: bool,
    /// Its labels (the rolling upgrade reads roles from them and matches VMs' node
    /// selectors and required node affinity against them).
    #[serde(skip)]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Vmi {
    pub namespace: String,
    pub name: String,
    pub node: Option<String>,
    pub phase: Option<String>,
    pub cpu_request_milli: Option<f64>,
    pub memory_request_bytes: Option<f64>,
    pub cpu_limit_milli: Option<f64>,
    pub memory_limit_bytes: Option<f64>,
    /// cores x sockets x threads, a 0 counting as 1.
    pub vcpus: u32,
    /// `guestcluster.harvesterhci.io/name`: the Rancher cluster it is a node of.
    pub guest_cluster: Option<String>,
    /// `LiveMigratable` condition; `None` when the VMI does not say.
    pub live_migratable: Option<bool>,
    pub claims: Vec<String>,
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
    pub fn occupies(&self) -> bool {
        matches!(self.phase.as_deref(), Some("Scheduled" | "Running"))
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Vm {
    pub namespace: String,
    pub name: String,
    pub run_strategy: Option<String>,
    /// Not `Halted` (or the deprecated `running: true`).
    pub wants_running: bool,
    pub cpu_limit_milli: Option<f64>,
    pub memory_limit_bytes: Option<f64>,
    pub guest_cluster: Option<String>,
    /// Label `harvesterhci.io/maintain-mode-strategy`: `Migrate` (default) or a shutdown.
    pub maintain_strategy: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LonghornDisk {
    pub name: String,
    pub uuid: Option<String>,
    pub path: Option<String>,
    pub maximum: Option<f64>,
    pub available: Option<f64>,
    pub reserved: Option<f64>,
    pub scheduled: Option<f64>,
    pub allow_scheduling: bool,
    pub schedulable: Option<bool>,
    /// The disk's `Ready` condition.
    pub ready: Option<bool>,
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LonghornNode {
    pub name: String,
    pub allow_scheduling: bool,
    pub zone: Option<String>,
    pub disks: Vec<LonghornDisk>,
    /// The node's `Ready` and `Schedulable` conditions (Longhorn schedules to a node only
    /// when both are True).
    pub ready: Option<bool>,
    pub schedulable: Option<bool>,
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Volume {
    pub name: String,
    pub size: Option<f64>,
    /// `status.actualSize`: bytes written, snapshots included (the rebuild payload).
    pub actual_size: Option<f64>,
    pub replicas: Option<u32>,
    pub state: Option<String>,
    pub robustness: Option<String>,
    pub node: Option<String>,
    pub pvc: Option<String>,
    /// `spec.nodeSelector` and `spec.diskSelector`: tags a node and a disk must carry.
    pub node_selector: Vec<String>,
    pub disk_selector: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Replica {
    pub name: String,
    pub volume: Option<String>,
    pub node: Option<String>,
    pub disk_uuid: Option<String>,
    pub state: Option<String>,
}

/// Settings by name: Longhorn's and Harvester's (an empty Harvester value means its default).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Settings {
    pub longhorn: BTreeMap<String, String>,
    pub harvester: BTreeMap<String, String>,
}

/// A kind the dump does not hold, and which analysis needs it.
#[derive(Debug, Clone, Serialize)]
pub struct Missing {
    pub kind: &'static str,
    pub needed_for: &'static str,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveState {
    pub nodes: Vec<Node>,
    pub vms: Vec<Vm>,
    pub vmis: Vec<Vmi>,
    pub longhorn_nodes: Vec<LonghornNode>,
    pub volumes: Vec<Volume>,
    pub replicas: Vec<Replica>,
    pub settings: Settings,
    /// Rancher provisioning Clusters and machine configs, kept whole for the importer.
    #[serde(skip)]
    pub rancher: Vec<Value>,
    pub missing: Vec<Missing>,
    /// Objects of a known kind in an API version rackplan does not read, by name.
    pub skipped: Vec<String>,
    /// Files skipped, objects that could not be read.
    pub notes: Vec<String>,
    /// What does not add up, in the operator's words.
    pub findings: Vec<String>,
}

fn flag(v: &Value) -> bool {
    v.as_bool()
        .or_else(|| text(v).map(|s| s.eq_ignore_ascii_case("true")))
        .unwrap_or(false)
}

/// A list of strings (tags, selectors); anything else is none.
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| text(x).map(str::to_string))
        .collect()
}

/// A condition's status from a list (v1 style) or a map keyed by type (old Longhorn).
fn condition(conds: &Value, kind: &str) -> Option<bool> {
    let c = match conds {
        Value::Array(a) => a.iter().find(|c| c["type"] == kind)?,
        Value::Object(m) => m.get(kind)?,
        _ => return None,
    };
    text(&c["status"]).map(|s| s == "True")
}

fn node(o: &Object) -> Node {
    let v = &o.value;
    let labels = &v["metadata"]["labels"];
    Node {
        name: o.name.clone(),
        cpu_milli: millicores(&v["status"]["allocatable"]["cpu"]),
        memory_bytes: bytes(&v["status"]["allocatable"]["memory"]),
        pods: bytes(&v["status"]["allocatable"]["pods"]),
        zone: text(&labels["topology.kubernetes.io/zone"]).map(str::to_string),
        cordoned: flag(&v["spec"]["unschedulable"]),
        maintenance: text(&v["metadata"]["annotations"]["harvesterhci.io/maintain-status"])
            .map(str::to_string),
        ready: condition(&v["status"]["conditions"], "Ready"),
        pressure: [
            "DiskPressure",
            "PIDPressure",
            "MemoryPressure",
            "NetworkUnavailable",
        ]
        .iter()
        .any(|k| condition(&v["status"]["conditions"], k) == Some(true)),
        vm_schedulable: text(&labels["kubevirt.io/schedulable"]).map(|s| s == "true"),
        witness: flag(&labels["node-role.harvesterhci.io/witness"]),
        labels: string_map(labels),
    }
}

fn vcpus(cpu: &Value) -> u32 {
    let n = |k: &str| cpu[k].as_f64().map_or(1, |x| x.clamp(1.0, 4096.0) as u32);
    n("cores")
        .saturating_mul(n("sockets"))
        .saturating_mul(n("threads"))
}

fn vmi(o: &Object) -> Vmi {
    let v = &o.value;
    let d = &v["spec"]["domain"];
    Vmi {
        namespace: o.namespace.clone().unwrap_or_default(),
        name: o.name.clone(),
        node: text(&v["status"]["nodeName"]).map(str::to_string),
        phase: text(&v["status"]["phase"]).map(str::to_string),
        cpu_request_milli: millicores(&d["resources"]["requests"]["cpu"]),
        memory_request_bytes: bytes(&d["resources"]["requests"]["memory"]),
        cpu_limit_milli: millicores(&d["resources"]["limits"]["cpu"]),
        memory_limit_bytes: bytes(&d["resources"]["limits"]["memory"]),
        vcpus: vcpus(&d["cpu"]),
        guest_cluster: text(&v["metadata"]["labels"]["guestcluster.harvesterhci.io/name"])
            .map(str::to_string),
        live_migratable: condition(&v["status"]["conditions"], "LiveMigratable"),
        anti_affinity: v["spec"]["affinity"]["podAntiAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["topologyKey"] == "kubernetes.io/hostname")
            .map(|t| t["labelSelector"].to_string()),
        migratable_reason: false_reason(&v["status"]["conditions"], "LiveMigratable"),
        eviction_strategy: text(&v["spec"]["evictionStrategy"]).map(str::to_string),
        host_devices: host_devices(&d["devices"]),
        node_selector: string_map(&v["spec"]["nodeSelector"]).into_iter().collect(),
        node_affinity: node_affinity(&v["spec"]["affinity"]),
        claims: v["spec"]["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| text(&x["persistentVolumeClaim"]["claimName"]).map(str::to_string))
            .collect(),
    }
}

fn vm(o: &Object) -> Vm {
    let v = &o.value;
    let strategy = text(&v["spec"]["runStrategy"]).map(str::to_string);
    let wants = match strategy.as_deref() {
        Some("Halted") => false,
        Some(_) => true,
        None => flag(&v["spec"]["running"]),
    };
    let d = &v["spec"]["template"]["spec"]["domain"];
    Vm {
        namespace: o.namespace.clone().unwrap_or_default(),
        name: o.name.clone(),
        run_strategy: strategy,
        wants_running: wants,
        cpu_limit_milli: millicores(&d["resources"]["limits"]["cpu"]),
        memory_limit_bytes: bytes(&d["resources"]["limits"]["memory"]),
        guest_cluster: text(&v["metadata"]["labels"]["guestcluster.harvesterhci.io/name"])
            .map(str::to_string),
        maintain_strategy: text(&v["metadata"]["labels"]["harvesterhci.io/maintain-mode-strategy"])
            .map(str::to_string),
    }
}

fn longhorn_node(o: &Object) -> LonghornNode {
    let v = &o.value;
    let status = &v["status"]["diskStatus"];
    let disks = v["spec"]["disks"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, d)| {
            let s = &status[name];
            LonghornDisk {
                name: name.clone(),
                uuid: text(&s["diskUUID"]).map(str::to_string),
                path: text(&d["path"]).map(str::to_string),
                maximum: bytes(&s["storageMaximum"]),
                available: bytes(&s["storageAvailable"]),
                reserved: bytes(&d["storageReserved"]),
                scheduled: bytes(&s["storageScheduled"]),
                allow_scheduling: flag(&d["allowScheduling"]),
                schedulable: condition(&s["conditions"], "Schedulable"),
                ready: condition(&s["conditions"], "Ready"),
                tags: strings(&d["tags"]),
            }
        })
        .collect();
    LonghornNode {
        name: o.name.clone(),
        allow_scheduling: flag(&v["spec"]["allowScheduling"]),
        zone: text(&v["status"]["zone"]).map(str::to_string),
        disks,
        ready: condition(&v["status"]["conditions"], "Ready"),
        schedulable: condition(&v["status"]["conditions"], "Schedulable"),
        tags: strings(&v["spec"]["tags"]),
    }
}

fn volume(o: &Object) -> Volume {
    let v = &o.value;
    Volume {
        name: o.name.clone(),
        size: bytes(&v["spec"]["size"]),
        actual_size: bytes(&v["status"]["actualSize"]),
        replicas: v["spec"]["numberOfReplicas"]
            .as_f64()
            .or_else(|| text(&v["spec"]["numberOfReplicas"]).and_then(|s| s.parse().ok()))
            .filter(|n| (0.0..=64.0).contains(n))
            .map(|n| n as u32),
        state: text(&v["status"]["state"]).map(str::to_string),
        robustness: text(&v["status"]["robustness"]).map(str::to_string),
        node: text(&v["status"]["currentNodeID"]).map(str::to_string),
        pvc: text(&v["status"]["kubernetesStatus"]["pvcName"]).map(str::to_string),
        node_selector: strings(&v["spec"]["nodeSelector"]),
        disk_selector: strings(&v["spec"]["diskSelector"]),
    }
}

fn replica(o: &Object) -> Replica {
    let v = &o.value;
    Replica {
        name: o.name.clone(),
        volume: text(&v["spec"]["volumeName"]).map(str::to_string),
        node: text(&v["spec"]["nodeID"]).map(str::to_string),
        disk_uuid: text(&v["spec"]["diskID"]).map(str::to_string),
        state: text(&v["status"]["currentState"]).map(str::to_string),
    }
}

/// (group, kind) -> the versions rackplan reads.
fn known(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    Some(match (group, kind) {
        ("", "Node")
        | ("kubevirt.io", "VirtualMachine" | "VirtualMachineInstance")
        | ("provisioning.cattle.io", "Cluster")
        | ("rke-machine-config.cattle.io", "HarvesterConfig") => &["v1"],
        ("longhorn.io", "Node" | "Volume" | "Replica" | "Setting") => &["v1beta1", "v1beta2"],
        ("harvesterhci.io", "Setting") => &["v1beta1"],
        _ => return None,
    })
}

/// One object typed, ready to be added: typing needs no shared state, so it runs on many
/// threads; adding (which drops duplicates) runs on one.
pub struct Prepared {
    /// (group/kind, namespace/name): the same object in two files counts once.
    key: Option<(String, String)>,
    item: Item,
    /// Fields present but unreadable, each naming the file, the object and the field.
    notes: Vec<String>,
}

/// Quantities the analyses need, by kind: (path, what it must be, reader).
type Reader = fn(&Value) -> Option<f64>;
const FIELDS: &[(&str, &str, &[&str], &str, Reader)] = &[
    (
        "",
        "Node",
        &["status", "allocatable", "cpu"],
        "a CPU quantity",
        millicores,
    ),
    (
        "",
        "Node",
        &["status", "allocatable", "memory"],
        "a byte quantity",
        bytes,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "requests", "cpu"],
        "a CPU quantity",
        millicores,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "requests", "memory"],
        "a byte quantity",
        bytes,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "limits", "cpu"],
        "a CPU quantity",
        millicores,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "limits", "memory"],
        "a byte quantity",
        bytes,
    ),
    (
        "longhorn.io",
        "Volume",
        &["spec", "size"],
        "a byte count",
        bytes,
    ),
    (
        "longhorn.io",
        "Volume",
        &["status", "actualSize"],
        "a byte count",
        bytes,
    ),
];

/// A note for each quantity that is there but cannot be read: the analysis then treats it
/// as absent, and says so.
fn unreadable(o: &Object, group: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (g, kind, path, what, read) in FIELDS {
        if *g != group || *kind != o.kind {
            continue;
        }
        let v = path.iter().fold(&o.value, |v, k| &v[*k]);
        if text(v).is_none() && !v.is_number() {
            continue;
        }
        if read(v).is_none() {
            out.push(format!(
                "{}: {}: {}: `{}` is not {what}; taken as absent",
                o.file,
                o.id(),
                path.join("."),
                v.as_str().map_or_else(|| v.to_string(), str::to_string)
            ));
        }
    }
    out
}

enum Item {
    Node(Node),
    Vmi(Vmi),
    Vm(Vm),
    LonghornNode(LonghornNode),
    Volume(Volume),
    Replica(Replica),
    LonghornSetting(String, String),
    HarvesterSetting(String, String),
    Rancher(Value),
    Skipped(String),
    Note(String),
    Nothing,
}

/// Type one object.
pub fn prepare(o: Object) -> Prepared {
    let nothing = |item| Prepared {
        key: None,
        item,
        notes: Vec::new(),
    };
    let (group, version) = o
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", &o.api_version));
    let Some(versions) = known(group, &o.kind) else {
        return nothing(Item::Nothing);
    };
    if !versions.contains(&version) {
        return nothing(Item::Skipped(format!(
            "{} {} {} ({}): API version {version} is not one rackplan reads ({})",
            o.kind,
            o.id(),
            o.api_version,
            o.file,
            versions.join(", ")
        )));
    }
    if o.name.is_empty() {
        return nothing(Item::Note(format!(
            "{}: a {} without a name; skipped",
            o.file, o.kind
        )));
    }
    let key = Some((format!("{group}/{}", o.kind), o.id()));
    let notes = unreadable(&o, group);
    let item = match (group, o.kind.as_str()) {
        ("", "Node") => Item::Node(node(&o)),
        ("kubevirt.io", "VirtualMachineInstance") => Item::Vmi(vmi(&o)),
        ("kubevirt.io", "VirtualMachine") => Item::Vm(vm(&o)),
        ("longhorn.io", "Node") => Item::LonghornNode(longhorn_node(&o)),
        ("longhorn.io", "Volume") => Item::Volume(volume(&o)),
        ("longhorn.io", "Replica") => Item::Replica(replica(&o)),
        ("longhorn.io", "Setting") => match text(&o.value["value"]) {
            Some(v) => Item::LonghornSetting(o.name.clone(), v.to_string()),
            None => Item::Nothing,
        },
        ("harvesterhci.io", "Setting") => {
            match text(&o.value["value"]).or_else(|| text(&o.value["default"])) {
                Some(v) => Item::HarvesterSetting(o.name.clone(), v.to_string()),
                None => Item::Nothing,
            }
        }
        _ => Item::Rancher(o.value),
    };
    Prepared { key, item, notes }
}

/// Adds typed objects as they come; `finish` records what is missing and what does not
/// add up.
#[derive(Default)]
pub struct Builder {
    s: LiveState,
    seen: std::collections::HashSet<(String, String)>,
}

impl Builder {
    pub fn insert(&mut self, p: Prepared) {
        if let Some(k) = p.key
            && !self.seen.insert(k)
        {
            return;
        }
        let s = &mut self.s;
        s.notes.extend(p.notes);
        match p.item {
            Item::Node(x) => s.nodes.push(x),
            Item::Vmi(x) => s.vmis.push(x),
            Item::Vm(x) => s.vms.push(x),
            Item::LonghornNode(x) => s.longhorn_nodes.push(x),
            Item::Volume(x) => s.volumes.push(x),
            Item::Replica(x) => s.replicas.push(x),
            Item::LonghornSetting(k, v) => {
                s.settings.longhorn.insert(k, v);
            }
            Item::HarvesterSetting(k, v) => {
                s.settings.harvester.insert(k, v);
            }
            Item::Rancher(v) => s.rancher.push(v),
            Item::Skipped(m) => s.skipped.push(m),
            Item::Note(m) => s.notes.push(m),
            Item::Nothing => {}
        }
    }

    pub fn finish(self, notes: Vec<String>) -> LiveState {
        let mut s = self.s;
        let mut all = notes;
        all.append(&mut s.notes);
        s.notes = all;
        complete(s)
    }
}

/// The kinds no object was read for, and the findings.
fn complete(mut s: LiveState) -> LiveState {
    for (kind, needed_for, present) in [
        (
            "Node (v1)",
            "every analysis: the hosts",
            !s.nodes.is_empty(),
        ),
        (
            "VirtualMachineInstance (kubevirt.io/v1)",
            "headroom, drain: what runs where",
            !s.vmis.is_empty(),
        ),
        (
            "Node (longhorn.io)",
            "storage headroom, rebuild: the disks",
            !s.longhorn_nodes.is_empty(),
        ),
        (
            "Volume (longhorn.io)",
            "rebuild, risk: the volumes",
            !s.volumes.is_empty(),
        ),
        (
            "Replica (longhorn.io)",
            "rebuild, drain: where the replicas are",
            !s.replicas.is_empty(),
        ),
    ] {
        if !present {
            s.missing.push(Missing { kind, needed_for });
        }
    }
    findings(&mut s);
    s
}

fn findings(s: &mut LiveState) {
    let nodes: BTreeSet<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut f = Vec::new();
    if !nodes.is_empty() {
        for v in s.vmis.iter().filter(|v| v.occupies()) {
            match &v.node {
                Some(n) if !nodes.contains(n.as_str()) => f.push(format!(
                    "VMI {}/{} runs on node {n}, which the dump has no Node for",
                    v.namespace, v.name
                )),
                None => f.push(format!(
                    "VMI {}/{} is {} but names no node",
                    v.namespace,
                    v.name,
                    v.phase.as_deref().unwrap_or("?")
                )),
                _ => {}
            }
        }
    }
    if !s.longhorn_nodes.is_empty() {
        let disks: BTreeSet<(&str, &str)> = s
            .longhorn_nodes
            .iter()
            .flat_map(|n| {
                n.disks
                    .iter()
                    .filter_map(|d| Some((n.name.as_str(), d.uuid.as_deref()?)))
            })
            .collect();
        for r in &s.replicas {
            if let (Some(n), Some(d)) = (&r.node, &r.disk_uuid)
                && !disks.contains(&(n.as_str(), d.as_str()))
            {
                f.push(format!(
                    "replica {} is on disk {d} of node {n}, which no Longhorn Node lists",
                    r.name
                ));
            }
        }
    }
    if !s.replicas.is_empty() {
        let mut healthy: BTreeMap<&str, u32> = BTreeMap::new();
        for r in &s.replicas {
            if let Some(v) = &r.volume
                && r.state.as_deref() == Some("running")
            {
                *healthy.entry(v.as_str()).or_default() += 1;
            }
        }
        for v in &s.volumes {
            let want = v.replicas.unwrap_or(0);
            let have = healthy.get(v.name.as_str()).copied().unwrap_or(0);
            let attached = v.state.as_deref() == Some("attached");
            if attached && have < want {
                f.push(format!(
                    "volume {} asks for {want} replicas and has {have} running ({})",
                    v.name,
                    v.robustness.as_deref().unwrap_or("robustness unknown")
                ));
            }
        }
    }
    s.findings = f;
}
