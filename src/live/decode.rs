//! Decoding one object of a dump into its typed record: each field the analyses use read as
//! untrusted text (absent, `"null"`, floats and quantities all handled), and what cannot be
//! read named.

use std::fmt::Write as _;

use serde_json::Value;

use super::objects::{LonghornDisk, LonghornNode, Node, Object, Replica, Vm, Vmi, Volume};
use super::pins::{false_reason, host_devices, node_affinity, string_map};
use super::quantity::{bytes, millicores, text};
use super::tree::Json;

fn flag<J: Json>(v: &J) -> bool {
    v.get_bool()
        .or_else(|| text(v).map(|s| s.eq_ignore_ascii_case("true")))
        .unwrap_or(false)
}

/// A list of strings (tags, selectors); anything else is none.
fn strings<J: Json>(v: &J) -> Vec<String> {
    v.items()
        .into_iter()
        .flatten()
        .filter_map(|x| text(x).map(str::to_string))
        .collect()
}

/// A condition's status from a list (v1 style) or a map keyed by type (old Longhorn).
fn condition<J: Json>(conds: &J, kind: &str) -> Option<bool> {
    let c = if let Some(a) = conds.items() {
        a.iter().find(|c| c["type"].get_str() == Some(kind))?
    } else {
        conds.fields()?.find(|(k, _)| *k == kind)?.1
    };
    text(&c["status"]).map(|s| s == "True")
}

fn node<J: Json>(o: &Object<'_, J>) -> Node {
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

fn vcpus<J: Json>(cpu: &J) -> u32 {
    let n = |k: &str| cpu[k].get_f64().map_or(1, |x| x.clamp(1.0, 4096.0) as u32);
    n("cores")
        .saturating_mul(n("sockets"))
        .saturating_mul(n("threads"))
}

fn vmi<J: Json>(o: &Object<'_, J>) -> Vmi {
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
            .items()
            .into_iter()
            .flatten()
            .find(|t| t["topologyKey"].get_str() == Some("kubernetes.io/hostname"))
            .map(|t| t["labelSelector"].compact()),
        migratable_reason: false_reason(&v["status"]["conditions"], "LiveMigratable"),
        eviction_strategy: text(&v["spec"]["evictionStrategy"]).map(str::to_string),
        host_devices: host_devices(&d["devices"]),
        node_selector: string_map(&v["spec"]["nodeSelector"]).into_iter().collect(),
        node_affinity: node_affinity(&v["spec"]["affinity"]),
        claims: v["spec"]["volumes"]
            .items()
            .into_iter()
            .flatten()
            .filter_map(|x| text(&x["persistentVolumeClaim"]["claimName"]).map(str::to_string))
            .collect(),
    }
}

