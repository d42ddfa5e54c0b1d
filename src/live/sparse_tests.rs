use std::path::Path;

use serde_json::Value;

use super::super::decode::{Prepared, prepare};
use super::super::items::{object, push};
use super::*;

/// The kinds `decode` types (Longhorn's and Kubernetes' Nodes, both settings): always read
/// sparsely in the versions the fixtures hold.
const TYPED: [&str; 6] = [
    "Node",
    "VirtualMachineInstance",
    "VirtualMachine",
    "Volume",
    "Replica",
    "Setting",
];

/// The typed record of `item` read whole and read sparsely (`None` when it is read whole
/// either way), as text to compare.
fn both(item: &Value) -> (String, Option<String>) {
    let (whole, sparse) = both_text(&serde_json::to_string_pretty(item).unwrap());
    let show = |p: Vec<Prepared>| {
        p.iter()
            .map(|p| format!("{p:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    (show(whole), sparse.map(show))
}

/// `text` typed read whole and read sparsely (`None` when it is read whole either way).
fn both_text(text: &str) -> (Vec<Prepared>, Option<Vec<Prepared>>) {
    let mut whole = Vec::new();
    push(
        "f",
        serde_json::from_str(text).unwrap(),
        &mut |o| whole.push(prepare(o)),
        1,
    );
    let sparse = read(text.as_bytes()).map(|got| {
        let (v, bytes) = got.unwrap();
        object("f", v, bytes).map(prepare).into_iter().collect()
    });
    (whole, sparse)
}

fn items(doc: Value) -> Vec<Value> {
    match doc {
        Value::Object(mut m) if m.get("items").is_some_and(Value::is_array) => {
            match m.remove("items") {
                Some(Value::Array(a)) => a,
                _ => unreachable!(),
            }
        }
        Value::Null => Vec::new(),
        d => vec![d],
    }
}

fn bundle_items(dir: &Path, out: &mut Vec<Value>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            bundle_items(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            let text = std::fs::read_to_string(&p).unwrap();
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
            out.extend(docs.into_iter().flat_map(items));
        }
    }
}

/// Every object of the reference support bundle, of a generated dump and a few written to
/// be awkward (escapes, floats, negative numbers, managed fields, a scalar where a map is
/// read, kinds only counted) gives the same typed record, notes, stamp and census size read
/// sparsely as read whole; every typed kind goes the sparse way.
#[test]
fn a_sparse_read_types_every_object_as_the_whole_read_does() {
    let mut all = Vec::new();
    bundle_items(
        Path::new("../shared/reference/harvester/support-bundle-sample/yamls"),
        &mut all,
    );
    assert!(all.len() > 50, "{} objects in the bundle", all.len());
    all.extend(super::super::synth::objects(&super::super::synth::example()));
    all.extend([
        serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {
                "name": "n\"1\u{1}\\é", "creationTimestamp": "2024-01-01T00:00:00Z",
                "labels": {"a": "x\ty", "topology.kubernetes.io/zone": "z\n"},
                "managedFields": [{"time": "2025-01-01T00:00:00Z", "f": {"x": [1.5, -3]}}],
                "annotations": {"harvesterhci.io/maintain-status": "running", "big": "y"},
            },
            "spec": "null",
            "status": {"allocatable": {"cpu": 63.5, "memory": -1, "pods": 1e3},
                       "conditions": [{"type": "Ready", "status": "True",
                                       "lastHeartbeatTime": "2025-02-01T00:00:00.5Z"}]},
        }),
        serde_json::json!({
            "kind": "VirtualMachineInstance", "apiVersion": "kubevirt.io/v1",
            "metadata": {"name": "vm", "namespace": "ns", "labels": []},
            "spec": {"domain": {"cpu": {"cores": 2.0}, "devices": {"disks": [{"name": "d"}],
                     "gpus": [{"name": "g", "deviceName": "nvidia.com/x"}]},
                     "resources": {"requests": {"cpu": "bad", "memory": "1Gi"}}},
                     "volumes": [{"persistentVolumeClaim": {"claimName": "c"}}, {"containerDisk": {}}],
                     "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                         [{"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"b": "1", "a": "2"}}}]}}},
            "status": {"phase": "Running", "nodeName": "n1",
                       "conditions": {"LiveMigratable": {"status": "False"}}},
        }),
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "c", "namespace": "kube-system"},
                           "data": {"k": "v\u{7f}", "n": [null, true, false, 0, -0.25]}}),
        serde_json::json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume",
                           "metadata": {"name": "v", "managedFields": "odd"},
                           "spec": {"size": "1e3", "numberOfReplicas": "3"},
                           "status": {"actualSize": 12.5, "kubernetesStatus": {"pvcName": null}}}),
    ]);
    let mut sparse_kinds = std::collections::BTreeSet::new();
    for item in &all {
        let (whole, sparse) = both(item);
        let kind = item["kind"].as_str().unwrap_or("").to_string();
        if let Some(sparse) = sparse {
            assert_eq!(sparse, whole, "{item}");
            sparse_kinds.insert(kind);
        } else {
            assert!(!TYPED.contains(&kind.as_str()), "{kind} read whole: {item}");
        }
    }
    for k in TYPED.iter().chain(&["ConfigMap"]) {
        assert!(
            sparse_kinds.contains(*k),
            "no {k} read sparsely: {sparse_kinds:?}"
        );
    }
}

