//! One failure re-placed: the displaced VMs restarted greedily as the scheduler would, the
//! lost replicas re-homed as Longhorn would (`place::replace_lost`), and what is left; the
//! failure families (pairs, a rack plus a node, a set plus any node) named as `headroom`
//! reports them. `headroom` checks every failure domain with it; `pruned` only those its
//! bounds cannot settle.

#[cfg(test)]
use rayon::prelude::*;
use serde::Serialize;

use super::bounds::Bounds;
use crate::simulate::place::{
    BurstIndex, Free, Placement, REINDEX_AFTER, Replacement, ScoreIndex, pick_node_indexed,
    replace_lost,
};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Slack {
    /// Scheduler-visible free share of the surviving hosts after re-placement.
    pub cpu: f64,
    pub memory: f64,
    /// Free share of the surviving hosts' disks (actual data).
    pub storage: f64,
}

impl Slack {
    /// The memory slack to the ninth decimal, what scenarios are ranked by: failures that
    /// leave the same slack (identical nodes, say) tie, rather than be ordered by the
    /// rounding of the sums behind them.
    pub fn memory_rank(&self) -> f64 {
        rank_of(self.memory)
    }
}

/// A slack as it ranks (`Slack::memory_rank`).
pub(crate) fn rank_of(slack: f64) -> f64 {
    (slack * 1e9).round()
}

/// Whether the fleet survives: every VM restarted and every replica re-homed after each
/// failure that decides the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HeadroomVerdict {
    Pass,
    Fail,
}

impl HeadroomVerdict {
    pub fn from_pass(pass: bool) -> HeadroomVerdict {
        if pass {
            HeadroomVerdict::Pass
        } else {
            HeadroomVerdict::Fail
        }
    }

    pub fn passes(self) -> bool {
        self == HeadroomVerdict::Pass
    }
}

impl std::fmt::Display for HeadroomVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeadroomVerdict::Pass => "pass",
            HeadroomVerdict::Fail => "fail",
        })
    }
}

/// What kind of failure a scenario is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum Kind {
    #[serde(rename = "node")]
    Node,
    #[serde(rename = "rack")]
    Rack,
    /// A shared power feed: shown as a what-if, outside the verdict.
    #[serde(rename = "power")]
    Power,
    #[serde(rename = "pair")]
    Pair,
    #[serde(rename = "node+rack")]
    NodeAndRack,
    /// A named failure set of the scenario.
    #[serde(rename = "set")]
    Set,
}

impl Kind {
    /// Whether a failure of this kind decides the verdict.
    pub fn decides(self) -> bool {
        self != Kind::Power
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ScenarioResult {
    pub name: String,
    pub kind: Kind,
    pub failed_hosts: usize,
    #[serde(skip)]
    pub hosts: Vec<usize>,
    pub displaced: usize,
    pub stranded: usize,
    pub displaced_replicas: usize,
    pub stranded_replicas: usize,
    /// Greedy restart stranded VMs that an offline first-fit-decreasing packing places.
    pub better_packing_exists: bool,
    pub slack: Slack,
    /// Largest physical memory of VMs over a surviving host's memory after re-placement.
    pub memory_commit_peak: f64,
    /// Most virt-launcher pods on one surviving host after re-placement.
    pub vm_pods_peak: u32,
}

impl ScenarioResult {
    pub fn fails(&self) -> bool {
        self.stranded > 0 || self.stranded_replicas > 0
    }

    /// Worst first: most stranded, then least memory slack as it ranks
    /// (`Slack::memory_rank`), then by name (`pruned::family` ranks the same way).
    #[cfg(test)]
    pub(crate) fn worse(&self, other: &ScenarioResult) -> std::cmp::Ordering {
        (other.stranded + other.stranded_replicas)
            .cmp(&(self.stranded + self.stranded_replicas))
            .then(
                self.slack
                    .memory_rank()
                    .total_cmp(&other.slack.memory_rank()),
            )
            .then(self.name.cmp(&other.name))
    }
}

/// A family of combined failures summarised: how many were checked, how many fail, the
/// worst few.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Combined {
    pub kind: Kind,
    pub checked: usize,
    pub failing: usize,
    pub worst: Vec<ScenarioResult>,
}

/// A named failure set, resolved to host indices.
#[derive(Debug, Clone)]
pub struct NamedSet {
    pub name: String,
    pub hosts: Vec<usize>,
    pub plus_any_node: bool,
}

/// Which failures to check beyond every node, rack and power domain.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    pub pairs: bool,
    pub node_and_rack: bool,
    pub sets: Vec<NamedSet>,
}

