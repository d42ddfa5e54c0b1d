//! A delivery under way, followed at each look: its milestones recorded as Rancher
//! reaches them (the cluster made, its CAPI machines through their phases, Rancher's
//! readiness, the team's access), each phase's length exported once the status holding it
//! is written, and a delivery past its target marked `DeliveryLate` (once) naming the
//! phase it is stuck in with what the machines or Rancher say of it.

use kube::api::DynamicObject;

use super::context::{Announce, Context, OperatorError, condition};
use super::delivery::{self, ACCESS_GRANTED, CLUSTER_CREATED, CLUSTER_READY};
use super::machines::{self, MachineState};
use super::resource::{ClusterRequestStatus, Terms};
use crate::simulate::delivery::Milestone;

/// What one look saw of a delivery.
pub(super) struct Followed {
    /// The machines of the cluster; `None` when they cannot be read.
    machines: Option<Vec<MachineState>>,
    expected: u32,
    /// Phases that ended at this look, with their seconds.
    ended: Vec<(&'static str, f64)>,
    /// The delivery was done at this look: its seconds since admission.
    done: Option<f64>,
    /// When the objects were seen: the clock read after reading them.
    seen: i64,
}

/// Record what `cluster` (absent: not made yet) and its machines have reached, Rancher's
/// readiness `ready` included. A milestone is timed by the clock read after the objects
/// that show it (never before `now`, the look's start), so a change made after the clock
/// moved is never dated before it.
pub(super) async fn follow(
    ctx: &Context,
    st: &mut ClusterRequestStatus,
    terms: &Terms,
    name: &str,
    cluster: Option<&DynamicObject>,
    ready: bool,
    now: i64,
) -> Result<Followed, OperatorError> {
    let expected: u32 = terms.pools.iter().map(|p| p.count).sum();
    let mut f = Followed {
        machines: None,
        expected,
        ended: Vec::new(),
        done: None,
        seen: now,
    };
    if cluster.is_none() {
        return Ok(f);
    }
    let done = st
        .delivery
        .as_ref()
        .is_none_or(|d| d.reached.contains_key(ACCESS_GRANTED));
    if !done {
        f.machines = machines::read(ctx, name).await?;
    }
    f.seen = ctx.s.clock.now()?.max(now);
    let seen = f.seen;
    let mut reach = |st: &mut ClusterRequestStatus, k: &'static str| {
        if let Some(s) = delivery::reach(st, k, seen) {
            f.ended.push((k, s));
        }
    };
    reach(st, CLUSTER_CREATED);
    if let Some(ms) = &f.machines {
        for m in machines::reached(ms, expected) {
            reach(st, delivery::key(m));
        }
    }
    if ready {
        reach(st, CLUSTER_READY);
    }
    Ok(f)
}

impl Followed {
    /// The team's access granted now: the last phase, and the delivery done.
    pub(super) fn granted(&mut self, st: &mut ClusterRequestStatus) {
        if let Some(s) = delivery::reach(st, ACCESS_GRANTED, self.seen) {
            self.ended.push((ACCESS_GRANTED, s));
            self.done = st
                .delivery
                .as_ref()
                .and_then(|d| d.reached.get(ACCESS_GRANTED).copied());
        }
    }

    /// Mark the delivery late when it is past its target (once): the `DeliveryLate`
    /// condition and a Warning naming the phase it is stuck in; `why` says what holds the
    /// phase when the caller knows (the access not granted).
    pub(super) fn late(
        &self,
        st: &mut ClusterRequestStatus,
        announce: &mut Vec<Announce>,
        name: &str,
        why: &str,
        now: i64,
        generation: i64,
    ) {
        if st.condition("DeliveryLate").is_some() {
            return;
        }
        let seen = self.machines.is_some();
        let Some(d) = st.delivery.as_ref() else {
            return;
        };
        let Some((k, ..)) = delivery::stuck(d, seen) else {
            return;
        };
        let detail = match (k, &self.machines) {
            (ACCESS_GRANTED, _) => why.to_string(),
            (CLUSTER_READY, Some(_)) => format!(
                "every machine is healthy; Rancher has not set status.ready on cluster {name}"
            ),
            (CLUSTER_READY, None) => format!(
                "Rancher has not set status.ready on cluster {name}; its CAPI machines cannot be read"
            ),
            (k, Some(ms)) => Milestone::ALL
                .iter()
                .find(|m| delivery::key(**m) == k)
                .map(|m| machines::progress(ms, self.expected, *m))
                .unwrap_or_default(),
            (_, None) => String::new(),
        };
        let Some(msg) = delivery::late(st, now, seen, &detail) else {
            return;
        };
        st.set_condition(condition(
            "DeliveryLate",
            true,
            "PastTarget",
            &msg,
            now,
            generation,
        ));
        announce.push(Announce::new("DeliveryLate", "DeliveryLate", &msg, true));
    }

    /// Export what this look measured, once the status holding it is written.
    pub(super) fn observe(&self, ctx: &Context, st: &ClusterRequestStatus, shape: &str) {
        for (phase, s) in &self.ended {
            ctx.metrics.observe_phase(shape, phase, *s);
        }
        if let Some(total) = self.done {
            let target = st
                .delivery
                .as_ref()
                .map_or(f64::INFINITY, |d| d.target_seconds);
            ctx.metrics.observe_ready(shape, total, total <= target);
        }
    }
}