/// A key written twice in a map the read keeps (invalid in Kubernetes, possible in a hand-
/// edited dump) means what it means read whole: the last value, in the first key's place.
/// Only the census size differs: the sparse read counts both copies' bytes.
#[test]
fn a_key_written_twice_types_as_the_whole_read_does() {
    for text in [
        r#"{"apiVersion": "longhorn.io/v1beta2", "kind": "Node",
            "metadata": {"name": "n1", "namespace": "longhorn-system"},
            "spec": {"disks": {"d1": {"path": "/a", "tags": ["x"]}, "d2": {"path": "/b"},
                               "d1": {"path": "/c", "allowScheduling": true}},
                     "tags": ["t"], "tags": ["u", "v"]},
            "status": {"diskStatus": {"d1": {"diskUUID": "u1"}, "d1": {"diskUUID": "u2"}},
                       "zone": "z1", "zone": "z2"}}"#,
        r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n",
            "labels": {"topology.kubernetes.io/zone": "a", "k": "1",
                       "topology.kubernetes.io/zone": "b"}},
            "status": {"allocatable": {"cpu": "2"}, "allocatable": {"memory": "1Gi"}}}"#,
        r#"{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": "vm", "namespace": "ns"},
            "status": {"nodeName": "n1"}, "spec": {}, "status": {"nodeName": "n2"}}"#,
    ] {
        let (whole, sparse) = both_text(text);
        let sparse = sparse.expect("read sparsely");
        assert_eq!(whole.len(), 1);
        assert_eq!(sparse.len(), 1);
        let (w, s) = (&whole[0], &sparse[0]);
        assert_eq!(format!("{:?}", s.item), format!("{:?}", w.item), "{text}");
        assert_eq!(s.notes, w.notes, "{text}");
        assert_eq!(s.stamp, w.stamp, "{text}");
        assert_eq!(s.key, w.key, "{text}");
    }
}

#[test]
fn what_cannot_be_told_from_the_first_fields_is_read_whole() {
    // Escaped kind, kind after a nested value, a list, a Pod, a Rancher kind, a key twice.
    assert!(read(br#"{"apiVersion": "v1", "kind": "No\u0064e", "metadata": {}}"#).is_none());
    assert!(read(br#"{"metadata": {"a": ["}"]}, "apiVersion": "v1", "kind": "Node"}"#).is_some());
    assert!(read(br#"{"apiVersion": "v1", "kind": "List", "items": []}"#).is_none());
    assert!(read(br#"{"apiVersion": "v1", "kind": "Pod"}"#).is_none());
    assert!(read(br#"{"apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster"}"#).is_none());
    assert!(read(br#"{"apiVersion": "v1", "kind": "Node", "kind": "Pod"}"#).is_none());
    assert!(read(b"[1]").is_none());
    // Not JSON after the first fields: the parser's error.
    let e = read(b"{\"apiVersion\": \"v1\", \"kind\": \"Node\",\n \"spec\": [}")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.line(), 2);
}