fn vm<J: Json>(o: &Object<'_, J>) -> Vm {
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

fn longhorn_node<J: Json>(o: &Object<'_, J>) -> LonghornNode {
    let v = &o.value;
    let status = &v["status"]["diskStatus"];
    let disks = v["spec"]["disks"]
        .fields()
        .into_iter()
        .flatten()
        .map(|(name, d)| {
            let s = &status[name];
            LonghornDisk {
                name: name.to_string(),
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

fn volume<J: Json>(o: &Object<'_, J>) -> Volume {
    let v = &o.value;
    Volume {
        name: o.name.clone(),
        size: bytes(&v["spec"]["size"]),
        actual_size: bytes(&v["status"]["actualSize"]),
        replicas: v["spec"]["numberOfReplicas"]
            .get_f64()
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

fn replica<J: Json>(o: &Object<'_, J>) -> Replica {
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
pub(super) fn known(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    Some(match (group, kind) {
        ("", "Node")
        | ("kubevirt.io", "VirtualMachine" | "VirtualMachineInstance")
        | ("provisioning.cattle.io", "Cluster")
        | ("rke-machine-config.cattle.io", "HarvesterConfig") => &["v1"],
        ("longhorn.io", "Node" | "Volume" | "Replica" | "Setting") => &["v1beta1", "v1beta2"],
        ("harvesterhci.io", "Setting" | "VirtualMachineImage") => &["v1beta1"],
        // Kept whole for the delivery model: where an image's backing file is.
        ("longhorn.io", "BackingImage") => &["v1beta2"],
        ("rackplan.io", "ClusterRequest") => &["v1alpha1"],
        _ => return None,
    })
}

/// One object typed, ready to be added: typing needs no shared state, so it runs on many
/// threads; adding (which drops duplicates) runs on one.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// (group/kind, namespace/name) as one string: the same object in two files counts once.
    pub(super) key: Option<String>,
    pub(super) item: Item,
    /// Fields present but unreadable, each naming the file, the object and the field.
    pub(super) notes: Vec<String>,
    /// The object's newest timestamp, seconds since the epoch.
    pub(super) stamp: Option<i64>,
    /// Its part of the census (any kind kept in etcd).
    pub(super) census: Option<super::census::Entry>,
}

/// The newest moment an object records: its creation and its conditions' transitions,
/// probes and heartbeats. `metadata.managedFields` is not read (it is dropped before typing:
/// kubectl hides it and the support bundle keeps it, so reading it would date the same
/// cluster differently by how it was dumped). Fractions of a second are dropped; anything
/// that is not an RFC 3339 UTC time is ignored (a dump's text is untrusted).
fn newest_stamp<J: Json>(v: &J) -> Option<i64> {
    let at = |x: &J| {
        let t = text(x)?;
        let t = t.split_once('.').map_or(t, |(whole, _)| whole);
        crate::clock::parse_at(t.trim_end_matches('Z')).ok()
    };
    let conditions = v["status"]["conditions"]
        .items()
        .into_iter()
        .flatten()
        .flat_map(|c| {
            [
                "lastTransitionTime",
                "lastHeartbeatTime",
                "lastProbeTime",
                "lastUpdateTime",
            ]
            .into_iter()
            .map(move |k| &c[k])
        });
    std::iter::once(&v["metadata"]["creationTimestamp"])
        .chain(conditions)
        .filter_map(at)
        .max()
}

/// How a quantity is read.
#[derive(Clone, Copy)]
enum Reader {
    Millicores,
    Bytes,
}

impl Reader {
    fn read<J: Json>(self, v: &J) -> Option<f64> {
        match self {
            Reader::Millicores => millicores(v),
            Reader::Bytes => bytes(v),
        }
    }
}

/// Quantities the analyses need, by kind: (path, what it must be, reader).
const FIELDS: &[(&str, &str, &[&str], &str, Reader)] = &[
    (
        "",
        "Node",
        &["status", "allocatable", "cpu"],
        "a CPU quantity",
        Reader::Millicores,
    ),
    (
        "",
        "Node",
        &["status", "allocatable", "memory"],
        "a byte quantity",
        Reader::Bytes,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "requests", "cpu"],
        "a CPU quantity",
        Reader::Millicores,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "requests", "memory"],
        "a byte quantity",
        Reader::Bytes,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "limits", "cpu"],
        "a CPU quantity",
        Reader::Millicores,
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        &["spec", "domain", "resources", "limits", "memory"],
        "a byte quantity",
        Reader::Bytes,
    ),
    (
        "longhorn.io",
        "Volume",
        &["spec", "size"],
        "a byte count",
        Reader::Bytes,
    ),
    (
        "longhorn.io",
        "Volume",
        &["status", "actualSize"],
        "a byte count",
        Reader::Bytes,
    ),
];

/// A note for each quantity that is there but cannot be read: the analysis then treats it
/// as absent, and says so.
fn unreadable<J: Json>(o: &Object<'_, J>, group: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (g, kind, path, what, read) in FIELDS {
        if *g != group || *kind != o.kind {
            continue;
        }
        let v = path.iter().fold(&o.value, |v, k| &v[*k]);
        if text(v).is_none() && !v.is_num() {
            continue;
        }
        if read.read(v).is_none() {
            out.push(format!(
                "{}: {}: {}: `{}` is not {what}; taken as absent",
                o.file,
                o.id(),
                path.join("."),
                v.get_str().map_or_else(|| v.compact(), str::to_string)
            ));
        }
    }
    out
}

#[derive(Debug)]
pub(crate) enum Item {
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
pub(crate) fn prepare<J: Json>(o: Object<'_, J>) -> Prepared {
    let (group, version) = o
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", &o.api_version));
    // Every named object counts once in the census, whatever its kind.
    let (key, census) = if o.name.is_empty() {
        (None, None)
    } else {
        let id = o.id();
        let census = super::census::entry(group, &o.kind, &id, &o.value, o.bytes);
        // `group/kind` and `namespace/name` in one string, the first's length ahead so that
        // no two pairs give the same key.
        let n = group.len() + 1 + o.kind.len();
        let mut key = String::with_capacity(n + id.len() + 8);
        let _ = write!(key, "{n}:{group}/{} {id}", o.kind);
        (Some(key), census)
    };
    let nothing = |item, key, census| Prepared {
        key,
        item,
        notes: Vec::new(),
        stamp: None,
        census,
    };
    let Some(versions) = known(group, &o.kind) else {
        return nothing(Item::Nothing, key, census);
    };
    if !versions.contains(&version) {
        return nothing(
            Item::Skipped(format!(
                "{} {} {} ({}): API version {version} is not one rackplan reads ({})",
                o.kind,
                o.id(),
                o.api_version,
                o.file,
                versions.join(", ")
            )),
            key,
            census,
        );
    }
    if o.name.is_empty() {
        return nothing(
            Item::Note(format!("{}: a {} without a name; skipped", o.file, o.kind)),
            None,
            None,
        );
    }
    let notes = unreadable(&o, group);
    let stamp = newest_stamp(&o.value);
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
        _ => Item::Rancher(o.value.into_value()),
    };
    Prepared {
        key,
        item,
        notes,
        stamp,
        census,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_stamp_reads_creation_and_conditions_and_ignores_garbage() {
        let v = serde_json::json!({
            "metadata": {
                "creationTimestamp": "2024-01-01T00:00:00Z",
                // Not read: a dump with or without managed fields dates the same.
                "managedFields": [{"time": "2024-05-01T10:00:00Z"}, {"time": "yesterday"}],
            },
            "status": {"conditions": [
                {"lastHeartbeatTime": "2024-03-01T12:30:15.123456Z"},
                {"lastTransitionTime": "9999-99-99T99:99:99Z"},
                {"lastProbeTime": null},
            ]},
        });
        assert_eq!(
            newest_stamp(&v).map(|t| crate::clock::format_at(t, false)),
            Some("2024-03-01T12:30:15Z".to_string())
        );
        assert_eq!(newest_stamp(&serde_json::json!({"metadata": {}})), None);
    }
}
