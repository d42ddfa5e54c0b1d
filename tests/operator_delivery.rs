//! A delivery measured phase by phase, on the real kube-apiserver with the controllable
//! clock: the test plays Rancher, making the cluster's CAPI machines and moving them
//! (infrastructure ready, the init node healthy, the control plane, the workers) and the
//! cluster (ready, then named) at chosen times. Asserted: the phase times in the status,
//! the per-phase histograms on `/metrics`, the `DeliveryLate` condition and its Warning
//! naming the phase the delivery is stuck in (the machines' or, once the cluster is
//! ready, the access), a second delivery of the shape predicted from the first's
//! measured phases, and compliance drift on a delivered cluster (the audit policy and
//! the S3 target dropped, then put back).

use serde_json::{Value, json};

use crate::operator::{RANCHER, World, cond};
use crate::support::kube::{http_get, wait_for};

const MACHINE: &str = "cluster.x-k8s.io/v1beta1";
const T0: i64 = 1_800_000_000; // 2027-01-15T08:00:00Z

fn set_clock(path: &std::path::Path, t: i64) {
    std::fs::write(path, rackplan::clock::format_at(t, false)).unwrap();
}

/// The six machines Rancher makes for a `standard` cluster (three etcd and control
/// plane, three workers), labelled as Rancher labels them.
fn make_machines(w: &World, cluster: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (pool, roles) in [
        ("cp", ["etcd", "control-plane"].as_slice()),
        ("workers", ["worker"].as_slice()),
    ] {
        for i in 0..3 {
            let name = format!("{cluster}-{pool}-{i}");
            let mut labels = json!({
                "cluster.x-k8s.io/cluster-name": cluster,
                "rke.cattle.io/rke-machine-pool-name": pool,
            });
            for r in roles {
                labels[format!("rke.cattle.io/{r}-role")] = json!("true");
            }
            w.k.rt.block_on(w.k.put(&json!({
                "apiVersion": MACHINE, "kind": "Machine",
                "metadata": {"name": name, "namespace": w.ns, "labels": labels},
                "spec": {"clusterName": cluster},
            })));
            names.push(name);
        }
    }
    names
}

/// CAPI's status of a machine: its infrastructure ready, its node healthy or not.
fn machine_status(w: &World, name: &str, node: bool) {
    let mut conditions = vec![json!({"type": "InfrastructureReady", "status": "True"})];
    let mut status = json!({"phase": "Provisioned", "infrastructureReady": true});
    if node {
        conditions.push(json!({"type": "NodeHealthy", "status": "True"}));
        status["phase"] = json!("Running");
        status["nodeRef"] = json!({"kind": "Node", "name": name});
    }
    status["conditions"] = json!(conditions);
    w.k.patch(
        MACHINE,
        "Machine",
        &w.ns,
        name,
        &json!({"status": status}),
        true,
    );
}

/// The request once `status.delivery.reached` holds `milestone`.
fn reached(w: &World, name: &str, milestone: &str) -> Value {
    wait_for(30, &format!("{name} reaching {milestone}"), || {
        w.get(name)
            .filter(|r| !r["status"]["delivery"]["reached"][milestone].is_null())
    })
}

