//! What a request needs next, decided from its object and the time alone (pure, so every
//! transition is tested without an API server), and when it needs looking at again.
//!
//! ```text
//!  (new) ─judge─> Admitted ─create cluster─> Provisioning ─Rancher ready, access─> Ready
//!    │  ^             └──────────────┬──────────────────────────────────────────┘
//!    │  └ Waiting (quota, headroom:  │ spec edited: the lifetime judged (extended or
//!    │     judged again each pass)   │ shortened), any other term refused
//!    └─> Refused (invalid spec,      │ expiresAt - warning (at most half the lifetime,
//!        until the spec changes)     │ and only once the cluster is made): event, Expiring
//!                                    v
//!                                Expiring ─expiresAt: final snapshot, access removed,
//!                                          cluster deleted (held while protected)─> Expired
//! ```
//!
//! A request being deleted has its access and cluster removed first (the finalizer),
//! whatever its phase, unless it is protected. Events a status write left pending are
//! sent before anything else.

use super::admission::needs_judging;
use super::resource::{ClusterRequest, PROTECT_ANNOTATION, Phase};
pub use super::resource::{format_time, parse_time};

/// The next thing to do for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Events left pending by a status write: send them.
    Announce,
    /// Deleted by someone: remove its access and cluster, then let it go.
    Cleanup,
    /// Waiting for a judgement.
    Judge,
    /// Admitted, and its spec edited since: judge the change against the recorded terms.
    Change,
    /// Admitted: make sure its cluster exists, follow Rancher's readiness, grant access.
    Deliver,
    /// Inside the warning time before expiry: warn once.
    Warn,
    /// Its lifetime is over: final snapshot, access and cluster removed, then Expired.
    Expire,
    /// Nothing until its spec changes (Refused, Failed) or ever (Expired).
    Idle,
}

/// Whether the request carries `rackplan.io/protect: "true"`.
pub fn protected(cr: &ClusterRequest) -> bool {
    cr.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROTECT_ANNOTATION))
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

fn expires_at(cr: &ClusterRequest) -> Option<i64> {
    cr.status
        .as_ref()
        .and_then(|s| s.expires_at.as_deref())
        .and_then(parse_time)
}

/// When the warning falls: `warn_s` before expiry, but never earlier than half-way
/// through the lifetime (a 1 h request is warned at 30 min, not at once).
pub(super) fn warn_at(cr: &ClusterRequest, e: i64, warn_s: i64) -> i64 {
    let admitted = cr
        .status
        .as_ref()
        .and_then(|s| s.admitted_at.as_deref())
        .and_then(parse_time);
    let lead = match admitted {
        Some(a) if a < e => warn_s.min((e - a) / 2),
        _ => warn_s,
    };
    e - lead
}

/// The next step for `cr` at `now`, warning `warn_s` seconds before expiry, on an
/// operator that runs `--dry-run` or not.
pub fn next(cr: &ClusterRequest, now: i64, warn_s: i64, dry_run: bool) -> Step {
    if cr
        .status
        .as_ref()
        .is_some_and(|s| !s.pending_events.is_empty())
    {
        return Step::Announce;
    }
    if cr.metadata.deletion_timestamp.is_some() {
        return Step::Cleanup;
    }
    if needs_judging(cr, dry_run) {
        return Step::Judge;
    }
    let st = cr.status.as_ref();
    let phase = st.and_then(|s| s.phase);
    match phase {
        Some(p) if p.holds() => {
            let edited = st.and_then(|s| s.observed_generation) != cr.metadata.generation;
            if edited && st.is_some_and(|s| s.terms.is_some()) {
                return Step::Change;
            }
            match expires_at(cr) {
                Some(e) if now >= e => Step::Expire,
                // Warned only once the cluster has been made: an Admitted request is
                // delivered first, so a warning never stands in for the cluster.
                Some(e)
                    if now >= warn_at(cr, e, warn_s)
                        && matches!(p, Phase::Provisioning | Phase::Ready) =>
                {
                    Step::Warn
                }
                // Expiring and warned: nothing to deliver any more, wait for the hour.
                _ if p == Phase::Expiring => Step::Idle,
                _ => Step::Deliver,
            }
        }
        _ => Step::Idle,
    }
}

