//! Compliance drift: a delivered Rancher cluster held, at every look, to the promises its
//! catalogue shape keeps (`plan::compliance::drift`: etcd snapshots scheduled and leaving
//! the cluster, an audit policy that logs, the default ingress off, the version allowed).
//! A cluster whose spec was edited to drop one gets `ComplianceDrift=True` on its request
//! (the reason names the promises, the message the keys) and one Warning; repaired, the
//! condition goes False with a Normal event. Each event's key carries the condition's
//! transition time (and, for a drift, the promises broken), so it is announced once,
//! across restarts too, and again only when the cluster drifts anew.

use kube::api::DynamicObject;
use sha2::Digest as _;

use super::catalogue::{Marks, Offer};
use super::context::{Announce, condition};
use super::resource::{ClusterRequestStatus, Terms};
use crate::plan::compliance::{self, PromiseCheck};

const CONDITION: &str = "ComplianceDrift";

/// A condition's reason is at most this long (the CRD's bound).
const REASON_MAX: usize = 63;

/// The promises `offer`'s cluster keeps and the delivered `cluster` breaks. The versions
/// allowed are the site's business at render time: here any RKE2 release is allowed, so
/// only what an edit dropped is found.
pub(super) fn broken(offer: &Offer, terms: &Terms, cluster: &DynamicObject) -> Vec<PromiseCheck> {
    let name = cluster.metadata.name.as_deref().unwrap_or_default();
    let namespace = cluster.metadata.namespace.as_deref().unwrap_or_default();
    let objects = offer.objects_for(
        name,
        namespace,
        &Marks::default(),
        Some(terms.kubernetes_version.as_str()),
    );
    let Some(template) = objects.iter().find(|o| o["kind"] == "Cluster") else {
        return Vec::new();
    };
    let delivered = serde_json::to_value(cluster).unwrap_or_default();
    compliance::drift(template, &delivered, &compliance::Terms { versions: &[] })
}

/// A promise as a condition reason word (`AuditLogged`).
fn reason_word(c: &PromiseCheck) -> String {
    format!("{:?}", c.promise)
}

/// The condition's reason: the promises broken, as many as fit.
fn reason(broken: &[PromiseCheck]) -> String {
    let mut out = String::new();
    for (i, c) in broken.iter().enumerate() {
        let w = reason_word(c);
        let sep = if out.is_empty() { "" } else { "," };
        if out.len() + sep.len() + w.len() > REASON_MAX - ",More".len() && i + 1 < broken.len() {
            out.push_str(",More");
            break;
        }
        out.push_str(sep);
        out.push_str(&w);
    }
    out
}

/// Set `ComplianceDrift` on `st` from what `broken` found of cluster `name`, announcing a
/// new drift (Warning) or its repair (Normal) once.
pub(super) fn record(
    st: &mut ClusterRequestStatus,
    announce: &mut Vec<Announce>,
    name: &str,
    broken: &[PromiseCheck],
    now: i64,
    generation: i64,
) {
    let was = st.condition(CONDITION).is_some_and(|c| c.status == "True");
    if broken.is_empty() {
        if !was {
            return;
        }
        let msg = format!("cluster {name} keeps every promise of its shape again");
        st.set_condition(condition(CONDITION, false, "Kept", &msg, now, generation));
        let at = st
            .condition(CONDITION)
            .map(|c| c.last_transition_time.clone())
            .unwrap_or_default();
        announce.push(Announce::new(
            format!("ComplianceRestored@{at}"),
            "ComplianceRestored",
            &msg,
            false,
        ));
        return;
    }
    let what: Vec<String> = broken
        .iter()
        .map(|c| format!("{} ({}: {})", c.promise.title(), c.key, c.detail))
        .collect();
    let msg = format!(
        "cluster {name} no longer keeps what its shape promises: {}; restore the key{} as the catalogue renders {}",
        what.join("; "),
        if broken.len() == 1 { "" } else { "s" },
        if broken.len() == 1 { "it" } else { "them" },
    );
    st.set_condition(condition(
        CONDITION,
        true,
        &reason(broken),
        &msg,
        now,
        generation,
    ));
    let at = st
        .condition(CONDITION)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or_default();
    let keys: Vec<&str> = broken.iter().map(|c| c.key.as_str()).collect();
    let digest = sha2::Sha256::digest(keys.join(",").as_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    announce.push(Announce::new(
        format!("ComplianceDrift@{at}#{hash}"),
        CONDITION,
        &msg,
        true,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::compliance::{Promise, Verdict};

    fn check(promise: Promise, key: &str) -> PromiseCheck {
        PromiseCheck {
            promise,
            verdict: Verdict::Broken,
            key: key.into(),
            detail: "absent".into(),
        }
    }

    #[test]
    fn a_drift_is_announced_once_and_its_repair_turns_the_condition_false() {
        let mut st = ClusterRequestStatus::default();
        let mut ann = Vec::new();
        record(&mut st, &mut ann, "c", &[], 10, 1);
        assert!(st.condition(CONDITION).is_none() && ann.is_empty());
        let both = [
            check(Promise::SnapshotsOffCluster, "spec.rkeConfig.etcd.s3"),
            check(
                Promise::AuditLogged,
                "spec.rkeConfig.machineGlobalConfig.audit-policy-file",
            ),
        ];
        record(&mut st, &mut ann, "c", &both, 20, 1);
        let c = st.condition(CONDITION).unwrap().clone();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            ("True", "SnapshotsOffCluster,AuditLogged")
        );
        assert!(
            c.message
                .contains("snapshots leave the cluster (spec.rkeConfig.etcd.s3: absent)")
                && c.message
                    .contains("spec.rkeConfig.machineGlobalConfig.audit-policy-file"),
            "{}",
            c.message
        );
        assert!(
            ann[0].warning
                && ann[0]
                    .key
                    .starts_with("ComplianceDrift@1970-01-01T00:00:20Z#")
        );
        // The same drift seen again: the same key (announced once by the writer).
        let mut again = Vec::new();
        record(&mut st, &mut again, "c", &both, 30, 1);
        assert_eq!(again[0].key, ann[0].key);
        let mut fixed = Vec::new();
        record(&mut st, &mut fixed, "c", &[], 40, 1);
        let c = st.condition(CONDITION).unwrap();
        assert_eq!((c.status.as_str(), c.reason.as_str()), ("False", "Kept"));
        assert!(!fixed[0].warning && fixed[0].reason == "ComplianceRestored");
        // Every promise broken: the reason stays within its bound.
        let all: Vec<PromiseCheck> = Promise::CLUSTER.iter().map(|p| check(*p, "k")).collect();
        let r = reason(&all);
        assert!(r.len() <= REASON_MAX && r.ends_with(",More"), "{r}");
    }
}
