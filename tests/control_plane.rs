//! Issue 45: the control plane as a capacity limit. The census of the shipped dump and of
//! the support bundle against counts and sizes taken by hand (a separate script: every
//! object of the files, compact JSON without managedFields); a generated fleet of many
//! small VMs where the control plane stops growth before the hosts, and one where it does
//! not; a dump whose saved metrics carry the quota and the fsync latency.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rackplan::simulate::{ScenarioInput, Study, StudyInput, questions};

use crate::support::{repo, shared};

fn census(path: &Path) -> BTreeMap<String, (u64, u64)> {
    rackplan::live::read(path)
        .unwrap()
        .census
        .kinds
        .into_iter()
        .map(|(k, t)| (k, (t.count, t.json_bytes)))
        .collect()
}

fn fixture(rows: &[(&str, u64, u64)]) -> BTreeMap<String, (u64, u64)> {
    rows.iter()
        .map(|(k, n, b)| ((*k).to_string(), (*n, *b)))
        .collect()
}

#[test]
fn the_shipped_dump_is_counted_kind_by_kind() {
    let got = census(&repo().join("simulations/live-fleet.yaml"));
    assert_eq!(
        got,
        fixture(&[
            ("Node (longhorn.io)", 9, 8802),
            ("Node (v1)", 9, 3885),
            ("Replica (longhorn.io)", 180, 45000),
            ("Setting (harvesterhci.io)", 3, 518),
            ("Setting (longhorn.io)", 7, 1284),
            ("VirtualMachine (kubevirt.io)", 60, 88320),
            ("VirtualMachineInstance (kubevirt.io)", 60, 87750),
            ("Volume (longhorn.io)", 60, 22560),
        ])
    );
}

#[test]
fn the_support_bundle_is_counted_with_every_kind_and_without_metrics_server_objects() {
    let got = census(&shared().join("reference/harvester/support-bundle-sample"));
    // metrics.k8s.io NodeMetrics are served by metrics-server, not kept in etcd; the
    // empty Lists of VMs, volumes, replicas and engines count nothing.
    assert_eq!(
        got,
        fixture(&[
            ("ClusterNetwork (network.harvesterhci.io)", 1, 314),
            ("EngineImage (longhorn.io)", 1, 1103),
            ("InstanceManager (longhorn.io)", 2, 1788),
            ("KubeVirt (kubevirt.io)", 1, 6739),
            ("NetworkAttachmentDefinition (k8s.cni.cncf.io)", 1, 795),
            ("Node (longhorn.io)", 1, 1855),
            ("Node (v1)", 1, 13878),
            ("NodeNetwork (network.harvesterhci.io)", 1, 1034),
            ("PersistentVolume (v1)", 2, 2430),
            ("Setting (longhorn.io)", 46, 13048),
            ("StorageClass (storage.k8s.io)", 2, 1419),
            ("VirtualMachineImage (harvesterhci.io)", 1, 1021),
            ("VolumeAttachment (storage.k8s.io)", 2, 1080),
        ])
    );
    // The model's Node sizes are these objects' (the bundle has one of each).
    let figure = |name: &str| {
        rackplan::simulate::control_plane::figures()
            .into_iter()
            .find(|f| f.name == name)
            .unwrap()
            .value
    };
    assert!((figure("Node, as JSON") - got["Node (v1)"].1 as f64).abs() < 0.5);
    assert!((figure("Longhorn Node, as JSON") - got["Node (longhorn.io)"].1 as f64).abs() < 0.5);
}

/// The review of `text` (on the fleet of `dump`), as JSON.
fn answer(text: &str, dump: Option<&Path>) -> serde_json::Value {
    let l = Study::open(&StudyInput {
        scenario: ScenarioInput::Text {
            name: Path::new("t.yaml"),
            text,
        },
        site: None,
        dump,
        rebuild_what_if: None,
    })
    .unwrap();
    serde_json::to_value(questions::review(&l)).unwrap()
}

fn row<'a>(v: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    v["control_plane"]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == kind)
        .unwrap_or_else(|| panic!("no row {kind}"))
}

const TINY: &str = "name: many small VMs
fleet:
  classes:
    - {name: mgmt, count: 3, threads: 8, memory_gib: 32, disks: 1, disk_tb: 2, racks: [r1, r2, r3]}
    - {name: compute, count: 6, threads: 64, memory_gib: 512, disks: 2, disk_tb: 8, racks: [r1, r2, r3]}
shapes:
  tiny:
    pools:
      - {name: vms, count: 50, vcpu: 1, memory_gib: 1, disks_gib: [10]}
clusters:
  - {shape: tiny, count: 4}
analysis: {max_clusters_shape: tiny, risk_trials: 50}
";