/// Seconds until `cr` next needs looking at for its times alone (the warning, then the
/// expiry); `None` when no time of it is ahead.
pub fn wake_in(cr: &ClusterRequest, now: i64, warn_s: i64) -> Option<i64> {
    let phase = cr.status.as_ref().and_then(|s| s.phase)?;
    if !phase.holds() {
        return None;
    }
    let e = expires_at(cr)?;
    let warn = warn_at(cr, e, warn_s);
    let at = if phase != Phase::Expiring && warn > now {
        warn
    } else {
        e
    };
    Some((at - now).max(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::resource::{ClusterRequestSpec, ClusterRequestStatus};

    const DAY: i64 = 86_400;

    fn cr(phase: Option<Phase>, expires: Option<i64>) -> ClusterRequest {
        let mut c = ClusterRequest::new("r", ClusterRequestSpec::default());
        c.metadata.generation = Some(1);
        c.status = phase.map(|p| ClusterRequestStatus {
            phase: Some(p),
            observed_generation: Some(1),
            expires_at: expires.map(format_time),
            ..Default::default()
        });
        c
    }

    #[test]
    fn the_phases_lead_to_their_steps() {
        let e = 100 * DAY;
        assert_eq!(next(&cr(None, None), 0, DAY, false), Step::Judge);
        assert_eq!(
            next(&cr(Some(Phase::Pending), None), 0, DAY, false),
            Step::Judge
        );
        assert_eq!(
            next(&cr(Some(Phase::Refused), None), 0, DAY, false),
            Step::Idle
        );
        assert_eq!(
            next(&cr(Some(Phase::Admitted), Some(e)), 0, DAY, false),
            Step::Deliver
        );
        assert_eq!(
            next(&cr(Some(Phase::Ready), Some(e)), e - DAY - 1, DAY, false),
            Step::Deliver
        );
        assert_eq!(
            next(&cr(Some(Phase::Ready), Some(e)), e - DAY, DAY, false),
            Step::Warn
        );
        assert_eq!(
            next(&cr(Some(Phase::Provisioning), Some(e)), e - 5, DAY, false),
            Step::Warn
        );
        assert_eq!(
            next(&cr(Some(Phase::Expiring), Some(e)), e - 5, DAY, false),
            Step::Idle
        );
        assert_eq!(
            next(&cr(Some(Phase::Expiring), Some(e)), e, DAY, false),
            Step::Expire
        );
        // A restart after the hour passed: the expiry is not missed, from any phase.
        assert_eq!(
            next(&cr(Some(Phase::Ready), Some(e)), e + 10 * DAY, DAY, false),
            Step::Expire
        );
        assert_eq!(
            next(&cr(Some(Phase::Admitted), Some(e)), e, DAY, false),
            Step::Expire
        );
        assert_eq!(
            next(&cr(Some(Phase::Expired), Some(e)), e + DAY, DAY, false),
            Step::Idle
        );
        let mut gone = cr(Some(Phase::Ready), Some(e));
        gone.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_second(5).unwrap(),
            ));
        assert_eq!(next(&gone, 0, DAY, false), Step::Cleanup);
    }

    #[test]
    fn an_edit_after_admission_is_a_change_pending_events_go_first_and_dry_runs_are_judged_again() {
        use crate::operator::resource::{PendingEvent, Terms};
        let e = 100 * DAY;
        let mut c = cr(Some(Phase::Ready), Some(e));
        c.status.as_mut().unwrap().terms = Some(Terms::default());
        assert_eq!(next(&c, 0, DAY, false), Step::Deliver);
        c.metadata.generation = Some(2);
        assert_eq!(next(&c, 0, DAY, false), Step::Change);
        c.status
            .as_mut()
            .unwrap()
            .pending_events
            .push(PendingEvent::default());
        assert_eq!(next(&c, 0, DAY, false), Step::Announce);
        let mut d = cr(Some(Phase::Admitted), Some(e));
        d.status.as_mut().unwrap().terms = Some(Terms {
            dry_run: true,
            ..Terms::default()
        });
        assert_eq!(next(&d, 0, DAY, true), Step::Deliver);
        assert_eq!(next(&d, 0, DAY, false), Step::Judge);
        let mut w = cr(Some(Phase::Waiting), None);
        assert_eq!(next(&w, 0, DAY, false), Step::Judge);
        w.metadata.annotations =
            Some([(PROTECT_ANNOTATION.to_string(), "True".to_string())].into());
        assert!(protected(&w));
    }

    #[test]
    fn a_short_lifetime_is_warned_half_way_and_only_after_its_cluster_is_made() {
        let hour = 3600;
        let mut c = cr(Some(Phase::Admitted), Some(hour));
        c.status.as_mut().unwrap().admitted_at = Some(format_time(0));
        // Admitted with a 24 h warning on a 1 h lifetime: the cluster comes first.
        assert_eq!(next(&c, 1, DAY, false), Step::Deliver);
        c.status.as_mut().unwrap().phase = Some(Phase::Provisioning);
        assert_eq!(next(&c, 1, DAY, false), Step::Deliver);
        assert_eq!(wake_in(&c, 1, DAY), Some(hour / 2 - 1));
        assert_eq!(next(&c, hour / 2, DAY, false), Step::Warn);
    }

    #[test]
    fn the_wake_is_the_warning_then_the_expiry() {
        let e = 10 * DAY;
        assert_eq!(
            wake_in(&cr(Some(Phase::Ready), Some(e)), 0, DAY),
            Some(9 * DAY)
        );
        assert_eq!(
            wake_in(&cr(Some(Phase::Ready), Some(e)), 9 * DAY + 5, DAY),
            Some(DAY - 5)
        );
        assert_eq!(
            wake_in(&cr(Some(Phase::Expiring), Some(e)), DAY, DAY),
            Some(9 * DAY)
        );
        assert_eq!(
            wake_in(&cr(Some(Phase::Ready), Some(e)), 11 * DAY, DAY),
            Some(0)
        );
        assert_eq!(wake_in(&cr(Some(Phase::Refused), Some(e)), 0, DAY), None);
        assert_eq!(parse_time("2027-01-02T03:04:05Z"), Some(1_798_859_045));
        assert_eq!(format_time(1_798_859_045), "2027-01-02T03:04:05Z");
    }
}
