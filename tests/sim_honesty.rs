//! Issue 11: answers a capacity review can sign. Each test builds a scenario where the right
//! answer is computed here independently (brute force over counts, closed forms, reloading
//! the scenario with the change the fix proposes) and checks the report against it.

use rackplan::simulate::failure::headroom;
use rackplan::simulate::failure::risk::{Copysets, FleetRisk};
use rackplan::simulate::scenario::{Failures, Pool};
use rackplan::simulate::{Study, questions};
use serde_json::Value;

use crate::support::{json_of, rackplan_json, repo};

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn simulate(args: &[&str]) -> (i32, Value, String) {
    json_of(rackplan_json(&["simulate"]).args(args))
}

fn text_of(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .env("COLUMNS", "200")
        .arg("simulate")
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The reference factory without the slow parts (max clusters, the timeline), few trials.
fn quick(dir: &std::path::Path, edit: impl Fn(String) -> String) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo().join("simulations/reference-factory.yaml")).unwrap();
    let text = text
        .replace("risk_trials: 10000", "risk_trials: 200")
        .replace("  max_clusters_shape: standard\n", "");
    let cut = text.find("teams:").unwrap();
    let end = text.find("analysis:").unwrap();
    let text = format!("{}{}", &text[..cut], &text[end..]);
    write(dir, "quick.yaml", &edit(text))
}

const NON_MONOTONE: &str = "name: non-monotone
fleet:
  classes:
    - {name: a, count: 3, threads: 32, memory_gib: 64, disks: 1, disk_tb: 4, racks: [r0, r1, r2]}
    - {name: b, count: 2, threads: 32, memory_gib: 192, disks: 1, disk_tb: 4, racks: [r0, r1, r2]}
platform: {overcommit_memory_pct: 100, reserved_memory_gib: 0, vm_memory_overhead_gib: 0}
shapes:
  s:
    pools:
      - {name: cp, count: 3, vcpu: 2, memory_gib: 4, disks_gib: [10], anti_affinity: true}
      - {name: w, count: 1, vcpu: 2, memory_gib: 8, disks_gib: [10]}
analysis: {max_clusters_shape: s, risk_trials: 10}
";

#[test]
fn max_clusters_is_the_last_count_before_the_first_failure() {
    let dir = tempfile::tempdir().unwrap();
    let l = Study::from_file(&write(dir.path(), "s.yaml", NON_MONOTONE)).unwrap();
    let pools = l.shapes["s"].as_slice();
    // Brute force over every count.
    let passes: Vec<bool> = (0..40)
        .map(|n| {
            let cl: Vec<&[Pool]> = std::iter::repeat_n(pools, n).collect();
            headroom::analyse(&l.place(&cl)).verdict.passes()
        })
        .collect();
    let first_fail = passes.iter().position(|p| !p).unwrap() as u32;
    let again: Vec<u32> = (first_fail + 1..40)
        .filter(|&n| passes[n as usize])
        .collect();
    assert!(
        !again.is_empty(),
        "the scenario is not monotone: {passes:?}"
    );
    let m = questions::max_clusters(&l, "s");
    assert_eq!(m.additional, Some(first_fail - 1));
    assert_eq!(m.first_failure, Some(first_fail));
    for n in &m.passes_again {
        assert!(passes[*n as usize], "{n} reported as passing again");
    }
    assert!(
        m.passes_again.contains(&again[0]),
        "{:?} vs {again:?}",
        m.passes_again
    );
    let text = text_of(&[dir.path().join("s.yaml").to_str().unwrap()]);
    assert!(
        text.contains(&format!("Passes again at {}", again[0])),
        "{text}"
    );
}

const THREE_NODES: &str = "name: three
fleet:
  classes:
    - {name: n, count: 3, threads: 32, memory_gib: 256, disks: 1, disk_tb: 4, racks: [r1, r2, r3]}
shapes:
  s: {pools: [{name: w, count: 3, vcpu: 2, memory_gib: 8, disks_gib: [100]}]}