#[test]
fn a_planned_fleet_counts_its_objects_per_vm_volume_and_node() {
    let v = answer(TINY, None);
    // 200 VMs of one disk, three replicas, on 9 nodes of 40 system pods.
    for (kind, count, per_vm) in [
        ("VirtualMachine (kubevirt.io)", 200.0, 1.0),
        ("VirtualMachineInstance (kubevirt.io)", 200.0, 1.0),
        ("Replica (longhorn.io)", 600.0, 3.0),
        ("Volume (longhorn.io)", 200.0, 1.0),
        ("Pod (v1)", 200.0 + 9.0 * 40.0, 2.8),
        ("Node (v1)", 9.0, 0.045),
    ] {
        let r = row(&v, kind);
        assert!(
            (r["count"].as_f64().unwrap() - count).abs() < 1e-9,
            "{kind}: {r}"
        );
        assert!(
            (r["per_vm"].as_f64().unwrap() - per_vm).abs() < 1e-9,
            "{kind}: {r}"
        );
        assert_eq!(r["count_from"], "model", "{kind}");
    }
    let cp = &v["control_plane"];
    // Three replicas per VM outnumber the pods (one per VM and 40 per node).
    assert_eq!(cp["largest_kind"], "Replica (longhorn.io)");
    assert!((cp["largest_count"].as_f64().unwrap() - 600.0).abs() < 1e-9);
    assert_eq!(cp["etcd"]["quota_from"], "etcd's default");
    assert!((cp["etcd"]["quota_bytes"].as_f64().unwrap() - 2.0 * 1024f64.powi(3)).abs() < 1.0);
}

#[test]
fn with_many_small_vms_the_control_plane_stops_growth_before_the_hosts() {
    let v = answer(TINY, None);
    let b = &v["control_plane"]["binding"];
    let m = &v["max_clusters"];
    assert!(
        b["first"].as_str().unwrap().starts_with("control plane"),
        "{b}"
    );
    let hosts = m["control_plane"]["hosts_additional"].as_u64().unwrap();
    let cp = b["control_plane"]["additional"].as_u64().unwrap();
    assert!(cp < hosts, "{b}");
    // Max clusters names the control plane and answers with its count.
    assert_eq!(m["additional"].as_u64(), Some(cp));
    assert_eq!(m["control_plane"]["limit"], b["control_plane_limit"]);
    // And the answer says what would move the limit to the hosts' count.
    assert!(
        !v["control_plane"]["advice"].as_array().unwrap().is_empty(),
        "{}",
        v["control_plane"]["advice"]
    );
}

#[test]
fn with_few_large_vms_the_hosts_stop_growth_first() {
    let text = TINY.replace(
        "- {name: vms, count: 50, vcpu: 1, memory_gib: 1, disks_gib: [10]}",
        "- {name: vms, count: 2, vcpu: 16, memory_gib: 256, disks_gib: [200]}",
    );
    let v = answer(&text, None);
    let b = &v["control_plane"]["binding"];
    assert!(b["first"].as_str().unwrap().starts_with("hosts"), "{b}");
    assert!(v["max_clusters"].get("control_plane").is_none());
    assert_eq!(
        v["max_clusters"]["additional"].as_u64(),
        b["hosts_additional"].as_u64()
    );
}

fn copy(from: &Path, to: &Path) -> PathBuf {
    std::fs::copy(from, to).unwrap();
    to.to_path_buf()
}

#[test]
fn a_dump_with_metrics_reports_them_beside_the_model_and_takes_its_quota() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("simulations/live-fleet.yaml"),
        &dir.path().join("fleet.yaml"),
    );
    std::fs::write(
        dir.path().join("etcd.metrics"),
        "# TYPE etcd_mvcc_db_total_size_in_bytes gauge\n\
         etcd_mvcc_db_total_size_in_bytes 1.048576e+08\n\
         etcd_server_quota_backend_bytes 4.294967296e+09\n\
         etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 100\n\
         etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.008\"} 900\n\
         etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.032\"} 1000\n\
         etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 1000\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("apiserver.metrics"),
        "apiserver_request_duration_seconds_bucket{verb=\"PATCH\",resource=\"volumes\",le=\"0.05\"} 990\n\
         apiserver_request_duration_seconds_bucket{verb=\"PATCH\",resource=\"volumes\",le=\"0.1\"} 1000\n\
         apiserver_request_duration_seconds_bucket{verb=\"PATCH\",resource=\"volumes\",le=\"+Inf\"} 1000\n\
         apiserver_request_duration_seconds_bucket{verb=\"GET\",resource=\"volumes\",le=\"0.05\"} 0\n\
         apiserver_request_duration_seconds_bucket{verb=\"GET\",resource=\"volumes\",le=\"+Inf\"} 10\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(repo().join("simulations/live-onboarding.yaml")).unwrap();
    let v = answer(&text, Some(dir.path()));
    let cp = &v["control_plane"];
    assert_eq!(cp["etcd"]["quota_from"], "the dump's etcd metrics");
    assert!((cp["etcd"]["quota_bytes"].as_f64().unwrap() - 4_294_967_296.0).abs() < 1.0);
    let m = &cp["measured"];
    assert!((m["db_bytes"].as_f64().unwrap() - 104_857_600.0).abs() < 1.0);
    // 990 of 1000 PATCHes under 50 ms: the p99 is the first bucket's bound.
    assert!(
        (m["write_p99_s"].as_f64().unwrap() - 0.05).abs() < 1e-9,
        "{m}"
    );
    // The 990th of 1000 fsyncs lies in (8 ms, 32 ms]: past the 10 ms etcd needs.
    let fsync = m["wal_fsync_p99_s"].as_f64().unwrap();
    assert!(fsync > 0.010 && fsync < 0.032, "{fsync}");
    assert!(
        cp["advice"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["action"] == "Move etcd to dedicated disks"
                && a["reason"].as_str().unwrap().contains("WAL fsync p99")),
        "{}",
        cp["advice"]
    );
    // The dump's own kinds are counted from it, the others from the model.
    assert_eq!(row(&v, "Replica (longhorn.io)")["count_from"], "dump");
    assert!((row(&v, "Replica (longhorn.io)")["count"].as_f64().unwrap() - 180.0).abs() < 1e-9);
    assert_eq!(
        row(&v, "Engine (longhorn.io)")["count_from"],
        "model (the dump has none)"
    );
}

