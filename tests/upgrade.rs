//! `simulate --upgrade`: the rolling upgrade on small generated fleets whose plans are
//! worked out by hand (everything migrates; a VM with a PCI device; a volume whose only
//! healthy replica is on the second node; an order slower than another; anti-affine
//! control planes on three of four nodes), flag relations, and the shipped example dump and
//! the reference scenario pinned by snapshots.

use std::path::{Path, PathBuf};

use rackplan::live::synth;
use serde_json::Value;

use crate::support::{json_of, plain, rackplan_json, repo};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

fn write(dir: &Path, name: &str, dump: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, dump.to_string()).unwrap();
    p
}

fn upgrade(args: &[&str]) -> (i32, Value, String) {
    let mut cmd = rackplan_json(&["simulate", "--upgrade"]);
    cmd.args(args);
    json_of(&mut cmd)
}

/// `nodes` nodes (the first three management nodes), one tenant cluster of `cps`
/// anti-affine control planes and `workers` workers, VM k on node k, each volume with two
/// replicas (its VM's node and the next).
fn fleet(nodes: usize, cps: usize, workers: usize) -> Value {
    synth::list(&synth::Spec {
        nodes,
        zones: 1,
        clusters: 1,
        control_planes: cps,
        workers,
        replicas: 2,
        ..synth::Spec::default()
    })
}

fn steps(v: &Value) -> &Vec<Value> {
    v["steps"].as_array().unwrap()
}

