//! Growth questions: how many more clusters of a shape fit with every failure still
//! survived, and the month-by-month timeline of the teams' requests under their quotas.

use crate::simulate::failure::Shares;
use crate::simulate::failure::headroom::{HeadroomVerdict, Slack};
use crate::simulate::failure::pruned;
use crate::simulate::place::{Placement, workload};
use crate::simulate::report::{MaxClusters, Stopped};
use crate::simulate::scenario::Pool;
use crate::simulate::study::Study;

/// How many counts past the first failure are checked for passing again.
const PASSES_AGAIN_WINDOW: u32 = 16;

/// The placements of a study's clusters plus 0, 1, 2, ... clusters of one shape, one
/// cluster added at a time to the placement before: the same as placing the whole list
/// with `Study::place`, numbered the same (`Placement::add_renumbered`), without
/// re-placing the fleet per count. Clusters of other shapes may be added the same way
/// (`add_cluster`: the timeline's requests).
#[derive(Clone)]
pub struct Growth<'a> {
    l: &'a Study,
    pools: &'a [Pool],
    pl: Placement,
    /// Clusters of the shape added so far.
    added: u32,
    /// The cluster and group numbers the next added cluster gets.
    next_cluster: usize,
    next_group: u32,
}

/// Anti-affinity groups one cluster of `pools` numbers.
fn groups_of(pools: &[Pool]) -> u32 {
    pools.iter().filter(|p| p.anti_affinity).count() as u32
}

impl<'a> Growth<'a> {
    #[cfg(test)]
    pub fn new(l: &'a Study, base: &[&[Pool]], pools: &'a [Pool]) -> Growth<'a> {
        Growth::on(l, l.place(base), base, pools)
    }

    /// `new` with `base` placed already: `placed` is `l.place(base)`.
    pub(crate) fn on(
        l: &'a Study,
        placed: Placement,
        base: &[&[Pool]],
        pools: &'a [Pool],
    ) -> Growth<'a> {
        let (live_groups, live_clusters) = l
            .live
            .as_ref()
            .map_or((0, 0), |f| f.placement.next_numbers());
        Growth {
            l,
            pools,
            pl: placed,
            added: 0,
            next_cluster: live_clusters + base.len(),
            next_group: live_groups + base.iter().map(|c| groups_of(c)).sum::<u32>(),
        }
    }

    /// Add one more cluster of the shape.
    pub fn add(&mut self) {
        self.add_cluster(self.pools);
        self.added += 1;
    }

    /// Add one cluster of `pools`, numbered after those added before.
    pub(crate) fn add_cluster(&mut self, pools: &[Pool]) {
        let p = &self.l.scenario.platform;
        let (vms, vols) = workload(&[pools], p);
        self.pl
            .add_renumbered(vms, vols, self.next_cluster, self.next_group, p);
        self.next_cluster += 1;
        self.next_group += groups_of(pools);
    }

    /// The placement with `n` clusters of the shape (`n` not below what was added).
    pub fn at(&mut self, n: u32) -> &Placement {
        while self.added < n {
            self.add();
        }
        &self.pl
    }

    /// The placement as grown so far.
    pub(crate) fn placement(&self) -> &Placement {
        &self.pl
    }
}

/// The largest n such that every count of additional `shape` clusters from 0 to n passes;
/// then a window past the first failure for counts that pass again (greedy re-placement
/// is not monotone in the count). Each count's placement adds one cluster to the one
/// before (`Growth`). The bounds' proof that a count passes holds for every count below
/// it (`pruned::proven`), so proofs are sought a growing step ahead, and where one fails,
/// a smaller step from the last proven count; past the last count proven, each count's
/// verdict and least slack re-place only the failures the bounds cannot settle
/// (`pruned::verdict_and_min_slack`). Every count's least slack is the curve's. The
/// answer of placing and checking everything.
pub fn max_clusters(l: &Study, shape: &str) -> MaxClusters {
    max_clusters_with(l, shape, &mut |_| Flow::Go)
}

/// Whether a growth question goes on after a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Go,
    /// Stop, for this reason: the answer so far is a lower bound (max clusters), or the
    /// months so far (the timeline).
    Stop(Stopped),
}

/// The first step of counts a proof is sought ahead, and the largest: a step is the counts
/// grown before `progress` is asked again.
const FIRST_STEP: u32 = 8;
const MAX_STEP: u32 = 1024;

