//! Tests of `spec.rs`, kept beside it.

use super::*;
use crate::operator::resource::ClusterRequestSpec;
use crate::simulate::scenario::Team;

fn catalogue() -> Catalogue {
    Catalogue::read(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("iso-config/example/catalogue"),
    )
    .unwrap()
}

fn teams() -> Teams {
    let t: Vec<Team> = serde_json::from_str(
        r#"[{"name":"paiement","vcpu_quota":300,"max_lifetime":"30d"},{"name":"logistique"}]"#,
    )
    .unwrap();
    Teams::resolve(&t, None)
}

fn request(name: &str, f: impl FnOnce(&mut ClusterRequestSpec)) -> ClusterRequest {
    let mut spec = ClusterRequestSpec {
        team: "paiement".into(),
        shape: "standard".into(),
        duration: "72h".into(),
        ..Default::default()
    };
    f(&mut spec);
    let mut cr = ClusterRequest::new(name, spec);
    cr.metadata.namespace = Some("team-paiement".into());
    cr
}

fn check_spec(name: &str, f: impl FnOnce(&mut ClusterRequestSpec)) -> Result<Checked, SpecError> {
    let rules = Rules {
        versions: vec!["v1.32.9+rke2r1".into()],
        ..Rules::default()
    };
    check(
        &request(name, f),
        "paiement",
        &catalogue(),
        &rules,
        &teams(),
    )
}

#[test]
fn a_good_spec_resolves_to_the_catalogue_pools_and_its_terms() {
    let c = check_spec("ci-a", |_| {}).unwrap();
    assert_eq!(c.request.pools.len(), 2);
    assert_eq!(c.request.duration_h, Some(72.0));
    assert_eq!(c.terms.team, "paiement");
    assert_eq!(c.terms.kubernetes_version, "v1.33.5+rke2r1");
    assert!((c.terms.vcpu - 36.0).abs() < 1e-9, "{:?}", c.terms);
    assert_eq!(c.terms.pools.len(), 2);
    assert_eq!(pools_of(&c.terms).len(), 2);
    assert!(
        check_spec("ci-a", |s| s.kubernetes_version =
            Some("v1.32.9+rke2r1".into()))
        .is_ok()
    );
    // An empty team is the namespace's.
    assert_eq!(
        check_spec("ci-a", |s| s.team.clear()).unwrap().terms.team,
        "paiement"
    );
    assert!(check_spec("ci-a", |s| s.duration = "30d".into()).is_ok());
    assert_eq!(
        check_spec("ci-a", |s| s.max_wait = Some("2d".into()))
            .unwrap()
            .max_wait_h,
        Some(48.0)
    );
}

