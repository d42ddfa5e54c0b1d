//! The simulator: published results reproduced by the Monte Carlo engine, the reference
//! factory end to end through the CLI, Rancher import, determinism.

use rackplan::simulate::failure::risk::{self, Copysets};
use serde_json::Value;

use crate::support::{json_of, rackplan_json, repo, shared};

/// Copysets (Cidon et al., ATC 2013), N = 5000, R = 3, 1 % of the nodes (50) failing at
/// once: the Monte Carlo over explicit placements lands on the published numbers, and its
/// 95 % interval holds the closed form.
#[test]
fn copysets_paper_by_monte_carlo() {
    let (n, f) = (5000usize, 50usize);
    let cases: Vec<(&str, Copysets, f64, f64, u32)> = vec![
        (
            "minimal copysets, S = 2",
            Copysets::copyset_replication(n, 3, 2, 11),
            risk::p_loss_copyset(5000, 3, 2, 50),
            0.0015,
            40_000,
        ),
        (
            "copyset replication, S = 10",
            Copysets::copyset_replication(n, 3, 10, 12),
            risk::p_loss_copyset(5000, 3, 10, 50),
            0.0078,
            20_000,
        ),
        (
            "random replication, S = 10",
            Copysets::random(n, 3, 275_000, 13),
            risk::p_loss_random(5000, 3, 50, 275_000.0),
            0.228,
            2_000,
        ),
    ];
    for (name, sets, closed, published, trials) in cases {
        let (mc, ci) = risk::what_if_monte_carlo(&sets, n, f, trials, 5);
        assert!(
            ci[0] <= closed && closed <= ci[1],
            "{name}: closed form {closed} outside MC interval {ci:?} (MC {mc})"
        );
        assert!(
            (closed - published).abs() / published < 0.05,
            "{name}: closed form {closed} vs published {published}"
        );
        assert!(
            (mc - published).abs() <= (ci[1] - ci[0]).max(published * 0.1),
            "{name}: MC {mc} vs published {published}"
        );
    }
}

#[test]
fn copysets_paper_ramcloud_random_replication() {
    // 8000 chunks per node, N * 8000 / 3 chunks on random triples: almost certain loss.
    let sets = Copysets::random(5000, 3, 5000 * 8000 / 3, 21);
    let closed = risk::p_loss_random(5000, 3, 50, sets.len() as f64);
    assert!(closed > 0.9999);
    let (mc, ci) = risk::what_if_monte_carlo(&sets, 5000, 50, 300, 6);
    assert!(mc > 0.99 && ci[1] >= closed, "MC {mc} {ci:?}");
}

fn simulate(args: &[&str]) -> (i32, Value, String) {
    json_of(rackplan_json(&["simulate"]).args(args))
}

