//! The gate after admission, attacked on the real kube-apiserver: an admitted request's
//! terms edited (team, shape, version) before and after delivery, a leader paused past its
//! Lease while it holds verdicts, a burst of requests with every field at its bound, the
//! metrics listener held open by idle connections under a small descriptor limit, and a
//! whole lifecycle run with the rendered RBAC only on an API server that enforces owner
//! reference permissions.

use std::io::Read as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::operator::{CONFIG, RANCHER, REQ, World, cond};
use crate::support::kube::{Launch, Operator, http_get, kubeconfig_with_token, wait_for};
use crate::support::repo;

fn message(r: &Value) -> String {
    r["status"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn set_clock(path: &std::path::Path, t: i64) {
    std::fs::write(path, rackplan::clock::format_at(t, false)).unwrap();
}

#[test]
fn what_was_admitted_is_what_runs_whatever_the_spec_says_afterwards() {
    let w = World::new("edit");
    let clock = w.tmp.path().join("now");
    let t0 = 1_800_000_000i64;
    set_clock(&clock, t0);
    let op = w.operator(&["--clock-file", clock.to_str().unwrap()]);
    w.request("ci-e", "paiement", "standard", "72h");
    let before = w.wait_phase("ci-e", "Provisioning", &op);
    let terms = before["status"]["terms"].clone();

    // The team edits every judged term: another team's name, a shape the catalogue lacks,
    // a version that is not offered. (The CRD's CEL rules refuse this on v1.25 and later;
    // this API server ignores them, so the operator is what refuses it.)
    w.patch_request(
        "ci-e",
        &json!({"spec": {"team": "logistique", "shape": "gigantic", "kubernetesVersion": "v1.0.0"}}),
    );
    let r = wait_for(30, "the edit judged", || {
        w.get("ci-e")
            .filter(|r| r["status"]["observedGeneration"] == 2)
    });
    assert_eq!(r["status"]["phase"], "Provisioning", "{r:#}");
    assert_eq!(r["status"]["terms"], terms, "the terms stay as judged");
    let c = cond(&r, "SpecAccepted");
    assert_eq!(c["status"], "False");
    assert_eq!(c["reason"], "ImmutableField");
    assert_eq!(
        c["message"],
        "spec.team (`logistique`, admitted as paiement), spec.shape (`gigantic`, admitted as standard), spec.kubernetesVersion (`v1.0.0`, admitted as v1.33.5+rke2r1) cannot change after admission: the cluster keeps the terms it was judged on; revert the edit, or make a new request"
    );
    wait_for(20, "the EditRefused warning", || {
        w.events("EditRefused")
            .into_iter()
            .find(|e| e["type"] == "Warning")
    });

    // The quota still counts it against paiement (36 of 80).
    w.request("ci-f", "paiement", "standard", "72h");
    let f = w.wait_phase("ci-f", "Provisioning", &op);
    assert!(
        message(&f).starts_with("admitted: quota 36 vCPU used + 36 requested = 72 of 80"),
        "{f:#}"
    );
    w.request("ci-g", "paiement", "standard", "72h");
    let g = w.wait_phase("ci-g", "Waiting", &op);
    assert!(
        message(&g).starts_with("waiting: quota: team paiement uses 72 vCPU and asks for 36"),
        "{g:#}"
    );

    // Its cluster deleted behind the operator's back: made again from the judged terms.
    w.k.delete(RANCHER, "Cluster", &w.ns, "ci-e");
    let again = wait_for(30, "the cluster made again", || {
        w.k.get(RANCHER, "Cluster", &w.ns, "ci-e")
    });
    assert_eq!(again["spec"]["kubernetesVersion"], "v1.33.5+rke2r1");
    assert_eq!(again["metadata"]["labels"]["rackplan.io/team"], "paiement");
    assert_eq!(again["metadata"]["labels"]["rackplan.io/shape"], "standard");
    let workers = &again["spec"]["rkeConfig"]["machinePools"][1];
    assert_eq!(workers["quantity"], 3);

    // And it expires on its hour, like any other.
    set_clock(&clock, t0 + 72 * 3600);
    let r = w.wait_phase("ci-e", "Expired", &op);
    assert!(
        w.k.get(RANCHER, "Cluster", &w.ns, "ci-e").is_none(),
        "{r:#}"
    );
    assert!(
        w.k.get(CONFIG, "HarvesterConfig", &w.ns, "ci-e-cp")
            .is_none()
    );
}

#[test]
fn a_leader_paused_past_its_lease_cannot_overwrite_its_successor() {
    let w = World::new("pause");
    let k = w.k;
    let quotas = |q: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "rackplan-quotas", "namespace": w.ns},
               "data": {"paiement": q}})
    };
    k.rt.block_on(k.put(&quotas("80")));
    // A judges, then pauses 4 s before writing: the window in which it is stopped.
    let a = w.operator_with(
        &["--identity", "replica-a", "--quotas", "rackplan-quotas"],
        &Launch {
            env: &[("RACKPLAN_FAULT_PAUSE_BEFORE_WRITES", "4")],
            ..Launch::default()
        },
    );
    wait_for(30, "replica-a leading", || {
        http_get(&a.metrics, "/metrics").filter(|m| m.contains("rackplan_operator_leader 1"))
    });
    let b = w.operator(&["--identity", "replica-b", "--quotas", "rackplan-quotas"]);
    for i in 0..6 {
        w.request(&format!("p-{i}"), "paiement", "standard", "72h");
    }
    // A has judged (two fit in 80 vCPU) and waits to write: stop it past its Lease.
    wait_for(30, "replica-a holding verdicts", || {
        a.stderr().contains("fault injection").then_some(())
    });
    a.signal("STOP");
    // Meanwhile the quota is cut to 40: the successor admits one.
    k.patch(
        "v1",
        "ConfigMap",
        &w.ns,
        "rackplan-quotas",
        &json!({"data": {"paiement": "40"}}),
        false,
    );
    wait_for(40, "replica-b leading and judging", || {
        let judged = (0..6).all(|i| {
            let p = w.phase(&format!("p-{i}"));
            p == "Provisioning" || p == "Waiting"
        });
        judged.then_some(())
    });
    a.signal("CONT");
    std::thread::sleep(Duration::from_secs(6));
    let holding: Vec<String> = (0..6)
        .map(|i| format!("p-{i}"))
        .filter(|n| ["Admitted", "Provisioning", "Ready"].contains(&w.phase(n).as_str()))
        .collect();
    assert_eq!(
        holding.len(),
        1,
        "36 vCPU of 40 held, never 72: {holding:?}"
    );
    let clusters = k
        .list(RANCHER, "Cluster", &w.ns)
        .into_iter()
        .filter(|c| c["metadata"]["labels"]["rackplan.io/team"] == "paiement")
        .count();
    assert_eq!(clusters, 1);
    assert_eq!(w.events("Admitted").len(), 1);
    let mut a = a;
    let err = a.stderr();
    assert!(
        a.exited().is_some() || err.contains("stops acting"),
        "the paused replica stops acting: {err}"
    );
    drop(b);
}