clusters: [{shape: s, count: 1}]
analysis: {risk_trials: 200}
";

#[test]
fn redundancy_that_never_returns_reads_as_never_everywhere() {
    // Three nodes, three replicas: a lost node's replicas have nowhere to go.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "s.yaml", THREE_NODES);
    let (code, v, stderr) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(v["verdict"], "fail");
    let rb = &v["rebuild"];
    assert!(rb["hours_to_full_redundancy"].is_null(), "{rb}");
    assert!(
        rb["never"]
            .as_str()
            .unwrap()
            .contains("no node that may take them")
    );
    assert!(rb["exposure_hours_max"].is_null());
    assert!(rb["stranded_rebuilds"].as_u64().unwrap() > 0);
    assert!(rb["recommended_limit"].is_null());
    for p in rb["sweep"].as_array().unwrap() {
        assert!(p["hours"].is_null(), "{p}");
    }
    // The risk model keeps replicas missing until the node is replaced (72 h default).
    assert_eq!(v["risk"]["exposure_window_h"], 72.0);
    assert!(
        v["verdict_reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().contains("never restored"))
    );
    let text = text_of(&[p.to_str().unwrap()]);
    assert!(text.contains("full redundancy is never restored"), "{text}");
    assert!(!text.contains("0.00 h exposure"));
}

#[test]
fn a_replica_over_the_abort_limit_restarts_forever() {
    // One 20,000 GiB volume (12,000 GiB of data) at 100 MB/s: 36 h per attempt, over 24 h.
    let dir = tempfile::tempdir().unwrap();
    let text = THREE_NODES
        .replace("count: 3, threads", "count: 5, threads")
        .replace("disk_tb: 4", "disk_tb: 60")
        .replace(
            "{name: w, count: 3, vcpu: 2, memory_gib: 8, disks_gib: [100]}",
            "{name: w, count: 1, vcpu: 2, memory_gib: 8, disks_gib: [20000]}",
        );
    let p = write(dir.path(), "s.yaml", &text);
    let (code, v, _) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(code, 1);
    let rb = &v["rebuild"];
    assert!(rb["hours_to_full_redundancy"].is_null(), "{rb}");
    assert_eq!(rb["aborted_rebuilds"], 1);
    assert!(rb["abort_restarts"].as_u64().unwrap() >= 1);
    assert!(rb["never"].as_str().unwrap().contains("restart forever"));
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"rebuild-abort-limit"), "{kinds:?}");
    // With a 48 h limit the same replica completes: 12,000 GiB / 100 MB/s + 645 s.
    let p = write(
        dir.path(),
        "s2.yaml",
        &text.replace("analysis:", "platform: {rebuild_abort_h: 48}\nanalysis:"),
    );
    let (_, v, _) = simulate(&[p.to_str().unwrap()]);
    let want = (12_000.0 * 1024f64.powi(3) / 100e6 + 645.0) / 3600.0;
    let got = v["rebuild"]["hours_to_full_redundancy"].as_f64().unwrap();
    assert!((got - want).abs() < 0.01, "{got} vs {want}");
}

