//! Growth questions: how many more clusters of a shape fit with every failure still
//! survived, and the month-by-month timeline of the teams' requests under their quotas.

use rayon::prelude::*;

use crate::simulate::failure::headroom::{HeadroomVerdict, Slack};
use crate::simulate::failure::pruned;
use crate::simulate::place::{Placement, workload};
use crate::simulate::report::{MaxClusters, Month, Refusal, Stopped, TimelineStop};
use crate::simulate::scenario::{self, Pool};
use crate::simulate::study::Study;

/// How many counts past the first failure are checked for passing again.
const PASSES_AGAIN_WINDOW: u32 = 16;

/// The placements of a study's clusters plus 0, 1, 2, ... clusters of one shape, one
/// cluster added at a time to the placement before: the same as placing the whole list
/// with `Study::place`, numbered the same (`Placement::add_renumbered`), without
/// re-placing the fleet per count.
pub struct Growth<'a> {
    l: &'a Study,
    pools: &'a [Pool],
    pl: Placement,
    /// Clusters of the shape added so far.
    added: u32,
    /// The cluster and group numbers the first added cluster gets.
    cluster0: usize,
    group0: u32,
    /// Anti-affinity groups one cluster of the shape numbers.
    groups_per: u32,
}

impl<'a> Growth<'a> {
    pub fn new(l: &'a Study, base: &[&[Pool]], pools: &'a [Pool]) -> Growth<'a> {
        let anti = |c: &[Pool]| c.iter().filter(|p| p.anti_affinity).count() as u32;
        let (live_groups, live_clusters) = l
            .live
            .as_ref()
            .map_or((0, 0), |f| f.placement.next_numbers());
        Growth {
            l,
            pools,
            pl: l.place(base),
            added: 0,
            cluster0: live_clusters + base.len(),
            group0: live_groups + base.iter().map(|c| anti(c)).sum::<u32>(),
            groups_per: anti(pools),
        }
    }

    /// Add one more cluster of the shape.
    pub fn add(&mut self) {
        let p = &self.l.scenario.platform;
        let (vms, vols) = workload(&[self.pools], p);
        self.pl.add_renumbered(
            vms,
            vols,
            self.cluster0 + self.added as usize,
            self.group0 + self.added * self.groups_per,
            p,
        );
        self.added += 1;
    }

    /// The placement with `n` clusters of the shape (`n` not below what was added).
    pub fn at(&mut self, n: u32) -> &Placement {
        while self.added < n {
            self.add();
        }
        &self.pl
    }
}

/// The largest n such that every count of additional `shape` clusters from 0 to n passes,
/// by placing and checking each count (greedy re-placement is not monotone in the count,
/// so no bisection); then a window past the first failure for counts that pass again.
/// Each count's placement adds one cluster to the one before (`Growth`), and its verdict
/// and least slack re-place only the failures the bounds cannot settle
/// (`pruned::verdict_and_min_slack`): the answer of placing and checking everything.
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

/// `max_clusters`, asking `progress` after each batch of counts (with the counts checked
/// so far) whether to go on; when it says stop, the answer says how far it got.
pub fn max_clusters_with(
    l: &Study,
    shape: &str,
    progress: &mut dyn FnMut(u32) -> Flow,
) -> MaxClusters {
    let base = l.current();
    let pools = l.shapes[shape].as_slice();
    let topo = l.topology();
    let failures = pruned::Failures::new(&topo, &l.headroom_spec(&topo));
    let mut growth = Growth::new(l, &base, pools);
    let mut known: std::collections::BTreeMap<u32, (HeadroomVerdict, Slack)> =
        std::collections::BTreeMap::new();
    // The counts `lo..=hi` placed one after the other and checked, each with its
    // scenarios in parallel (no placement is copied).
    let mut eval = |lo: u32, hi: u32, known: &mut std::collections::BTreeMap<_, _>| {
        for n in lo..=hi {
            known
                .entry(n)
                .or_insert_with(|| pruned::verdict_and_min_slack(growth.at(n), &failures));
        }
    };
    let bound = capacity_bound(l, pools);
    // Counts in batches, in parallel, until the first failure.
    let batch = (rayon::current_num_threads() as u32).clamp(2, 8);
    let mut curve: Vec<(u32, Slack, HeadroomVerdict)> = Vec::new();
    let mut first_failure = None;
    let mut next = 0u32;
    let mut stopped = None;
    while first_failure.is_none() && next <= bound {
        let hi = next.saturating_add(batch - 1).min(bound);
        eval(next, hi, &mut known);
        for n in next..=hi {
            let (v, slack) = known[&n].clone();
            if first_failure.is_none() {
                curve.push((n, slack, v));
                if !v.passes() {
                    first_failure = Some(n);
                }
            }
        }
        next = hi + 1;
        if first_failure.is_none()
            && next <= bound
            && let Flow::Stop(why) = progress(next)
        {
            stopped = Some(why);
            break;
        }
    }
    let mut passes_again = Vec::new();
    let mut checked_up_to = curve.last().map_or(0, |c| c.0);
    if let Some(f) = first_failure {
        let hi = f.saturating_add(PASSES_AGAIN_WINDOW).min(bound);
        if f < hi {
            eval(f + 1, hi, &mut known);
        }
        for n in f + 1..=hi {
            let (v, slack) = known[&n].clone();
            if v.passes() {
                passes_again.push(n);
            }
            curve.push((n, slack, v));
        }
        checked_up_to = f;
    }
    MaxClusters {
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
    }
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
    let (months, refused, _) = timeline_with(l, &mut |_| Flow::Go);
    (months, refused)
}

