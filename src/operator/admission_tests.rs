//! Tests of `admission.rs`, kept beside it.

use super::*;
use crate::operator::resource::{ClusterRequestSpec, ClusterRequestStatus};
use crate::operator::teams::Teams;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A request of `team`, made in that team's namespace.
fn request(name: &str, team: &str, shape: &str, created: i64) -> ClusterRequest {
    let mut cr = ClusterRequest::new(
        name,
        ClusterRequestSpec {
            team: team.into(),
            shape: shape.into(),
            duration: "72h".into(),
            ..Default::default()
        },
    );
    cr.metadata.namespace = Some(format!("team-{team}"));
    cr.metadata.generation = Some(1);
    cr.metadata.uid = Some(format!("uid-{name}"));
    cr.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::from_second(created).unwrap(),
    ));
    cr
}

struct World {
    study: Study,
    catalogue: Catalogue,
    teams: Teams,
    namespaces: BTreeMap<String, String>,
}

fn world(quota: &str) -> World {
    let state = crate::live::read(&repo().join("simulations/live-fleet.yaml")).unwrap();
    let text = format!(
        "name: operator\nteams:\n  - name: paiement\n    vcpu_quota: {quota}\n  - name: logistique\n    vcpu_quota: 1000\n"
    );
    let mut study = Study::on_state(
        crate::simulate::ScenarioInput::Text {
            name: Path::new("<quotas>"),
            text: &text,
        },
        &state,
        Path::new("test-fleet"),
    )
    .unwrap();
    let teams = Teams::resolve(&study.scenario.teams, None);
    study.scenario.teams = teams.for_study();
    let catalogue = Catalogue::read(&repo().join("iso-config/example/catalogue")).unwrap();
    let namespaces = ["paiement", "logistique"]
        .iter()
        .map(|t| (format!("team-{t}"), t.to_string()))
        .collect();
    World {
        study,
        catalogue,
        teams,
        namespaces,
    }
}

const NOW: i64 = 1_796_000_000;

fn judge(w: &World, rs: &[ClusterRequest], dry_run: bool) -> Vec<Verdict> {
    judge_pending(
        &Pass {
            study: &w.study,
            catalogue: &w.catalogue,
            rules: &Rules::default(),
            teams: &w.teams,
            namespaces: &w.namespaces,
            running: &BTreeMap::new(),
            now: NOW,
            dry_run,
            measured: &BTreeMap::new(),
            delivery_target_s: None,
        },
        rs,
    )
}

fn holding(cr: &mut ClusterRequest, terms: Terms) {
    cr.status = Some(ClusterRequestStatus {
        phase: Some(Phase::Ready),
        observed_generation: Some(1),
        cluster_name: cr.metadata.name.clone(),
        terms: Some(terms),
        ..Default::default()
    });
}

#[test]
fn requests_are_judged_in_creation_order_each_counting_the_ones_before() {
    // paiement may hold 80 vCPU: one standard cluster (36) fits, a second (72) does too,
    // a third (108) does not and waits.
    let w = world("80");
    let rs = vec![
        request("c-third", "paiement", "standard", 30),
        request("a-first", "paiement", "standard", 10),
        request("b-second", "paiement", "standard", 20),
    ];
    let v = judge(&w, &rs, false);
    let by_name: Vec<(&str, Outcome)> = v
        .iter()
        .map(|x| (rs[x.index].metadata.name.as_deref().unwrap(), x.outcome))
        .collect();
    assert_eq!(
        by_name,
        [
            ("a-first", Outcome::Admitted),
            ("b-second", Outcome::Admitted),
            ("c-third", Outcome::Waiting)
        ]
    );
    let third = &v[2];
    assert_eq!(third.reason, "QuotaExceeded");
    assert_eq!(
        third.message,
        "waiting: quota: team paiement uses 72 vCPU and asks for 36; its quota allows 80 (28 over); judged again, in creation order, when a cluster expires or is deleted, the quota or the fleet changes"
    );
    assert!(
        v[0].message
            .starts_with("admitted: quota 0 vCPU used + 36 requested = 36 of 80 allowed (within)"),
        "{}",
        v[0].message
    );
    assert_eq!(v[0].expires_at, Some(NOW + 72 * 3600));
    let t = v[0].terms.as_ref().unwrap();
    assert_eq!(
        (t.team.as_str(), t.shape.as_str()),
        ("paiement", "standard")
    );
    assert!((t.vcpu - 36.0).abs() < 1e-9);
    assert!(v[2].terms.is_none());
}

