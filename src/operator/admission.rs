//! Judging the pending requests: one at a time in creation order (then namespace and
//! name), each counting every request that holds before it, those admitted earlier in
//! the same pass included, so that no two requests are admitted on the same headroom.
//!
//! The decision is `rackplan admit`'s (`simulate::questions::judge`): the team's vCPU
//! quota on what its holding requests ask, then every node and rack failure re-placed
//! with and without the request on the fleet as it runs. What a holding request holds is
//! its **recorded terms** (the team and shape resources judged at its admission), never
//! its live spec, which the team may have edited since; what it adds to the fleet is that
//! shape less the VMs of its cluster already running (the VMIs labelled
//! `guestcluster.harvesterhci.io/name: <cluster>` by Harvester's node driver), so a
//! cluster is counted once whether its VMs are up yet or not.
//!
//! A request refused for quota or headroom waits (phase `Waiting`) and is judged again in
//! the next passes, in creation order with the new ones, until it fits or its
//! `spec.maxWait` runs out; an invalid spec is refused until the spec changes.
//!
//! Pure: the study, the catalogue, the teams, the rules and the requests in; a verdict per
//! request judged out. The controller writes them.

use std::collections::BTreeMap;

use super::catalogue::Catalogue;
use super::resource::{ClusterRequest, Delivery, Phase, Terms};
use super::resource::{format_time, parse_time};
use super::spec::{self, Rules};
use super::teams::Teams;
use crate::simulate::Study;
use crate::simulate::delivery::{self, Measured};
use crate::simulate::questions::{self, Decision, Held};
use crate::simulate::scenario::Pool;

/// What a judgement decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Admitted,
    /// Refused by quota or headroom: judged again when room may come back.
    Waiting,
    Refused,
}

/// The answer for one request judged.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Index of the request in the slice judged.
    pub index: usize,
    pub outcome: Outcome,
    /// The condition reason: `WithinQuotaAndHeadroom`, `QuotaExceeded`,
    /// `NoFailureHeadroom`, `QuotaExceededAndNoFailureHeadroom`, `InvalidSpec` or
    /// `WaitedTooLong`.
    pub reason: &'static str,
    /// The status message: `admit`'s sentence, or the located spec error.
    pub message: String,
    /// Seconds since the epoch, when admitted.
    pub expires_at: Option<i64>,
    /// The terms recorded when admitted.
    pub terms: Option<Terms>,
    /// When a waiting request stops waiting (seconds since the epoch).
    pub wait_until: Option<i64>,
    pub decision: Option<Decision>,
    /// The delivery predicted, when admitted.
    pub delivery: Option<Delivery>,
    /// How long the judgement took, seconds.
    pub seconds: f64,
}

impl Verdict {
    pub fn admitted(&self) -> bool {
        self.outcome == Outcome::Admitted
    }
}

/// Does this request wait for a judgement (given whether the operator runs `--dry-run`)?
/// New and waiting ones; refused or failed ones whose spec changed since; and ones a
/// dry-run operator admitted, once a live operator meets them (nothing is delivered on a
/// dry run's word).
pub fn needs_judging(cr: &ClusterRequest, dry_run: bool) -> bool {
    let st = cr.status.as_ref();
    match st.and_then(|s| s.phase) {
        None | Some(Phase::Pending | Phase::Waiting) => true,
        Some(Phase::Refused | Phase::Failed) => {
            st.and_then(|s| s.observed_generation) != cr.metadata.generation
        }
        Some(p) if p.holds() => {
            !dry_run && st.and_then(|s| s.terms.as_ref()).is_some_and(|t| t.dry_run)
        }
        _ => false,
    }
}

/// Does a judgement of this request wait on nothing but the next pass? A waiting request
/// whose spec did not change is judged again at each pass the operator runs anyway; any
/// other request that needs judging asks for a pass now.
pub fn wants_pass_now(cr: &ClusterRequest, dry_run: bool) -> bool {
    let st = cr.status.as_ref();
    let unchanged = st.and_then(|s| s.observed_generation) == cr.metadata.generation;
    needs_judging(cr, dry_run) && !(st.and_then(|s| s.phase) == Some(Phase::Waiting) && unchanged)
}

