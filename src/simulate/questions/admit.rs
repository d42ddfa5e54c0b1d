//! `rackplan admit`: the capacity gate for one cluster request. Two rules, in the words an
//! approver uses: the team stays within its vCPU quota (used + requested <= quota, the
//! reference design's rule), and the fleet with the new cluster still restarts every VM
//! and re-homes every replica after each node and rack failure (the simulator's
//! re-placement, not a percentage).
//!
//! "Used" is what the team's scenario requests hold in the month of the request: those the
//! quota rule admitted (the simulator's timeline, month by month) that started by then and
//! have not ended. The fleet that must survive is the scenario's running clusters, every
//! team's admitted requests active that month, and the requested clusters.

use std::collections::HashMap;

use serde::Serialize;

use super::timeline::{quota_admissions, request_active};
use crate::clock::{civil_from_days, format_at};
use crate::simulate::failure::headroom::{self, HeadroomVerdict, ScenarioResult};
use crate::simulate::failure::pruned;
use crate::simulate::scenario::{self, Pool, Request};
use crate::simulate::study::Study;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Quota {
    /// vCPU the team's active requests hold.
    pub(crate) used: f64,
    /// vCPU of this request.
    pub(crate) requested: f64,
    /// The team's quota; `None`: the team has none.
    pub(crate) allowed: Option<f64>,
    pub(crate) within: bool,
}

/// A failure the fleet with the request does not survive.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Stranding {
    pub(crate) failure: String,
    pub(crate) kind: headroom::Kind,
    pub(crate) stranded_vms: usize,
    pub(crate) stranded_replicas: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Decision {
    pub admitted: bool,
    /// Why not, in the approver's words; empty when admitted.
    pub(crate) reasons: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) request: Option<String>,
    pub(crate) team: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shape: Option<String>,
    pub(crate) count: u32,
    /// The date the request is judged at (`YYYY-MM-DD`).
    pub(crate) at: String,
    /// When the clusters are to be removed, if the request has a duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) expires: Option<String>,
    pub(crate) quota: Quota,
    /// Headroom without the request, then with it.
    pub(crate) headroom_before: HeadroomVerdict,
    pub(crate) headroom_after: HeadroomVerdict,
    /// Failures that strand something with the request placed, worst first.
    pub(crate) strands: Vec<Stranding>,
    pub clusters_before: usize,
    pub clusters_after: usize,
    /// The predicted time to a Ready cluster and the pre-flight, when the caller asked
    /// (`rackplan admit` does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery: Option<crate::simulate::delivery::DeliveryAnswer>,
}

impl Decision {
    /// `72 vCPU used + 36 requested = 108 of 300 allowed (within)`.
    pub fn quota_line(&self) -> String {
        let q = &self.quota;
        format!(
            "{:.0} vCPU used + {:.0} requested = {:.0} of {} ({})",
            q.used,
            q.requested,
            q.used + q.requested,
            q.allowed
                .map_or("no quota".to_string(), |a| format!("{a:.0} allowed")),
            if q.within { "within" } else { "over" }
        )
    }

    /// The answer in one sentence, as a status message carries it: the reasons when
    /// refused, else the quota and the headroom with the request.
    pub fn sentence(&self) -> String {
        if self.admitted {
            format!(
                "admitted: quota {}; headroom: node and rack failures {} with the request ({} clusters)",
                self.quota_line(),
                self.headroom_after,
                self.clusters_after
            )
        } else {
            format!("refused: {}", self.reasons.join("; "))
        }
    }
}

fn vcpu(pools: &[Pool]) -> f64 {
    pools.iter().map(|p| p.vcpu * f64::from(p.count)).sum()
}

fn describe(s: &Stranding) -> String {
    let mut what = Vec::new();
    if s.stranded_vms > 0 {
        what.push(format!(
            "{} VM{} cannot restart",
            s.stranded_vms,
            if s.stranded_vms == 1 { "" } else { "s" }
        ));
    }
    if s.stranded_replicas > 0 {
        what.push(format!(
            "{} replica{} cannot be rebuilt",
            s.stranded_replicas,
            if s.stranded_replicas == 1 { "" } else { "s" }
        ));
    }
    format!("if {} fails, {}", s.failure, what.join(" and "))
}