#[test]
fn a_burst_of_requests_at_their_bounds_costs_a_bounded_operator() {
    let w = World::new("burst");
    let op = w.operator(&[]);
    let ns = w.team_ns("paiement");
    let reason = "r".repeat(1024);
    let requester = "q".repeat(256);
    let api = w.k.api(REQ, "ClusterRequest", Some(&ns));
    w.k.rt.block_on(async {
        let creates = (0..300).map(|i| {
            let o: kube::api::DynamicObject = serde_json::from_value(json!({
                "apiVersion": REQ, "kind": "ClusterRequest",
                "metadata": {"name": format!("b-{i:03}")},
                "spec": {"shape": "standard", "duration": "72h", "reason": reason, "requester": requester},
            }))
            .unwrap();
            let api = api.clone();
            async move { api.create(&Default::default(), &o).await.unwrap() }
        });
        futures_util::future::join_all(creates).await;
    });
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs(240);
    loop {
        let judged = w
            .k
            .list(REQ, "ClusterRequest", &ns)
            .iter()
            .filter(|r| {
                ["Provisioning", "Waiting"].contains(&r["status"]["phase"].as_str().unwrap_or(""))
            })
            .count();
        if judged == 300 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{judged} of 300 judged after 240 s; operator stderr:\n{}",
            op.stderr()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let took = t0.elapsed();
    let rss = op.peak_rss_kib();
    eprintln!("300 requests at their bounds judged in {took:?}; operator peak RSS {rss} KiB");
    assert!(rss > 0 && rss < 400 * 1024, "peak RSS {rss} KiB");
    // Idle, with the waiting requests judged again at each resync (1 s here): one pass
    // a resync, each listing the 300 requests once (six pages of 50), never one list per
    // request.
    let counter = |name: &str| {
        http_get(&op.metrics, "/metrics")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")).map(str::to_string))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (p0, l0) = (
        counter("rackplan_operator_judging_passes_total"),
        counter("rackplan_operator_request_list_pages_total"),
    );
    std::thread::sleep(Duration::from_secs(10));
    let passes = counter("rackplan_operator_judging_passes_total") - p0;
    let pages = counter("rackplan_operator_request_list_pages_total") - l0;
    // The list is of every namespace (the API server is shared with other tests).
    let all =
        w.k.rt
            .block_on(
                kube::Api::<kube::api::DynamicObject>::all_with(
                    w.k.client.clone(),
                    &crate::support::kube::resource(REQ, "ClusterRequest").0,
                )
                .list(&Default::default()),
            )
            .unwrap()
            .items
            .len() as u64;
    let per_list = all.div_ceil(50);
    eprintln!("10 idle seconds: {passes} passes, {pages} pages listed ({per_list} pages a list)");
    assert!(
        (1..=13).contains(&passes),
        "{passes} passes in 10 idle seconds"
    );
    assert!(
        pages <= passes * (per_list + 2),
        "{pages} pages in {passes} passes: more than one list a pass"
    );
}

#[test]
fn idle_connections_cannot_take_the_operators_descriptors() {
    let w = World::new("fds");
    let op = w.operator_with(
        &[],
        &Launch {
            wrapper: &["prlimit", "--nofile=256:256", "--"],
            ..Launch::default()
        },
    );
    // 400 connections that send nothing, held open.
    let held: Vec<std::net::TcpStream> = (0..400)
        .filter_map(|_| std::net::TcpStream::connect(&op.metrics).ok())
        .collect();
    assert!(held.len() >= 256, "{} connections made", held.len());
    w.request("fd-a", "paiement", "standard", "72h");
    w.wait_phase("fd-a", "Provisioning", &op);
    assert!(
        !op.stderr().contains("Too many open files"),
        "{}",
        op.stderr()
    );
    // The listener lets idle connections go (header timeout), and answers again.
    let mut closed = 0;
    for mut s in held.into_iter().take(40) {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 16];
        if matches!(s.read(&mut buf), Ok(0) | Err(_)) {
            closed += 1;
        }
    }
    assert_eq!(closed, 40);
    wait_for(20, "/healthz again", || {
        http_get(&op.metrics, "/healthz").filter(|b| b.contains("ok"))
    });
}