fn first_fit_decreasing(pl: &Placement, alive: &[bool], displaced: &[usize]) -> bool {
    let mut free = pl.free().clone();
    let mut order = displaced.to_vec();
    order.sort_by(|&a, &b| {
        pl.vms()[b]
            .mem_req
            .total_cmp(&pl.vms()[a].mem_req)
            .then(a.cmp(&b))
    });
    let mut extra: Vec<Vec<u32>> = vec![Vec::new(); pl.topo().hosts.len()];
    'vm: for v in order {
        let vm = &pl.vms()[v];
        for (n, &up) in alive.iter().enumerate() {
            let blocked = vm
                .group
                .is_some_and(|g| pl.groups()[n].contains(&g) || extra[n].contains(&g));
            if up
                && !blocked
                && free.cpu[n] >= vm.cpu_req - 1e-9
                && free.mem[n] >= vm.mem_req - 1e-9
            {
                free.cpu[n] -= vm.cpu_req;
                free.mem[n] -= vm.mem_req;
                if let Some(g) = vm.group {
                    extra[n].push(g);
                }
                continue 'vm;
            }
        }
        return false;
    }
    true
}

/// What every scenario of one placement reads, built once: the order Longhorn ranks disks
/// in for a burst, and the per-node sums the slack and the bounds are made of.
pub(crate) struct Prepared {
    pub(crate) burst: BurstIndex,
    pub(crate) bounds: Bounds,
}

impl Prepared {
    pub(crate) fn new(pl: &Placement) -> Prepared {
        let (burst, bounds) =
            rayon::join(|| BurstIndex::new(pl.topo(), pl.free()), || Bounds::new(pl));
        Prepared { burst, bounds }
    }
}

/// Re-place what `failed` hosted.
pub fn scenario(pl: &Placement, name: &str, kind: Kind, failed: &[usize]) -> ScenarioResult {
    scenario_in(pl, &Prepared::new(pl), name, kind, failed)
}

/// The displaced VMs of one failure restarted greedily, as the scheduler would.
struct Restart {
    free: Free,
    mem_actual: Vec<f64>,
    pods: Vec<u32>,
    displaced: Vec<usize>,
    stranded: Vec<usize>,
}

fn alive_without(pl: &Placement, failed: &[usize]) -> Vec<bool> {
    let mut alive = vec![true; pl.topo().hosts.len()];
    for &f in failed {
        alive[f] = false;
    }
    alive
}

/// What restarting one failure's VMs reads and changes, kept from one failure of a
/// placement to the next (one per thread): the placement's free CPU and memory, every node
/// up, no group added. Each restart puts back what it changed, so a failure costs what it
/// displaces rather than a copy of every node.
pub(crate) struct Scratch {
    free: Free,
    alive: Vec<bool>,
    extra: Vec<Vec<u32>>,
    is_changed: Vec<bool>,
}

impl Scratch {
    pub(crate) fn new(pl: &Placement) -> Scratch {
        let n = pl.topo().hosts.len();
        Scratch {
            free: pl.free().cpu_and_memory(),
            alive: vec![true; n],
            extra: vec![Vec::new(); n],
            is_changed: vec![false; n],
        }
    }
}

