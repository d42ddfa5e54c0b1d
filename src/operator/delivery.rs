//! Fifteen minutes, held to: each admitted request's time to Ready predicted at admission
//! (`simulate::delivery`, Rancher's tier order and the image's path to a booted VM), the
//! milestones the operator sees measured against it (`status.delivery.reached`: the
//! Rancher cluster created, its machines made and their infrastructure ready, the init
//! node, the control plane and the workers healthy, read from Rancher's CAPI machines
//! (`machines.rs`); Rancher's `status.ready`; the team's access granted), and a request
//! not delivered (Ready, with its access) by its admission plus the target marked
//! `DeliveryLate`: a Warning naming the phase it is stuck in (the first milestone not
//! reached), how long that phase has taken, and its prediction.
//!
//! Once deliveries of a shape were measured, the prediction of the next one of that shape
//! takes the median of the last five, segment by segment, in place of the model's
//! defaults, and says so (`predictedFrom`). A milestone a delivery was not seen to reach
//! (its machines could not be read, or the operator looked only after several were
//! passed) counts as reached with the next one seen.

use std::collections::BTreeMap;

use super::resource::{ClusterRequest, ClusterRequestStatus, Delivery, parse_time};
use crate::simulate::delivery::{Measured, Milestone, Prediction};

/// Deliveries per shape the measured statistic is taken over.
const RECENT: usize = 5;

/// Milestone names in `status.delivery.reached`.
pub const CLUSTER_CREATED: &str = "cluster-created";
pub const CLUSTER_READY: &str = "cluster-ready";
pub const ACCESS_GRANTED: &str = "access-granted";

/// A model milestone's name in the status (its serde name).
pub fn key(m: Milestone) -> &'static str {
    match m {
        Milestone::ClusterCreated => CLUSTER_CREATED,
        Milestone::MachinesCreated => "machines-created",
        Milestone::InfrastructureReady => "infrastructure-ready",
        Milestone::InitNodeReady => "init-node-ready",
        Milestone::ControlPlaneReady => "control-plane-ready",
        Milestone::WorkersReady => "workers-ready",
        Milestone::ClusterReady => CLUSTER_READY,
    }
}

/// Every phase of a delivery in order, each named by the milestone that ends it, in
/// words: the model's milestones, then the team's access.
pub fn phases() -> impl Iterator<Item = (&'static str, &'static str)> {
    Milestone::ALL
        .iter()
        .map(|m| (key(*m), m.words()))
        .chain(std::iter::once((
            ACCESS_GRANTED,
            "the team's access granted",
        )))
}

/// The status of a delivery predicted at admission; `target_s` overrides the
/// prediction's own target (the scenario's `delivery:` or 15 minutes).
pub fn predicted(p: &Prediction, target_s: Option<f64>) -> Delivery {
    let path = p
        .critical_path
        .iter()
        .take(24)
        .map(|s| {
            let on = s
                .machine
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            format!(
                "{}{on}: {:.0}-{:.0} s [{}]",
                s.what, s.start_s, s.end_s, s.source
            )
        })
        .collect();
    Delivery {
        predicted_seconds: p.total_s.map(f64::round),
        never: p.never.clone(),
        low_seconds: p.low_s.map(f64::round),
        high_seconds: p.high_s.map(f64::round),
        target_seconds: target_s.unwrap_or(p.target_s),
        predicted_from: p.measured.clone().unwrap_or_else(|| "model".into()),
        critical_path: path,
        predicted_at: if p.total_s.is_some() {
            p.milestones
                .iter()
                .map(|m| (key(m.milestone).to_string(), m.at_s.round()))
                .collect()
        } else {
            BTreeMap::new()
        },
        reached: BTreeMap::new(),
    }
}

/// A delivery's milestones, seconds after admission.
type Reached = BTreeMap<Milestone, f64>;

/// The model's milestones a delivery reached, those it was not seen to reach counted
/// with the next one seen; `None` until it reached Ready.
fn filled(reached: &BTreeMap<String, f64>) -> Option<Reached> {
    let ok = |s: &f64| s.is_finite() && *s >= 0.0;
    let ready = reached.get(CLUSTER_READY).copied().filter(ok)?;
    let mut out = Reached::new();
    let mut next = ready;
    for m in Milestone::ALL.iter().rev() {
        if let Some(s) = reached.get(key(*m)).copied().filter(ok) {
            next = s.min(next);
        }
        out.insert(*m, next);
    }
    Some(out)
}