/// `max_clusters`, asking `progress` after each batch of counts (with the counts checked
/// so far) whether to go on; when it says stop, the answer says how far it got.
pub fn max_clusters_with(
    l: &Study,
    shape: &str,
    progress: &mut dyn FnMut(u32) -> Flow,
) -> MaxClusters {
    max_clusters_from(l, l.place(&l.current()), shape, progress).0
}

/// `max_clusters_with` from the study's clusters placed already (`placed`), with the
/// placement at the first failing count (for `what_stops_at`).
pub(crate) fn max_clusters_from(
    l: &Study,
    placed: Placement,
    shape: &str,
    progress: &mut dyn FnMut(u32) -> Flow,
) -> (MaxClusters, Option<Placement>) {
    let base = l.current();
    let pools = l.shapes[shape].as_slice();
    let topo = l.topology();
    let failures = pruned::Failures::new(&topo, &l.headroom_spec(&topo));
    let bound = capacity_bound(l, pools);
    let mut growth = Growth::on(l, placed, &base, pools);
    let mut curve: Vec<(u32, Slack, HeadroomVerdict)> = Vec::new();
    let mut stopped = None;
    // Proofs: every count up to `proven` passes. The counts grown past it wait in
    // `pending` with the least slack they have if they pass.
    let mut shares = Shares::new(growth.placement());
    let mut pending = vec![(0, pruned::passing_min_slack(&shares, &failures))];
    let mut proven: Option<u32> = None;
    let mut last_proof: Option<(Growth, Shares)> = None;
    let mut step = FIRST_STEP;
    loop {
        let target = proven.map_or(0, |p| p.saturating_add(step)).min(bound);
        while growth.added < target {
            growth.add();
            shares.grow(growth.placement());
            pending.push((growth.added, pruned::passing_min_slack(&shares, &failures)));
        }
        if pruned::proven(growth.placement(), &failures) {
            curve.extend(
                pending
                    .drain(..)
                    .map(|(n, slack)| (n, slack, HeadroomVerdict::Pass)),
            );
            proven = Some(target);
            if target >= bound {
                break;
            }
            last_proof = Some((growth.clone(), shares.clone()));
            step = step.saturating_mul(2).min(MAX_STEP);
            if let Flow::Stop(why) = progress(target + 1) {
                stopped = Some(why);
                break;
            }
        } else if let (Some(p), Some((g, s))) = (proven, &last_proof)
            && target > p + 1
        {
            // Back to the last proof, a smaller step ahead.
            growth = g.clone();
            shares = s.clone();
            pending.clear();
            step = (target - p) / 2;
        } else {
            break;
        }
    }
    // Past the last proof: each count judged, a batch of counts between questions.
    let batch = (rayon::current_num_threads() as u32).clamp(2, 8);
    let mut first_failure = None;
    let mut at_failure = None;
    let mut next = proven.map_or(0, |p| p + 1);
    while stopped.is_none() && first_failure.is_none() && next <= bound {
        let hi = next.saturating_add(batch - 1).min(bound);
        for n in next..=hi {
            let (v, slack) = pruned::verdict_and_min_slack(growth.at(n), &failures);
            curve.push((n, slack, v));
            if !v.passes() {
                first_failure = Some(n);
                at_failure = Some(growth.placement().clone());
                break;
            }
        }
        next = hi + 1;
        if first_failure.is_none()
            && next <= bound
            && let Flow::Stop(why) = progress(next)
        {
            stopped = Some(why);
        }
    }
    let mut passes_again = Vec::new();
    let mut checked_up_to = curve.last().map_or(0, |c| c.0);
    if let Some(f) = first_failure {
        for n in f + 1..=f.saturating_add(PASSES_AGAIN_WINDOW).min(bound) {
            let (v, slack) = pruned::verdict_and_min_slack(growth.at(n), &failures);
            if v.passes() {
                passes_again.push(n);
            }
            curve.push((n, slack, v));
        }
        checked_up_to = f;
    }
    let answer = MaxClusters {
        lower_bound: stopped.is_some(),
        stopped_by: stopped,
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
        control_plane: None,
        stops: None,
    };
    (answer, at_failure)
}

