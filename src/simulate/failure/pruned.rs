//! The headroom answers the growth questions and N+2 need, from fewer re-placements. A
//! scenario the bounds (`bounds`) prove survives strands nothing, and its slack is
//! `Bounds::share` of nothing stranded: the very value its re-placement would report, bit
//! for bit. So only the scenarios the bounds cannot settle are re-placed (and of those,
//! for a verdict, only the VMs or the replicas the bounds leave open: `replace::judge`),
//! plus, where a report shows them, the few proven ones among the worst of a family. Every
//! answer is the one re-placing every scenario gives (tested against it at every fill).
//!
//! The failures judged depend on the topology only, so the growth questions name them once
//! (`Failures`) and judge every count's placement against them.

use rayon::prelude::*;

use super::bounds::Shares;
use super::replace::{
    self, Combined, HeadroomVerdict, KEEP_WORST, Kind, Prepared, ScenarioResult, Scratch, Slack,
    Spec, judge, rank_of, scenario_in,
};
use super::sets;
use crate::simulate::fleet::Topology;
use crate::simulate::place::Placement;

/// A family of failures to judge: its kind, its scenarios (name, hosts), how many of the
/// worst it keeps, and each scenario's place among the names sorted (the last tie-break of
/// `ScenarioResult::worse`, without comparing strings per placement).
pub(crate) struct FamilySets {
    kind: Kind,
    sets: Vec<(String, Vec<usize>)>,
    keep: usize,
    name_order: Vec<u32>,
}

impl FamilySets {
    pub(crate) fn new(kind: Kind, sets: Vec<(String, Vec<usize>)>, keep: usize) -> FamilySets {
        let mut by_name: Vec<usize> = (0..sets.len()).collect();
        by_name.sort_by(|&a, &b| sets[a].0.cmp(&sets[b].0).then(a.cmp(&b)));
        let mut name_order = vec![0u32; sets.len()];
        for (place, &i) in by_name.iter().enumerate() {
            name_order[i] = u32::try_from(place).unwrap_or(u32::MAX);
        }
        FamilySets {
            kind,
            sets,
            keep,
            name_order,
        }
    }
}

/// Every failure the verdict of a placement of one topology judges: the single scenarios
/// that decide it (nodes, racks, named sets; a power feed does not) and the families.
pub(crate) struct Failures {
    singles: Vec<(String, Kind, Vec<usize>)>,
    families: Vec<FamilySets>,
}

impl Failures {
    /// The failures `spec` asks for on a topology.
    pub(crate) fn new(topo: &Topology, spec: &Spec) -> Failures {
        let domains = topo.failure_domains();
        let mut singles: Vec<(String, Kind, Vec<usize>)> = domains
            .iter()
            .map(|(name, hosts)| (name.clone(), replace::domain_kind(name), hosts.clone()))
            .filter(|s| s.1.decides())
            .collect();
        let mut families = Vec::new();
        for set in &spec.sets {
            if set.plus_any_node {
                let plus = sets::plus_any_node(topo, set);
                families.push(FamilySets::new(Kind::Set, plus, 1));
            } else {
                singles.push((set.name.clone(), Kind::Set, set.hosts.clone()));
            }
        }
        if spec.pairs {
            families.push(FamilySets::new(Kind::Pair, sets::pairs(topo), KEEP_WORST));
            if spec.node_and_rack {
                let racks = sets::rack_and_node(topo, &domains);
                families.push(FamilySets::new(Kind::NodeAndRack, racks, KEEP_WORST));
            }
        }
        Failures { singles, families }
    }
}

/// How a scenario among the worst of a family is known.
enum Known {
    /// Re-placed whole (a report shows it).
    Replaced(ScenarioResult),
    /// Judged: what stranded and the slack, from the parts the bounds left open.
    Judged { stranded: usize, slack: [f64; 3] },
    /// Proven to survive, with its exact slack.
    Proven { slack: [f64; 3] },
}

impl Known {
    fn stranded(&self) -> usize {
        match self {
            Known::Replaced(s) => s.stranded + s.stranded_replicas,
            Known::Judged { stranded, .. } => *stranded,
            Known::Proven { .. } => 0,
        }
    }

    fn slack(&self) -> [f64; 3] {
        match self {
            Known::Replaced(s) => [s.slack.cpu, s.slack.memory, s.slack.storage],
            Known::Judged { slack, .. } | Known::Proven { slack } => *slack,
        }
    }
}

