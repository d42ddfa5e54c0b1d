//! The team receives its cluster, on the real kube-apiserver: who may ask in a team's
//! namespace (the rendered requester Role, two users of two teams), a request naming another
//! team, a lifetime extended within the team's cap and refused past it, a waiting request
//! admitted when an expiry frees its quota, a protected cluster held past its expiry and its
//! deletion, a final snapshot that never comes, and a restart after delivery that grants and
//! announces nothing twice.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::operator::{RANCHER, REQ, World, cond};
use crate::support::kube::{client_with_token, http_get, resource, users, wait_for};
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

const T0: i64 = 1_800_000_000; // 2027-01-15T08:00:00Z

fn at(t: i64) -> String {
    rackplan::clock::format_at(t, false)
}

/// The rendered requester Role of the example, put in `ns` and bound to `group`.
pub(crate) fn requester_role(w: &World, ns: &str, group: &str) {
    let text =
        std::fs::read_to_string(repo().join("iso-config/example/operator/30-team-namespaces.yaml"))
            .unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let role = docs
        .iter()
        .find(|d| d["kind"] == "Role")
        .expect("the rendered Role");
    let binding = docs
        .iter()
        .find(|d| d["kind"] == "RoleBinding")
        .expect("the rendered RoleBinding");
    let mut role = role.clone();
    role["metadata"]["namespace"] = json!(ns);
    let mut binding = binding.clone();
    binding["metadata"]["namespace"] = json!(ns);
    binding["subjects"] =
        json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]);
    w.k.rt.block_on(w.k.put(&role));
    w.k.rt.block_on(w.k.put(&binding));
}

/// Create a request as the user of `token`; the API server's status code on refusal.
fn create_as(token: &str, w: &World, ns: &str, name: &str, team: &str) -> Result<(), u16> {
    let client = client_with_token(w.k, token);
    let (ar, _) = resource(REQ, "ClusterRequest");
    let api: Api<DynamicObject> = Api::namespaced_with(client, ns, &ar);
    let d: DynamicObject = serde_json::from_value(json!({
        "apiVersion": REQ, "kind": "ClusterRequest",
        "metadata": {"name": name},
        "spec": {"team": team, "shape": "standard", "duration": "72h", "requester": "alice", "reason": "ci"},
    }))
    .unwrap();
    match w.k.rt.block_on(api.create(&PostParams::default(), &d)) {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) => Err(s.code),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn only_a_teams_members_ask_in_its_namespace_and_no_request_spends_another_teams_quota() {
    let w = World::new("team");
    let (pns, lns) = (w.team_ns("paiement"), w.team_ns("logistique"));
    requester_role(&w, &pns, "local://g-paiement");
    requester_role(&w, &lns, "local://g-logistique");
    let op = w.operator(&[]);

    // Alice is of paiement: she asks in its namespace, not in logistique's.
    assert_eq!(create_as(users::ALICE, &w, &pns, "mine", ""), Ok(()));
    assert_eq!(create_as(users::ALICE, &w, &lns, "theirs", ""), Err(403));
    // Bob is of logistique: he cannot touch paiement's requests.
    assert_eq!(create_as(users::BOB, &w, &pns, "bobs", ""), Err(403));
    // An empty spec.team is the namespace's team.
    let r = w.wait_phase("mine", "Provisioning", &op);
    assert_eq!(r["status"]["terms"]["team"], "paiement");

    // Naming another team from one's own namespace spends nothing of it.
    assert_eq!(
        create_as(users::ALICE, &w, &pns, "borrowed", "logistique"),
        Ok(())
    );
    let r = w.wait_phase("borrowed", "Refused", &op);
    assert!(
        message(&r).contains(&format!(
            "spec.team: `logistique` is not the team of namespace {pns} (paiement)"
        )),
        "{r:#}"
    );
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "borrowed").is_none());

    // A requester cannot write a verdict: the status is the operator's.
    let client = client_with_token(w.k, users::ALICE);
    let (ar, _) = resource(REQ, "ClusterRequest");
    let api: Api<DynamicObject> = Api::namespaced_with(client, &pns, &ar);
    let forged = w.k.rt.block_on(api.patch_status(
        "borrowed",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Ready"}})),
    ));
    assert!(
        matches!(forged, Err(kube::Error::Api(ref s)) if s.code == 403),
        "{forged:?}"
    );
}