/// The rendered RBAC of the example, moved to `ns` (cluster-wide names made unique).
fn rendered_rbac(ns: &str, suffix: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for f in ["10-rancher-rbac.yaml", "20-harvester-fleet-reader.yaml"] {
        let text =
            std::fs::read_to_string(repo().join("iso-config/example/operator").join(f)).unwrap();
        for mut d in serde_saphyr::from_multiple::<Value>(&text).unwrap() {
            if d.is_null() {
                continue;
            }
            let kind = d["kind"].as_str().unwrap().to_string();
            if kind.starts_with("Cluster") {
                let n = format!("{}-{suffix}", d["metadata"]["name"].as_str().unwrap());
                d["metadata"]["name"] = json!(n);
                if kind == "ClusterRoleBinding" {
                    let r = format!("{}-{suffix}", d["roleRef"]["name"].as_str().unwrap());
                    d["roleRef"]["name"] = json!(r);
                }
            } else {
                d["metadata"]["namespace"] = json!(ns);
            }
            if let Some(subjects) = d["subjects"].as_array_mut() {
                for s in subjects {
                    s["namespace"] = json!(ns);
                }
            }
            out.push(d);
        }
    }
    out
}

#[test]
fn the_rendered_rbac_alone_runs_a_whole_lifecycle_under_owner_reference_enforcement() {
    let w = World::new("rbac");
    let k = w.k;
    for d in rendered_rbac(&w.ns, &w.id) {
        k.rt.block_on(k.put(&d));
    }
    k.rt.block_on(k.put(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "rackplan-quotas", "namespace": w.ns}, "data": {"paiement": "80"}})));
    // The operator's own identity: a token of its ServiceAccount (TokenRequest).
    let token: Value =
        k.rt.block_on(
            k.client.request(
                axum::http::Request::post(format!(
                    "/api/v1/namespaces/{}/serviceaccounts/rackplan-operator/token",
                    w.ns
                ))
                .header("content-type", "application/json")
                .body(
                    serde_json::to_vec(&json!({"apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}))
                    .unwrap(),
                )
                .unwrap(),
            ),
        )
        .unwrap();
    let kc = kubeconfig_with_token(w.tmp.path(), token["status"]["token"].as_str().unwrap());
    let clock = w.tmp.path().join("now");
    let t0 = 1_800_000_000i64;
    set_clock(&clock, t0);
    let op = w.operator_with(
        &[
            "--clock-file",
            clock.to_str().unwrap(),
            "--quotas",
            "rackplan-quotas",
            "--snapshot-timeout",
            "10m",
        ],
        &Launch {
            kubeconfig: Some(kc),
            ..Launch::default()
        },
    );
    w.request("life", "paiement", "standard", "48h");
    let r = w.wait_phase("life", "Provisioning", &op);
    let id = w.rancher_ready("life");
    w.wait_phase("life", "Ready", &op);
    assert_eq!(w.bindings(&id, &r["metadata"]["uid"]).len(), 1);
    set_clock(&clock, t0 + 48 * 3600);
    // At expiry the final snapshot is asked (the generation raised), then recorded.
    let c = wait_for(30, "the snapshot asked", || {
        k.get(RANCHER, "Cluster", &w.ns, "life")
            .filter(|c| c["spec"]["rkeConfig"]["etcdSnapshotCreate"]["generation"] == 1)
    });
    assert_eq!(c["metadata"]["name"], "life");
    k.rt.block_on(k.put(&json!({
        "apiVersion": "rke.cattle.io/v1", "kind": "ETCDSnapshot",
        "metadata": {"name": "life-s3-final-1", "namespace": w.ns,
            "labels": {"rke.cattle.io/cluster-name": "life"},
            "annotations": {"etcdsnapshot.rke.io/storage": "s3"}},
        "spec": {"clusterName": "life"},
        "snapshotFile": {"name": "final-1", "location": "s3://backups/life/final-1", "status": "successful"},
    })));
    let r = w.wait_phase("life", "Expired", &op);
    assert_eq!(r["status"]["finalSnapshot"]["snapshot"], "life-s3-final-1");
    assert_eq!(r["status"]["finalSnapshot"]["outcome"], "recorded");
    assert!(w.bindings(&id, &r["metadata"]["uid"]).is_empty());
    assert!(k.get(RANCHER, "Cluster", &w.ns, "life").is_none());
    let err = op.stderr();
    assert!(!err.contains("forbidden"), "{err}");
}

impl World {
    pub(crate) fn operator_with(&self, extra: &[&str], how: &Launch<'_>) -> Operator {
        let selector = format!("rackplan-test={}", self.id);
        let mut args = vec!["--team-namespaces", selector.as_str()];
        args.extend_from_slice(extra);
        Operator::launch(
            self.tmp.path(),
            &self.ns,
            &self.catalogue(),
            &self.scenario(),
            &args,
            how,
        )
    }
}