/// `timeline`, asking `progress` after each batch of distinct months (with the months
/// answered so far) whether to go on; when it says stop, the months from the first one
/// not answered on are left out, and that month is returned with the reason.
pub fn timeline_with(
    l: &Study,
    progress: &mut dyn FnMut(usize) -> Flow,
) -> (Vec<Month>, Vec<Refusal>, Option<TimelineStop>) {
    let s = &l.scenario;
    let mut months: Vec<i32> = Vec::new();
    for t in &s.teams {
        for r in &t.requests {
            months.extend(scenario::month_index(&r.from));
            months.extend(r.until.as_deref().and_then(scenario::month_index));
        }
    }
    if months.is_empty() {
        return (Vec::new(), Vec::new(), None);
    }
    let (first, last) = (
        *months.iter().min().expect("not empty"),
        *months.iter().max().expect("not empty"),
    );
    let base = l.current();
    let topo = l.topology();
    let failures = pruned::Failures::new(&topo, &l.headroom_spec(&topo));
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
    // The distinct sets in the order their months come, answered a batch at a time.
    let mut distinct: Vec<&ActiveSet> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for set in &active {
        if seen.insert(set) {
            distinct.push(set);
        }
    }
    let place_and_check = |set: &ActiveSet| {
        let mut all = base.clone();
        for &(ti, ri) in set {
            let r = &s.teams[ti].requests[ri];
            all.extend(std::iter::repeat_n(
                l.shapes[&r.shape].as_slice(),
                r.count as usize,
            ));
        }
        let (verdict, slack) = pruned::verdict_and_min_slack(&l.place(&all), &failures);
        (all.len(), verdict, slack)
    };
    let batch = rayon::current_num_threads().clamp(2, 8);
    let mut answers: std::collections::HashMap<&ActiveSet, MonthAnswer> =
        std::collections::HashMap::new();
    let mut stopped = None;
    for chunk in distinct.chunks(batch) {
        let got: Vec<(&ActiveSet, MonthAnswer)> = chunk
            .par_iter()
            .map(|&set| (set, place_and_check(set)))
            .collect();
        answers.extend(got);
        if answers.len() < distinct.len()
            && let Flow::Stop(why) = progress(answers.len())
        {
            stopped = Some(why);
            break;
        }
    }
    let live = l.live.as_ref().map_or(0, |f| f.tenant_clusters);
    let mut out = Vec::new();
    let mut cut = None;
    for (m, set) in (first..=last).zip(&active) {
        let Some((clusters, verdict, min_slack)) = answers.get(set).cloned() else {
            cut = stopped.map(|by| TimelineStop {
                from_month: scenario::month_name(m),
                by,
            });
            break;
        };
        out.push(Month {
            month: scenario::month_name(m),
            clusters: clusters + live,
            verdict,
            min_slack,
        });
    }
    (out, refused, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::failure::headroom;
    use crate::simulate::{ScenarioInput, StudyInput};

    fn study(text: &str, dump: Option<&std::path::Path>) -> Study {
        Study::open(&StudyInput {
            scenario: ScenarioInput::Text {
                name: std::path::Path::new("t.yaml"),
                text,
            },
            site: None,
            dump,
            rebuild_what_if: None,
        })
        .unwrap()
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
        // More requests, so that the months hold more distinct sets than one batch.
        let text = text
            .replace(
                "{shape: large, count: 1, from: 2027-04}",
                "{shape: large, count: 1, from: 2027-04, until: 2031-12}",
            )
            .replace("vcpu_quota: 200", "vcpu_quota: 5000")
            .replace(
                "      - {shape: large, count: 2, from: 2027-02, until: 2027-06}\n",
                "      - {shape: large, count: 2, from: 2027-02, until: 2027-06}\n      - {shape: standard, count: 1, from: 2027-07}\n      - {shape: standard, count: 1, from: 2027-10}\n      - {shape: standard, count: 1, from: 2028-01, until: 2028-05}\n      - {shape: standard, count: 1, from: 2028-08}\n",
            );
        assert!(text.contains("from: 2028-08"));
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
        // Stopped after the first batch: a prefix of the whole, and the first month left
        // out named with the reason.
        let mut asked = 0;
        let (part, _, cut) = timeline_with(&l, &mut |_| {
            asked += 1;
            Flow::Stop(Stopped::Budget)
        });
        assert_eq!(asked, 1);
        assert!(
            !part.is_empty() && part.len() < fast.len(),
            "{}",
            part.len()
        );
        for (m, whole) in part.iter().zip(&fast) {
            assert_eq!((&m.month, m.clusters), (&whole.0, whole.1));
        }
        let cut = cut.expect("the timeline says where it stopped");
        assert_eq!(cut.from_month, fast[part.len()].0);
        assert_eq!(cut.by, Stopped::Budget);
    }
}
