//! `rackplan operator` against a real kube-apiserver and etcd (support/kube.rs): requests
//! admitted and delivered, refused by quota and by failure headroom with `admit`'s own
//! sentence, two requests racing for one headroom, a restart mid-reconcile, expiry on a
//! controllable clock, hostile requests, leader election and the dry run.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::kube::{Kube, Operator, cluster, http_get, wait_for};
use crate::support::{json_of, rackplan_json, repo};

pub(crate) const REQ: &str = "rackplan.io/v1alpha1";
pub(crate) const RANCHER: &str = "provisioning.cattle.io/v1";
pub(crate) const CONFIG: &str = "rke-machine-config.cattle.io/v1";
pub(crate) const CRTB: &str = "management.cattle.io/v3";

/// The example's `standard` template as another shape, its workers changed.
fn variant(shape: &str, workers: u32, cpu: u32, mem: u32) -> String {
    let text =
        std::fs::read_to_string(repo().join("iso-config/example/catalogue/standard.yaml")).unwrap();
    let docs: Vec<&str> = text.split("\n---\n").collect();
    let cluster = docs[0].replace(
        "quantity: 3\n      etcdRole: false",
        &format!("quantity: {workers}\n      etcdRole: false"),
    );
    let workers_cfg = docs[2]
        .replace("cpuCount: \"8\"", &format!("cpuCount: \"{cpu}\""))
        .replace("memorySize: \"32\"", &format!("memorySize: \"{mem}\""));
    [cluster, docs[1].to_string(), workers_cfg]
        .join("\n---\n")
        .replace("standard", shape)
}

pub(crate) const QUOTAS: &str = "name: operator quotas\nteams:\n  - {name: paiement, vcpu_quota: 80, principals: [\"local://g-paiement\"]}\n  - {name: logistique, vcpu_quota: 5000, principals: [\"local://g-logistique\", \"local://u-lead\"], role: cluster-owner, max_lifetime: 30d}\n";

/// A test's own world on the shared API server: a namespace for the Rancher clusters, the
/// quota ConfigMap and the Lease; one namespace per team (`paiement`, `logistique`),
/// labelled as the team's and as this test's (the operator is told to watch only those);
/// a catalogue (the example's shapes plus `wide`, two of which do not fit the fleet's
/// failure headroom, and `huge`, which alone does not); and the quotas.
pub(crate) struct World {
    pub(crate) k: &'static Kube,
    pub(crate) ns: String,
    pub(crate) id: String,
    pub(crate) tmp: tempfile::TempDir,
}

impl World {
    pub(crate) fn new(name: &str) -> World {
        Self::with_scenario(name, QUOTAS)
    }

    pub(crate) fn with_scenario(name: &str, scenario: &str) -> World {
        let k = cluster();
        let id = format!("{:x}", std::process::id() ^ rand_suffix());
        let ns = format!("op-{name}-{id}");
        k.namespace(&ns);
        let w = World {
            k,
            ns,
            id,
            tmp: tempfile::tempdir().unwrap(),
        };
        for team in ["paiement", "logistique"] {
            w.team_namespace(team, &w.team_ns(team));
        }
        let cat = w.catalogue();
        std::fs::create_dir(&cat).unwrap();
        for s in ["standard", "large"] {
            std::fs::copy(
                repo().join(format!("iso-config/example/catalogue/{s}.yaml")),
                cat.join(format!("{s}.yaml")),
            )
            .unwrap();
        }
        std::fs::write(cat.join("wide.yaml"), variant("wide", 2, 16, 160)).unwrap();
        std::fs::write(cat.join("huge.yaml"), variant("huge", 4, 32, 200)).unwrap();
        std::fs::write(w.scenario(), scenario).unwrap();
        w
    }

    /// The namespace of `team` in this world.
    pub(crate) fn team_ns(&self, team: &str) -> String {
        format!("{}-{}", self.ns, &team[..1])
    }