#[test]
fn a_lifetime_extends_within_the_teams_cap_and_no_further() {
    let w = World::new("extend");
    let clock = w.tmp.path().join("now");
    set_clock(&clock, T0);
    let op = w.operator(&["--clock-file", clock.to_str().unwrap()]);
    // logistique may hold a cluster 30 days from admission.
    w.request("long", "logistique", "standard", "48h");
    let r = w.wait_phase("long", "Provisioning", &op);
    assert_eq!(r["status"]["expiresAt"], at(T0 + 48 * 3600));

    set_clock(&clock, T0 + 3600);
    w.patch_request("long", &json!({"spec": {"duration": "10d"}}));
    let r = wait_for(30, "the extension", || {
        w.get("long")
            .filter(|r| r["status"]["expiresAt"] == at(T0 + 240 * 3600))
    });
    let c = cond(&r, "SpecAccepted");
    assert_eq!(c["status"], "True", "{r:#}");
    assert_eq!(c["reason"], "Extended");
    assert!(
        c["message"].as_str().unwrap().contains(&format!(
            "lifetime extended to 10d from admission: cluster long now expires at {}",
            at(T0 + 240 * 3600)
        )),
        "{c:#}"
    );
    assert_eq!(r["status"]["terms"]["duration"], "10d");
    assert_eq!(r["status"]["phase"], "Provisioning");
    wait_for(20, "the Extended event", || {
        w.events("Extended").into_iter().next()
    });
    // The Rancher cluster carries the new expiry.
    let cl = wait_for(20, "the cluster's expiry label", || {
        w.k.get(RANCHER, "Cluster", &w.ns, "long").filter(|c| {
            c["metadata"]["labels"]["rackplan.io/expires-at"].as_str()
                == Some((T0 + 240 * 3600).to_string().as_str())
        })
    });
    assert_eq!(cl["metadata"]["name"], "long");

    // Past the cap: refused, the lifetime unchanged.
    w.patch_request("long", &json!({"spec": {"duration": "40d"}}));
    let r = wait_for(30, "the refused extension", || {
        w.get("long")
            .filter(|r| cond(r, "SpecAccepted")["reason"] == "ExtensionPastCap")
    });
    let c = cond(&r, "SpecAccepted");
    assert_eq!(c["status"], "False");
    assert!(
        c["message"].as_str().unwrap().contains(
            "spec.duration: `40d` is past the longest lifetime team logistique is granted"
        ),
        "{c:#}"
    );
    assert_eq!(r["status"]["expiresAt"], at(T0 + 240 * 3600));
    assert_eq!(r["status"]["terms"]["duration"], "10d");
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "long").is_some());
}

#[test]
fn a_waiting_request_is_admitted_once_an_expiry_frees_its_quota() {
    let w = World::new("wait");
    let clock = w.tmp.path().join("now");
    set_clock(&clock, T0);
    let op = w.operator(&["--clock-file", clock.to_str().unwrap()]);
    // paiement's quota is 80 vCPU; a standard cluster is 36.
    w.request("first", "paiement", "standard", "48h");
    w.wait_phase("first", "Provisioning", &op);
    w.request("second", "paiement", "standard", "72h");
    w.wait_phase("second", "Provisioning", &op);
    w.request("third", "paiement", "standard", "72h");
    let r = w.wait_phase("third", "Waiting", &op);
    assert!(
        message(&r).starts_with(
            "waiting: quota: team paiement uses 72 vCPU and asks for 36; its quota allows 80 (28 over)"
        ),
        "{r:#}"
    );
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "third").is_none());
    // Nobody touches `third`: the first cluster's expiry frees the room.
    set_clock(&clock, T0 + 48 * 3600);
    w.wait_phase("first", "Expired", &op);
    let r = w.wait_phase("third", "Provisioning", &op);
    assert!(
        message(&r).starts_with("admitted: quota 36 vCPU used + 36 requested = 72 of 80"),
        "{r:#}"
    );
    assert_eq!(r["status"]["admittedAt"], at(T0 + 48 * 3600));
    assert_eq!(r["metadata"]["generation"], 1, "never poked");
}

