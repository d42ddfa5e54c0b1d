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

/// The admitted requests (team, request) running in a month.
type ActiveSet = Vec<(usize, usize)>;
/// A month's clusters, verdict and least slack.
type MonthAnswer = (usize, HeadroomVerdict, Slack);

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
    // A month's answer depends only on which admitted requests run in it, and that set
    // changes only where a request starts or ends: each distinct set is placed and checked
    // once (in parallel), and the months between reuse its answer.
    let active: Vec<ActiveSet> = (first..=last)
        .map(|m| {
            admitted
                .iter()
                .copied()
                .filter(|&(ti, ri)| request_active(&s.teams[ti].requests[ri], m))
                .collect()
        })
        .collect();
    let mut distinct: Vec<&ActiveSet> = active.iter().collect();
    distinct.sort();
    distinct.dedup();
    let answers: std::collections::HashMap<&ActiveSet, MonthAnswer> = distinct
        .into_par_iter()
        .map(|set| {
            let mut all = base.clone();
            for &(ti, ri) in set {
                let r = &s.teams[ti].requests[ri];
                all.extend(std::iter::repeat_n(
                    l.shapes[&r.shape].as_slice(),
                    r.count as usize,
                ));
            }
            let h = headroom::analyse_with(&l.place(&all), &spec);
            (set, (all.len(), h.verdict, headroom::min_slack(&h)))
        })
        .collect();
    let live = l.live.as_ref().map_or(0, |f| f.tenant_clusters);
    let out = (first..=last)
        .zip(&active)
        .map(|(m, set)| {
            let (clusters, verdict, min_slack) = answers[set].clone();
            Month {
                month: scenario::month_name(m),
                clusters: clusters + live,
                verdict,
                min_slack,
            }
        })
        .collect();
    (out, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain computation: every month placed and checked on its own.
    fn timeline_month_by_month(l: &Study) -> Vec<(String, usize, HeadroomVerdict, String)> {
        let s = &l.scenario;
        let months: Vec<i32> = s
            .teams
            .iter()
            .flat_map(|t| &t.requests)
            .flat_map(|r| {
                [
                    scenario::month_index(&r.from),
                    r.until.as_deref().and_then(scenario::month_index),
                ]
            })
            .flatten()
            .collect();
        let (first, last) = (*months.iter().min().unwrap(), *months.iter().max().unwrap());
        let spec = l.headroom_spec(&l.topology());
        let (admitted, _) = quota_admissions(l, last);
        (first..=last)
            .map(|m| {
                let mut all = l.current();
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
                (
                    scenario::month_name(m),
                    all.len(),
                    h.verdict,
                    format!("{:?}", headroom::min_slack(&h)),
                )
            })
            .collect()
    }

    #[test]
    fn the_timeline_reusing_unchanged_months_is_the_plain_month_by_month_answer() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("simulations/reference-factory.yaml"),
        )
        .unwrap();
        // The shipped teams, and a long quiet stretch that the reuse skips.
        let text = text.replace(
            "{shape: large, count: 1, from: 2027-04}",
            "{shape: large, count: 1, from: 2027-04, until: 2031-12}",
        );
        let l = Study::open(&crate::simulate::StudyInput {
            scenario: crate::simulate::ScenarioInput::Text {
                name: std::path::Path::new("t.yaml"),
                text: &text,
            },
            site: None,
            dump: None,
            rebuild_what_if: None,
        })
        .unwrap();
        let (fast, _) = timeline(&l);
        let plain = timeline_month_by_month(&l);
        assert!(fast.len() > 50, "a long timeline: {}", fast.len());
        let fast: Vec<_> = fast
            .iter()
            .map(|m| {
                (
                    m.month.clone(),
                    m.clusters,
                    m.verdict,
                    format!("{:?}", m.min_slack),
                )
            })
            .collect();
        assert_eq!(fast, plain);
    }
}