#[test]
fn an_etcd_pod_in_the_dump_names_the_quota() {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("simulations/live-fleet.yaml"),
        &dir.path().join("fleet.yaml"),
    );
    std::fs::write(
        dir.path().join("etcd-pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: etcd-hv-001, namespace: kube-system}\nspec:\n  containers:\n  - name: etcd\n    image: etcd\n    command: [etcd, --quota-backend-bytes=8589934592]\n",
    )
    .unwrap();
    let v = answer("name: q\n", Some(dir.path()));
    let e = &v["control_plane"]["etcd"];
    assert_eq!(
        e["quota_from"],
        "Pod kube-system/etcd-hv-001 --quota-backend-bytes"
    );
    assert!((e["quota_bytes"].as_f64().unwrap() - 8_589_934_592.0).abs() < 1.0);
}

/// The dump's fleet with no shape to add: one growth row for the fleet as it is.
fn as_it_is(quota_gib: Option<f64>) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &repo().join("simulations/live-fleet.yaml"),
        &dir.path().join("fleet.yaml"),
    );
    let text = quota_gib.map_or_else(
        || "name: as it is\n".to_string(),
        |q| format!("name: as it is\nplatform: {{etcd_quota_gib: {q}}}\n"),
    );
    answer(&text, Some(dir.path()))
}

#[test]
fn a_fleet_with_no_shape_to_add_is_held_against_its_limits_as_it_is() {
    let v = as_it_is(None);
    let cp = &v["control_plane"];
    let growth = cp["growth"].as_array().unwrap();
    assert_eq!(growth.len(), 1, "{growth:?}");
    assert_eq!(growth[0]["shape"], "(no shape: the fleet as it is)");
    assert_eq!(growth[0]["vms_per_cluster"], 0.0);
    // Nothing grows: every limit is either past already or never reached.
    for l in growth[0]["limits"].as_array().unwrap() {
        assert!(l["until"] == "never" || l["until"] == "already-past", "{l}");
    }
    // No shape delivers: no delivery burst is shown, and the rolling upgrade counts one
    // migration per running VM.
    let storms = cp["storms"].as_array().unwrap();
    assert!(
        storms.iter().all(|s| s["name"] != "delivery burst"),
        "{storms:?}"
    );
    let vmis = row(&v, "VirtualMachineInstance (kubevirt.io)")["count"]
        .as_f64()
        .unwrap();
    let upgrade = storms
        .iter()
        .find(|s| s["name"] == "rolling upgrade")
        .unwrap();
    let one = upgrade["peak_per_s"].as_f64().unwrap();
    assert!(vmis > 0.0 && one > 0.0, "{upgrade}");
    assert!(upgrade["writes"].as_f64().unwrap() >= vmis, "{upgrade}");
    let summary = cp["summary"].as_str().unwrap();
    assert!(
        summary.contains("No control-plane limit is reached by the fleet as it is"),
        "{summary}"
    );
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["kind"] != "control-plane"),
        "{}",
        v["warnings"]
    );
}

#[test]
fn a_fleet_past_a_tiny_quota_as_it_is_is_warned_about() {
    let v = as_it_is(Some(0.001));
    let cp = &v["control_plane"];
    let g = &cp["growth"][0];
    assert_eq!(g["until"], "already-past", "{g}");
    assert_eq!(g["first"], "etcd quota", "{g}");
    let summary = cp["summary"].as_str().unwrap();
    assert!(
        summary.contains("The fleet is past a control-plane limit as it is: etcd quota."),
        "{summary}"
    );
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "control-plane"
                && w["message"].as_str().unwrap().contains("etcd quota")),
        "{}",
        v["warnings"]
    );
}