/// Creation order: the creation time, then namespace and name (two requests created in
/// the same second are judged in name order, the same on every replica).
pub fn order(requests: &[ClusterRequest]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..requests.len()).collect();
    let key = |r: &ClusterRequest| {
        (
            r.metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.as_second()),
            r.metadata.namespace.clone().unwrap_or_default(),
            r.metadata.name.clone().unwrap_or_default(),
        )
    };
    idx.sort_by_key(|&i| key(&requests[i]));
    idx
}

/// The pools of a holding request's cluster that are not running yet: its shape, less
/// `running` VMs taken from the first pools on (the control plane comes up first).
fn not_running(pools: &[Pool], mut running: usize) -> Vec<Pool> {
    let mut out = Vec::new();
    for p in pools {
        let take = running.min(p.count as usize);
        running -= take;
        let left = p.count - take as u32;
        if left > 0 {
            let mut q = p.clone();
            q.count = left;
            out.push(q);
        }
    }
    out
}

/// What a holding request holds: its recorded terms, or (a request admitted before terms
/// were recorded) its spec's shape from the catalogue.
fn held_by(
    cr: &ClusterRequest,
    ns_team: &str,
    catalogue: &Catalogue,
) -> Option<(String, Vec<Pool>)> {
    if let Some(t) = cr.status.as_ref().and_then(|s| s.terms.as_ref()) {
        return Some((t.team.clone(), spec::pools_of(t)));
    }
    let offer = catalogue.offers.get(&cr.spec.shape)?;
    Some((ns_team.to_string(), offer.pools.clone()))
}

/// Everything one pass judges with.
pub struct Pass<'a> {
    pub study: &'a Study,
    pub catalogue: &'a Catalogue,
    pub rules: &'a Rules,
    pub teams: &'a Teams,
    /// Team of each team namespace.
    pub namespaces: &'a BTreeMap<String, String>,
    /// VMIs running per guest cluster name.
    pub running: &'a BTreeMap<String, usize>,
    pub now: i64,
    pub dry_run: bool,
    /// What the operator measured of past deliveries, per shape.
    pub measured: &'a BTreeMap<String, Measured>,
    /// `--delivery-target`, seconds, when given.
    pub delivery_target_s: Option<f64>,
}