#[test]
fn a_delivery_is_measured_phase_by_phase_from_ranchers_machines_and_late_names_its_phase() {
    let w = World::new("phases");
    let clock = w.tmp.path().join("now");
    set_clock(&clock, T0);
    let op = w.operator(&[
        "--clock-file",
        clock.to_str().unwrap(),
        "--delivery-target",
        "15m",
    ]);
    w.request("slow", "logistique", "standard", "72h");
    let r = w.wait_phase("slow", "Provisioning", &op);
    let d = &r["status"]["delivery"];
    let predicted = d["predictedAt"].clone();
    assert!(
        d["predictedSeconds"].is_number() && d["never"].is_null(),
        "{d:#}"
    );
    for m in [
        "cluster-created",
        "machines-created",
        "infrastructure-ready",
        "init-node-ready",
        "control-plane-ready",
        "workers-ready",
        "cluster-ready",
    ] {
        assert!(predicted[m].is_number(), "{m}: {d:#}");
    }
    assert_eq!(d["reached"]["cluster-created"], 0.0);

    // Rancher makes the machines at 30 s, their VMs have addresses at 200 s, the init
    // node is healthy at 330 s; the other two control-plane nodes do not come.
    set_clock(&clock, T0 + 30);
    let machines = make_machines(&w, "slow");
    reached(&w, "slow", "machines-created");
    set_clock(&clock, T0 + 200);
    for m in &machines {
        machine_status(&w, m, false);
    }
    reached(&w, "slow", "infrastructure-ready");
    set_clock(&clock, T0 + 330);
    machine_status(&w, &machines[0], true);
    let r = reached(&w, "slow", "init-node-ready");
    let at = &r["status"]["delivery"]["reached"];
    let secs =
        |ks: &[&str]| -> Vec<f64> { ks.iter().map(|k| at[*k].as_f64().unwrap_or(-1.0)).collect() };
    assert_eq!(
        secs(&[
            "machines-created",
            "infrastructure-ready",
            "init-node-ready"
        ]),
        [30.0, 200.0, 330.0],
        "{at:#}"
    );
    assert!(at["control-plane-ready"].is_null(), "{at:#}");

    // Sixteen minutes after admission: late, stuck in the control plane for 10.5 min.
    set_clock(&clock, T0 + 16 * 60);
    let r = wait_for(30, "the late delivery", || {
        w.get("slow")
            .filter(|r| cond(r, "DeliveryLate")["status"] == "True")
    });
    let msg = cond(&r, "DeliveryLate")["message"]
        .as_str()
        .unwrap()
        .to_string();
    let phase_predicted = format!(
        ", predicted {:.1} min",
        (predicted["control-plane-ready"].as_f64().unwrap()
            - predicted["init-node-ready"].as_f64().unwrap())
            / 60.0
    );
    assert!(
        msg.starts_with("not ready 16.0 min after admission (target 15.0 min, predicted ")
            && msg.ends_with(&format!(
                "): stuck in phase control-plane-ready (waiting for control plane ready; 1 of 3 etcd and control-plane nodes healthy) for 10.5 min{phase_predicted}"
            )),
        "{msg}"
    );
    let ev = wait_for(20, "the DeliveryLate warning", || {
        w.events("DeliveryLate").into_iter().next()
    });
    assert_eq!(ev["type"], "Warning");
    assert_eq!(ev["note"], msg);
    wait_for(10, "the late delivery counted", || {
        http_get(&op.metrics, "/metrics")
            .filter(|m| m.contains("rackplan_operator_deliveries_late 1\n"))
    });

    // The control plane at 1000 s, the workers at 1100 s, Rancher's Ready at 1150 s.
    set_clock(&clock, T0 + 1000);
    machine_status(&w, &machines[1], true);
    machine_status(&w, &machines[2], true);
    reached(&w, "slow", "control-plane-ready");
    set_clock(&clock, T0 + 1100);
    for m in &machines[3..] {
        machine_status(&w, m, true);
    }
    reached(&w, "slow", "workers-ready");
    set_clock(&clock, T0 + 1150);
    w.rancher_ready("slow");
    let r = w.wait_phase("slow", "Ready", &op);
    let at = &r["status"]["delivery"]["reached"];
    let secs: Vec<f64> = [
        "control-plane-ready",
        "workers-ready",
        "cluster-ready",
        "access-granted",
    ]
    .iter()
    .map(|k| at[*k].as_f64().unwrap_or(-1.0))
    .collect();
    assert_eq!(secs, [1000.0, 1100.0, 1150.0, 1150.0], "{at:#}");
    assert_eq!(w.events("DeliveryLate").len(), 1);
    let m = wait_for(10, "the delivery metrics", || {
        http_get(&op.metrics, "/metrics")
            .filter(|m| m.contains("rackplan_operator_deliveries_total{target=\"past\"} 1\n"))
    });
    let phase = |p: &str, le: &str, n: u32| {
        format!(
            "rackplan_operator_delivery_phase_seconds_bucket{{shape=\"standard\",phase=\"{p}\",le=\"{le}\"}} {n}\n"
        )
    };
    for line in [
        phase("machines-created", "30", 1),
        phase("machines-created", "10", 0),
        phase("infrastructure-ready", "180", 1),
        phase("infrastructure-ready", "120", 0),
        phase("init-node-ready", "180", 1),
        phase("control-plane-ready", "900", 1),
        phase("control-plane-ready", "600", 0),
        phase("workers-ready", "120", 1),
        phase("cluster-ready", "60", 1),
        "rackplan_operator_delivery_phase_seconds_sum{shape=\"standard\",phase=\"control-plane-ready\"} 670\n".into(),
        "rackplan_operator_time_to_ready_seconds_bucket{shape=\"standard\",le=\"1200\"} 1\n".into(),
        "rackplan_operator_time_to_ready_seconds_bucket{shape=\"standard\",le=\"900\"} 0\n".into(),
    ] {
        assert!(m.contains(&line), "{line}\n{m}");
    }
    wait_for(10, "no delivery late once it is done", || {
        http_get(&op.metrics, "/metrics")
            .filter(|m| m.contains("rackplan_operator_deliveries_late 0\n"))
    });

    // The next delivery of the shape is predicted from the phases measured.
    set_clock(&clock, T0 + 20 * 60);
    w.request("next", "logistique", "standard", "72h");
    let r = w.wait_phase("next", "Provisioning", &op);
    let d = &r["status"]["delivery"];
    assert!(
        d["predictedFrom"]
            .as_str()
            .unwrap()
            .starts_with("measured on this fleet (median of the last 1 of 1 deliveries)"),
        "{d:#}"
    );
    assert_eq!(d["predictedSeconds"], 1150.0, "{d:#}");
    for (k, v) in [
        ("machines-created", 30.0),
        ("infrastructure-ready", 200.0),
        ("init-node-ready", 330.0),
        ("control-plane-ready", 1000.0),
        ("workers-ready", 1100.0),
        ("cluster-ready", 1150.0),
    ] {
        assert_eq!(d["predictedAt"][k], v, "{k}: {d:#}");
    }

    // Its cluster is ready at 5 min, but Rancher does not name it: no access can be
    // granted, and past the target that is late too, named as such.
    set_clock(&clock, T0 + 25 * 60);
    w.k.patch(
        RANCHER,
        "Cluster",
        &w.ns,
        "next",
        &json!({"status": {"ready": true}}),
        true,
    );
    reached(&w, "next", "cluster-ready");
    set_clock(&clock, T0 + 36 * 60);
    let r = wait_for(30, "the delivery late for its access", || {
        w.get("next")
            .filter(|r| cond(r, "DeliveryLate")["status"] == "True")
    });
    let msg = cond(&r, "DeliveryLate")["message"].as_str().unwrap();
    assert!(
        msg.starts_with("cluster ready, access not granted 16.0 min after admission (target 15.0 min, predicted 19.2 min): stuck in phase access-granted (waiting for the team's access granted; cluster next is ready; waiting for Rancher to name its management cluster (status.clusterName)) for 11.0 min"),
        "{msg}"
    );
    assert_eq!(r["status"]["phase"], "Provisioning");
    // What a reader of this test sees of it (cargo test -- --nocapture).
    let metrics = http_get(&op.metrics, "/metrics").unwrap_or_default();
    let delivery_lines: Vec<&str> = metrics
        .lines()
        .filter(|l| l.contains("deliver") || l.contains("time_to_ready"))
        .filter(|l| !l.contains("_bucket") || l.contains("le=\"+Inf\""))
        .collect();
    eprintln!(
        "slow: {:#}\nnext: {:#}\n{}\n{}",
        w.get("slow").unwrap()["status"]["delivery"],
        r["status"]["delivery"],
        op.stdout(),
        delivery_lines.join("\n")
    );
}