#[test]
fn rebuild_and_headroom_apply_the_same_storage_rules() {
    // Four 1 TB disks at 100 % over-provisioning, volumes scheduled to about 89 % of each:
    // little data (minimal-available never binds), but no node has scheduled room for a
    // lost node's replicas. Headroom and rebuild must both strand them.
    let dir = tempfile::tempdir().unwrap();
    let text = "name: overprovisioned
fleet:
  classes:
    - {name: n, count: 4, threads: 32, memory_gib: 256, disks: 1, disk_tb: 1, racks: [r1, r2, r3, r4]}
platform: {overcommit_storage_pct: 100, data_fill: 0.05}
shapes:
  s: {pools: [{name: w, count: 10, vcpu: 2, memory_gib: 8, disks_gib: [100]}]}
clusters: [{shape: s, count: 1}]
analysis: {risk_trials: 200}
";
    let p = write(dir.path(), "s.yaml", text);
    let (_, v, _) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(
        v["headroom"]["unplaced_replicas"], 0,
        "everything fits with all nodes up"
    );
    let failed = v["rebuild"]["failed_node"].as_str().unwrap();
    let sc = v["headroom"]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == format!("node {failed}"))
        .unwrap();
    let strand_h = sc["stranded_replicas"].as_u64().unwrap();
    let strand_r = v["rebuild"]["stranded_rebuilds"].as_u64().unwrap();
    assert!(
        strand_h > 0 && strand_r > 0,
        "headroom {strand_h}, rebuild {strand_r}"
    );
    assert_eq!(
        strand_h, strand_r,
        "the same node strands as many replicas in both"
    );
    assert!(v["rebuild"]["hours_to_full_redundancy"].is_null());
    // At 200 % both rebuild everything.
    let p = write(
        dir.path(),
        "s2.yaml",
        &text.replace("overcommit_storage_pct: 100", "overcommit_storage_pct: 200"),
    );
    let (_, v, _) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(v["rebuild"]["stranded_rebuilds"], 0);
    assert!(v["rebuild"]["hours_to_full_redundancy"].is_number());
}

#[test]
fn scatter_width_is_clamped_and_the_exact_value_named() {
    let dir = tempfile::tempdir().unwrap();
    for (asked, used) in [(100, 26), (5, 6)] {
        let p = quick(dir.path(), |t| {
            t.replace(
                "copyset_scatter_width: 4",
                &format!("copyset_scatter_width: {asked}"),
            )
        });
        let (_, v, _) = simulate(&[p.to_str().unwrap()]);
        let c = &v["risk"]["correlated"];
        assert_eq!(c["scatter_width"], used, "{c}");
        assert_eq!(c["scatter_width_requested"], asked);
        assert!(c["scatter_width_measured"].as_f64().unwrap() <= f64::from(used));
        for k in ["longhorn", "copyset"] {
            let e = &c[k];
            assert_eq!(e["method"], "exact", "27 nodes are enumerated");
            let val = e["value"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&val));
            let ci = &c[format!("{k}_ci95")];
            assert!(
                ci[0].as_f64().unwrap() <= val + 0.01 && val - 0.01 <= ci[1].as_f64().unwrap(),
                "{k}: {val} vs {ci}"
            );
        }
        // Longhorn's placement, 3 of 27 failing: exactly (copysets) / C(27, 3).
        let lh = c["longhorn_copysets"].as_f64().unwrap() / 2925.0;
        assert!((c["longhorn"]["value"].as_f64().unwrap() - lh).abs() < 1e-12);
        assert!(
            v["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["kind"] == "scatter-width")
        );
    }
}

