//! Reading the fleet as it runs: the real support-bundle sample (as shipped, and zipped
//! the way Harvester's UI delivers it), kubectl `kind: List` output in YAML and JSON built
//! from real Longhorn 1.10 objects, and what does not add up reported, not crashed on.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::shared;

fn sample() -> std::path::PathBuf {
    shared().join("reference/harvester/support-bundle-sample")
}

fn check_sample(s: &rackplan::live::LiveState) {
    assert_eq!(s.nodes.len(), 1);
    let n = &s.nodes[0];
    assert_eq!(
        (n.name.as_str(), n.cpu_milli, n.ready),
        ("node1", Some(8000.0), Some(true))
    );
    // Float-written byte counts read back exactly; "null" strings read as absent.
    let d = &s.longhorn_nodes[0].disks[0];
    assert_eq!(d.maximum, Some(394_085_056_512.0));
    assert_eq!(d.reserved, Some(118_225_516_953.0));
    assert_eq!(
        d.schedulable,
        Some(true),
        "map-shaped conditions of old Longhorn"
    );
    assert!(
        !s.settings.longhorn.contains_key("backup-target"),
        "\"null\" is no value"
    );
    assert_eq!(
        s.settings.longhorn["storage-over-provisioning-percentage"],
        "200"
    );
    assert_eq!(
        s.longhorn_nodes[0].zone, None,
        "region/zone \"null\" is no zone"
    );
    // The sample has no VMs: the kinds an analysis needs are reported missing, not zero.
    let missing: Vec<&str> = s.missing.iter().map(|m| m.kind).collect();
    assert!(
        missing
            .iter()
            .any(|k| k.starts_with("VirtualMachineInstance")),
        "{missing:?}"
    );
    assert!(s.findings.is_empty(), "{:?}", s.findings);
}

#[test]
fn the_real_support_bundle_reads_unpacked_and_zipped() {
    let s = rackplan::live::read(&sample()).unwrap();
    check_sample(&s);
    // Zipped as the UI delivers it: one top folder holding metadata.yaml and yamls/.
    let tmp = tempfile::tempdir().unwrap();
    let zpath = tmp.path().join("supportbundle_2022-03-07T01-01-01Z.zip");
    let n = crate::support::zip_as_bundle(&sample(), "supportbundle_2022-03-07T01-01-01Z", &zpath);
    assert!(n > 10);
    let zs = rackplan::live::read(&zpath).unwrap();
    check_sample(&zs);
    assert_eq!(
        serde_json::to_value(&zs.longhorn_nodes).unwrap(),
        serde_json::to_value(&s.longhorn_nodes).unwrap()
    );
}

fn live(name: &str) -> Vec<Value> {
    let text =
        std::fs::read_to_string(shared().join("reference/harvester/live-objects").join(name))
            .unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    docs.into_iter()
        .flat_map(|d| {
            if d["kind"] == "List" {
                d["items"].as_array().unwrap().clone()
            } else {
                vec![d]
            }
        })
        .collect()
}

fn kubectl_list(items: &[Value]) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