#[test]
fn each_bad_field_is_named_with_what_to_do() {
    let e =
        |name: &str, f: fn(&mut ClusterRequestSpec)| check_spec(name, f).unwrap_err().to_string();
    assert_eq!(
        e("ci", |s| s.team = "logistique".into()),
        "spec.team: `logistique` is not the team of namespace team-paiement (paiement); a request counts against the quota of the team whose namespace it is made in: make it in that team's namespace, or leave spec.team empty"
    );
    assert_eq!(
        e("ci", |s| s.shape = "huge".into()),
        "spec.shape: `huge` is not in the catalogue; shapes: large, standard"
    );
    assert_eq!(
        e("ci", |s| s.duration = "-5h".into()),
        "spec.duration: `-5h` does not start with a number"
    );
    assert_eq!(
        e("ci", |s| s.duration = "31d".into()),
        "spec.duration: `31d` is past the longest lifetime team paiement is granted (30d), extensions included; ask for at most 30d"
    );
    assert!(e("ci", |s| s.duration = String::new()).starts_with("spec.duration: empty"));
    assert!(e("ci", |s| s.max_wait = Some("soon".into())).starts_with("spec.maxWait: "));
    assert_eq!(
        e("ci", |s| s.kubernetes_version = Some("v1.20.0".into())),
        "spec.kubernetesVersion: `v1.20.0` is not offered; allowed: v1.33.5+rke2r1 (the catalogue's), v1.32.9+rke2r1"
    );
    assert!(e("ci", |s| s.reason = Some("x".repeat(2000))).starts_with("spec.reason: 2000 bytes"));
    assert!(
        e("ci", |s| s.requester = Some("x".repeat(300)))
            .starts_with("spec.requester: 300 bytes; at most 256")
    );
    assert_eq!(
        e("ci", |s| s.requester = Some("\u{1b}[31mroot".into())),
        "spec.requester: `\\u{1b}[31mroot` holds control characters; write plain text"
    );
    assert!(
        e("Not_A_Name", |_| {})
            .starts_with("metadata.name: `Not_A_Name` cannot name a Rancher cluster")
    );
    let other = check(
        &request("ci", |s| s.team.clear()),
        "data",
        &catalogue(),
        &Rules::default(),
        &teams(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        other.contains("team data (of namespace team-paiement) has no quota here"),
        "{other}"
    );
}

#[test]
fn a_shrunk_request_is_refused_at_its_field_with_its_real_size() {
    let mut cr = request("ci", |s| s.reason = Some("é".repeat(100_000)));
    shrink(&mut cr);
    assert!(cr.spec.reason.as_ref().unwrap().len() <= 1024);
    let e = check(&cr, "paiement", &catalogue(), &Rules::default(), &teams())
        .unwrap_err()
        .to_string();
    assert_eq!(e, "spec.reason: 200000 bytes; at most 1024");
    let mut fine = request("ci", |_| {});
    fine.metadata.annotations = Some([(OVERSIZE.to_string(), "spec.team=9".to_string())].into());
    shrink(&mut fine);
    assert!(fine.metadata.annotations.unwrap().is_empty());
}

#[test]
fn an_admitted_request_may_change_its_lifetime_within_the_cap_and_nothing_else() {
    let terms = check_spec("ci", |_| {}).unwrap().terms;
    let cap = 30.0 * 24.0;
    let edit = |f: fn(&mut ClusterRequestSpec)| change(&request("ci", f), &terms, cap);
    assert_eq!(edit(|_| {}), Change::None);
    assert_eq!(edit(|s| s.reason = Some("more load".into())), Change::None);
    assert_eq!(
        edit(|s| s.duration = "14d".into()),
        Change::Lifetime {
            duration: "14d".into(),
            hours: 336.0
        }
    );
    assert_eq!(
        edit(|s| s.duration = "1h".into()),
        Change::Lifetime {
            duration: "1h".into(),
            hours: 1.0
        }
    );
    let Change::Refused { reason, message } = edit(|s| s.duration = "31d".into()) else {
        panic!()
    };
    assert_eq!(reason, "ExtensionPastCap");
    assert_eq!(
        message,
        "spec.duration: `31d` is past the longest lifetime team paiement is granted (30d from admission, extensions included); the lifetime stays 72h"
    );
    let Change::Refused { reason, message } = edit(|s| {
        s.team = "logistique".into();
        s.shape = "large".into();
    }) else {
        panic!()
    };
    assert_eq!(reason, "ImmutableField");
    assert_eq!(
        message,
        "spec.team (`logistique`, admitted as paiement), spec.shape (`large`, admitted as standard) cannot change after admission: the cluster keeps the terms it was judged on; revert the edit, or make a new request"
    );
    let Change::Refused { reason, .. } =
        edit(|s| s.kubernetes_version = Some("v1.32.9+rke2r1".into()))
    else {
        panic!()
    };
    assert_eq!(reason, "ImmutableField");
    let Change::Refused { reason, .. } = edit(|s| s.duration = "-1h".into()) else {
        panic!()
    };
    assert_eq!(reason, "InvalidSpec");
}