fn kinds(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn warnings_fire_where_a_limit_is_crossed_and_only_there() {
    let dir = tempfile::tempdir().unwrap();
    let (_, v, _) = simulate(&[quick(dir.path(), |t| t).to_str().unwrap()]);
    assert_eq!(
        kinds(&v),
        Vec::<String>::new(),
        "the reference factory crosses no limit"
    );
    let cases: [(&str, &str, &str, &[&str]); 4] = [
        (
            "quota",
            "  replicas: 3\n",
            "  replicas: 3\n  etcd_quota_gib: 0.05\n",
            &["control-plane"],
        ),
        (
            "pods",
            "  replicas: 3\n",
            "  replicas: 3\n  max_pods: 50\n",
            &["pods-per-node"],
        ),
        (
            "share",
            "analysis:",
            "analysis:\n  warn: {rebuild_share: 0.02}",
            &["rebuild-share", "rebuild-limit-fallback"],
        ),
        (
            "memory",
            "overcommit_memory_pct: 150",
            "overcommit_memory_pct: 300",
            &["memory-overcommit"],
        ),
    ];
    for (name, from, to, want) in cases {
        let p = quick(dir.path(), |t| {
            let t = t.replace(from, to);
            if name == "memory" {
                t.replace(
                    "{shape: standard, count: 60}",
                    "{shape: standard, count: 90}",
                )
            } else {
                t
            }
        });
        let (_, v, stderr) = simulate(&[p.to_str().unwrap()]);
        let got = kinds(&v);
        for w in want {
            assert!(
                got.iter().any(|g| g == w),
                "{name}: {got:?} lacks {w} {stderr}"
            );
        }
    }
}

/// One source for many receivers: every volume of r-01 has its other replica on s-01, the
/// only node of rack r1; Longhorn v1.11 (Harvester v1.8) spreads the replacements over
/// r-02..r-04, and all of them read from s-01. Longhorn limits receiving nodes only.
#[test]
fn a_source_serving_more_streams_than_the_limit_is_warned() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "source.yaml",
        "name: one-source
fleet:
  classes:
    - {name: r, count: 4, threads: 64, memory_gib: 256, disks: 1, disk_tb: 8, racks: [r0]}
    - {name: s, count: 1, threads: 64, memory_gib: 256, disks: 1, disk_tb: 8, racks: [r1]}
platform: {replicas: 2, harvester_version: v1.8, rebuild_limit: 2}
shapes:
  w: {pools: [{name: w, count: 40, vcpu: 2, memory_gib: 4, disks_gib: [200]}]}
clusters: [{shape: w, count: 1}]
analysis: {risk_trials: 200, rebuild_node: 0, warn: {rebuild_share: 0.05}}
",
    );
    let (_, v, stderr) = simulate(&[p.to_str().unwrap()]);
    let rb = &v["rebuild"];
    assert_eq!(rb["failed_node"], "r-01", "{stderr}");
    assert!(
        rb["peak_source_streams"].as_u64().unwrap() > 2,
        "{}",
        rb["peak_source_streams"]
    );
    assert!(
        kinds(&v).iter().any(|k| k == "rebuild-source-load"),
        "{:?}",
        kinds(&v)
    );
}

#[test]
fn one_tightest_node_unplaced_vms_in_the_table_and_the_force_reset_policy() {
    let dir = tempfile::tempdir().unwrap();
    let p = quick(dir.path(), |t| t);
    let text = text_of(&[p.to_str().unwrap()]);
    assert_eq!(text.matches("(tightest").count(), 1, "{text}");
    assert!(text.contains("Warnings\n  None."), "{text}");
    let (_, v, _) = simulate(&[p.to_str().unwrap()]);
    // v1.7: 45 s not ready + period 15 + vmMigrationTimeout 180 + 15 s pod + 60 s boot.
    assert_eq!(v["vm_restart"]["seconds"], 315.0);
    let p = quick(dir.path(), |t| {
        t.replace("harvester_version: v1.7", "harvester_version: v1.6")
    });
    let (_, v, _) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(v["vm_restart"]["seconds"], 420.0, "period 300 s up to v1.6");
    // A VM bigger than any host is named in the text, not only in the JSON.
    let p = quick(dir.path(), |t| {
        t.replace(
            "  large:\n",
            "  huge:\n    pools:\n      - {name: w, count: 1, vcpu: 4, memory_gib: 4000, disks_gib: [10]}\n  large:\n",
        )
        .replace("clusters:\n", "clusters:\n  - {shape: huge, count: 1}\n")
    });
    let text = text_of(&[p.to_str().unwrap()]);
    assert!(
        text.contains("Not placed even with every host up: 1 VM(s)"),
        "{text}"
    );
}

#[test]
fn detached_volumes_are_not_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let p = quick(dir.path(), |t| {
        t.replace(
            "  large:\n",
            "  parked:\n    pools:\n      - {name: w, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [100], running: false}\n  large:\n",
        )
        .replace("clusters:\n", "clusters:\n  - {shape: parked, count: 20}\n")
    });
    let (_, v, _) = simulate(&[p.to_str().unwrap()]);
    let rb = &v["rebuild"];
    let detached = rb["detached_not_rebuilt"].as_u64().unwrap();
    assert!(detached > 0, "{rb}");
    // Every replica on the failed node is either rebuilt or left for later.
    let windows = rb["windows"].as_array().unwrap().len() as u64;
    assert_eq!(windows, rb["replicas_to_rebuild"].as_u64().unwrap());
    let p2 = write(
        dir.path(),
        "offline.yaml",
        &std::fs::read_to_string(&p).unwrap().replace(
            "  replicas: 3\n",
            "  replicas: 3\n  offline_replica_rebuilding: true\n",
        ),
    );
    let (_, v2, _) = simulate(&[p2.to_str().unwrap()]);
    assert_eq!(v2["rebuild"]["detached_not_rebuilt"], 0);
    assert_eq!(
        v2["rebuild"]["replicas_to_rebuild"].as_u64().unwrap(),
        rb["replicas_to_rebuild"].as_u64().unwrap() + detached
    );
}