    /// Make `ns` a namespace of `team` in this world.
    pub(crate) fn team_namespace(&self, team: &str, ns: &str) {
        self.k.rt.block_on(self.k.put(&json!({
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"rackplan.io/team": team, "rackplan-test": self.id}},
        })));
    }

    pub(crate) fn catalogue(&self) -> PathBuf {
        self.tmp.path().join("catalogue")
    }

    pub(crate) fn scenario(&self) -> PathBuf {
        self.tmp.path().join("quotas.yaml")
    }

    pub(crate) fn operator(&self, extra: &[&str]) -> Operator {
        let selector = format!("rackplan-test={}", self.id);
        let mut args = vec!["--team-namespaces", selector.as_str()];
        args.extend_from_slice(extra);
        Operator::start(
            self.tmp.path(),
            &self.ns,
            &self.catalogue(),
            &self.scenario(),
            &args,
        )
    }

    pub(crate) fn request(&self, name: &str, team: &str, shape: &str, duration: &str) {
        self.k.create_yaml(
            &self.team_ns(team),
            &format!(
                "apiVersion: {REQ}\nkind: ClusterRequest\nmetadata: {{name: {name}}}\nspec: {{team: {team}, shape: {shape}, duration: \"{duration}\", requester: alice, reason: ci}}\n"
            ),
        );
    }

    /// The namespace a request of this world is in.
    pub(crate) fn ns_of(&self, name: &str) -> String {
        for team in ["paiement", "logistique"] {
            let ns = self.team_ns(team);
            if self.k.get(REQ, "ClusterRequest", &ns, name).is_some() {
                return ns;
            }
        }
        self.team_ns("paiement")
    }

    pub(crate) fn get(&self, name: &str) -> Option<Value> {
        ["paiement", "logistique"]
            .iter()
            .find_map(|t| self.k.get(REQ, "ClusterRequest", &self.team_ns(t), name))
    }

    pub(crate) fn phase(&self, name: &str) -> String {
        self.get(name)
            .map(|r| {
                r["status"]["phase"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .unwrap_or_default()
    }

    pub(crate) fn patch_request(&self, name: &str, patch: &Value) {
        let ns = self.ns_of(name);
        self.k.patch(REQ, "ClusterRequest", &ns, name, patch, false);
    }

    pub(crate) fn wait_phase(&self, name: &str, phase: &str, op: &Operator) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let r = self.get(name);
            if let Some(r) = &r
                && r["status"]["phase"] == phase
            {
                return r.clone();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {name} in phase {phase}: {r:#?}\noperator stderr:\n{}",
                op.stderr()
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// The events of this world's team namespaces with `reason`.
    pub(crate) fn events(&self, reason: &str) -> Vec<Value> {
        ["paiement", "logistique"]
            .iter()
            .flat_map(|t| self.k.events(&self.team_ns(t)))
            .filter(|e| e["reason"] == reason)
            .collect()
    }

    /// Rancher's side of a delivery: the cluster ready, with its management cluster id
    /// (and the namespace Rancher makes for it). Returns the id.
    pub(crate) fn rancher_ready(&self, cluster: &str) -> String {
        let digest: u32 = cluster
            .bytes()
            .chain(self.id.bytes())
            .fold(2_166_136_261u32, |h, b| {
                (h ^ u32::from(b)).wrapping_mul(16_777_619)
            });
        let id = format!("c-m-{digest:08x}");
        self.k.namespace(&id);
        self.k.patch(
            RANCHER,
            "Cluster",
            &self.ns,
            cluster,
            &json!({"status": {"ready": true, "clusterName": id}}),
            true,
        );
        id
    }

    /// The access bindings of a management cluster id made for `uid`.
    pub(crate) fn bindings(&self, id: &str, uid: &Value) -> Vec<Value> {
        self.k
            .list(CRTB, "ClusterRoleTemplateBinding", id)
            .into_iter()
            .filter(|b| b["metadata"]["labels"]["rackplan.io/request-uid"] == *uid)
            .collect()
    }
}

fn rand_suffix() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    t.subsec_nanos()
}

fn message(r: &Value) -> &str {
    r["status"]["message"].as_str().unwrap_or_default()
}

#[test]
fn an_admitted_request_gets_its_rancher_cluster_then_its_teams_access() {
    let w = World::new("admit");
    let op = w.operator(&["--rancher-url", "https://rancher.example.com"]);
    w.request("ci-a", "paiement", "standard", "72h");
    let r = w.wait_phase("ci-a", "Provisioning", &op);
    let st = &r["status"];
    assert!(
        message(&r).starts_with("admitted: quota 0 vCPU used + 36 requested = 36 of 80 allowed (within); headroom: node and rack failures pass with the request"),
        "{r:#}"
    );
    assert_eq!(st["clusterName"], "ci-a");
    assert_eq!(st["observedGeneration"], 1);
    assert_eq!(st["summary"], "provisioning");
    // What was judged is recorded.
    let terms = &st["terms"];
    assert_eq!(terms["team"], "paiement");
    assert_eq!(terms["shape"], "standard");
    assert_eq!(terms["kubernetesVersion"], "v1.33.5+rke2r1");
    assert_eq!(terms["vcpu"], 36.0);
    assert_eq!(terms["pools"].as_array().unwrap().len(), 2);
    let admitted = st["admittedAt"].as_str().unwrap();
    let expires = st["expiresAt"].as_str().unwrap();
    let secs = |t: &str| {
        t.parse::<k8s_openapi::jiff::Timestamp>()
            .unwrap()
            .as_second()
    };
    assert_eq!(secs(expires) - secs(admitted), 72 * 3600);
    let cond = st["conditions"].as_array().unwrap();
    assert!(
        cond.iter().any(|c| c["type"] == "Admitted"
            && c["status"] == "True"
            && c["reason"] == "WithinQuotaAndHeadroom"),
        "{cond:?}"
    );
    assert_eq!(
        r["metadata"]["finalizers"],
        json!(["rackplan.io/cluster-cleanup"])
    );

    // The Rancher cluster, in the catalogue's namespace: the shape under the request's
    // name, linked to the request by its UID and a `namespace/name` annotation.
    let c =
        w.k.get(RANCHER, "Cluster", &w.ns, "ci-a")
            .expect("the Cluster");
    let labels = &c["metadata"]["labels"];
    assert_eq!(labels["rackplan.io/team"], "paiement");
    assert_eq!(labels["rackplan.io/shape"], "standard");
    assert_eq!(labels["rackplan.io/request-uid"], r["metadata"]["uid"]);
    assert_eq!(labels["rackplan.io/expires-at"], secs(expires).to_string());
    assert_eq!(
        c["metadata"]["annotations"]["rackplan.io/request"],
        format!("{}/ci-a", w.team_ns("paiement"))
    );
    let pools: Vec<&str> = c["spec"]["rkeConfig"]["machinePools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["machineConfigRef"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(pools, ["ci-a-cp", "ci-a-workers"]);
    for p in pools {
        let cfg =
            w.k.get(CONFIG, "HarvesterConfig", &w.ns, p)
                .expect("machine config");
        assert_eq!(
            cfg["metadata"]["labels"]["rackplan.io/request-uid"],
            r["metadata"]["uid"]
        );
    }

    // Rancher reports it ready: the team's access is granted, then the request is Ready.
    let id = w.rancher_ready("ci-a");
    let r = w.wait_phase("ci-a", "Ready", &op);
    let b = w.bindings(&id, &r["metadata"]["uid"]);
    assert_eq!(b.len(), 1, "{b:#?}");
    assert_eq!(b[0]["clusterName"], id);
    assert_eq!(b[0]["roleTemplateName"], "cluster-member");
    assert_eq!(b[0]["groupPrincipalName"], "local://g-paiement");
    assert!(b[0]["userPrincipalName"].is_null());
    let access = &r["status"]["access"];
    assert_eq!(access["clusterId"], id);
    assert_eq!(access["bindings"][0]["name"], b[0]["metadata"]["name"]);
    assert_eq!(
        access["ui"],
        format!("https://rancher.example.com/dashboard/c/{id}/explorer")
    );
    assert!(
        access["kubeconfig"].as_str().unwrap().contains(&format!(
            "POST https://rancher.example.com/v3/clusters/{id}?action=generateKubeconfig"
        )),
        "{access:#}"
    );
    assert_eq!(r["status"]["summary"], "ready, access granted");
    assert!(
        message(&r).contains(&format!(
            "| ready: cluster ci-a ({id}); access granted to local://g-paiement (cluster-member)"
        )),
        "{r:#}"
    );
    wait_for(20, "the Admitted, Provisioning and Ready events", || {
        (w.events("Admitted").len() == 1
            && w.events("Provisioning").len() == 1
            && w.events("Ready").len() == 1)
            .then_some(())
    });
    let ev = &w.events("Admitted")[0];
    assert_eq!(ev["type"], "Normal");
    assert_eq!(ev["regarding"]["name"], "ci-a");
    assert_eq!(ev["reportingController"], "rackplan-operator");
    // Each transition was announced once and is recorded as such.
    let r = w.get("ci-a").unwrap();
    assert_eq!(
        r["status"]["announced"],
        json!(["Admitted@1", "Provisioning", "Ready"])
    );
    assert!(r["status"]["pendingEvents"].is_null(), "{r:#}");
    let m = wait_for(10, "the metrics", || {
        http_get(&op.metrics, "/metrics")
            .filter(|m| m.contains("rackplan_operator_requests{phase=\"Ready\"} 1"))
    });
    assert!(
        m.contains("rackplan_operator_admission_seconds_count 1\n"),
        "{m}"
    );
    assert!(m.contains("rackplan_operator_leader 1\n"), "{m}");
    let (out, _) = op.stop();
    // One line per transition (long ones wrap, indented).
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("20")).collect();
    assert_eq!(lines.len(), 3, "one line per transition: {out}");
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words(lines[0]).contains("/ci-a Admitted admitted: quota 0 vCPU used"),
        "{out}"
    );
    assert!(
        words(lines[1]).contains("/ci-a Provisioning created Rancher cluster"),
        "{out}"
    );
    assert!(
        words(lines[2]).contains("/ci-a Ready ready: cluster ci-a"),
        "{out}"
    );
}

/// What `rackplan admit` says of a request on the example dump's fleet (the fleet the
/// API server holds), with the tests' quotas.
fn admit_says(dir: &Path, request: &str) -> Value {
    let f = dir.join("admit-request.yaml");
    std::fs::write(&f, request).unwrap();
    let q = dir.join("admit-quotas.yaml");
    let shapes = "shapes:\n  huge:\n    pools:\n      - {name: cp, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [60], anti_affinity: true}\n      - {name: workers, count: 4, vcpu: 32, memory_gib: 200, disks_gib: [200]}\n  large:\n    pools:\n      - {name: cp, count: 3, vcpu: 8, memory_gib: 16, disks_gib: [80], anti_affinity: true}\n      - {name: workers, count: 6, vcpu: 16, memory_gib: 64, disks_gib: [500]}\n";
    std::fs::write(&q, format!("{QUOTAS}{shapes}")).unwrap();
    let (code, v, err) = json_of(
        rackplan_json(&["admit"])
            .arg(&f)
            .arg(&q)
            .arg("--from-cluster")
            .arg(repo().join("simulations/live-fleet.yaml")),
    );
    assert!(code == 0 || code == 1, "{err}");
    v
}

/// The condition of `type_` of a request.
pub(crate) fn cond<'a>(r: &'a Value, type_: &str) -> &'a Value {
    r["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

#[test]
fn quota_and_headroom_refusals_wait_with_admits_own_sentence_and_are_judged_again() {
    let w = World::new("refuse");
    let op = w.operator(&[]);
    w.request("too-big", "paiement", "large", "72h");
    w.request("no-room", "logistique", "huge", "72h");
    let r = w.wait_phase("too-big", "Waiting", &op);
    assert_eq!(
        message(&r),
        "waiting: quota: team paiement uses 0 vCPU and asks for 120; its quota allows 80 (40 over); judged again, in creation order, when a cluster expires or is deleted, the quota or the fleet changes"
    );
    let c = cond(&r, "Admitted");
    assert_eq!(
        (c["status"].as_str(), c["reason"].as_str()),
        (Some("False"), Some("QuotaExceeded"))
    );
    assert_eq!(r["status"]["waiting"]["reason"], "Quota");
    assert_eq!(r["status"]["summary"], "waiting for quota");
    let r = w.wait_phase("no-room", "Waiting", &op);
    let admit = admit_says(w.tmp.path(), "team: logistique\nshape: huge\n");
    assert_eq!(admit["admitted"], false);
    assert!(
        message(&r).starts_with(&format!(
            "waiting: {}",
            admit["reasons"][0].as_str().unwrap()
        )),
        "{r:#}"
    );
    assert!(
        message(&r).starts_with("waiting: headroom: the fleet fails with this request: if "),
        "{r:#}"
    );
    assert!(
        message(&r).contains("VMs cannot restart") || message(&r).contains("VM cannot restart"),
        "{r:#}"
    );
    assert_eq!(cond(&r, "Admitted")["reason"], "NoFailureHeadroom");
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "no-room").is_none());
    wait_for(20, "two Waiting events", || {
        (w.events("Waiting").len() == 2).then_some(())
    });
    let notes: Vec<String> = w
        .events("Waiting")
        .iter()
        .map(|e| e["note"].as_str().unwrap().to_string())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("quota: team paiement uses 0 vCPU and asks for 120")),
        "{notes:?}"
    );
    assert!(w.events("Waiting").iter().all(|e| e["type"] == "Warning"));

    // Judged again at each resync, the same answer is not announced again ...
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(w.phase("no-room"), "Waiting");
    assert_eq!(w.events("Waiting").len(), 2);
    // ... and a spec that now fits is admitted.
    w.patch_request("no-room", &json!({"spec": {"shape": "standard"}}));
    let r = w.wait_phase("no-room", "Provisioning", &op);
    assert_eq!(r["status"]["observedGeneration"], 2);
    assert!(r["status"]["waiting"].is_null(), "{r:#}");
}

