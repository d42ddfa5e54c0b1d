//! Fifteen minutes, held to: each admitted request's time to Ready predicted at admission
//! (`simulate::delivery`, Rancher's tier order and the image's path to a booted VM), the
//! milestones the operator sees measured against it (`status.delivery.reached`: the
//! Rancher cluster created, Rancher's `status.ready`, the team's access granted), and a
//! request not Ready by its admission plus the target marked `DeliveryLate` (a Warning
//! naming the step it is in and how long that step has taken against its prediction).
//!
//! Once deliveries of a shape were measured, the prediction of the next one of that shape
//! takes the median of the last five in place of the model's defaults for the segments
//! measured, and says so (`predictedFrom`). The operator sees the cluster created and
//! Ready, not the milestones in between (machines created, their infrastructure ready, the
//! init node, the control plane, the workers: it does not read Rancher's CAPI `Machine`
//! objects yet), so a measured delivery's span from creation to Ready replaces the model's
//! whole span, the milestones in between counted as reached at creation.

use std::collections::BTreeMap;

use super::resource::{ClusterRequest, ClusterRequestStatus, Delivery, parse_time};
use crate::simulate::delivery::{Measured, Milestone, Prediction};

/// Deliveries per shape the measured statistic is taken over.
const RECENT: usize = 5;

/// Milestone names in `status.delivery.reached`.
pub const CLUSTER_CREATED: &str = "cluster-created";
pub const CLUSTER_READY: &str = "cluster-ready";
pub const ACCESS_GRANTED: &str = "access-granted";

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
        reached: BTreeMap::new(),
    }
}

/// A delivery's milestones, seconds after admission.
type Reached = BTreeMap<Milestone, f64>;

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
        let (Some(created), Some(ready)) = (
            d.reached.get(CLUSTER_CREATED).copied(),
            d.reached.get(CLUSTER_READY).copied(),
        ) else {
            continue;
        };
        if !(created.is_finite() && ready.is_finite() && created >= 0.0 && ready >= created) {
            continue;
        }
        // Only creation and Ready are seen: the span between them replaces the model's
        // whole span, the milestones in between counted as reached at creation.
        let mut m: BTreeMap<Milestone, f64> =
            Milestone::ALL.iter().map(|x| (*x, created)).collect();
        m.insert(Milestone::ClusterReady, ready);
        by_shape
            .entry(terms.shape.clone())
            .or_default()
            .push((at, m));
    }
    by_shape
        .into_iter()
        .map(|(shape, mut v)| {
            v.sort_by_key(|(at, _)| *at);
            let d: Vec<BTreeMap<Milestone, f64>> = v.into_iter().map(|(_, m)| m).collect();
            (shape, Measured::median_of_last(&d, RECENT))
        })
        .collect()
}

/// Record `milestone` as reached at `now` (once); the seconds since admission when it is
/// new.
pub fn reach(st: &mut ClusterRequestStatus, milestone: &str, now: i64) -> Option<f64> {
    let admitted = st.admitted_at.as_deref().and_then(parse_time)?;
    let d = st.delivery.as_mut()?;
    if d.reached.contains_key(milestone) {
        return None;
    }
    let s = (now - admitted).max(0) as f64;
    d.reached.insert(milestone.to_string(), s);
    Some(s)
}

/// Minutes, for people.
fn min(s: f64) -> String {
    format!("{:.1} min", s / 60.0)
}

/// When a delivery not yet Ready is past its target: the `DeliveryLate` message, naming
/// the step it is in (`step`, since `step_since` seconds after admission) and that step's
/// prediction.
pub fn late(
    st: &ClusterRequestStatus,
    now: i64,
    step: &str,
    step_since: f64,
    step_predicted: Option<f64>,
) -> Option<String> {
    let admitted = st.admitted_at.as_deref().and_then(parse_time)?;
    let d = st.delivery.as_ref()?;
    let waited = (now - admitted) as f64;
    if waited < d.target_seconds {
        return None;
    }
    let predicted = d.predicted_seconds.map_or_else(|| "never".to_string(), min);
    let step_pred = step_predicted
        .map(|p| format!(", predicted {}", min(p)))
        .unwrap_or_default();
    Some(format!(
        "not ready {} after admission (target {}, predicted {predicted}): {step} for {}{step_pred}",
        min(waited),
        min(d.target_seconds),
        min((waited - step_since).max(0.0)),
    ))
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
                ..Delivery::default()
            }),
            ..ClusterRequestStatus::default()
        }
    }

    #[test]
    fn a_milestone_is_recorded_once_in_seconds_since_admission() {
        let mut st = status("2027-01-15T08:00:00Z", 900.0, Some(660.0));
        let t0 = parse_time("2027-01-15T08:00:00Z").unwrap();
        assert_eq!(reach(&mut st, CLUSTER_CREATED, t0 + 2), Some(2.0));
        assert_eq!(reach(&mut st, CLUSTER_CREATED, t0 + 50), None);
        assert_eq!(reach(&mut st, CLUSTER_READY, t0 + 700), Some(700.0));
        let d = st.delivery.unwrap();
        assert_eq!(d.reached.get(CLUSTER_CREATED).copied(), Some(2.0));
        assert_eq!(d.reached.get(CLUSTER_READY).copied(), Some(700.0));
    }

    #[test]
    fn late_only_past_the_target_and_says_the_step() {
        let st = status("2027-01-15T08:00:00Z", 900.0, Some(660.0));
        let t0 = parse_time("2027-01-15T08:00:00Z").unwrap();
        assert_eq!(late(&st, t0 + 899, "x", 0.0, None), None);
        assert_eq!(
            late(
                &st,
                t0 + 960,
                "waiting for Rancher to report cluster a ready",
                60.0,
                Some(600.0)
            )
            .unwrap(),
            "not ready 16.0 min after admission (target 15.0 min, predicted 11.0 min): waiting for Rancher to report cluster a ready for 15.0 min, predicted 10.0 min"
        );
        let never = status("2027-01-15T08:00:00Z", 900.0, None);
        assert!(
            late(&never, t0 + 901, "s", 0.0, None)
                .unwrap()
                .contains("predicted never")
        );
    }
}