/// The VMs `failed` hosted, in index order.
fn displaced_by(pl: &Placement, failed: &[usize]) -> Vec<usize> {
    let mut displaced: Vec<usize> = failed
        .iter()
        .flat_map(|&f| pl.vms_on()[f].iter().copied())
        .collect();
    if failed.len() > 1 {
        displaced.sort_unstable();
        displaced.dedup();
    }
    displaced
}

/// The node each of `displaced` restarts on, greedily as the scheduler would, on what is
/// `free` among the `alive` nodes (`extra` the groups placed during the failure,
/// `is_changed` all false): `placed(vm, node)` for each VM placed, the nodes whose free
/// changed pushed to `touched`; returns the VMs that found none. `is_changed` is all
/// false again after.
#[allow(clippy::too_many_arguments)]
fn restart_onto(
    pl: &Placement,
    alive: &[bool],
    displaced: &[usize],
    free: &mut Free,
    extra: &mut [Vec<u32>],
    is_changed: &mut [bool],
    touched: &mut Vec<usize>,
    mut placed: impl FnMut(usize, usize),
) -> Vec<usize> {
    let mut stranded = Vec::new();
    let indexed = pl.scores().is_built();
    // Hosts whose free CPU and memory changed, and the score index, rebuilt once many have.
    let mut changed: Vec<usize> = Vec::new();
    // Many VMs to place (a rack's): first an index without the nodes that are down, so
    // that no pick walks past them.
    let mut local_scores: Option<ScoreIndex> = (indexed && displaced.len() > REINDEX_AFTER)
        .then(|| pl.scores().updated_among(pl.topo(), free, &[], alive));
    for &v in displaced {
        let vm = &pl.vms()[v];
        if indexed && changed.len() > REINDEX_AFTER {
            let from = local_scores.as_ref().unwrap_or(pl.scores());
            local_scores = Some(from.updated_among(pl.topo(), free, &changed, alive));
            for c in changed.drain(..) {
                is_changed[c] = false;
            }
        }
        let scores = local_scores.as_ref().unwrap_or(pl.scores());
        match pick_node_indexed(
            vm,
            free,
            pl.topo(),
            pl.groups(),
            extra,
            alive,
            scores,
            &changed,
            is_changed,
        ) {
            Some(h) => {
                if !is_changed[h] {
                    is_changed[h] = true;
                    changed.push(h);
                }
                touched.push(h);
                free.cpu[h] -= vm.cpu_req;
                free.mem[h] -= vm.mem_req;
                placed(v, h);
                if let Some(g) = vm.group {
                    extra[h].push(g);
                }
            }
            None => stranded.push(v),
        }
    }
    for c in changed {
        is_changed[c] = false;
    }
    stranded
}

/// The VMs `failed` hosted restarted greedily on what is `free`, as the scheduler would.
fn restart(pl: &Placement, alive: &[bool], failed: &[usize], mut free: Free) -> Restart {
    let n = pl.topo().hosts.len();
    let mut mem_actual = pl.mem_actual().to_vec();
    let mut pods = pl.pods().to_vec();
    let displaced = displaced_by(pl, failed);
    let mut extra: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut is_changed = vec![false; n];
    let stranded = restart_onto(
        pl,
        alive,
        &displaced,
        &mut free,
        &mut extra,
        &mut is_changed,
        &mut Vec::new(),
        |v, h| {
            mem_actual[h] += pl.vms()[v].mem_actual;
            pods[h] += 1;
        },
    );
    Restart {
        free,
        mem_actual,
        pods,
        displaced,
        stranded,
    }
}

/// What stranded, summed as `Bounds::share` takes it: VMs' CPU and memory requests, then
/// the data of the replicas that found no disk.
fn stranded_sums(pl: &Placement, vms: &[usize], replicas: &[Replacement]) -> [f64; 3] {
    let mut lost = [0.0; 3];
    for &v in vms {
        lost[0] += pl.vms()[v].cpu_req;
        lost[1] += pl.vms()[v].mem_req;
    }
    for r in replicas.iter().filter(|r| r.target.is_none()) {
        lost[2] += pl.volumes()[r.volume].data;
    }
    lost
}