#[test]
fn of_two_racing_requests_only_the_one_that_fits_first_is_admitted() {
    let w = World::new("race");
    // Both exist before the operator starts: one pass sees them together.
    w.request("race-b", "logistique", "wide", "72h");
    w.request("race-a", "logistique", "wide", "72h");
    let alone = admit_says(
        w.tmp.path(),
        "team: logistique\ncount: 1\npools:\n  - {name: cp, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [60], anti_affinity: true}\n  - {name: workers, count: 2, vcpu: 16, memory_gib: 160, disks_gib: [200]}\n",
    );
    assert_eq!(alone["admitted"], true, "one wide cluster fits: {alone:#}");
    let op = w.operator(&[]);
    let phases = wait_for(60, "both judged", || {
        let (a, b) = (w.phase("race-a"), w.phase("race-b"));
        (!a.is_empty() && a != "Pending" && !b.is_empty() && b != "Pending").then_some((a, b))
    });
    let (a, b) = phases;
    let ra = w.get("race-a").unwrap();
    let rb = w.get("race-b").unwrap();
    let same_second = ra["metadata"]["creationTimestamp"] == rb["metadata"]["creationTimestamp"];
    // Creation order decides; in the same second, the name.
    let first_is_b = !same_second;
    let (won, lost) = if first_is_b { (&rb, &ra) } else { (&ra, &rb) };
    assert!(
        ["Admitted", "Provisioning"].contains(&won["status"]["phase"].as_str().unwrap()),
        "{a} {b}: {won:#}"
    );
    assert_eq!(lost["status"]["phase"], "Waiting", "{a} {b}");
    assert!(
        message(lost).starts_with("waiting: headroom: the fleet fails with this request"),
        "{lost:#}"
    );
    drop(op);
}