/// A family judged: how many fail, and its worst `keep` (scenario index and what is
/// known of it) in `ScenarioResult::worse` order.
struct Family {
    failing: usize,
    worst: Vec<(usize, Known)>,
}

/// The worst `keep` of a family and how many fail. Every scenario not proven to survive is
/// re-placed (whole with `whole`, else judged): it may fail, and failing ones rank first.
/// The proven ones strand nothing and rank by their exact memory slack as it ranks, then
/// name, as `ScenarioResult::worse` does.
fn family(pl: &Placement, prep: &Prepared, f: &FamilySets, whole: bool) -> Family {
    let sets = &f.sets;
    let proven: Vec<bool> = sets
        .par_iter()
        .map(|(_, h)| prep.bounds.survives(h))
        .collect();
    let open: Vec<(usize, Known)> = (0..sets.len())
        .into_par_iter()
        .filter(|&i| !proven[i])
        .map_init(
            || (!whole).then(|| Scratch::new(pl)),
            |scratch, i| {
                let (name, hosts) = &sets[i];
                let known = match scratch {
                    None => Known::Replaced(scenario_in(pl, prep, name, f.kind, hosts)),
                    Some(scratch) => {
                        let (stranded, slack) = judge(pl, prep, hosts, scratch);
                        Known::Judged { stranded, slack }
                    }
                };
                (i, known)
            },
        )
        .collect();
    let failing = open.iter().filter(|(_, k)| k.stranded() > 0).count();
    // Worst first: most stranded, least memory slack as it ranks, first name.
    let key = |(i, k): &(usize, Known)| (std::cmp::Reverse(k.stranded()), f.name_order[*i]);
    let worse = |a: &(usize, Known), b: &(usize, Known)| {
        let (sa, na) = key(a);
        let (sb, nb) = key(b);
        sa.cmp(&sb)
            .then(rank_of(a.1.slack()[1]).total_cmp(&rank_of(b.1.slack()[1])))
            .then(na.cmp(&nb))
    };
    let settled = worst_proven(
        f,
        |i| proven[i],
        |i| prep.bounds.share(&sets[i].1, [0.0; 3]),
    )
    .into_iter()
    .map(|(i, slack)| (i, Known::Proven { slack }))
    .collect::<Vec<_>>();
    let mut worst: Vec<(usize, Known)> = open.into_iter().chain(settled).collect();
    worst.sort_by(worse);
    worst.truncate(f.keep);
    Family { failing, worst }
}

/// The worst `f.keep` of the scenarios of `f` that `is_proven` (they strand nothing):
/// least memory slack as it ranks, then name, as `ScenarioResult::worse` ranks them, with
/// each one's slack (`slack_of`, `Shares::share` of nothing stranded). Unordered.
fn worst_proven(
    f: &FamilySets,
    is_proven: impl Fn(usize) -> bool + Sync,
    slack_of: impl Fn(usize) -> [f64; 3] + Sync,
) -> Vec<(usize, [f64; 3])> {
    let mut settled: Vec<(usize, [f64; 3])> = (0..f.sets.len())
        .into_par_iter()
        .filter(|&i| is_proven(i))
        .map(|i| (i, slack_of(i)))
        .collect();
    let worse = |a: &(usize, [f64; 3]), b: &(usize, [f64; 3])| {
        rank_of(a.1[1])
            .total_cmp(&rank_of(b.1[1]))
            .then(f.name_order[a.0].cmp(&f.name_order[b.0]))
    };
    if f.keep > 0 && settled.len() > f.keep {
        settled.select_nth_unstable_by(f.keep - 1, worse);
    }
    settled.truncate(f.keep);
    settled
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
    let f = FamilySets::new(kind, sets.to_vec(), keep);
    let judged = family(pl, prep, &f, true);
    let worst = judged
        .worst
        .into_par_iter()
        .map(|(i, k)| match k {
            Known::Replaced(s) => s,
            Known::Judged { .. } | Known::Proven { .. } => {
                scenario_in(pl, prep, &sets[i].0, kind, &sets[i].1)
            }
        })
        .collect();
    Combined {
        kind,
        checked: sets.len(),
        failing: judged.failing,
        worst,
    }
}