#[test]
fn what_a_holding_request_holds_is_its_recorded_terms_not_its_edited_spec() {
    let w = world("80");
    // Admitted as standard (36 vCPU) for paiement, then edited to claim another team and
    // a shape the catalogue lacks: it still counts 36 against paiement.
    let mut held = request("held", "paiement", "standard", 1);
    let terms = judge(&w, &[held.clone()], false)[0].terms.clone().unwrap();
    holding(&mut held, terms);
    held.spec.team = "logistique".into();
    held.spec.shape = "gone".into();
    held.metadata.generation = Some(2);
    let new = request("new", "paiement", "standard", 3);
    let v = judge(&w, &[held, new], false);
    assert_eq!(v.len(), 1);
    assert!(
        v[0].message.contains("quota 36 vCPU used"),
        "{}",
        v[0].message
    );
    assert_eq!(v[0].outcome, Outcome::Admitted);
}

#[test]
fn a_pending_request_counts_a_holding_one_created_after_it() {
    // An old request, refused and then fixed, is judged after a newer one was admitted:
    // the newer one's 36 vCPU count although it comes later in creation order.
    let w = world("40");
    let mut newer = request("newer", "paiement", "standard", 50);
    let terms = judge(&w, &[newer.clone()], false)[0].terms.clone().unwrap();
    holding(&mut newer, terms);
    let older = request("older", "paiement", "standard", 10);
    let v = judge(&w, &[older, newer], false);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].outcome, Outcome::Waiting, "{}", v[0].message);
    assert!(
        v[0].message
            .starts_with("waiting: quota: team paiement uses 36 vCPU and asks for 36"),
        "{}",
        v[0].message
    );
}

#[test]
fn a_request_made_in_another_teams_namespace_is_refused_at_spec_team() {
    let w = world("80");
    let mut cr = request("sneaky", "logistique", "standard", 1);
    cr.metadata.namespace = Some("team-paiement".into());
    let v = judge(&w, &[cr], false);
    assert_eq!(v[0].outcome, Outcome::Refused);
    assert!(
        v[0].message.starts_with(
            "refused: spec.team: `logistique` is not the team of namespace team-paiement (paiement)"
        ),
        "{}",
        v[0].message
    );
    // In a namespace that is not a team's, nothing is judged at all.
    let mut elsewhere = request("x", "paiement", "standard", 1);
    elsewhere.metadata.namespace = Some("default".into());
    assert!(judge(&w, &[elsewhere], false).is_empty());
}

#[test]
fn waiting_requests_are_judged_again_and_refused_past_their_deadline() {
    let w = world("40");
    let mut held = request("held", "paiement", "standard", 1);
    let terms = judge(&w, &[held.clone()], false)[0].terms.clone().unwrap();
    holding(&mut held, terms);
    let mut waits = request("waits", "paiement", "standard", NOW - 10);
    waits.spec.max_wait = Some("1h".into());
    let v = judge(&w, &[held.clone(), waits.clone()], false);
    assert_eq!(v[0].outcome, Outcome::Waiting);
    assert!(
        v[0].message
            .ends_with(&format!("until {}", format_time(NOW - 10 + 3600))),
        "{}",
        v[0].message
    );
    // Still waiting: judged again, and once the held cluster is gone it is admitted.
    waits.status = Some(ClusterRequestStatus {
        phase: Some(Phase::Waiting),
        observed_generation: Some(1),
        ..Default::default()
    });
    assert!(needs_judging(&waits, false));
    held.status.as_mut().unwrap().phase = Some(Phase::Expired);
    let v = judge(&w, &[held, waits.clone()], false);
    assert_eq!(v[0].outcome, Outcome::Admitted, "{}", v[0].message);
    // Created long ago with a short wait: refused for good.
    let mut late = request("late", "paiement", "large", NOW - 7200);
    late.spec.max_wait = Some("1h".into());
    let v = judge(&w, &[late], false);
    assert_eq!(v[0].outcome, Outcome::Refused);
    assert_eq!(v[0].reason, "WaitedTooLong");
}