#[test]
fn a_restart_mid_reconcile_makes_no_second_cluster_and_a_foreign_cluster_is_left_alone() {
    let w = World::new("restart");
    // A Cluster of that name made by someone else.
    w.k.create_yaml(&w.ns, &format!("apiVersion: {RANCHER}\nkind: Cluster\nmetadata: {{name: taken}}\nspec: {{kubernetesVersion: v1.33.5+rke2r1}}\n"));
    w.request("taken", "logistique", "standard", "72h");
    w.request("ci-r", "logistique", "standard", "72h");
    let mut op = w.operator(&[]);
    // Killed as soon as the request is judged: before, during or after the creation.
    wait_for(60, "ci-r judged", || {
        (!w.phase("ci-r").is_empty() && w.phase("ci-r") != "Pending").then_some(())
    });
    op.kill();
    let op = w.operator(&[]);
    let r = w.wait_phase("ci-r", "Provisioning", &op);
    let clusters: Vec<Value> =
        w.k.list(RANCHER, "Cluster", &w.ns)
            .into_iter()
            .filter(|c| c["metadata"]["labels"]["rackplan.io/request-uid"] == r["metadata"]["uid"])
            .collect();
    assert_eq!(clusters.len(), 1);
    let configs = w.k.list(CONFIG, "HarvesterConfig", &w.ns);
    assert_eq!(
        configs
            .iter()
            .filter(|c| c["metadata"]["name"].as_str().unwrap().starts_with("ci-r-"))
            .count(),
        2
    );
    assert_eq!(
        w.events("Admitted")
            .iter()
            .filter(|e| e["regarding"]["name"] == "ci-r")
            .count(),
        1,
        "judged once"
    );

    let t = w.wait_phase("taken", "Failed", &op);
    assert_eq!(
        message(&t),
        "failed: a Cluster named taken exists and was not made for this request; rename the request (the operator neither adopts nor deletes it)"
    );
    // Deleting the request does not delete what the operator did not make.
    w.k.delete(REQ, "ClusterRequest", &w.team_ns("logistique"), "taken");
    wait_for(30, "the request gone", || {
        w.get("taken").is_none().then_some(())
    });
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "taken").is_some());
    // Deleting a delivered request removes its cluster first (the finalizer).
    w.k.delete(REQ, "ClusterRequest", &w.team_ns("logistique"), "ci-r");
    wait_for(30, "ci-r and its cluster gone", || {
        (w.get("ci-r").is_none() && w.k.get(RANCHER, "Cluster", &w.ns, "ci-r").is_none())
            .then_some(())
    });
    assert!(
        w.k.get(CONFIG, "HarvesterConfig", &w.ns, "ci-r-cp")
            .is_none()
    );
}