#[test]
fn a_protected_cluster_is_held_past_its_expiry_and_its_deletion_until_unprotected() {
    let w = World::new("protect");
    let clock = w.tmp.path().join("now");
    set_clock(&clock, T0);
    let op = w.operator(&["--clock-file", clock.to_str().unwrap()]);
    w.request("keep", "paiement", "standard", "48h");
    w.wait_phase("keep", "Provisioning", &op);
    w.patch_request(
        "keep",
        &json!({"metadata": {"annotations": {"rackplan.io/protect": "true"}}}),
    );
    set_clock(&clock, T0 + 49 * 3600);
    let r = wait_for(30, "the hold at expiry", || {
        w.get("keep")
            .filter(|r| cond(r, "Expired")["reason"] == "Protected")
    });
    assert_eq!(r["status"]["phase"], "Expiring");
    assert!(
        message(&r).contains("cluster keep is kept because of the annotation rackplan.io/protect=true and still counts against team quota"),
        "{r:#}"
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "keep").is_some());
    // Deleting the request is held too.
    w.k.delete(REQ, "ClusterRequest", &w.team_ns("paiement"), "keep");
    let r = wait_for(30, "the hold at deletion", || {
        w.get("keep")
            .filter(|r| message(r).contains("deletion held: cluster keep is protected"))
    });
    assert!(r["metadata"]["deletionTimestamp"].is_string());
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "keep").is_some());
    wait_for(20, "the Protected events", || {
        (w.events("Protected").len() == 2).then_some(())
    });
    // Unprotected, the request and its cluster go.
    w.patch_request(
        "keep",
        &json!({"metadata": {"annotations": {"rackplan.io/protect": null}}}),
    );
    wait_for(30, "the request gone", || {
        w.get("keep").is_none().then_some(())
    });
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "keep").is_none());
}

#[test]
fn a_final_snapshot_that_never_comes_times_out_and_the_cluster_still_goes() {
    let w = World::new("nosnap");
    let clock = w.tmp.path().join("now");
    set_clock(&clock, T0);
    let op = w.operator(&[
        "--clock-file",
        clock.to_str().unwrap(),
        "--snapshot-timeout",
        "10m",
    ]);
    w.request("gone", "paiement", "standard", "48h");
    w.wait_phase("gone", "Provisioning", &op);
    w.rancher_ready("gone");
    w.wait_phase("gone", "Ready", &op);
    set_clock(&clock, T0 + 48 * 3600);
    let r = wait_for(30, "the snapshot asked", || {
        w.get("gone")
            .filter(|r| r["status"]["finalSnapshot"]["generation"] == 1)
    });
    assert!(r["status"]["finalSnapshot"]["outcome"].is_null(), "{r:#}");
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "gone").is_some());
    // Nine minutes: still waiting. Eleven: deleted without it, said loudly.
    set_clock(&clock, T0 + 48 * 3600 + 9 * 60);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(w.phase("gone"), "Expiring");
    set_clock(&clock, T0 + 48 * 3600 + 11 * 60);
    let r = w.wait_phase("gone", "Expired", &op);
    assert_eq!(
        r["status"]["finalSnapshot"]["outcome"],
        "timed out after 11 min"
    );
    assert!(
        message(&r).ends_with("cluster gone deleted; final snapshot: timed out after 11 min"),
        "{r:#}"
    );
    let ev = wait_for(20, "the FinalSnapshot warning", || {
        w.events("FinalSnapshot").into_iter().next()
    });
    assert_eq!(ev["type"], "Warning");
    assert!(
        ev["note"].as_str().unwrap().contains(
            "no final etcd snapshot of cluster gone was recorded: timed out after 11 min; the cluster is deleted without it"
        ),
        "{ev:#}"
    );
    assert!(w.k.get(RANCHER, "Cluster", &w.ns, "gone").is_none());
}

#[test]
fn a_restart_after_delivery_grants_and_announces_nothing_twice() {
    let w = World::new("again");
    let op = w.operator(&[]);
    w.request("once", "logistique", "standard", "72h");
    w.wait_phase("once", "Provisioning", &op);
    let id = w.rancher_ready("once");
    let r = w.wait_phase("once", "Ready", &op);
    let uid = r["metadata"]["uid"].clone();
    // logistique has a group and a user: one binding each.
    let b = w.bindings(&id, &uid);
    assert_eq!(b.len(), 2, "{b:#?}");
    assert!(b.iter().all(|b| b["roleTemplateName"] == "cluster-owner"));
    drop(op.stop());
    let op = w.operator(&[]);
    // The new leader reads everything again and finds it done.
    wait_for(30, "the new leader's reconciles", || {
        http_get(&op.metrics, "/metrics").filter(|m| {
            m.contains("rackplan_operator_leader 1\n")
                && !m.contains("rackplan_operator_reconciles_total 0\n")
        })
    });
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(w.bindings(&id, &uid).len(), 2);
    for reason in ["Admitted", "Provisioning", "Ready"] {
        assert_eq!(
            w.events(reason).len(),
            1,
            "{reason}: {:#?}",
            w.events(reason)
        );
    }
    assert_eq!(w.phase("once"), "Ready");
    drop(op.stop());
}