/// How many VMs and replicas a failure strands, and its slack, as `scenario_in` reports
/// them; re-placing only the VMs when the bounds prove the replicas are re-homed, and the
/// replicas only when they prove the VMs restart (`Bounds::survives_parts`).
pub(crate) fn judge(
    pl: &Placement,
    prep: &Prepared,
    failed: &[usize],
    scratch: &mut Scratch,
) -> (usize, [f64; 3]) {
    let (vms_ok, reps_ok) = prep.bounds.survives_parts(failed);
    let vms_ok = vms_ok || restart_fits(pl, prep, failed);
    if vms_ok && reps_ok {
        return (0, prep.bounds.share(failed, [0.0; 3]));
    }
    for &f in failed {
        scratch.alive[f] = false;
    }
    let stranded = if vms_ok {
        Vec::new()
    } else {
        let Scratch {
            free,
            alive,
            extra,
            is_changed,
        } = scratch;
        let mut touched = Vec::new();
        let stranded = restart_onto(
            pl,
            alive,
            &displaced_by(pl, failed),
            free,
            extra,
            is_changed,
            &mut touched,
            |_, _| {},
        );
        for h in touched {
            free.cpu[h] = pl.free().cpu[h];
            free.mem[h] = pl.free().mem[h];
            extra[h].clear();
        }
        stranded
    };
    let mut lost_replicas = if reps_ok {
        Vec::new()
    } else {
        replace_lost(
            pl,
            &scratch.alive,
            failed,
            &prep.burst,
            &mut pl.free().clone(),
        )
    };
    for &f in failed {
        scratch.alive[f] = true;
    }
    lost_replicas.retain(|r| r.target.is_none());
    let lost = stranded_sums(pl, &stranded, &lost_replicas);
    (
        stranded.len() + lost_replicas.len(),
        prep.bounds.share(failed, lost),
    )
}

/// Whether every VM `failed` hosted surely restarts, from the nodes that fit the largest
/// of them: each node that fits it takes any of them, a VM placed takes at most one such
/// node out of the count, and at most `Bounds::vm_closed` are closed to a VM by its
/// group; so with as many such nodes up as VMs to place plus those, none strands. Read
/// off the score index (large fleets), in the time of the displaced VMs alone.
fn restart_fits(pl: &Placement, prep: &Prepared, failed: &[usize]) -> bool {
    let displaced = displaced_by(pl, failed);
    let (mut cpu, mut mem) = (0.0f64, 0.0f64);
    for &v in &displaced {
        cpu = cpu.max(pl.vms()[v].cpu_req);
        mem = mem.max(pl.vms()[v].mem_req);
    }
    let Some(fit) = pl.scores().fit_count(cpu, mem) else {
        return false;
    };
    let down = failed
        .iter()
        .filter(|&&f| pl.free().cpu[f] >= cpu - 1e-9 && pl.free().mem[f] >= mem - 1e-9)
        .count();
    fit.saturating_sub(down) >= displaced.len() + prep.bounds.vm_closed()
}

/// `scenario` with what the placement's scenarios share built once for many of them.
pub(crate) fn scenario_in(
    pl: &Placement,
    prep: &Prepared,
    name: &str,
    kind: Kind,
    failed: &[usize],
) -> ScenarioResult {
    scenario_with(pl, prep, (name, kind, failed), true)
}

/// `scenario_in` with every lost replica re-placed, even where the bounds prove they all
/// find a disk: what the shortcut is tested against.
#[cfg(test)]
pub(crate) fn scenario_in_whole(
    pl: &Placement,
    prep: &Prepared,
    name: &str,
    kind: Kind,
    failed: &[usize],
) -> ScenarioResult {
    scenario_with(pl, prep, (name, kind, failed), false)
}