/// `analyse_with`'s verdict and `min_slack` of it, without its report: the growth
/// questions ask only these, for many placements of one topology (`failures` named for
/// it). Only what the bounds cannot prove is re-placed.
pub(crate) fn verdict_and_min_slack(
    pl: &Placement,
    failures: &Failures,
) -> (HeadroomVerdict, Slack) {
    let prep = Prepared::new(pl);
    let mut pass = pl.stranded_vms() == 0 && pl.stranded_replicas() == 0;
    // The least slack per resource over every single scenario that decides the verdict
    // and the worst of each family.
    let mut least = [f64::INFINITY; 3];
    let mut take = |s: &[f64; 3]| {
        for (l, v) in least.iter_mut().zip(s) {
            *l = l.min(*v);
        }
    };
    for f in &failures.families {
        let judged = family(pl, &prep, f, false);
        pass &= judged.failing == 0;
        for (_, k) in &judged.worst {
            take(&k.slack());
        }
    }
    let judged: Vec<(usize, [f64; 3])> = failures
        .singles
        .par_iter()
        .map_init(
            || Scratch::new(pl),
            |scratch, (_, _, hosts)| judge(pl, &prep, hosts, scratch),
        )
        .collect();
    for (stranded, slack) in &judged {
        pass &= *stranded == 0;
        take(slack);
    }
    (
        HeadroomVerdict::from_pass(pass),
        Slack {
            cpu: least[0],
            memory: least[1],
            storage: least[2],
        },
    )
}

/// Whether the bounds prove that `pl` passes: everything placed, and every failure of
/// `failures` survived (`Bounds::survives`). A proof holds for every placement it grew
/// from (`Growth`: the same VMs and replicas where they were, fewer of them): each node
/// has as much free and holds less, so each bound's units and reserves are no smaller,
/// the largest request and the nodes closed to an item no larger, and what a failure
/// displaces no more; the growth questions read every count up to a proven one as passing.
pub(crate) fn proven(pl: &Placement, failures: &Failures) -> bool {
    if pl.stranded_vms() != 0 || pl.stranded_replicas() != 0 {
        return false;
    }
    let bounds = super::bounds::Bounds::new(pl);
    failures
        .singles
        .par_iter()
        .all(|(_, _, hosts)| bounds.survives(hosts))
        && failures
            .families
            .iter()
            .all(|f| f.sets.par_iter().all(|(_, hosts)| bounds.survives(hosts)))
}

/// `verdict_and_min_slack`'s least slack for a placement where every failure is survived
/// (as `proven` shows, for it or for a placement it grew into), from its `shares` alone:
/// each scenario's slack is then the share of nothing stranded.
pub(crate) fn passing_min_slack(shares: &Shares, failures: &Failures) -> Slack {
    let mut least = [f64::INFINITY; 3];
    let mut take = |s: &[f64; 3]| {
        for (l, v) in least.iter_mut().zip(s) {
            *l = l.min(*v);
        }
    };
    for f in &failures.families {
        for (_, slack) in worst_proven(f, |_| true, |i| shares.share(&f.sets[i].1, [0.0; 3])) {
            take(&slack);
        }
    }
    for (_, _, hosts) in &failures.singles {
        take(&shares.share(hosts, [0.0; 3]));
    }
    Slack {
        cpu: least[0],
        memory: least[1],
        storage: least[2],
    }
}

/// The failures of `failures` that fail `pl`, as `analyse_with`'s report lists them (each
/// single scenario that decides, and the failing ones among each family's worst), and the
/// one of them stranding the most (VMs and replicas; the first name on a tie) re-placed
/// whole: what stops max clusters, without re-placing the failures the bounds settle.
pub(crate) fn failing_and_worst(
    pl: &Placement,
    failures: &Failures,
) -> (usize, Option<ScenarioResult>) {
    let prep = Prepared::new(pl);
    // (stranded, name, kind, hosts) of every failing scenario.
    let mut failing: Vec<(usize, &str, Kind, &[usize])> = failures
        .singles
        .par_iter()
        .map_init(
            || Scratch::new(pl),
            |scratch, (name, kind, hosts)| {
                let (stranded, _) = judge(pl, &prep, hosts, scratch);
                (stranded, name.as_str(), *kind, hosts.as_slice())
            },
        )
        .filter(|f| f.0 > 0)
        .collect();
    for f in &failures.families {
        for (i, known) in family(pl, &prep, f, false).worst {
            if known.stranded() > 0 {
                let (name, hosts) = &f.sets[i];
                failing.push((known.stranded(), name, f.kind, hosts));
            }
        }
    }
    let worst = failing
        .iter()
        .max_by_key(|f| (f.0, std::cmp::Reverse(f.1)))
        .map(|&(_, name, kind, hosts)| scenario_in(pl, &prep, name, kind, hosts));
    (failing.len(), worst)
}