#[test]
fn a_refused_request_waits_for_a_spec_change_and_a_dry_run_admission_is_judged_again_live() {
    let w = world("80");
    let mut refused = request("refused", "paiement", "nope", 2);
    refused.status = Some(ClusterRequestStatus {
        phase: Some(Phase::Refused),
        observed_generation: Some(1),
        ..Default::default()
    });
    assert!(judge(&w, &[refused.clone()], false).is_empty());
    refused.metadata.generation = Some(2);
    assert!(needs_judging(&refused, false));
    let mut dry = request("dry", "paiement", "standard", 1);
    let v = judge(&w, &[dry.clone()], true);
    let terms = v[0].terms.clone().unwrap();
    assert!(terms.dry_run);
    holding(&mut dry, terms);
    dry.status.as_mut().unwrap().phase = Some(Phase::Admitted);
    assert!(!needs_judging(&dry, true));
    assert!(needs_judging(&dry, false));
    let v = judge(&w, &[dry], false);
    assert_eq!(v.len(), 1);
    assert!(!v[0].terms.as_ref().unwrap().dry_run);
}

#[test]
fn a_cluster_whose_vms_run_is_not_placed_twice() {
    let pools = vec![
        Pool {
            name: "cp".into(),
            count: 3,
            vcpu: 4.0,
            memory_gib: 8.0,
            disks_gib: vec![40.0],
            anti_affinity: true,
            running: true,
        },
        Pool {
            name: "w".into(),
            count: 3,
            vcpu: 8.0,
            memory_gib: 32.0,
            disks_gib: vec![100.0],
            anti_affinity: false,
            running: true,
        },
    ];
    assert_eq!(
        not_running(&pools, 0).iter().map(|p| p.count).sum::<u32>(),
        6
    );
    let rest = not_running(&pools, 4);
    assert_eq!(rest.len(), 1);
    assert_eq!((rest[0].name.as_str(), rest[0].count), ("w", 2));
    assert!(not_running(&pools, 6).is_empty());
    assert!(not_running(&pools, 60).is_empty());
}

#[test]
fn a_pass_that_shares_headroom_answers_gives_each_request_its_own_answer() {
    // Enough quota that the fleet's headroom decides: the first ones fit, the rest wait on
    // the same fleet (the shared answer), each with its own quota line.
    let w = world("100000");
    let rs: Vec<ClusterRequest> = (0..12)
        .map(|i| request(&format!("r{i:02}"), "paiement", "large", i))
        .collect();
    let v = judge(&w, &rs, false);
    assert_eq!(v.len(), 12);
    // The same requests judged one by one, each on a fresh answer.
    let mut held_pools: Vec<Vec<Pool>> = Vec::new();
    let mut used = 0.0;
    for x in &v {
        let cr = &rs[x.index];
        let c = spec::check(cr, "paiement", &w.catalogue, &Rules::default(), &w.teams).unwrap();
        let held = Held {
            team_vcpu: used,
            clusters: held_pools.iter().map(Vec::as_slice).collect(),
        };
        let alone = questions::judge(&w.study, &c.request, NOW, &held).unwrap();
        assert_eq!(x.admitted(), alone.admitted, "{}", x.message);
        if alone.admitted {
            assert_eq!(x.message, alone.sentence());
            used += vcpu(&c.request.pools);
            held_pools.push(c.request.pools.clone());
        } else {
            assert!(
                x.message
                    .starts_with(&format!("waiting: {}", alone.reasons.join("; ")))
            );
        }
    }
    assert!(
        v.iter().any(Verdict::admitted) && v.iter().any(|x| !x.admitted()),
        "both kinds"
    );
}

#[test]
fn a_bad_spec_is_refused_with_its_field_and_the_rest_still_judged() {
    let w = world("1000");
    let mut bad = request("bad", "paiement", "gigantic", 1);
    bad.spec.duration = "-5h".into();
    let good = request("good", "paiement", "standard", 2);
    let v = judge(&w, &[bad, good], false);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0].reason, "InvalidSpec");
    assert!(
        v[0].message
            .starts_with("refused: spec.shape: `gigantic` is not in the catalogue"),
        "{}",
        v[0].message
    );
    assert!(v[1].admitted(), "{}", v[1].message);
}