#[test]
fn a_delivered_cluster_edited_to_drop_a_promise_drifts_and_is_announced_once() {
    let w = World::new("drift");
    let op = w.operator(&[]);
    w.request("kept", "logistique", "standard", "72h");
    w.wait_phase("kept", "Provisioning", &op);
    w.rancher_ready("kept");
    let r = w.wait_phase("kept", "Ready", &op);
    assert!(cond(&r, "ComplianceDrift").is_null(), "{r:#}");
    let cluster = w.k.get(RANCHER, "Cluster", &w.ns, "kept").unwrap();
    let (policy, s3) = (
        cluster["spec"]["rkeConfig"]["machineGlobalConfig"]["audit-policy-file"].clone(),
        cluster["spec"]["rkeConfig"]["etcd"]["s3"].clone(),
    );
    assert!(policy.is_string() && s3.is_object(), "{cluster:#}");

    // Someone drops the audit policy and the S3 target.
    w.k.patch(
        RANCHER,
        "Cluster",
        &w.ns,
        "kept",
        &json!({"spec": {"rkeConfig": {"machineGlobalConfig": {"audit-policy-file": null}, "etcd": {"s3": null}}}}),
        false,
    );
    let r = wait_for(30, "the drift", || {
        w.get("kept")
            .filter(|r| cond(r, "ComplianceDrift")["status"] == "True")
    });
    let c = cond(&r, "ComplianceDrift");
    assert_eq!(c["reason"], "SnapshotsOffCluster,AuditLogged");
    let msg = c["message"].as_str().unwrap();
    assert!(
        msg.starts_with("cluster kept no longer keeps what its shape promises: snapshots leave the cluster (spec.rkeConfig.etcd.s3: ")
            && msg.contains("; audit policy logs (spec.rkeConfig.machineGlobalConfig.audit-policy-file: "),
        "{msg}"
    );
    let ev = wait_for(20, "the drift warning", || {
        w.events("ComplianceDrift").into_iter().next()
    });
    assert_eq!(ev["type"], "Warning");
    // Seen again at every look (resync 1 s), announced once, across a restart too.
    std::thread::sleep(std::time::Duration::from_secs(3));
    drop(op.stop());
    let op = w.operator(&[]);
    wait_for(30, "the second operator leading", || {
        http_get(&op.metrics, "/metrics").filter(|m| m.contains("rackplan_operator_leader 1\n"))
    });
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(w.events("ComplianceDrift").len(), 1);
    assert_eq!(w.phase("kept"), "Ready");

    // Put back as the catalogue renders it: the condition goes False.
    w.k.patch(
        RANCHER,
        "Cluster",
        &w.ns,
        "kept",
        &json!({"spec": {"rkeConfig": {"machineGlobalConfig": {"audit-policy-file": policy}, "etcd": {"s3": s3}}}}),
        false,
    );
    let r = wait_for(30, "the repair", || {
        w.get("kept")
            .filter(|r| cond(r, "ComplianceDrift")["status"] == "False")
    });
    assert_eq!(cond(&r, "ComplianceDrift")["reason"], "Kept");
    wait_for(20, "the repair's event", || {
        w.events("ComplianceRestored").into_iter().next()
    });
    assert_eq!(w.events("ComplianceDrift").len(), 1);
    drop(op.stop());
}