/// Upper bound from raw capacity: no more clusters of `pools` than fit with nobody failing
/// (plus one, so that the count past it is checked).
fn capacity_bound(l: &Study, pools: &[Pool]) -> u32 {
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
    ((cpu / need_cpu.max(1e-9))
        .min(mem / need_mem.max(1e-9))
        .ceil()
        .min(100_000.0) as u32)
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::failure::headroom;

    fn study(text: &str, dump: Option<&std::path::Path>) -> Study {
        Study::from_text(text, dump)
    }

    fn shipped(name: &str) -> String {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("simulations")
                .join(name),
        )
        .unwrap()
    }

    /// The reference factory with `compute` compute nodes, `clusters` standard clusters
    /// and `extra` appended (a `headroom:` section).
    fn small_factory(compute: usize, clusters: usize, extra: &str) -> String {
        let text = shipped("reference-factory.yaml")
            .replace("count: 24", &format!("count: {compute}"))
            .replace(
                "- {shape: standard, count: 60}",
                &format!("- {{shape: standard, count: {clusters}}}"),
            );
        format!("{text}\n{extra}")
    }

    /// Where everything went, bit for bit.
    fn layout(pl: &Placement) -> String {
        let vms: Vec<_> = pl
            .vms()
            .iter()
            .map(|v| (v.cluster, v.group, &v.volumes, v.cpu_req.to_bits()))
            .collect();
        let vols: Vec<_> = pl.volumes().iter().map(|v| (v.vm, &v.replicas)).collect();
        let free: Vec<_> = (0..pl.free().cpu.len())
            .map(|n| {
                (
                    pl.free().cpu[n].to_bits(),
                    pl.free().mem[n].to_bits(),
                    pl.free().disk[n]
                        .iter()
                        .map(|d| (d.0.to_bits(), d.1.to_bits()))
                        .collect::<Vec<_>>(),
                    pl.free().node_room[n].to_bits(),
                )
            })
            .collect();
        format!(
            "{vms:?} {vols:?} {:?} {free:?} {:?} {:?} {:?} {} {}",
            pl.vm_node(),
            pl.groups(),
            pl.vms_on(),
            pl.vols_on(),
            pl.stranded_vms(),
            pl.stranded_replicas()
        )
    }

    /// The plain computation: each count placed whole and every failure re-placed (the
    /// implementation before growth and pruning).
    fn max_clusters_plain(l: &Study, shape: &str) -> MaxClusters {
        let base = l.current();
        let pools = l.shapes[shape].as_slice();
        let spec = l.headroom_spec(&l.topology());
        let eval = |n: u32| {
            let mut all = base.clone();
            all.extend(std::iter::repeat_n(pools, n as usize));
            let h = headroom::analyse_with(&l.place(&all), &spec);
            (h.verdict, headroom::min_slack(&h))
        };
        let bound = capacity_bound(l, pools);
        let mut curve = Vec::new();
        let mut first_failure = None;
        let mut n = 0;
        while first_failure.is_none() && n <= bound {
            let (v, slack) = eval(n);
            curve.push((n, slack, v));
            if !v.passes() {
                first_failure = Some(n);
            }
            n += 1;
        }
        let mut passes_again = Vec::new();
        let mut checked_up_to = curve.last().map_or(0, |c| c.0);
        if let Some(f) = first_failure {
            for n in f + 1..=(f + PASSES_AGAIN_WINDOW).min(bound) {
                let (v, slack) = eval(n);
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
            lower_bound: false,
            stopped_by: None,
            curve,
            control_plane: None,
            stops: None,
        }
    }

    #[test]
    fn max_clusters_is_the_plain_count_by_count_answer() {
        let cases = [
            small_factory(6, 8, ""),
            small_factory(8, 0, "headroom:\n  failures: 2\n  node_and_rack: true\n"),
        ];
        for text in &cases {
            let l = study(text, None);
            let fast = max_clusters(&l, "standard");
            assert!(fast.first_failure.is_some(), "{fast:?}");
            assert!(fast.curve.len() > PASSES_AGAIN_WINDOW as usize + 2);
            let plain = max_clusters_plain(&l, "standard");
            assert_eq!(
                serde_json::to_string(&fast).unwrap(),
                serde_json::to_string(&plain).unwrap()
            );
        }
    }

    /// A budget that says stop after the first batch gives every count checked so far as a
    /// lower bound, never a failure it did not see.
    #[test]
    fn a_stopped_search_answers_at_least_what_it_checked() {
        let l = study(&small_factory(6, 8, ""), None);
        let full = max_clusters(&l, "standard");
        let mut asked = Vec::new();
        let part = max_clusters_with(&l, "standard", &mut |n| {
            asked.push(n);
            Flow::Stop(Stopped::Interrupt)
        });
        assert_eq!(asked.len(), 1);
        assert!(part.lower_bound && !full.lower_bound);
        assert_eq!(part.stopped_by, Some(Stopped::Interrupt));
        assert_eq!(part.first_failure, None);
        assert_eq!(part.additional, Some(asked[0] - 1));
        assert!(part.additional < full.additional);
        assert_eq!(
            format!("{:?}", part.curve),
            format!("{:?}", &full.curve[..part.curve.len()])
        );
        let json = serde_json::to_value(&part).unwrap();
        assert_eq!(json["lower_bound"], true);
        assert!(
            serde_json::to_value(&full)
                .unwrap()
                .get("lower_bound")
                .is_none()
        );
    }

    /// Growth one cluster at a time places every count as placing the whole list does,
    /// and the pruned verdict and least slack are `analyse_with`'s, for every count up to
    /// past the first failure: on a planned fleet (N+1, and N+2 with rack + node and a
    /// named set plus any node) and on a running fleet read from a dump.
    #[test]
    fn growth_and_the_pruned_verdict_are_the_plain_placement_and_analysis_for_every_count() {
        let dump =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("simulations/live-fleet.yaml");
        let cases: Vec<(&str, Study)> = vec![
            ("reference, N+1", study(&small_factory(6, 8, ""), None)),
            (
                "small, N+2, rack + node, a set plus any node",
                study(
                    &small_factory(
                        8,
                        0,
                        "headroom:\n  failures: 2\n  node_and_rack: true\n  sets:\n    - {name: feed, racks: [r03], plus_any_node: true}\n",
                    ),
                    None,
                ),
            ),
            (
                "running fleet",
                study(&shipped("live-onboarding.yaml"), Some(&dump)),
            ),
        ];
        for (name, l) in &cases {
            let shape = l.shapes.keys().next().unwrap().clone();
            let base = l.current();
            let pools = l.shapes[&shape].as_slice();
            let spec = l.headroom_spec(&l.topology());
            let mut growth = Growth::new(l, &base, pools);
            let mut failed_at = None;
            let mut passes = 0;
            for n in 0..200u32 {
                let mut all = base.clone();
                all.extend(std::iter::repeat_n(pools, n as usize));
                let plain = l.place(&all);
                let grown = growth.at(n);
                assert_eq!(layout(grown), layout(&plain), "{name}: placement at {n}");
                let h = headroom::analyse_with(&plain, &spec);
                let failures = pruned::Failures::new(grown.topo(), &spec);
                let (v, slack) = pruned::verdict_and_min_slack(grown, &failures);
                assert_eq!(v, h.verdict, "{name}: verdict at {n}");
                assert_eq!(
                    format!("{slack:?}"),
                    format!("{:?}", headroom::min_slack(&h)),
                    "{name}: least slack at {n}"
                );
                passes += usize::from(v.passes());
                if !v.passes() && failed_at.is_none() {
                    failed_at = Some(n);
                }
                if failed_at.is_some_and(|f| n >= f + 4) {
                    break;
                }
            }
            assert!(failed_at.is_some(), "{name}: the walk reaches a failure");
            assert!(passes > 0, "{name}: and passes before it");
        }
    }

    /// On a generated 300-node fleet (the reference scaled, 667 clusters), the answer is
    /// the one judging every count in turn (`verdict_and_min_slack` per count, the
    /// computation before the proofs), curve and all.
    #[test]
    fn a_300_node_fleet_gets_the_count_by_count_answer() {
        let l = study(
            &crate::simulate::scenario::scaled::reference_at(300, 1),
            None,
        );
        let fast = max_clusters(&l, "standard");
        let base = l.current();
        let pools = l.shapes["standard"].as_slice();
        let topo = l.topology();
        let failures = pruned::Failures::new(&topo, &l.headroom_spec(&topo));
        let mut growth = Growth::new(&l, &base, pools);
        let bound = capacity_bound(&l, pools);
        let mut curve = Vec::new();
        let mut first_failure = None;
        for n in 0..=bound {
            let (v, slack) = pruned::verdict_and_min_slack(growth.at(n), &failures);
            curve.push((n, slack, v));
            if first_failure.is_none() && !v.passes() {
                first_failure = Some(n);
            }
            if first_failure.is_some_and(|f| n >= f + PASSES_AGAIN_WINDOW) {
                break;
            }
        }
        let f = first_failure.expect("the sweep reaches a failure");
        assert!(f > 100, "most counts pass before the first failure: {f}");
        assert_eq!(fast.first_failure, Some(f));
        assert_eq!(fast.additional, Some(f - 1));
        assert_eq!(format!("{:?}", fast.curve), format!("{curve:?}"));
    }
}