/// Per shape, what the operator measured: the median of each segment over the last
/// deliveries of that shape that reached Ready, oldest first by admission.
pub fn measured(requests: &[ClusterRequest]) -> BTreeMap<String, Measured> {
    let mut by_shape: BTreeMap<String, Vec<(i64, Reached)>> = BTreeMap::new();
    for cr in requests {
        let Some(st) = cr.status.as_ref() else {
            continue;
        };
        let (Some(d), Some(terms)) = (st.delivery.as_ref(), st.terms.as_ref()) else {
            continue;
        };
        let at = st.admitted_at.as_deref().and_then(parse_time).unwrap_or(0);
        let Some(m) = filled(&d.reached) else {
            continue;
        };
        by_shape
            .entry(terms.shape.clone())
            .or_default()
            .push((at, m));
    }
    by_shape
        .into_iter()
        .map(|(shape, mut v)| {
            v.sort_by_key(|(at, _)| *at);
            let d: Vec<Reached> = v.into_iter().map(|(_, m)| m).collect();
            (shape, Measured::median_of_last(&d, RECENT))
        })
        .collect()
}

/// Record `milestone` as reached at `now` (once); the seconds of the phase it ends (since
/// the latest milestone reached before it, or admission) when it is new.
pub fn reach(st: &mut ClusterRequestStatus, milestone: &str, now: i64) -> Option<f64> {
    let admitted = st.admitted_at.as_deref().and_then(parse_time)?;
    let d = st.delivery.as_mut()?;
    if d.reached.contains_key(milestone) {
        return None;
    }
    let s = (now - admitted).max(0) as f64;
    let before = phases()
        .take_while(|(k, _)| *k != milestone)
        .filter_map(|(k, _)| d.reached.get(k).copied())
        .fold(0.0, f64::max);
    d.reached.insert(milestone.to_string(), s);
    Some((s - before).max(0.0))
}

/// Minutes, for people.
fn min(s: f64) -> String {
    format!("{:.1} min", s / 60.0)
}

/// The phase a delivery is in: the first milestone after the latest one reached
/// (skipping the machine milestones when `machines_seen` is false), the seconds after
/// admission it started (that latest milestone), and its predicted length.
pub fn stuck(
    d: &Delivery,
    machines_seen: bool,
) -> Option<(&'static str, &'static str, f64, Option<f64>)> {
    let machine = |k: &str| !matches!(k, CLUSTER_CREATED | CLUSTER_READY | ACCESS_GRANTED);
    let order: Vec<(&'static str, &'static str)> = phases()
        .filter(|(k, _)| machines_seen || !machine(k))
        .collect();
    let last = order.iter().rposition(|(k, _)| d.reached.contains_key(*k));
    let (k, words) = *order.get(last.map_or(0, |i| i + 1))?;
    let (prev, since) = last.map_or(("", 0.0), |i| {
        let p = order[i].0;
        (p, d.reached.get(p).copied().unwrap_or(0.0))
    });
    let predicted = d.predicted_at.get(k).map(|end| {
        let start = d.predicted_at.get(prev).copied().unwrap_or(0.0);
        (end - start).max(0.0)
    });
    Some((k, words, since, predicted))
}

/// When a delivery not yet done (Ready, with its access) is past its target: the
/// `DeliveryLate` message, naming the phase it is stuck in, how long that phase has
/// taken, its prediction, and `detail` (what the machines or Rancher say).
pub fn late(
    st: &ClusterRequestStatus,
    now: i64,
    machines_seen: bool,
    detail: &str,
) -> Option<String> {
    let admitted = st.admitted_at.as_deref().and_then(parse_time)?;
    let d = st.delivery.as_ref()?;
    let waited = (now - admitted) as f64;
    if waited < d.target_seconds {
        return None;
    }
    let (k, words, since, phase_predicted) = stuck(d, machines_seen)?;
    let predicted = d.predicted_seconds.map_or_else(|| "never".to_string(), min);
    let what = if k == ACCESS_GRANTED {
        "cluster ready, access not granted"
    } else {
        "not ready"
    };
    let phase_pred = phase_predicted
        .map(|p| format!(", predicted {}", min(p)))
        .unwrap_or_default();
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!("; {detail}")
    };
    Some(format!(
        "{what} {} after admission (target {}, predicted {predicted}): stuck in phase {k} (waiting for {words}{detail}) for {}{phase_pred}",
        min(waited),
        min(d.target_seconds),
        min((waited - since).max(0.0)),
    ))
}