fn quick_factory(dir: &std::path::Path) -> std::path::PathBuf {
    // The shipped scenario with fewer Monte Carlo trials, so the test stays quick.
    let text = std::fs::read_to_string(repo().join("simulations/reference-factory.yaml")).unwrap();
    let text = text.replace("risk_trials: 10000", "risk_trials: 500");
    let p = dir.join("factory.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn reference_factory_gives_a_verdict_max_clusters_rebuild_and_risk_with_plots() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = quick_factory(dir.path());
    let plots = dir.path().join("plots");
    let (code, v, stderr) = simulate(&[
        scenario.to_str().unwrap(),
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let h = &v["headroom"];
    assert_eq!(h["verdict"], "pass");
    assert!(h["rule_25pct"] == "pass" || h["rule_25pct"] == "fail");
    let scenarios = h["scenarios"].as_array().unwrap();
    assert_eq!(
        scenarios.iter().filter(|s| s["kind"] == "node").count(),
        27,
        "every node"
    );
    assert_eq!(
        scenarios.iter().filter(|s| s["kind"] == "rack").count(),
        3,
        "every rack"
    );
    for s in scenarios {
        for k in ["name", "displaced", "stranded", "slack"] {
            assert!(!s[k].is_null(), "{k} in {s}");
        }
    }
    let rack = scenarios.iter().find(|s| s["kind"] == "rack").unwrap();
    assert_eq!(rack["displaced"], 120, "a third of the 360 VMs");
    assert!(v["max_clusters"]["additional"].as_u64().unwrap() > 0);
    let rb = &v["rebuild"];
    assert!(
        rb["hours_to_full_redundancy"].as_f64().unwrap() > 0.18,
        "at least detection + wait"
    );
    assert!(rb["bottleneck"].is_string());
    assert_eq!(rb["sweep"].as_array().unwrap().len(), 8);
    let risk = &v["risk"];
    assert_eq!(risk["method"], "conditional");
    assert!(
        risk["method_name"]
            .as_str()
            .unwrap()
            .starts_with("conditional Monte Carlo")
    );
    // Every figure an estimate with its interval: 2 and 3 replicas both estimated, the
    // 3-replica interval within a factor of 2, and 3 replicas far safer than 2.
    let by: Vec<&Value> = risk["by_replicas"].as_array().unwrap().iter().collect();
    let rate = |b: &Value| {
        let d = &b["data_loss"];
        assert_eq!(d["upper_bound_only"], false, "{d}");
        let ci: Vec<f64> = d["ci95"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let p = d["per_year"].as_f64().unwrap();
        assert!(ci[0] > 0.0 && ci[0] <= p && p <= ci[1], "{d}");
        (p, ci)
    };
    let (two, _) = rate(by[0]);
    let (three, ci3) = rate(by[1]);
    assert_eq!(by[1]["replicas"], 3);
    assert!(ci3[1] / ci3[0] < 2.0, "3 replicas: {ci3:?}");
    assert!(three < two / 100.0, "{three} vs {two}");
    // The scenario runs 3 replicas: its headline figure is the 3-replica one.
    assert_eq!(
        risk["data_loss"]["per_year"],
        by[1]["data_loss"]["per_year"]
    );
    let markov = &risk["markov"];
    let ratio = markov["markov_one_repair_per_year"].as_f64().unwrap()
        / markov["fixed_window_per_year"].as_f64().unwrap();
    assert!((ratio - 2.0).abs() < 0.05, "{markov}");
    for f in [
        "headroom-slack.svg",
        "rebuild-limit.svg",
        "risk-replicas.svg",
    ] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{f}"
        );
        // Counts and limits are sequences, drawn as lines; replica counts are separate
        // cases, drawn as points with intervals and no line between them.
        assert_eq!(
            svg.contains("<polyline"),
            f != "risk-replicas.svg",
            "{f}: a line only where x is a sequence"
        );
        assert!(!svg.contains('`'), "{f}: titles are plain text");
    }
    // The risk chart draws estimates only: no open marker (an upper bound) at all.
    let chart = std::fs::read_to_string(plots.join("risk-replicas.svg")).unwrap();
    assert!(!chart.contains(r#"fill="white" stroke"#), "{chart}");
    assert!(chart.contains("conditional Monte Carlo"));
    // Quotas: logistique asks for 2 large clusters (240 vCPU) with a 200 vCPU quota.
    assert!(
        v["refused"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["team"] == "logistique")
    );
}

#[test]
fn a_full_fleet_fails_where_the_25_percent_rule_passes() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = quick_factory(dir.path());
    // Two tiny racks next to a big one: a rack failure displaces more than the rest can take.
    let text = std::fs::read_to_string(&scenario)
        .unwrap()
        .replace(
            "{shape: standard, count: 60}",
            "{shape: standard, count: 95}",
        )
        .replace(
            "      racks: [r01, r02, r03]\n  racks:",
            "      racks: [r01, r01, r01, r01, r02, r03]\n  racks:",
        );
    std::fs::write(&scenario, text).unwrap();
    let (code, v, _) = simulate(&[scenario.to_str().unwrap()]);
    assert_eq!(code, 1, "a failing verdict exits 1");
    assert_eq!(v["headroom"]["verdict"], "fail");
    assert_eq!(v["headroom"]["rule_25pct"], "pass");
    assert!(
        v["headroom"]["disagreement"]
            .as_str()
            .unwrap()
            .contains("25 % is free, yet rack r01 strands")
    );
}

#[test]
fn results_are_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = quick_factory(dir.path());
    let run = |threads: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
            .env("RAYON_NUM_THREADS", threads)
            .args(["--output", "json", "simulate", scenario.to_str().unwrap()])
            .output()
            .unwrap();
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // The time it was generated differs between runs by construction; the inputs not.
        assert!(v["provenance"]["generated_at"].is_string());
        v["provenance"]["generated_at"] = serde_json::Value::Null;
        v
    };
    assert_eq!(run("1"), run("3"));
}

#[test]
fn rancher_cluster_files_import_as_shapes() {
    let text =
        std::fs::read_to_string(shared().join("reference/rancher/example-cluster.yaml")).unwrap();
    let pools = rackplan::simulate::scenario::pools(&text).unwrap();
    assert_eq!(pools.len(), 2);
    let cp = &pools[0];
    assert_eq!(
        (cp.name.as_str(), cp.count, cp.vcpu, cp.memory_gib),
        ("cp", 3, 4.0, 8.0)
    );
    assert_eq!(cp.disks_gib, vec![60.0]);
    assert!(
        cp.anti_affinity,
        "vmAffinity spreads the control plane over hosts"
    );
    assert_eq!(pools[1].name, "workers");
    assert_eq!(pools[1].count, 3);
    // And through a scenario file.
    let dir = tempfile::tempdir().unwrap();
    let scenario = quick_factory(dir.path());
    let text = std::fs::read_to_string(&scenario).unwrap().replace(
        "shapes:\n",
        &format!(
            "shapes:\n  tenant-a: {{import: \"{}\"}}\n",
            shared()
                .join("reference/rancher/example-cluster.yaml")
                .display()
        ),
    );
    let text = text.replace(
        "max_clusters_shape: standard",
        "max_clusters_shape: tenant-a",
    );
    std::fs::write(&scenario, text).unwrap();
    let (code, v, stderr) = simulate(&[scenario.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(v["max_clusters"]["shape"], "tenant-a");
}

#[test]
fn a_site_inventory_can_be_the_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = quick_factory(dir.path());
    let (code, v, stderr) = simulate(&[
        scenario.to_str().unwrap(),
        "--site",
        repo().join("inventory/example").to_str().unwrap(),
    ]);
    assert!(code == 0 || code == 1, "{stderr}");
    assert_eq!(v["nodes"], 15);
    assert_eq!(v["racks"], 3);
}

/// `--budget`: max clusters stops after the counts in hand and says its answer is a lower
/// bound (every count it checked passes); without it the field is absent. Standard output
/// stays one JSON document while progress goes to stderr.
/// The reference scenario grown to 300 nodes in 8 racks, with its clusters scaled alike
/// and few Monte Carlo trials: a review whose max clusters runs for seconds.
fn factory_of_300(dir: &std::path::Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo().join("simulations/reference-factory.yaml")).unwrap();
    let racks: Vec<String> = (1..=8).map(|r| format!("r{r:02}")).collect();
    let feeds: String = (4..=8)
        .map(|r| format!("    r{r:02}: {{power: feed-b}}\n"))
        .collect();
    let text = text
        .replace("risk_trials: 10000", "risk_trials: 500")
        .replace("count: 24", "count: 297")
        .replace(
            "      racks: [r01, r02, r03]\n  racks:",
            &format!("      racks: [{}]\n  racks:", racks.join(", ")),
        )
        .replace(
            "- {shape: standard, count: 60}",
            "- {shape: standard, count: 667}",
        )
        .replace(
            "    r03: {power: feed-b}\n",
            &format!("    r03: {{power: feed-b}}\n{feeds}"),
        );
    assert!(
        text.contains("count: 297") && text.contains("r08: {power"),
        "{text}"
    );
    let p = dir.join("factory-300.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Ctrl-C while max clusters runs: it stops with the counts it checked and says so
/// ("at least", `stopped_by: interrupt`), the timeline stops too, and the review still
/// completes and prints.
#[test]
fn ctrl_c_stops_the_growth_questions_with_what_they_checked() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let p = factory_of_300(dir.path());
    let mut child = rackplan_json(&["simulate", p.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while std::time::Instant::now() < deadline {
        match rx.recv_timeout(std::time::Duration::from_millis(200)) {
            Ok(line) => {
                let started = line.contains("max clusters of standard");
                seen.push(line);
                if started {
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("max clusters of standard")),
        "max clusters never started: {seen:?}"
    );
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    seen.extend(rx.try_iter());
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 1)), "{code:?}: {seen:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["max_clusters"];
    assert_eq!(m["lower_bound"], true, "{m}");
    assert_eq!(m["stopped_by"], "interrupt", "{m}");
    assert!(m["first_failure"].is_null(), "{m}");
    if let Some(t) = v.get("timeline_stopped") {
        assert_eq!(t["by"], "interrupt", "{t}");
        assert!(t["from_month"].is_string(), "{t}");
    }
    assert!(
        v["rebuild"].is_object() && v["risk"].is_object(),
        "the review completed"
    );
    assert!(
        seen.iter().any(|l| l.contains("interrupted")),
        "the interruption is told: {seen:?}"
    );
}

#[test]
fn a_budget_stops_max_clusters_with_a_lower_bound() {
    let dir = tempfile::tempdir().unwrap();
    let p = quick_factory(dir.path());
    let (code, v, stderr) = simulate(&[p.to_str().unwrap(), "--budget", "0"]);
    assert!(code == 0 || code == 1, "{stderr}");
    let m = &v["max_clusters"];
    assert_eq!(m["lower_bound"], true, "{m}");
    assert_eq!(m["stopped_by"], "budget", "{m}");
    assert!(m["first_failure"].is_null(), "{m}");
    let n = m["additional"].as_u64().unwrap();
    assert_eq!(m["checked_up_to"].as_u64(), Some(n));
    let curve = m["curve"].as_array().unwrap();
    assert_eq!(curve.len() as u64, n + 1);
    assert!(curve.iter().all(|c| c[2] == "pass"), "{m}");
    let (_, full, _) = simulate(&[p.to_str().unwrap()]);
    let whole = &full["max_clusters"];
    assert!(whole.get("lower_bound").is_none(), "{whole}");
    assert!(whole.get("stopped_by").is_none() && full.get("timeline_stopped").is_none());
    assert!(whole["additional"].as_u64().unwrap() > n);
    assert_eq!(whole["curve"].as_array().unwrap()[..curve.len()], curve[..]);
    for bad in ["-1", "nan", "soon"] {
        let out = rackplan_json(&["simulate", p.to_str().unwrap(), &format!("--budget={bad}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--budget {bad}");
    }
}