#[test]
fn at_expiry_the_cluster_is_deleted_after_a_warning_on_a_controllable_clock() {
    let w = World::new("expiry");
    let clock = w.tmp.path().join("now");
    let t0 = 1_800_000_000i64; // 2027-01-15T08:00:00Z
    let set = |t: i64| std::fs::write(&clock, rackplan::clock::format_at(t, false)).unwrap();
    set(t0);
    let op = w.operator(&[
        "--clock-file",
        clock.to_str().unwrap(),
        "--warn-before",
        "24h",
    ]);
    w.request("short", "paiement", "standard", "48h");
    let r = w.wait_phase("short", "Provisioning", &op);
    assert_eq!(
        r["status"]["admittedAt"],
        rackplan::clock::format_at(t0, false)
    );
    assert_eq!(
        r["status"]["expiresAt"],
        rackplan::clock::format_at(t0 + 48 * 3600, false)
    );
    set(t0 + 23 * 3600);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(w.phase("short"), "Provisioning");
    set(t0 + 25 * 3600);
    let r = w.wait_phase("short", "Expiring", &op);
    assert!(
        message(&r).contains(
            "| expiring: cluster short is deleted at 2027-01-17T08:00:00Z (in 23.0 h); save what it holds, or extend spec.duration within the team's longest lifetime"
        ),
        "{r:#}"
    );
    let warned = wait_for(20, "the Expiring warning", || {
        w.events("Expiring").into_iter().next()
    });
    assert_eq!(warned["type"], "Warning");
    assert!(
        w.k.get(RANCHER, "Cluster", &w.ns, "short").is_some(),
        "not deleted before its time"
    );
    set(t0 + 48 * 3600);
    let r = w.wait_phase("short", "Expired", &op);
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "short").is_none());
    assert!(
        w.k.get(CONFIG, "HarvesterConfig", &w.ns, "short-cp")
            .is_none()
    );
    assert!(
        message(&r).ends_with("| expired at 2027-01-17T08:00:00Z: access removed, cluster short deleted; final snapshot: skipped: the cluster never became ready"),
        "{r:#}"
    );
    assert!(
        r["metadata"]["finalizers"].is_null() || r["metadata"]["finalizers"] == json!([]),
        "{r:#}"
    );
    assert!(
        r["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Expired" && c["status"] == "True")
    );
    wait_for(20, "the Expired event", || {
        w.events("Expired").into_iter().next()
    });
    // An expired request no longer holds quota: the team's next request counts 0 used.
    w.request("next", "paiement", "standard", "48h");
    let n = w.wait_phase("next", "Provisioning", &op);
    assert!(
        message(&n).starts_with("admitted: quota 0 vCPU used + 36 requested"),
        "{n:#}"
    );
}