fn strandings(h: &headroom::Headroom) -> Vec<Stranding> {
    let mut out: Vec<&ScenarioResult> = h
        .scenarios
        .iter()
        .filter(|s| s.kind.decides() && s.fails())
        .collect();
    for c in h.combined.iter().filter(|c| c.kind.decides()) {
        out.extend(c.worst.iter().filter(|s| s.fails()));
    }
    out.sort_by(|a, b| {
        (b.stranded + b.stranded_replicas)
            .cmp(&(a.stranded + a.stranded_replicas))
            .then(a.name.cmp(&b.name))
    });
    out.into_iter()
        .map(|s| Stranding {
            failure: s.name.clone(),
            kind: s.kind,
            stranded_vms: s.stranded,
            stranded_replicas: s.stranded_replicas,
        })
        .collect()
}

/// Why a request cannot be judged.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AdmitError {
    #[error("the scenario has no team `{team}`; teams: {teams}")]
    NoTeam { team: String, teams: String },
    #[error("{0} is not a month the simulator can judge (years 1 to 9999)")]
    Month(String),
}

/// What is already held when a request is judged, beside what the study runs: the vCPU
/// the requesting team's admitted requests hold, and the clusters admitted but not yet
/// running (placed beside the fleet).
#[derive(Debug, Clone, Default)]
pub struct Held<'a> {
    pub team_vcpu: f64,
    pub clusters: Vec<&'a [Pool]>,
}

/// Judge `req` at `at` (seconds since the epoch): what the team holds is what its
/// scenario requests hold in that month (the timeline's quota rule).
pub fn decide(l: &Study, req: &Request, at: i64) -> Result<Decision, AdmitError> {
    let s = &l.scenario;
    let ti = team_index(l, &req.team)?;
    let month = month_of(at)?;
    // The requests the quota rule let in by this month and that still run.
    let (admitted, _) = quota_admissions(l, month);
    let running: Vec<(usize, usize)> = admitted
        .into_iter()
        .filter(|&(ti, ri)| request_active(&s.teams[ti].requests[ri], month))
        .collect();
    let team = &s.teams[ti];
    let team_vcpu: f64 = running
        .iter()
        .filter(|(t, _)| *t == ti)
        .map(|&(_, ri)| {
            let r = &team.requests[ri];
            vcpu(&l.shapes[&r.shape]) * f64::from(r.count)
        })
        .sum();
    let mut clusters = Vec::new();
    for &(ti, ri) in &running {
        let r = &s.teams[ti].requests[ri];
        clusters.extend(std::iter::repeat_n(
            l.shapes[&r.shape].as_slice(),
            r.count as usize,
        ));
    }
    judge(
        l,
        req,
        at,
        &Held {
            team_vcpu,
            clusters,
        },
    )
}