/// Judge every request of `requests` that needs it, at `now`: in creation order, each
/// counting every holding request and those admitted before it in this pass.
pub fn judge_pending(p: &Pass<'_>, requests: &[ClusterRequest]) -> Vec<Verdict> {
    // Held so far, per team, and the clusters not running yet.
    let mut team_vcpu: BTreeMap<String, f64> = BTreeMap::new();
    let mut waiting: Vec<Vec<Pool>> = Vec::new();
    let mut out = Vec::new();
    // Within this pass `waiting` only grows: its length names the fleet judged.
    let mut memo = questions::Memo::default();
    // The fleet placed once, at the pass's first admission.
    let mut fleet_now: Option<delivery::FleetNow> = None;
    // What every holding request holds counts before any judgement, whatever its place
    // in the order: a request created after a pending one may hold already.
    for cr in requests {
        let ns = cr.metadata.namespace.clone().unwrap_or_default();
        let Some(ns_team) = p.namespaces.get(&ns) else {
            continue;
        };
        let holds = cr
            .status
            .as_ref()
            .and_then(|s| s.phase)
            .is_some_and(Phase::holds);
        if needs_judging(cr, p.dry_run) || !holds {
            continue;
        }
        let Some((team, pools)) = held_by(cr, ns_team, p.catalogue) else {
            continue;
        };
        *team_vcpu.entry(team).or_default() += vcpu(&pools);
        let cluster = cr
            .status
            .as_ref()
            .and_then(|s| s.cluster_name.clone())
            .or_else(|| cr.metadata.name.clone())
            .unwrap_or_default();
        let up = p.running.get(&cluster).copied().unwrap_or(0);
        let rest = not_running(&pools, up);
        if !rest.is_empty() {
            waiting.push(rest);
        }
    }
    for i in order(requests) {
        let cr = &requests[i];
        let ns = cr.metadata.namespace.clone().unwrap_or_default();
        let Some(ns_team) = p.namespaces.get(&ns) else {
            continue;
        };
        if !needs_judging(cr, p.dry_run) {
            continue;
        }
        let t0 = std::time::Instant::now();
        let refuse = |reason: &'static str, message: String| Verdict {
            index: i,
            outcome: Outcome::Refused,
            reason,
            message,
            expires_at: None,
            terms: None,
            wait_until: None,
            decision: None,
            delivery: None,
            seconds: t0.elapsed().as_secs_f64(),
        };
        let checked = match spec::check(cr, ns_team, p.catalogue, p.rules, p.teams) {
            Ok(c) => c,
            Err(e) => {
                out.push(refuse("InvalidSpec", format!("refused: {e}")));
                continue;
            }
        };
        let created = cr
            .metadata
            .creation_timestamp
            .as_ref()
            .map_or(p.now, |t| t.0.as_second());
        let wait_until = checked
            .max_wait_h
            .map(|h| created + (h * 3600.0).round() as i64);
        let held = Held {
            team_vcpu: team_vcpu.get(&checked.request.team).copied().unwrap_or(0.0),
            clusters: waiting.iter().map(Vec::as_slice).collect(),
        };
        let d = match questions::judge_in(p.study, &checked.request, p.now, &held, &mut memo) {
            Ok(d) => d,
            Err(e) => {
                out.push(refuse("InvalidSpec", format!("refused: spec.team: {e}")));
                continue;
            }
        };
        let reason = match (d.admitted, d.quota.within) {
            (true, _) => "WithinQuotaAndHeadroom",
            (false, false) if d.headroom_after.passes() => "QuotaExceeded",
            (false, false) => "QuotaExceededAndNoFailureHeadroom",
            (false, true) => "NoFailureHeadroom",
        };
        if d.admitted {
            *team_vcpu.entry(checked.request.team.clone()).or_default() +=
                vcpu(&checked.request.pools);
            waiting.push(checked.request.pools.clone());
            let expires_at = checked
                .request
                .duration_h
                .map(|h| p.now + (h * 3600.0).round() as i64);
            let mut terms = checked.terms;
            terms.dry_run = p.dry_run;
            let now = fleet_now.get_or_insert_with(|| delivery::FleetNow::of(p.study));
            let answer = delivery::request_answer(
                p.study,
                now,
                &terms.shape,
                &checked.request.pools,
                1,
                p.measured.get(&terms.shape),
            );
            let delivery = super::delivery::predicted(&answer.prediction, p.delivery_target_s);
            out.push(Verdict {
                index: i,
                outcome: Outcome::Admitted,
                reason,
                message: d.sentence(),
                expires_at,
                terms: Some(terms),
                wait_until: None,
                decision: Some(d),
                delivery: Some(delivery),
                seconds: t0.elapsed().as_secs_f64(),
            });
            continue;
        }
        let because = d.reasons.join("; ");
        if let Some(u) = wait_until
            && p.now >= u
        {
            out.push(Verdict {
                decision: Some(d),
                ..refuse(
                    "WaitedTooLong",
                    format!(
                        "refused: waited until {} (spec.maxWait) and room did not come back: {because}",
                        format_time(u)
                    ),
                )
            });
            continue;
        }
        let until = wait_until
            .map(|u| format!(" until {}", format_time(u)))
            .unwrap_or_default();
        out.push(Verdict {
            index: i,
            outcome: Outcome::Waiting,
            reason,
            message: format!(
                "waiting: {because}; judged again, in creation order, when a cluster expires or is deleted, the quota or the fleet changes{until}"
            ),
            expires_at: None,
            terms: None,
            wait_until,
            decision: Some(d),
            delivery: None,
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    out
}

/// A waiting request's `until`, as RFC 3339.
pub fn until_text(v: &Verdict) -> Option<String> {
    v.wait_until.map(format_time)
}

/// When a waiting request was last set waiting, kept across passes.
pub fn waiting_since(cr: &ClusterRequest, now: i64) -> String {
    cr.status
        .as_ref()
        .and_then(|s| s.waiting.as_ref())
        .and_then(|w| parse_time(&w.since))
        .map_or_else(|| format_time(now), format_time)
}

fn vcpu(pools: &[Pool]) -> f64 {
    pools.iter().map(|p| p.vcpu * f64::from(p.count)).sum()
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