/// Seconds until a delivery under way passes its target (0 once past); `None` when it is
/// done or has no target.
pub fn late_in(cr: &ClusterRequest, now: i64) -> Option<i64> {
    let st = cr.status.as_ref()?;
    let d = st.delivery.as_ref()?;
    if d.reached.contains_key(ACCESS_GRANTED) || st.condition("DeliveryLate").is_some() {
        return None;
    }
    let admitted = st.admitted_at.as_deref().and_then(parse_time)?;
    let at = admitted + d.target_seconds.ceil() as i64;
    Some((at - now).max(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(admitted: &str, target: f64, predicted: Option<f64>) -> ClusterRequestStatus {
        ClusterRequestStatus {
            admitted_at: Some(admitted.into()),
            delivery: Some(Delivery {
                predicted_seconds: predicted,
                target_seconds: target,
                predicted_from: "model".into(),
                predicted_at: [
                    (CLUSTER_CREATED, 10.0),
                    ("machines-created", 25.0),
                    ("infrastructure-ready", 200.0),
                    ("init-node-ready", 290.0),
                    ("control-plane-ready", 370.0),
                    ("workers-ready", 430.0),
                    (CLUSTER_READY, 440.0),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
                ..Delivery::default()
            }),
            ..ClusterRequestStatus::default()
        }
    }

    #[test]
    fn a_milestone_is_recorded_once_with_the_length_of_the_phase_it_ends() {
        let mut st = status("2027-01-15T08:00:00Z", 900.0, Some(660.0));
        let t0 = parse_time("2027-01-15T08:00:00Z").unwrap();
        assert_eq!(reach(&mut st, CLUSTER_CREATED, t0 + 2), Some(2.0));
        assert_eq!(reach(&mut st, CLUSTER_CREATED, t0 + 50), None);
        assert_eq!(
            reach(&mut st, "infrastructure-ready", t0 + 300),
            Some(298.0)
        );
        assert_eq!(reach(&mut st, CLUSTER_READY, t0 + 700), Some(400.0));
        let d = st.delivery.unwrap();
        assert_eq!(d.reached.get(CLUSTER_CREATED).copied(), Some(2.0));
        assert_eq!(d.reached.get(CLUSTER_READY).copied(), Some(700.0));
        // Unseen milestones count with the next one seen.
        let f = filled(&d.reached).unwrap();
        assert_eq!(
            [
                f.get(&Milestone::ClusterCreated).copied(),
                f.get(&Milestone::MachinesCreated).copied(),
                f.get(&Milestone::InitNodeReady).copied(),
            ],
            [Some(2.0), Some(300.0), Some(700.0)]
        );
    }

    #[test]
    fn late_only_past_the_target_and_names_the_phase_it_is_stuck_in() {
        let mut st = status("2027-01-15T08:00:00Z", 900.0, Some(660.0));
        let t0 = parse_time("2027-01-15T08:00:00Z").unwrap();
        reach(&mut st, CLUSTER_CREATED, t0 + 10);
        reach(&mut st, "machines-created", t0 + 30);
        reach(&mut st, "infrastructure-ready", t0 + 600);
        assert_eq!(late(&st, t0 + 899, true, "x"), None);
        assert_eq!(
            late(&st, t0 + 960, true, "no etcd node healthy yet, of 3").unwrap(),
            "not ready 16.0 min after admission (target 15.0 min, predicted 11.0 min): stuck in phase init-node-ready (waiting for init node ready; no etcd node healthy yet, of 3) for 6.0 min, predicted 1.5 min"
        );
        // Machines unseen: the phase is Rancher's readiness, from the cluster's creation.
        let mut unseen = status("2027-01-15T08:00:00Z", 900.0, Some(660.0));
        reach(&mut unseen, CLUSTER_CREATED, t0 + 10);
        assert!(
            late(&unseen, t0 + 960, false, "")
                .unwrap()
                .ends_with("stuck in phase cluster-ready (waiting for cluster Ready) for 15.8 min, predicted 7.2 min"),
        );
        for m in [
            "init-node-ready",
            "control-plane-ready",
            "workers-ready",
            CLUSTER_READY,
        ] {
            reach(&mut st, m, t0 + 900);
        }
        assert_eq!(
            late(&st, t0 + 1000, true, "team t names no Rancher principal").unwrap(),
            "cluster ready, access not granted 16.7 min after admission (target 15.0 min, predicted 11.0 min): stuck in phase access-granted (waiting for the team's access granted; team t names no Rancher principal) for 1.7 min"
        );
        // Woken at the target, not after it is done.
        let mut cr = ClusterRequest::new("r", super::super::ClusterRequestSpec::default());
        cr.status = Some(status("2027-01-15T08:00:00Z", 900.0, Some(660.0)));
        assert_eq!(late_in(&cr, t0 + 100), Some(800));
        assert_eq!(late_in(&cr, t0 + 1000), Some(0));
        cr.status = Some(st.clone());
        reach(cr.status.as_mut().unwrap(), ACCESS_GRANTED, t0 + 1000);
        assert_eq!(late_in(&cr, t0 + 1000), None);
        let never = status("2027-01-15T08:00:00Z", 900.0, None);
        assert!(
            late(&never, t0 + 901, true, "")
                .unwrap()
                .contains("predicted never")
        );
    }
}