#[test]
fn stranded_vms_are_down_for_the_whole_outage() {
    // One node, transient failures only (3 a year, 10 min mean), no bursts: ten VMs that
    // cannot restart elsewhere are down 10 x 3 x 10 min = 5 VM-hours a year.
    let fr = |restartable: f64, stranded: f64| FleetRisk {
        rack_of: vec![0],
        racks: 1,
        copysets: Copysets::new(1, [0u64]),
        vms_restartable: vec![restartable],
        vms_stranded: vec![stranded],
        failures: Failures {
            node_permanent_per_year: 0.0,
            node_transient_per_year: 3.0,
            transient_minutes: 10.0,
            rack_events_per_year: 0.0,
            burst_fraction: 0.0,
            ..Failures::default()
        },
        window_h: 1.0,
        vm_restart_s: Some(150.0),
    };
    use rackplan::simulate::failure::risk::{expected_vm_downtime, monte_carlo};
    let s = monte_carlo(&fr(0.0, 10.0), 10, 4000, 3);
    let (mean, half) = s.vm_downtime;
    assert!((mean - 5.0).abs() <= half, "{mean} ± {half}");
    assert!((expected_vm_downtime(&fr(0.0, 10.0)) - 5.0).abs() < 1e-9);
    // Restartable VMs are down at most the restart time: 10 x 3 x E[min(D, 150 s)].
    let mean_h: f64 = 10.0 / 60.0;
    let cap = 150.0 / 3600.0;
    let want = 10.0 * 3.0 * mean_h * (1.0 - (-cap / mean_h).exp());
    let r = monte_carlo(&fr(10.0, 0.0), 10, 4000, 3);
    let (mean, half) = r.vm_downtime;
    assert!((mean - want).abs() <= half, "{want} vs {mean} ± {half}");
    assert!((expected_vm_downtime(&fr(10.0, 0.0)) - want).abs() < 1e-9);
}