#[test]
fn a_delivery_is_predicted_at_admission_measured_and_marked_late_past_its_target() {
    let w = World::new("late");
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
    assert_eq!(d["targetSeconds"], 900.0);
    assert_eq!(d["predictedFrom"], "model");
    let predicted = d["predictedSeconds"].as_f64().expect("a finite prediction");
    assert!(predicted > 60.0 && predicted < 3600.0, "{d:#}");
    assert!(
        d["lowSeconds"].as_f64().is_some_and(|l| l <= predicted)
            && d["highSeconds"].as_f64().is_none_or(|h| h >= predicted),
        "{d:#}"
    );
    assert!(!d["criticalPath"].as_array().unwrap().is_empty(), "{d:#}");
    assert_eq!(d["reached"]["cluster-created"], 0.0);
    assert!(cond(&r, "DeliveryLate").is_null());

    // Sixteen minutes later Rancher has still not said ready: late, once.
    set_clock(&clock, T0 + 16 * 60);
    let r = wait_for(30, "the late delivery", || {
        w.get("slow")
            .filter(|r| cond(r, "DeliveryLate")["status"] == "True")
    });
    let msg = cond(&r, "DeliveryLate")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.starts_with("not ready 16.0 min after admission (target 15.0 min, predicted ")
            && msg.contains(
                "): stuck in phase machines-created (waiting for machines created; 0 of 6 machines made) for 16.0 min"
            ),
        "{msg}"
    );
    let ev = wait_for(20, "the DeliveryLate warning", || {
        w.events("DeliveryLate").into_iter().next()
    });
    assert_eq!(ev["type"], "Warning");
    set_clock(&clock, T0 + 17 * 60);
    w.rancher_ready("slow");
    let r = w.wait_phase("slow", "Ready", &op);
    let reached = &r["status"]["delivery"]["reached"];
    assert_eq!(reached["cluster-ready"], 1020.0);
    assert_eq!(reached["access-granted"], 1020.0);
    assert_eq!(w.events("DeliveryLate").len(), 1);
    let m = wait_for(10, "the delivery metrics", || {
        http_get(&op.metrics, "/metrics")
            .filter(|m| m.contains("rackplan_operator_deliveries_total{target=\"past\"} 1\n"))
    });
    assert!(
        m.contains(
            "rackplan_operator_time_to_ready_seconds_bucket{shape=\"standard\",le=\"1200\"} 1\n"
        ) && m.contains(
            "rackplan_operator_time_to_ready_seconds_bucket{shape=\"standard\",le=\"900\"} 0\n"
        ) && m.contains("rackplan_operator_time_to_ready_seconds_count{shape=\"standard\"} 1\n"),
        "{m}"
    );

    // The next delivery of the shape is predicted from the one measured.
    set_clock(&clock, T0 + 20 * 60);
    w.request("next", "logistique", "standard", "72h");
    let r = w.wait_phase("next", "Provisioning", &op);
    let d = &r["status"]["delivery"];
    assert_ne!(d["predictedFrom"], "model", "{d:#}");
    assert!(
        d["predictedFrom"].as_str().unwrap().contains('1'),
        "over one delivery: {d:#}"
    );
    assert_eq!(d["predictedSeconds"], 1020.0, "{d:#}");
    set_clock(&clock, T0 + 25 * 60);
    w.rancher_ready("next");
    w.wait_phase("next", "Ready", &op);
    wait_for(10, "a delivery within the target", || {
        http_get(&op.metrics, "/metrics")
            .filter(|m| m.contains("rackplan_operator_deliveries_total{target=\"within\"} 1\n"))
    });
    assert!(cond(&w.get("next").unwrap(), "DeliveryLate").is_null());
}