/// Prometheus's own `promtool`: `RACKPLAN_PROMTOOL`, else the one on PATH (Debian's
/// package `prometheus`; `.ci/run` fetches it).
fn promtool(args: &[&str]) -> std::process::Output {
    let bin = std::env::var("RACKPLAN_PROMTOOL").unwrap_or_else(|_| "promtool".into());
    std::process::Command::new(&bin)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{bin} (Debian package prometheus, or RACKPLAN_PROMTOOL): {e}"))
}

/// The rendered alerts are rules Prometheus loads, and the delivery objective computes
/// what it says: with 9 deliveries within the target and 2 past it, the recorded
/// fraction is 9/11, and the alert fires an hour after it first falls below 90 %.
#[test]
fn the_delivery_objective_is_a_rule_prometheus_evaluates_and_fires_below_ninety_percent() {
    let text = std::fs::read_to_string(
        crate::support::repo().join("iso-config/example/operator/monitoring/prometheusrule.yaml"),
    )
    .unwrap();
    let rule: Value = serde_saphyr::from_str(&text).unwrap();
    let groups = &rule["spec"]["groups"];
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("rules.yaml");
    // JSON is YAML: promtool reads it as it is.
    std::fs::write(&rules, json!({"groups": groups}).to_string()).unwrap();
    let check = promtool(&["check", "rules", rules.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let alert = groups[0]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["alert"] == "RackplanOperatorDeliveriesPastTarget")
        .expect("the objective's alert")
        .clone();
    let series = |target: &str, pod: &str| {
        format!(
            "rackplan_operator_deliveries_total{{namespace=\"fleet-default\",target=\"{target}\",pod=\"{pod}\"}}"
        )
    };
    // Hourly: one delivery within the target an hour for 9 hours (two replicas: the
    // first leads 5 hours, the second 4), two past it at 4 h and 9 h.
    let tests = json!({
        "rule_files": [rules.to_str().unwrap()],
        "evaluation_interval": "1m",
        "tests": [{
            "interval": "1h",
            "input_series": [
                {"series": series("within", "a"), "values": "0+1x5 5x20"},
                {"series": series("within", "b"), "values": "0x5 1+1x3 4x20"},
                {"series": series("past", "a"), "values": "0 0 0 0 1 1x20"},
                {"series": series("past", "b"), "values": "0x8 1x20"},
            ],
            "promql_expr_test": [
                {"expr": "rackplan:operator_deliveries_within_target:ratio_28d", "eval_time": "3h",
                 "exp_samples": [{"labels": "rackplan:operator_deliveries_within_target:ratio_28d", "value": 1}]},
                {"expr": "rackplan:operator_deliveries_within_target:ratio_28d", "eval_time": "10h",
                 "exp_samples": [{"labels": "rackplan:operator_deliveries_within_target:ratio_28d", "value": 9.0 / 11.0}]},
            ],
            "alert_rule_test": [
                {"eval_time": "4h30m", "alertname": "RackplanOperatorDeliveriesPastTarget", "exp_alerts": []},
                {"eval_time": "10h", "alertname": "RackplanOperatorDeliveriesPastTarget",
                 "exp_alerts": [{"exp_labels": {"severity": "warning"}, "exp_annotations": alert["annotations"]}]},
            ],
        }],
    });
    let file = tmp.path().join("tests.yaml");
    std::fs::write(&file, tests.to_string()).unwrap();
    let run = promtool(&["test", "rules", file.to_str().unwrap()]);
    assert!(
        run.status.success(),
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}