fn fate<'a>(step: &'a Value, vm: &str) -> &'a Value {
    step["vms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["vm"] == vm)
        .unwrap_or_else(|| panic!("{vm} in {step}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// One 32 GiB worker's migration with the defaults: a 15 s target pod start, then the
/// memory over one flow less the guest's 50 MB/s of dirtying.
fn one_migration(gbps: f64) -> f64 {
    let eff = (9000.0 - 52.0) / (9000.0 + 42.0);
    15.0 + 32.0 * GIB / (gbps * 1e9 / 8.0 * eff - 50e6)
}

#[test]
fn everything_migrates_and_the_plan_is_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write(tmp.path(), "three.json", &fleet(3, 0, 3));
    let (code, v, err) = upgrade(&["--from-cluster", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["clean"], true);
    assert!(v["blockers"].as_array().unwrap().is_empty());
    assert_eq!(
        v["order"],
        serde_json::json!(["hv-001", "hv-002", "hv-003"])
    );
    let s = steps(&v);
    // hv-001: worker-0 to hv-002 (a tie with hv-003 goes to the lower index).
    assert_eq!(fate(&s[0], "team-1/tenant-01-workers-0")["to"], "hv-002");
    // hv-002: worker-0 (again) and worker-1, both to hv-001, now empty; hv-003: worker-2 to
    // hv-002, empty once more.
    assert_eq!(fate(&s[1], "team-1/tenant-01-workers-0")["to"], "hv-001");
    assert_eq!(fate(&s[1], "team-1/tenant-01-workers-0")["again"], true);
    assert_eq!(fate(&s[1], "team-1/tenant-01-workers-1")["to"], "hv-001");
    assert_eq!(fate(&s[2], "team-1/tenant-01-workers-2")["to"], "hv-002");
    assert_eq!(v["migrations"], 4);
    assert_eq!(v["remigrations"], 1);
    // One migration at a time on hv-001, two side by side (one flow each) on hv-002.
    let one = one_migration(25.0);
    assert!(
        (f(&s[0]["migrate_s"]) - one).abs() < 0.01,
        "{}",
        s[0]["migrate_s"]
    );
    assert!((f(&s[1]["migrate_s"]) - one).abs() < 0.01);
    // Each node holds a replica of two volumes: both degraded while it is away, resynced
    // when it is back (15 min < the 30 min Harvester waits during an upgrade).
    for st in s {
        assert_eq!(st["degraded"], 2, "{st}");
        assert!(f(&st["volume_s"]) > 0.0);
        assert!(st["volumes"].as_str().unwrap().contains("resynced"));
        assert!((f(&st["upgrade_s"]) - 900.0).abs() < 1e-9);
    }
    let total: f64 = s
        .iter()
        .map(|st| f(&st["migrate_s"]) + f(&st["upgrade_s"]) + f(&st["volume_s"]))
        .sum();
    assert!((f(&v["window_s"]) - total).abs() < 1e-6);
    assert!((f(&v["replenishment_wait_s"]) - 1800.0).abs() < 1e-9);
}

#[test]
fn a_vm_with_a_pci_device_is_stopped_and_named_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dump = fleet(3, 0, 3);
    for o in dump["items"].as_array_mut().unwrap() {
        if o["kind"] == "VirtualMachineInstance" && o["metadata"]["name"] == "tenant-01-workers-1" {
            o["spec"]["domain"]["devices"] = serde_json::json!({"hostDevices": [
                {"name": "nic1", "deviceName": "intel.com/82599_ETHERNET_CONTROLLER_VIRTUAL_FUNCTION"}]});
        }
    }
    let p = write(tmp.path(), "pci.json", &dump);
    let (code, v, err) = upgrade(&["--from-cluster", p.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(v["clean"], false);
    let blockers = v["blockers"].as_array().unwrap();
    assert_eq!(blockers.len(), 1, "{blockers:?}");
    let b = &blockers[0];
    assert_eq!(b["node"], "hv-002");
    assert_eq!(b["subject"], "team-1/tenant-01-workers-1");
    assert!(
        b["what"].as_str().unwrap().contains("host device nic1"),
        "{b}"
    );
    assert!(
        b["fix"]
            .as_str()
            .unwrap()
            .contains("remove its host device nic1"),
        "{b}"
    );
    let s = steps(&v);
    let vm = fate(&s[1], "team-1/tenant-01-workers-1");
    assert_eq!(vm["fate"], "stopped");
    assert_eq!(vm["to"], Value::Null);
    // It starts again on hv-002 once that is back, so hv-003's worker goes to hv-001.
    assert_eq!(s[1]["migrated"], 1);
    assert_eq!(s[1]["stopped"], 1);
    assert_eq!(fate(&s[2], "team-1/tenant-01-workers-2")["to"], "hv-001");
    let (_, text, _) = plain(&[
        "simulate",
        "--from-cluster",
        p.to_str().unwrap(),
        "--upgrade",
    ]);
    assert!(text.contains("Blockers (1)"), "{text}");
    assert!(
        text.contains("do: stop team-1/tenant-01-workers-1"),
        "{text}"
    );
}

#[test]
fn a_vm_never_evacuated_stalls_and_a_vm_asked_to_shut_down_is_not_a_blocker() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dump = fleet(3, 0, 3);
    for o in dump["items"].as_array_mut().unwrap() {
        let name = o["metadata"]["name"].as_str().unwrap_or("").to_string();
        if o["kind"] == "VirtualMachineInstance" && name == "tenant-01-workers-2" {
            // Made with kubectl: no evictionStrategy, so KubeVirt's default None.
            o["spec"]
                .as_object_mut()
                .unwrap()
                .remove("evictionStrategy");
        }
        if o["kind"] == "VirtualMachine" && name == "tenant-01-workers-0" {
            o["metadata"]["labels"]["harvesterhci.io/maintain-mode-strategy"] =
                Value::String("Shutdown".into());
        }
    }
    let p = write(tmp.path(), "stall.json", &dump);
    let (code, v, err) = upgrade(&["--from-cluster", p.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    let blockers = v["blockers"].as_array().unwrap();
    assert_eq!(blockers.len(), 1, "{blockers:?}");
    assert_eq!(blockers[0]["node"], "hv-003");
    assert!(
        blockers[0]["what"]
            .as_str()
            .unwrap()
            .contains("evictionStrategy unset")
    );
    assert!(
        blockers[0]["fix"]
            .as_str()
            .unwrap()
            .contains("LiveMigrateIfPossible")
    );
    let s = steps(&v);
    let w0 = fate(&s[0], "team-1/tenant-01-workers-0");
    assert_eq!(w0["fate"], "stopped as asked");
    assert_eq!(s[0]["migrated"], 0);
    assert_eq!(fate(&s[2], "team-1/tenant-01-workers-2")["fate"], "stalls");
    assert_eq!(s[2]["stalls"], 1);
    // Left off, worker-0 moves no more: hv-002 has only worker-1 to move.
    assert_eq!(s[1]["migrated"], 1);
}

#[test]
fn a_volume_whose_only_healthy_replica_is_on_the_second_node_blocks_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dump = fleet(3, 0, 3);
    // worker-0's volume has replicas on hv-001 and hv-002; the one on hv-001 has failed.
    let vol = "pvc-00000000-000-0";
    for o in dump["items"].as_array_mut().unwrap() {
        if o["kind"] == "Replica"
            && o["spec"]["volumeName"] == vol
            && o["spec"]["nodeID"] == "hv-001"
        {
            o["status"]["currentState"] = Value::String("error".into());
        }
    }
    let p = write(tmp.path(), "last.json", &dump);
    let (code, v, err) = upgrade(&["--from-cluster", p.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    let blockers = v["blockers"].as_array().unwrap();
    // Harvester refuses to start with a Degraded volume; and hv-002's drain would block.
    assert_eq!(blockers.len(), 2, "{blockers:?}");
    assert_eq!(blockers[0]["node"], Value::Null);
    assert!(
        blockers[0]["what"]
            .as_str()
            .unwrap()
            .contains("Degraded (1 of 2")
    );
    assert_eq!(blockers[1]["node"], "hv-002");
    assert_eq!(blockers[1]["subject"], vol);
    assert!(
        blockers[1]["what"]
            .as_str()
            .unwrap()
            .contains("block-if-contains-last-replica")
            || blockers[1]["what"]
                .as_str()
                .unwrap()
                .contains("node-drain-policy"),
        "{}",
        blockers[1]
    );
    assert!(
        blockers[1]["fix"]
            .as_str()
            .unwrap()
            .contains("wait for its rebuild")
    );
    let s = steps(&v);
    // hv-001 no longer holds a replica of it: only worker-2's volume is degraded there.
    assert_eq!(s[0]["degraded"], 1);
    assert_eq!(s[0]["blocked"], serde_json::json!([]));
    assert_eq!(s[1]["blocked"], serde_json::json!([vol]));
}

#[test]
fn an_order_that_passes_vms_on_is_slower_than_emptying_the_empty_node_first() {
    let tmp = tempfile::tempdir().unwrap();
    // Four nodes, workers on hv-001..hv-003, hv-004 empty; 1 Gb/s so migrations count.
    let p = write(tmp.path(), "four.json", &fleet(4, 0, 3));
    let scenario = tmp.path().join("slow.yaml");
    std::fs::write(
        &scenario,
        "name: slow network\nnetwork: {links: 1, speed_gbps: 1, bond: 802.3ad, mtu: 9000}\n",
    )
    .unwrap();
    let (code, v, err) = upgrade(&[
        scenario.to_str().unwrap(),
        "--from-cluster",
        p.to_str().unwrap(),
        "--order",
        "hv-001,hv-002,hv-003,hv-004",
    ]);
    assert_eq!(code, 0, "{err}");
    // Given: worker-0 goes to the empty hv-004 and has to move again at hv-004's turn:
    // four migrations. hv-004 first: three.
    assert_eq!(v["migrations"], 4);
    assert_eq!(v["remigrations"], 1);
    let b = &v["better_order"];
    assert_eq!(
        b["order"],
        serde_json::json!(["hv-004", "hv-001", "hv-002", "hv-003"])
    );
    assert_eq!(b["keeps_tiers"], false);
    // The steps are the same but for one migration fewer.
    let one = one_migration(1.0);
    assert!(
        (f(&b["saves_window_s"]) - one).abs() < 0.01,
        "{} vs {one}",
        b["saves_window_s"]
    );
    assert!(v["sentence"].as_str().unwrap().contains("less"));
}

#[test]
fn anti_affine_control_planes_on_three_of_four_nodes() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write(tmp.path(), "cp.json", &fleet(4, 3, 0));
    let (code, v, err) = upgrade(&["--from-cluster", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let s = steps(&v);
    let cp = |k: usize| format!("team-1/tenant-01-cp-{k}");
    // hv-001: cp-0 can only go to hv-004 (hv-002, hv-003 hold its pool).
    assert_eq!(fate(&s[0], &cp(0))["to"], "hv-004");
    // hv-002: cp-1 to hv-001 (empty again; hv-004 holds cp-0); hv-003: cp-2 to hv-002.
    assert_eq!(fate(&s[1], &cp(1))["to"], "hv-001");
    assert_eq!(fate(&s[2], &cp(2))["to"], "hv-002");
    // hv-004: cp-0 once more, to the only node without one: hv-003.
    assert_eq!(s[3]["node"], "hv-004");
    assert_eq!(fate(&s[3], &cp(0))["to"], "hv-003");
    assert_eq!(fate(&s[3], &cp(0))["again"], true);
    // While hv-001 is away, losing hv-002 strands cp-1 (hv-003 and hv-004 hold the pool)
    // and leaves cp-0's volume (replicas hv-001, hv-002) with no healthy replica.
    let n = &s[0]["next_failure"];
    assert_eq!(n["node"], "hv-002", "{n}");
    assert_eq!(n["stranded_vms"], 1);
    assert_eq!(n["volumes_without_replica"], 1);
    assert!(
        v["sentence"]
            .as_str()
            .unwrap()
            .contains("one more node failure")
    );
}

#[test]
fn flags_that_do_not_go_together_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write(tmp.path(), "three.json", &fleet(3, 0, 3));
    let d = p.to_str().unwrap();
    for args in [
        vec![
            "simulate",
            "--from-cluster",
            d,
            "--upgrade",
            "--drain",
            "hv-001",
        ],
        vec![
            "simulate",
            "--from-cluster",
            d,
            "--upgrade",
            "--rebuild-data",
            "1TiB",
        ],
        vec!["simulate", "--from-cluster", d, "--order", "hv-001"],
    ] {
        let (code, _, err) = plain(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
    let (code, _, err) = plain(&[
        "simulate",
        "--from-cluster",
        d,
        "--upgrade",
        "--order",
        "hv-01",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no node `hv-01`"), "{err}");
    assert!(err.contains("did you mean"), "{err}");
}

#[test]
fn upgrade_with_a_report_adds_its_section_and_timeline() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write(tmp.path(), "three.json", &fleet(3, 0, 3));
    let md = tmp.path().join("review.md");
    let (code, _, err) = plain(&[
        "simulate",
        "--from-cluster",
        p.to_str().unwrap(),
        "--upgrade",
        "--report",
        md.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("## Rolling upgrade"), "{text}");
    assert!(text.contains("review-upgrade-timeline.svg"), "{text}");
    let svg = std::fs::read_to_string(tmp.path().join("review-upgrade-timeline.svg")).unwrap();
    for node in ["hv-001", "hv-002", "hv-003"] {
        assert!(svg.contains(node), "{node}");
    }
    assert!(svg.matches("<rect").count() >= 9, "{svg}");
    // HTML: the same section, the chart inline.
    let html = tmp.path().join("review.html");
    let (code, _, err) = plain(&[
        "simulate",
        "--from-cluster",
        p.to_str().unwrap(),
        "--upgrade",
        "--report",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"upgrade\">"), "{page}");
    assert!(
        page.contains("<figure id=\"chart-upgrade-timeline\">"),
        "{page}"
    );
}

#[test]
fn the_example_dump_through_the_upgrade() {
    // Run from the repository, so the dump is named as a user would type it.
    assert!(repo().join("simulations/live-fleet.yaml").is_file());
    let (code, text, err) = plain(&[
        "simulate",
        "--from-cluster",
        "simulations/live-fleet.yaml",
        "--upgrade",
    ]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("upgrade_example_dump", text);
}

#[test]
fn the_reference_scenario_through_the_upgrade() {
    let (code, text, err) = plain(&[
        "simulate",
        "simulations/reference-factory.yaml",
        "--upgrade",
    ]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("upgrade_reference_scenario", text);
}

#[test]
fn a_single_node_cluster_stops_every_vm() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write(tmp.path(), "one.json", &fleet(1, 0, 2));
    let (code, v, err) = upgrade(&["--from-cluster", p.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    let s = steps(&v);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["stopped"], 2);
    assert_eq!(s[0]["migrated"], 0);
    assert!(
        v["blockers"][0]["what"]
            .as_str()
            .unwrap()
            .contains("single-node cluster"),
        "{}",
        v["blockers"]
    );
}