/// Replicas the `failed` nodes held (each volume's, counted once per replica there).
fn replicas_on(pl: &Placement, failed: &[usize]) -> usize {
    pl.volumes_on(failed)
        .iter()
        .map(|&v| {
            pl.volumes()[v]
                .replicas
                .iter()
                .filter(|(h, _)| failed.contains(h))
                .count()
        })
        .sum()
}

/// `scenario_in`; with `prove`, the lost replicas are not re-placed when the bounds prove
/// every one finds a disk (`Bounds::survives_parts`): none strands, each is displaced, and
/// nothing the report shows depends on where they went.
fn scenario_with(
    pl: &Placement,
    prep: &Prepared,
    (name, kind, failed): (&str, Kind, &[usize]),
    prove: bool,
) -> ScenarioResult {
    let alive = alive_without(pl, failed);
    let Restart {
        mut free,
        mem_actual,
        pods,
        displaced,
        stranded,
    } = restart(pl, &alive, failed, pl.free().clone());
    let better_packing_exists =
        !stranded.is_empty() && first_fit_decreasing(pl, &alive, &displaced);
    // Longhorn re-homes each lost replica onto a node that does not hold the volume. Detached
    // volumes are re-homed too: Longhorn waits until they attach, but the room must exist.
    let re_homed = prove && prep.bounds.survives_parts(failed).1;
    let placed = if re_homed {
        Vec::new()
    } else {
        replace_lost(pl, &alive, failed, &prep.burst, &mut free)
    };
    let displaced_replicas = if re_homed {
        replicas_on(pl, failed)
    } else {
        placed.len()
    };
    let stranded_replicas = placed.iter().filter(|r| r.target.is_none()).count();
    let (mut commit, mut pods_peak) = (0.0f64, 0u32);
    for (h, host) in pl.topo().hosts.iter().enumerate() {
        if !alive[h] {
            continue;
        }
        if host.mem_gib > 0.0 {
            commit = commit.max(mem_actual[h] / host.mem_gib);
        }
        pods_peak = pods_peak.max(pods[h]);
    }
    // The slack from the sums before the failure and what stranded: the survivors' free
    // space after re-placement, whichever nodes took what was placed.
    let [cpu, memory, storage] = prep
        .bounds
        .share(failed, stranded_sums(pl, &stranded, &placed));
    ScenarioResult {
        name: name.to_string(),
        kind,
        failed_hosts: failed.len(),
        hosts: failed.to_vec(),
        displaced: displaced.len(),
        stranded: stranded.len(),
        displaced_replicas,
        stranded_replicas,
        better_packing_exists,
        slack: Slack {
            cpu,
            memory,
            storage,
        },
        memory_commit_peak: commit,
        vm_pods_peak: pods_peak,
    }
}

/// `combined` by re-placing every scenario: the plain computation the pruned one is
/// tested against.
#[cfg(test)]
pub(crate) fn combined_plain(
    pl: &Placement,
    prep: &Prepared,
    kind: Kind,
    sets: &[(String, Vec<usize>)],
    keep: usize,
) -> Combined {
    let checked = sets.len();
    let mut all: Vec<ScenarioResult> = sets
        .par_iter()
        .map(|(name, hosts)| scenario_in(pl, prep, name, kind, hosts))
        .collect();
    let failing = all.iter().filter(|s| s.fails()).count();
    all.sort_by(ScenarioResult::worse);
    all.truncate(keep);
    Combined {
        kind,
        checked,
        failing,
        worst: all,
    }
}

/// The kind of a failure domain, by its name (`Topology::failure_domains`).
pub(crate) fn domain_kind(name: &str) -> Kind {
    if name.starts_with("node ") {
        Kind::Node
    } else if name.starts_with("rack ") {
        Kind::Rack
    } else {
        Kind::Power
    }
}

/// The worst scenarios a family of combined failures keeps.
pub(crate) const KEEP_WORST: usize = 10;