#[test]
fn the_15_tib_question() {
    let dir = tempfile::tempdir().unwrap();
    // The reference node cannot hold 15 TiB: the refusal says why.
    let p = quick(dir.path(), |t| t);
    let (code, _, stderr) = simulate(&[p.to_str().unwrap(), "--rebuild-data", "15TiB"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("10.48 TiB"), "{stderr}");
    assert!(
        stderr.contains("storage-minimal-available-percentage"),
        "{stderr}"
    );
    let (code, _, stderr) = simulate(&[p.to_str().unwrap(), "--rebuild-data", "15"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("give a unit"), "{stderr}");
    // 8 TiB fits the node; the named node is loaded with it. Longhorn v1.10 piles the
    // burst onto the rack's emptiest disks, past their 2.73 TiB free: the review fails
    // and names them rather than give a time.
    let (code, v, stderr) = simulate(&[
        p.to_str().unwrap(),
        "--rebuild-data",
        "8TiB",
        "--rebuild-node",
        "compute-07",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let rb = &v["rebuild"];
    assert_eq!(rb["failed_node"], "compute-07");
    assert_eq!(rb["what_if_tib"], 8.0);
    assert!(
        (rb["tib_to_rebuild"].as_f64().unwrap() - 8.0).abs() < 1e-6,
        "{rb}"
    );
    assert!(rb["hours_to_full_redundancy"].is_null(), "{rb}");
    assert!(rb["overfilled_disks"].as_u64().unwrap() >= 1, "{rb}");
    // The shipped scenario answers it for 7.68 TB drives: under v1.10 the pile overfills
    // a disk; v1.11's rule, and a lower over-provisioning, each computed, complete.
    let text = std::fs::read_to_string(repo().join("simulations/rebuild-15tib.yaml")).unwrap();
    let p = write(
        dir.path(),
        "r.yaml",
        &text.replace("risk_trials: 10000", "risk_trials: 200"),
    );
    let (code, v, stderr) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    let rb = &v["rebuild"];
    assert!((rb["tib_to_rebuild"].as_f64().unwrap() - 15.0).abs() < 1e-6);
    assert!(rb["hours_to_full_redundancy"].is_null(), "{rb}");
    let first = &rb["receiving_disks"][0];
    assert!(first["overfill_bytes"].as_f64().unwrap() > 0.0, "{first}");
    let reason = v["verdict_reasons"][0].as_str().unwrap();
    let named = format!(
        "{}/{}",
        first["node"].as_str().unwrap(),
        first["disk"].as_str().unwrap()
    );
    assert!(reason.contains(&named), "{reason}");
    let fix = &rb["overfill_fix"];
    assert!(
        fix["over_provisioning_pct"].as_u64().unwrap() < 200,
        "{fix}"
    );
    let h = fix["other_rule_hours"].as_f64().unwrap();
    // 15 TiB at 2 streams x 100 MB/s into each of 26 survivors is about 0.9 h of transfer;
    // never less than the data over all survivors' links.
    assert!(
        h > 0.18 + 15.0 * 1024f64.powi(4) / (26.0 * 6.1e9) / 3600.0,
        "{h}"
    );
    assert_eq!(
        rb["other_rule"]["hours_to_full_redundancy"].as_f64(),
        Some(h)
    );
}

#[test]
fn n_plus_two_and_named_failure_sets() {
    let dir = tempfile::tempdir().unwrap();
    let p = quick(dir.path(), |t| {
        t + "headroom:\n  failures: 2\n  node_and_rack: true\n  sets:\n    - {name: tor-r01, racks: [r01]}\n    - {name: maintenance compute-01, nodes: [compute-01], plus_any_node: true}\n"
    });
    let (_, v, stderr) = simulate(&[p.to_str().unwrap()]);
    let h = &v["headroom"];
    let c = h["combined"]
        .as_array()
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(c[0]["kind"], "pair");
    assert_eq!(c[0]["checked"], 27 * 26 / 2);
    assert_eq!(c[1]["kind"], "node+rack");
    assert_eq!(
        c[1]["checked"],
        3 * 18,
        "each rack of 9 with one of the 18 other nodes"
    );
    let sets: Vec<&Value> = h["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "set")
        .collect();
    assert_eq!(sets.len(), 2);
    assert_eq!(sets[0]["name"], "tor-r01");
    assert_eq!(sets[0]["failed_hosts"], 9);
    assert!(
        sets[1]["name"]
            .as_str()
            .unwrap()
            .starts_with("maintenance compute-01 + node ")
    );
    assert_eq!(sets[1]["failed_hosts"], 2);
    // The worst pair's figures are those of re-placing that pair on its own.
    let l = Study::from_file(&p).unwrap();
    let pl = l.place(&l.current());
    let worst = &c[0]["worst"][0];
    let name = worst["name"].as_str().unwrap();
    let (a, b) = name.trim_start_matches("nodes ").split_once(" + ").unwrap();
    let hosts = [
        pl.topo().host_index(a).unwrap(),
        pl.topo().host_index(b).unwrap(),
    ];
    let mut hosts = hosts.to_vec();
    hosts.sort_unstable();
    let again = headroom::scenario(&pl, name, headroom::Kind::Pair, &hosts);
    assert_eq!(worst["stranded"], again.stranded);
    assert_eq!(worst["stranded_replicas"], again.stranded_replicas);
    // An unknown node in a set is refused.
    let bad = quick(dir.path(), |t| {
        t + "headroom:\n  sets:\n    - {name: x, nodes: [compute-99]}\n"
    });
    let (code, _, stderr) = simulate(&[bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("compute-99"), "{stderr}");
}

#[test]
fn what_would_fix_it_is_checked_by_placing_again() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = |compute: u32, clusters: u32| {
        write(
            dir.path(),
            &format!("f-{compute}-{clusters}.yaml"),
            &format!(
                "name: fix
fleet:
  classes:
    - {{name: compute, count: {compute}, threads: 64, memory_gib: 256, disks: 2, disk_tb: 3.84, racks: [r1, r2, r3]}}
shapes:
  standard:
    pools:
      - {{name: cp, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [60], anti_affinity: true}}
      - {{name: workers, count: 3, vcpu: 8, memory_gib: 32, disks_gib: [200]}}
clusters: [{{shape: standard, count: {clusters}}}]
analysis: {{risk_trials: 100}}
"
            ),
        )
    };
    let (code, v, _) = simulate(&[scenario(6, 30).to_str().unwrap()]);
    assert_eq!(code, 1);
    let fix = &v["fix"];
    let add = fix["add_nodes"]["count"].as_u64().unwrap() as u32;
    assert_eq!(fix["add_nodes"]["like"], "compute");
    assert_eq!(
        fix["add_nodes"]["racks"].as_array().unwrap().len(),
        add as usize
    );
    let verdict =
        |c: u32, n: u32| simulate(&[scenario(c, n).to_str().unwrap()]).1["verdict"].clone();
    assert_eq!(verdict(6 + add, 30), "pass", "adding {add} passes");
    if add > 1 {
        assert_eq!(verdict(6 + add - 1, 30), "fail", "one fewer does not");
    }
    let remove = fix["remove_clusters"]["count"].as_u64().unwrap() as u32;
    assert_eq!(fix["remove_clusters"]["shape"], "standard");
    assert_eq!(verdict(6, 30 - remove), "pass");
    assert_eq!(verdict(6, 30 - remove + 1), "fail");
    assert!(text_of(&[scenario(6, 30).to_str().unwrap()]).contains("What would fix it"));
}

#[test]
fn a_what_if_on_a_fleet_without_clusters_and_a_failing_what_if_with_its_fix_search() {
    let dir = tempfile::tempdir().unwrap();
    // No clusters running: the what-if's volumes take the shapes' sizes.
    let text = THREE_NODES
        .replace("count: 3, threads", "count: 6, threads")
        .replace("clusters: [{shape: s, count: 1}]\n", "")
        + "rebuild: {node: n-02, data_tib: 1}\n";
    let p = write(dir.path(), "empty.yaml", &text);
    let (code, v, stderr) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(v["rebuild"]["failed_node"], "n-02");
    assert!((v["rebuild"]["tib_to_rebuild"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    // A what-if that never completes fails the verdict, and the fix search (which removes
    // every cluster on the way) checks the same what-if rather than the placed fleet.
    let text = THREE_NODES
        .replace("count: 3, threads", "count: 6, threads")
        .replace("analysis:", "platform: {rebuild_abort_h: 0.05}\nanalysis:")
        + "rebuild: {node: n-02, data_tib: 1}\n";
    let p = write(dir.path(), "abort.yaml", &text);
    let (code, v, stderr) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        v["rebuild"]["never"]
            .as_str()
            .unwrap()
            .contains("0.05 h limit"),
        "{}",
        v["rebuild"]
    );
    assert!(
        v["fix"]["add_nodes"].is_null(),
        "more nodes do not speed up one stream: {}",
        v["fix"]
    );
    assert!(v["fix"]["remove_clusters"].is_null(), "{}", v["fix"]);
}

#[test]
fn a_fleet_of_no_nodes_is_refused_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "zero.yaml",
        &THREE_NODES.replace("count: 3, threads", "count: 0, threads"),
    );
    let (code, _, stderr) = simulate(&[p.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("zero.yaml:3:") && stderr.contains("no nodes"),
        "{stderr}"
    );
}