#[test]
fn hostile_requests_are_refused_at_their_field_and_the_operator_keeps_going() {
    let w = World::new("hostile");
    let op = w.operator(&["--max-lifetime", "30d"]);
    let cases: [(&str, Value, &str); 8] = [
        (
            "neg",
            json!({"team": "paiement", "shape": "standard", "duration": "-5h"}),
            "refused: spec.duration: `-5h` does not start with a number",
        ),
        (
            "absurd",
            json!({"team": "paiement", "shape": "standard", "duration": "1000000000w"}),
            "refused: spec.duration: `1000000000w`: at most 10 years (87660h)",
        ),
        (
            "long",
            json!({"team": "paiement", "shape": "standard", "duration": "31d"}),
            "refused: spec.duration: `31d` is past the longest lifetime team paiement is granted (30d), extensions included; ask for at most 30d",
        ),
        (
            "noshape",
            json!({"team": "paiement", "shape": "../../etc", "duration": "1h"}),
            "refused: spec.shape: `../../etc` is not in the catalogue; shapes: huge, large, standard, wide",
        ),
        (
            "noteam",
            json!({"team": "\u{1b}[2Jroot", "shape": "standard", "duration": "1h"}),
            "refused: spec.team: `\\u{1b}[2Jroot` holds control characters; write plain text",
        ),
        (
            "version",
            json!({"team": "paiement", "shape": "standard", "duration": "1h", "kubernetesVersion": "v1.0.0"}),
            "refused: spec.kubernetesVersion: `v1.0.0` is not offered; allowed: v1.33.5+rke2r1 (the catalogue's)",
        ),
        (
            "otherteam",
            json!({"team": "logistique", "shape": "standard", "duration": "1h"}),
            "refused: spec.team: `logistique` is not the team of namespace NS (paiement); a request counts against the quota of the team whose namespace it is made in: make it in that team's namespace, or leave spec.team empty",
        ),
        (
            "waits",
            json!({"team": "paiement", "shape": "standard", "duration": "1h", "maxWait": "forever"}),
            "refused: spec.maxWait: `forever` does not start with a number",
        ),
    ];
    let ns = w.team_ns("paiement");
    for (name, spec, _) in &cases {
        w.k.rt.block_on(w.k.put(&json!({"apiVersion": REQ, "kind": "ClusterRequest", "metadata": {"name": name, "namespace": ns}, "spec": spec})));
    }
    for (name, _, want) in &cases {
        let r = w.wait_phase(name, "Refused", &op);
        assert_eq!(message(&r), want.replace("NS", &ns), "{name}");
        assert_eq!(cond(&r, "Admitted")["reason"], "InvalidSpec");
        assert!(
            r["status"]["summary"]
                .as_str()
                .unwrap()
                .starts_with("refused: spec."),
            "{r:#}"
        );
    }
    // A wrong type, or a field past its bound, never reaches the operator: the API server
    // refuses it by the schema.
    let api = w.k.api(REQ, "ClusterRequest", Some(&ns));
    for (spec, field) in [
        (
            json!({"team": "paiement", "shape": "standard", "duration": 72}),
            "spec.duration",
        ),
        (
            json!({"team": "paiement", "shape": "standard", "duration": "1h", "reason": "x".repeat(200_000)}),
            "spec.reason",
        ),
    ] {
        let bad: kube::api::DynamicObject = serde_json::from_value(json!({"apiVersion": REQ, "kind": "ClusterRequest", "metadata": {"name": "typed"}, "spec": spec})).unwrap();
        let e =
            w.k.rt
                .block_on(api.create(&Default::default(), &bad))
                .unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
    // The operator still answers, and a good request after them all is admitted.
    w.request("good", "paiement", "standard", "1h");
    w.wait_phase("good", "Provisioning", &op);
    let mut op = op;
    assert!(op.exited().is_none(), "{}", op.stderr());
}

/// Whether an exposition says its replica leads (the sample line, not the help text).
fn leading(metrics: &str) -> bool {
    metrics
        .lines()
        .any(|l| l.trim() == "rackplan_operator_leader 1")
}

#[test]
fn of_two_replicas_only_the_lease_holder_acts_and_the_other_takes_over() {
    let w = World::new("lease");
    let a = w.operator(&["--identity", "replica-a"]);
    let b = w.operator(&["--identity", "replica-b"]);
    let leaders = wait_for(30, "one leader", || {
        let la = leading(&http_get(&a.metrics, "/metrics")?);
        let lb = leading(&http_get(&b.metrics, "/metrics")?);
        (la ^ lb).then_some((la, lb))
    });
    w.request("one", "logistique", "standard", "72h");
    w.wait_phase("one", "Provisioning", if leaders.0 { &a } else { &b });
    assert_eq!(w.events("Admitted").len(), 1);
    let lease =
        w.k.rt
            .block_on(
                kube::Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(
                    w.k.client.clone(),
                    &w.ns,
                )
                .get("rackplan-operator"),
            )
            .unwrap();
    let holder = lease.spec.unwrap().holder_identity.unwrap();
    assert_eq!(holder, if leaders.0 { "replica-a" } else { "replica-b" });
    // The leader dies without handing the lease back: the other takes over after it lapses.
    let (mut dead, survivor) = if leaders.0 { (a, b) } else { (b, a) };
    dead.kill();
    wait_for(30, "the survivor leading", || {
        http_get(&survivor.metrics, "/metrics").filter(|m| leading(m))
    });
    w.request("two", "logistique", "standard", "72h");
    w.wait_phase("two", "Provisioning", &survivor);
    assert_eq!(w.events("Admitted").len(), 2);
}

#[test]
fn a_dry_run_writes_status_only() {
    let w = World::new("dry");
    let op = w.operator(&["--dry-run"]);
    w.request("dry", "paiement", "standard", "72h");
    let r = w.wait_phase("dry", "Admitted", &op);
    assert!(
        message(&r)
            .ends_with("; dry run: nothing is delivered, and a live operator judges it again"),
        "{r:#}"
    );
    assert_eq!(r["status"]["terms"]["dryRun"], true);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(w.phase("dry"), "Admitted");
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "dry").is_none());
    assert!(r["metadata"]["finalizers"].is_null());
    // A live operator does not deliver on a dry run's word: it judges the request again.
    drop(op);
    let op = w.operator(&[]);
    let r = w.wait_phase("dry", "Provisioning", &op);
    assert!(r["status"]["terms"]["dryRun"].is_null(), "{r:#}");
    assert!(!message(&r).contains("dry run"), "{r:#}");
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "dry").is_some());
    let admitted = wait_for(20, "two Admitted events, dry then live", || {
        let e = w.events("Admitted");
        (e.len() == 2).then_some(e)
    });
    assert!(
        admitted.iter().all(|e| e["note"]
            .as_str()
            .unwrap()
            .starts_with("admitted: quota 0 vCPU used")),
        "{admitted:#?}"
    );
}