fn team_index(l: &Study, team: &str) -> Result<usize, AdmitError> {
    let s = &l.scenario;
    s.teams
        .iter()
        .position(|t| t.name == team)
        .ok_or_else(|| AdmitError::NoTeam {
            team: team.to_string(),
            teams: s
                .teams
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn month_of(at: i64) -> Result<i32, AdmitError> {
    let (y, m, _) = civil_from_days(at.div_euclid(86_400));
    scenario::month_index(&format!("{y:04}-{m:02}"))
        .filter(|_| (1..=9999).contains(&y))
        .ok_or_else(|| AdmitError::Month(format_at(at, true)))
}

/// The headroom answers one pass of judgements shares. Within a pass the held clusters
/// only grow (a request admitted is pushed onto them), so their number names the fleet
/// being judged: the verdict without a request is one per count, and with a request one
/// per (the request's pools, count, held count). A refusal changes nothing, so the requests refused
/// after it on the same fleet reuse its placement and failure analysis; only the quota
/// rule is worked out again for each.
#[derive(Debug, Default)]
pub struct Memo {
    before: HashMap<usize, HeadroomVerdict>,
    after: HashMap<(String, u32, usize), AfterAnswer>,
}

/// The fleet with the request: its verdict, what it strands, and what does not fit even
/// with every node up (VMs, replicas).
type AfterAnswer = (HeadroomVerdict, Vec<Stranding>, Option<(usize, usize)>);

/// Judge `req` at `at` with `held` beside the study's running clusters: the quota rule
/// on the team's held vCPU, then every node and rack failure with and without the
/// request placed. `admit` and the request operator both decide here.
pub fn judge(l: &Study, req: &Request, at: i64, held: &Held<'_>) -> Result<Decision, AdmitError> {
    judge_in(l, req, at, held, &mut Memo::default())
}

/// `judge`, sharing headroom answers with the other judgements of one pass (`Memo`).
pub fn judge_in(
    l: &Study,
    req: &Request,
    at: i64,
    held: &Held<'_>,
    memo: &mut Memo,
) -> Result<Decision, AdmitError> {
    // The tenant clusters of a dump's fleet run beside the scenario's.
    let live_clusters = l.live.as_ref().map_or(0, |f| f.tenant_clusters);
    let s = &l.scenario;
    month_of(at)?;
    let team = &s.teams[team_index(l, &req.team)?];
    let used = held.team_vcpu;
    let requested = vcpu(&req.pools) * f64::from(req.count);
    let within = team.vcpu_quota.is_none_or(|q| used + requested <= q + 1e-9);
    // An empty sum is -0.0; the quota line reads "0 used".
    let used = used + 0.0;
    let quota = Quota {
        used,
        requested,
        allowed: team.vcpu_quota,
        within,
    };

    let mut base = l.current();
    base.extend(held.clusters.iter().copied());
    let topo = l.topology();
    let spec = l.headroom_spec(&topo);
    // The verdicts come from the pruned judge (only what the bounds cannot prove is
    // re-placed; the same verdict as re-placing every failure, tested so); the full
    // analysis runs only to name what a failing fleet strands.
    let failures = pruned::Failures::new(&topo, &spec);
    let held_n = held.clusters.len();
    let before_verdict = *memo
        .before
        .entry(held_n)
        .or_insert_with(|| pruned::verdict_and_min_slack(&l.place(&base), &failures).0);
    let mut with = base.clone();
    with.extend(std::iter::repeat_n(
        req.pools.as_slice(),
        req.count as usize,
    ));
    let (after_verdict, strands, unplaced) = memo
        .after
        .entry((format!("{:?}", req.pools), req.count, held_n))
        .or_insert_with(|| {
            let placed = l.place(&with);
            let v = pruned::verdict_and_min_slack(&placed, &failures).0;
            if v.passes() {
                (v, Vec::new(), None)
            } else {
                let h = headroom::analyse_with(&placed, &spec);
                (
                    v,
                    strandings(&h),
                    Some((h.unplaced_vms, h.unplaced_replicas)),
                )
            }
        })
        .clone();

    let mut reasons = Vec::new();
    if !within {
        reasons.push(format!(
            "quota: team {} uses {used:.0} vCPU and asks for {requested:.0}; its quota allows {:.0} ({:.0} over)",
            team.name,
            team.vcpu_quota.unwrap_or_default(),
            used + requested - team.vcpu_quota.unwrap_or_default()
        ));
    }
    if let Some((unplaced_vms, unplaced_replicas)) = unplaced {
        let already = if before_verdict.passes() {
            "with this request"
        } else {
            "already without this request"
        };
        let worst: Vec<String> = strands.iter().take(3).map(describe).collect();
        let unplaced = if unplaced_vms + unplaced_replicas > 0 {
            format!(
                "; {unplaced_vms} VMs and {unplaced_replicas} replicas do not fit even with every node up"
            )
        } else {
            String::new()
        };
        reasons.push(format!(
            "headroom: the fleet fails {already}: {}{unplaced}",
            if worst.is_empty() {
                "it does not fit".to_string()
            } else {
                worst.join("; ")
            }
        ));
    }
    let expires = req
        .duration_h
        .map(|h| format_at(at + (h * 3600.0).round() as i64, false));
    Ok(Decision {
        admitted: reasons.is_empty(),
        reasons,
        request: req.name.clone(),
        team: team.name.clone(),
        shape: req.shape.clone(),
        count: req.count,
        at: format_at(at, true),
        expires,
        quota,
        headroom_before: before_verdict,
        headroom_after: after_verdict,
        strands,
        clusters_before: base.len() + live_clusters,
        clusters_after: with.len() + live_clusters,
        delivery: None,
    })
}
