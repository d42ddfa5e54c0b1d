//! The headroom answers the growth questions and N+2 need, from fewer re-placements. A
//! scenario the bounds (`bounds`) prove survives strands nothing, and its slack is
//! `Bounds::share` of nothing stranded: the very value its re-placement would report, bit
//! for bit. So only the scenarios the bounds cannot settle are re-placed, plus, where a
//! report shows them, the few proven ones among the worst of a family. Every answer is the
//! one re-placing every scenario gives (tested against it at every fill).

use rayon::prelude::*;

use super::replace::{
    self, Combined, HeadroomVerdict, KEEP_WORST, Kind, Prepared, Rank, ScenarioResult, Slack, Spec,
    rank_of, scenario_in, worse_first,
};
use crate::simulate::place::Placement;

/// A scenario to judge: name, kind and the hosts that fail.
type Named = (String, Kind, Vec<usize>);

/// A family to judge: its kind, its scenarios (name, hosts) and how many worst it keeps.
type FamilyToJudge = (Kind, Vec<(String, Vec<usize>)>, usize);

/// One of the worst of a family: re-placed, or proven to survive with its exact slack.
enum Worst {
    Replaced(ScenarioResult),
    Proven { set: usize, slack: [f64; 3] },
}

/// A family judged: how many fail (all of them among the re-placed), and its worst `keep`
/// in `ScenarioResult::worse` order.
struct Family {
    failing: usize,
    worst: Vec<Worst>,
}

fn slack_of(s: &[f64; 3]) -> Slack {
    Slack {
        cpu: s[0],
        memory: s[1],
        storage: s[2],
    }
}

/// The worst `keep` of `sets` and how many fail. Re-placed: every scenario not proven to
/// survive (it may fail, and failing ones rank first). The proven ones strand nothing and
/// rank by their exact memory slack (as it ranks), then name, as `ScenarioResult::worse`
/// does.
fn family(
    pl: &Placement,
    prep: &Prepared,
    kind: Kind,
    sets: &[(String, Vec<usize>)],
    keep: usize,
) -> Family {
    let proven: Vec<bool> = sets
        .par_iter()
        .map(|(_, h)| prep.bounds.survives(h))
        .collect();
    let replaced: Vec<ScenarioResult> = (0..sets.len())
        .into_par_iter()
        .filter(|&i| !proven[i])
        .map(|i| scenario_in(pl, prep, &sets[i].0, kind, &sets[i].1))
        .collect();
    let failing = replaced.iter().filter(|s| s.fails()).count();
    let mut settled: Vec<(usize, [f64; 3])> = (0..sets.len())
        .into_par_iter()
        .filter(|&i| proven[i])
        .map(|i| (i, prep.bounds.share(&sets[i].1, [0.0; 3])))
        .collect();
    let by_slack = |a: &(usize, [f64; 3]), b: &(usize, [f64; 3])| {
        worse_first(
            (0, rank_of(a.1[1]), &sets[a.0].0),
            (0, rank_of(b.1[1]), &sets[b.0].0),
        )
    };
    if settled.len() > keep && keep > 0 {
        settled.select_nth_unstable_by(keep - 1, by_slack);
    }
    settled.truncate(keep);
    // Both kinds ranked by what `ScenarioResult::rank` reads.
    fn key<'a>(w: &'a Worst, sets: &'a [(String, Vec<usize>)]) -> Rank<'a> {
        match w {
            Worst::Replaced(s) => s.rank(),
            Worst::Proven { set, slack } => (0, rank_of(slack[1]), &sets[*set].0),
        }
    }
    let mut worst: Vec<Worst> = replaced
        .into_iter()
        .map(Worst::Replaced)
        .chain(
            settled
                .into_iter()
                .map(|(set, slack)| Worst::Proven { set, slack }),
        )
        .collect();
    worst.sort_by(|a, b| worse_first(key(a, sets), key(b, sets)));
    worst.truncate(keep);
    Family { failing, worst }
}

/// The worst `keep` of `sets` (by `ScenarioResult::worse`) and how many fail, as
/// re-placing every one of them gives: `family`, with the proven ones among the worst
/// re-placed for the report.
pub(crate) fn combined(
    pl: &Placement,
    prep: &Prepared,
    kind: Kind,
    sets: &[(String, Vec<usize>)],
    keep: usize,
) -> Combined {
    let f = family(pl, prep, kind, sets, keep);
    let worst = f
        .worst
        .into_par_iter()
        .map(|w| match w {
            Worst::Replaced(s) => s,
            Worst::Proven { set, .. } => scenario_in(pl, prep, &sets[set].0, kind, &sets[set].1),
        })
        .collect();
    Combined {
        kind,
        checked: sets.len(),
        failing: f.failing,
        worst,
    }
}

/// `analyse_with`'s verdict and `min_slack` of it, without its report: the growth
/// questions ask only these, for many placements. Only the scenarios the bounds cannot
/// prove survive are re-placed.
pub(crate) fn verdict_and_min_slack(pl: &Placement, spec: &Spec) -> (HeadroomVerdict, Slack) {
    let prep = Prepared::new(pl);
    let domains = pl.topo().failure_domains();
    let mut pass = pl.stranded_vms() == 0 && pl.stranded_replicas() == 0;
    // The least slack per resource over every single scenario that decides the verdict (a
    // power feed does not) and the worst of each family.
    let mut least = [f64::INFINITY; 3];
    let mut take = |s: &[f64; 3]| {
        for (l, v) in least.iter_mut().zip(s) {
            *l = l.min(*v);
        }
    };
    let mut singles: Vec<Named> = domains
        .iter()
        .map(|(name, hosts)| (name.clone(), replace::domain_kind(name), hosts.clone()))
        .filter(|s| s.1.decides())
        .collect();
    let mut families: Vec<FamilyToJudge> = Vec::new();
    for set in &spec.sets {
        if set.plus_any_node {
            families.push((Kind::Set, replace::plus_any_node(pl, set), 1));
        } else {
            singles.push((set.name.clone(), Kind::Set, set.hosts.clone()));
        }
    }
    if spec.pairs {
        families.push((Kind::Pair, replace::pairs(pl), KEEP_WORST));
        if spec.node_and_rack {
            families.push((
                Kind::NodeAndRack,
                replace::rack_and_node(pl, &domains),
                KEEP_WORST,
            ));
        }
    }
    for (kind, sets, keep) in &families {
        let f = family(pl, &prep, *kind, sets, *keep);
        pass &= f.failing == 0;
        for w in &f.worst {
            match w {
                Worst::Replaced(s) => take(&[s.slack.cpu, s.slack.memory, s.slack.storage]),
                Worst::Proven { slack, .. } => take(slack),
            }
        }
    }
    let judged: Vec<(bool, [f64; 3])> = singles
        .par_iter()
        .map(|(_, _, hosts)| replace::judge(pl, &prep, hosts))
        .collect();
    for (ok, slack) in &judged {
        pass &= ok;
        take(slack);
    }
    (HeadroomVerdict::from_pass(pass), slack_of(&least))
}
