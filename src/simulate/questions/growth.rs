//! Growth questions: how many more clusters of a shape fit with every failure still
//! survived, and the month-by-month timeline of the teams' requests under their quotas.

use rayon::prelude::*;

use crate::simulate::failure::headroom::{self, HeadroomVerdict, Slack};
use crate::simulate::report::{MaxClusters, Month, Refusal};
use crate::simulate::scenario::{self, Pool};
use crate::simulate::study::Study;

/// How many counts past the first failure are checked for passing again.
const PASSES_AGAIN_WINDOW: u32 = 16;

/// The largest n such that every count of additional `shape` clusters from 0 to n passes,
/// by placing and checking each count (greedy re-placement is not monotone in the count,
/// so no bisection); then a window past the first failure for counts that pass again.
pub fn max_clusters(l: &Study, shape: &str) -> MaxClusters {
    let base = l.current();
    let pools = l.shapes[shape].as_slice();
    let spec = l.headroom_spec(&l.topology());
    let eval = |n: u32| {
        let mut all = base.clone();
        all.extend(std::iter::repeat_n(pools, n as usize));
        let h = headroom::analyse_with(&l.place(&all), &spec);
        (n, h.verdict, headroom::min_slack(&h))
    };
    // Upper bound from raw capacity: no more than fit with nobody failing.
    let topo = l.topology();
    let cpu: f64 = topo.hosts.iter().map(|h| h.cpu).sum::<f64>()
        * l.scenario.platform.overcommit_cpu_pct
        / 100.0;
    let mem: f64 = topo.hosts.iter().map(|h| h.mem_gib).sum::<f64>()
        * l.scenario.platform.overcommit_memory_pct
        / 100.0;
    let running = |p: &&Pool| p.running;
    let need_cpu: f64 = pools
        .iter()
        .filter(running)
        .map(|p| p.vcpu * f64::from(p.count))
        .sum();
    let need_mem: f64 = pools
        .iter()
        .filter(running)
        .map(|p| p.memory_gib * f64::from(p.count))
        .sum();
    let bound = ((cpu / need_cpu.max(1e-9))
        .min(mem / need_mem.max(1e-9))
        .ceil()
        .min(100_000.0) as u32)
        .saturating_add(1);
    // Counts in batches, in parallel, until the first failure.
    let batch = (rayon::current_num_threads() as u32).clamp(2, 8);
    let mut curve: Vec<(u32, Slack, HeadroomVerdict)> = Vec::new();
    let mut first_failure = None;
    let mut next = 0u32;
    while first_failure.is_none() && next <= bound {
        let hi = next.saturating_add(batch - 1).min(bound);
        let got: Vec<_> = (next..=hi).into_par_iter().map(eval).collect();
        for (n, v, slack) in got {
            if first_failure.is_none() {
                curve.push((n, slack, v));
                if !v.passes() {
                    first_failure = Some(n);
                }
            }
        }
        next = hi + 1;
    }
    let mut passes_again = Vec::new();
    let mut checked_up_to = curve.last().map_or(0, |c| c.0);
    if let Some(f) = first_failure {
        let hi = f.saturating_add(PASSES_AGAIN_WINDOW).min(bound);
        let got: Vec<_> = (f + 1..=hi).into_par_iter().map(eval).collect();
        for (n, v, slack) in got {
            if v.passes() {
                passes_again.push(n);
            }
            curve.push((n, slack, v));
        }
        checked_up_to = f;
    }
    MaxClusters {
        shape: shape.to_string(),
        additional: match first_failure {
            Some(0) => None,
            Some(f) => Some(f - 1),
            None => Some(checked_up_to),
        },
        first_failure,
        passes_again,
        checked_up_to,
        curve,
    }
}

/// Whether a team request runs in month `m` (started, not yet ended).
pub fn request_active(r: &scenario::TeamRequest, m: i32) -> bool {
    scenario::month_index(&r.from).is_some_and(|f| f <= m)
        && r.until
            .as_deref()
            .and_then(scenario::month_index)
            .is_none_or(|u| m < u)
}

/// vCPU of one cluster of a shape.
pub fn shape_vcpu(l: &Study, shape: &str) -> f64 {
    l.shapes[shape]
        .iter()
        .map(|p| p.vcpu * f64::from(p.count))
        .sum()
}

/// The quota rule applied month by month up to `last`: each request arriving in a month is
/// admitted when the team's admitted, still active requests plus it stay within the
/// quota. Returns the admitted (team, request) pairs and the refusals.
pub fn quota_admissions(l: &Study, last: i32) -> (Vec<(usize, usize)>, Vec<Refusal>) {
    let s = &l.scenario;
    let mut refused = Vec::new();
    let mut admitted: Vec<(usize, usize)> = Vec::new();
    let mut months: Vec<i32> = s
        .teams
        .iter()
        .flat_map(|t| &t.requests)
        .filter_map(|r| scenario::month_index(&r.from))
        .filter(|&m| m <= last)
        .collect();
    months.sort_unstable();
    months.dedup();
    for m in months {
        for (ti, t) in s.teams.iter().enumerate() {
            for (ri, r) in t.requests.iter().enumerate() {
                if scenario::month_index(&r.from) != Some(m) {
                    continue;
                }
                let used: f64 = admitted
                    .iter()
                    .filter(|(a, b)| *a == ti && request_active(&t.requests[*b], m))
                    .map(|(_, b)| {
                        shape_vcpu(l, &t.requests[*b].shape) * f64::from(t.requests[*b].count)
                    })
                    .sum();
                let want = shape_vcpu(l, &r.shape) * f64::from(r.count);
                match t.vcpu_quota {
                    Some(q) if used + want > q + 1e-9 => refused.push(Refusal {
                        team: t.name.clone(),
                        shape: r.shape.clone(),
                        month: scenario::month_name(m),
                        reason: format!("needs {want:.0} vCPU; {:.0} of the team's {q:.0} vCPU quota are in use", used.abs()),
                    }),
                    _ => admitted.push((ti, ri)),
                }
            }
        }
    }
    (admitted, refused)
}

/// Month by month: clusters arriving and expiring, quotas applied, verdict per month.
pub fn timeline(l: &Study) -> (Vec<Month>, Vec<Refusal>) {
    let s = &l.scenario;
    let mut months: Vec<i32> = Vec::new();
    for t in &s.teams {
        for r in &t.requests {
            months.extend(scenario::month_index(&r.from));
            months.extend(r.until.as_deref().and_then(scenario::month_index));
        }
    }
    if months.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let (first, last) = (
        *months.iter().min().expect("not empty"),
        *months.iter().max().expect("not empty"),
    );
    let base = l.current();
    let spec = l.headroom_spec(&l.topology());
    let (admitted, refused) = quota_admissions(l, last);
    let mut out = Vec::new();
    for m in first..=last {
        let mut all = base.clone();
        for &(ti, ri) in &admitted {
            let r = &s.teams[ti].requests[ri];
            if request_active(r, m) {
                all.extend(std::iter::repeat_n(
                    l.shapes[&r.shape].as_slice(),
                    r.count as usize,
                ));
            }
        }
        let h = headroom::analyse_with(&l.place(&all), &spec);
        out.push(Month {
            month: scenario::month_name(m),
            clusters: all.len() + l.live.as_ref().map_or(0, |f| f.tenant_clusters),
            verdict: h.verdict,
            min_slack: headroom::min_slack(&h),
        });
    }
    (out, refused)
}
