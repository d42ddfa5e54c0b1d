//! The headroom answers the growth questions and N+2 need, from fewer re-placements: a
//! scenario the bounds (`bounds`) prove survives, and whose slack cannot be the least, is
//! not re-placed. Every answer is the one re-placing every scenario gives, bit for bit:
//! the scenarios that decide it are re-placed exactly as `headroom` does.

use rayon::prelude::*;

use super::bounds::Bounds;
use super::replace::{
    self, Combined, HeadroomVerdict, KEEP_WORST, Kind, ScenarioResult, Slack, Spec, scenario_in,
};
use crate::simulate::place::{BurstIndex, Placement};

/// A scenario to judge: name, kind and the hosts that fail.
type Named = (String, Kind, Vec<usize>);

/// What the bounds say of a scenario: proven to survive, and its closed-form slack with
/// the bound on its rounding.
type Facts = (bool, Option<([f64; 3], [f64; 3])>);

/// Whether a value whose lower bound is `lower` may be at most `cut` (a NaN may).
fn may_reach(lower: f64, cut: f64) -> bool {
    lower.partial_cmp(&cut) != Some(std::cmp::Ordering::Greater)
}

fn facts(bounds: &Bounds, hosts: &[usize]) -> Facts {
    (bounds.survives(hosts), bounds.slack(hosts))
}

/// The worst `keep` of `sets` (by `ScenarioResult::worse`) and how many fail, as
/// re-placing every one of them gives. Re-placed: every scenario not proven to survive
/// (it may fail, and failing ones rank first), and the proven ones whose memory slack may
/// be below the `keep`-th least upper bound among the proven ones (any other has `keep`
/// proven scenarios with strictly less memory slack ranked before it).
pub(crate) fn combined(
    pl: &Placement,
    burst: &BurstIndex,
    bounds: &Bounds,
    kind: Kind,
    sets: &[(String, Vec<usize>)],
    keep: usize,
) -> Combined {
    let known: Vec<Facts> = sets.par_iter().map(|(_, h)| facts(bounds, h)).collect();
    let mut upper: Vec<f64> = known
        .iter()
        .filter(|f| f.0)
        .filter_map(|f| f.1.map(|(a, d)| a[1] + d[1]))
        .collect();
    let cut = if keep > 0 && upper.len() >= keep {
        upper.sort_by(f64::total_cmp);
        upper[keep - 1]
    } else {
        f64::INFINITY
    };
    let mut all: Vec<ScenarioResult> = (0..sets.len())
        .into_par_iter()
        .filter(|&i| match known[i] {
            (true, Some((a, d))) => may_reach(a[1] - d[1], cut),
            _ => true,
        })
        .map(|i| scenario_in(pl, burst, &sets[i].0, kind, &sets[i].1))
        .collect();
    let failing = all.iter().filter(|s| s.fails()).count();
    all.sort_by(ScenarioResult::worse);
    all.truncate(keep);
    Combined {
        kind,
        checked: sets.len(),
        failing,
        worst: all,
    }
}

/// `analyse_with`'s verdict and `min_slack` of it, without its report: the growth
/// questions ask only these, for many placements.
pub(crate) fn verdict_and_min_slack(pl: &Placement, spec: &Spec) -> (HeadroomVerdict, Slack) {
    let burst = BurstIndex::new(pl.topo(), pl.free());
    let bounds = Bounds::new(pl);
    let domains = pl.topo().failure_domains();
    // Scenarios decided exactly elsewhere (the worst of each family), and the single
    // scenarios that decide the verdict (a power feed does not).
    let mut decided: Vec<ScenarioResult> = Vec::new();
    let mut pass = pl.stranded_vms() == 0 && pl.stranded_replicas() == 0;
    let mut singles: Vec<Named> = domains
        .iter()
        .map(|(name, hosts)| (name.clone(), replace::domain_kind(name), hosts.clone()))
        .filter(|s| s.1.decides())
        .collect();
    for set in &spec.sets {
        if set.plus_any_node {
            let plus = replace::plus_any_node(pl, set);
            let c = combined(pl, &burst, &bounds, Kind::Set, &plus, 1);
            decided.extend(c.worst);
        } else {
            singles.push((set.name.clone(), Kind::Set, set.hosts.clone()));
        }
    }
    if spec.pairs {
        let mut families = vec![(Kind::Pair, replace::pairs(pl))];
        if spec.node_and_rack {
            families.push((Kind::NodeAndRack, replace::rack_and_node(pl, &domains)));
        }
        for (kind, sets) in families {
            let c = combined(pl, &burst, &bounds, kind, &sets, KEEP_WORST);
            pass &= c.failing == 0;
            decided.extend(c.worst);
        }
    }
    pass &= decided.iter().all(|s| !s.fails());
    let known: Vec<Facts> = singles.iter().map(|s| facts(&bounds, &s.2)).collect();
    let run = |i: usize| scenario_in(pl, &burst, &singles[i].0, singles[i].1, &singles[i].2);
    // First every single the bounds cannot prove survives.
    let mut exact: Vec<ScenarioResult> = (0..singles.len())
        .into_par_iter()
        .filter(|&i| !matches!(known[i], (true, Some(_))))
        .map(run)
        .collect();
    pass &= exact.iter().all(|s| !s.fails());
    // An upper bound on each least slack, then every proven single whose slack may be
    // below it.
    let get = |s: &Slack, r: usize| [s.cpu, s.memory, s.storage][r];
    let mut upper = [f64::INFINITY; 3];
    for s in exact.iter().chain(&decided) {
        for (r, u) in upper.iter_mut().enumerate() {
            *u = u.min(get(&s.slack, r));
        }
    }
    for (a, d) in known.iter().filter(|f| f.0).filter_map(|f| f.1) {
        for (r, u) in upper.iter_mut().enumerate() {
            *u = u.min(a[r] + d[r]);
        }
    }
    let more: Vec<ScenarioResult> = (0..singles.len())
        .into_par_iter()
        .filter(|&i| match known[i] {
            (true, Some((a, d))) => (0..3).any(|r| may_reach(a[r] - d[r], upper[r])),
            _ => false,
        })
        .map(run)
        .collect();
    exact.extend(more);
    let least = |r: usize| {
        exact
            .iter()
            .chain(&decided)
            .map(|s| get(&s.slack, r))
            .fold(f64::INFINITY, f64::min)
    };
    (
        HeadroomVerdict::from_pass(pass),
        Slack {
            cpu: least(0),
            memory: least(1),
            storage: least(2),
        },
    )
}