fn node_obj(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": "z1"}},
           "status": {"allocatable": {"cpu": "63500m", "memory": "527340440Ki", "pods": "200"},
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

#[test]
fn kubectl_lists_in_yaml_and_json_and_what_does_not_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let volume = live("longhorn-v1.10.1-volume-attached-healthy.yaml");
    let replicas = live("longhorn-v1.10.1-replicas-running.list.yaml");
    assert_eq!(replicas.len(), 3);
    let nodes: Vec<Value> = replicas
        .iter()
        .map(|r| node_obj(r["spec"]["nodeID"].as_str().unwrap()))
        .collect();
    let vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": "vm1", "namespace": "team-a", "labels": {"guestcluster.harvesterhci.io/name": "t1"}},
        "spec": {"domain": {"cpu": {"cores": 4, "sockets": 0}, "resources": {"requests": {"cpu": "250m", "memory": "5461Mi"}, "limits": {"cpu": "4", "memory": "8Gi"}}}},
        "status": {"phase": "Running", "nodeName": "ghost"}});
    let old = json!({"apiVersion": "longhorn.io/v1alpha1", "kind": "Volume", "metadata": {"name": "old", "namespace": "longhorn-system"}});
    let mut items = nodes.clone();
    items.extend(volume.clone());
    items.extend(replicas.clone());
    items.push(vmi);
    items.push(old);
    // JSON, one file.
    let jf = tmp.path().join("dump.json");
    std::fs::write(
        &jf,
        serde_json::to_string_pretty(&kubectl_list(&items)).unwrap(),
    )
    .unwrap();
    let s = rackplan::live::read(&jf).unwrap();
    assert_eq!(
        (
            s.nodes.len(),
            s.volumes.len(),
            s.replicas.len(),
            s.vmis.len()
        ),
        (3, 1, 3, 1)
    );
    let v = &s.volumes[0];
    assert_eq!(
        (v.size, v.replicas, v.state.as_deref()),
        (Some(21_474_836_480.0), Some(3), Some("attached"))
    );
    assert_eq!(s.nodes[0].memory_bytes, Some(527_340_440.0 * 1024.0));
    let vm = &s.vmis[0];
    assert_eq!(
        (vm.vcpus, vm.cpu_request_milli, vm.guest_cluster.as_deref()),
        (4, Some(250.0), Some("t1"))
    );
    assert_eq!(s.skipped.len(), 1, "{:?}", s.skipped);
    assert!(
        s.skipped[0].contains("longhorn-system/old") && s.skipped[0].contains("v1alpha1"),
        "{:?}",
        s.skipped
    );
    // The VMI on a node the dump lacks is a finding; the healthy volume is not.
    assert_eq!(s.findings.len(), 1, "{:?}", s.findings);
    assert!(s.findings[0].contains("team-a/vm1") && s.findings[0].contains("ghost"));
    // YAML, a folder of files (one per kind, as `kubectl get ... -o yaml > x.yaml` makes),
    // with a replica gone: the volume now has fewer replicas than it asks for.
    let dir = tmp.path().join("dump");
    std::fs::create_dir(&dir).unwrap();
    let y = |v: &Value| rackplan::files::yaml::to_string(v);
    std::fs::write(dir.join("nodes.yaml"), y(&kubectl_list(&nodes))).unwrap();
    std::fs::write(dir.join("volumes.yaml"), y(&kubectl_list(&volume))).unwrap();
    std::fs::write(dir.join("replicas.yaml"), y(&kubectl_list(&replicas[..2]))).unwrap();
    std::fs::write(dir.join("README.txt"), "not a manifest").unwrap();
    std::fs::write(dir.join("broken.yaml"), "a: [\n").unwrap();
    let s = rackplan::live::read(&dir).unwrap();
    assert_eq!(
        (s.nodes.len(), s.volumes.len(), s.replicas.len()),
        (3, 1, 2)
    );
    assert!(
        s.findings
            .iter()
            .any(|f| f.contains("asks for 3 replicas and has 2 running")),
        "{:?}",
        s.findings
    );
    assert!(
        s.notes.iter().any(|n| n.contains("broken.yaml")),
        "{:?}",
        s.notes
    );
    // A replica on a disk no Longhorn Node lists.
    let lh = json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Node", "metadata": {"name": "walmsley", "namespace": "longhorn-system"},
        "spec": {"allowScheduling": true, "disks": {"d1": {"path": "/var/lib/longhorn", "allowScheduling": true, "storageReserved": 0}}},
        "status": {"diskStatus": {"d1": {"diskUUID": "other-uuid", "storageMaximum": 1e12, "storageAvailable": 9e11, "storageScheduled": 0,
                                         "conditions": [{"type": "Schedulable", "status": "True"}]}}}});
    std::fs::write(dir.join("lhnodes.yaml"), y(&lh)).unwrap();
    let s = rackplan::live::read(&dir).unwrap();
    assert!(
        s.findings
            .iter()
            .any(|f| f.contains("which no Longhorn Node lists") && f.contains("walmsley")),
        "{:?}",
        s.findings
    );
    assert_eq!(s.longhorn_nodes[0].disks[0].maximum, Some(1e12));
}

#[test]
fn bad_dumps_are_errors_that_name_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let e = rackplan::live::read(&tmp.path().join("nope.yaml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope.yaml") && e.contains("cannot read"), "{e}");
    let f = tmp.path().join("x.json");
    std::fs::write(&f, "{ not json").unwrap();
    let e = rackplan::live::read(&f).unwrap_err().to_string();
    assert!(e.contains("x.json") && e.contains("not JSON"), "{e}");
    let z = tmp.path().join("b.zip");
    std::fs::write(&z, b"PK not really").unwrap();
    let e = rackplan::live::read(&z).unwrap_err().to_string();
    assert!(e.contains("b.zip") && e.contains("not a zip"), "{e}");
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(rackplan::live::read(Path::new(&empty)).is_err());
}
