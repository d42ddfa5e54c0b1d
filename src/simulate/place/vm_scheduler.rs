//! Where the scheduler puts a VM: kube-scheduler's filter (requests after Harvester's
//! overcommit must fit, required anti-affinity keeps a cluster's control planes apart) and
//! its least-allocated score, ties to the lowest node index so runs are reproducible. The
//! score index answers the same question on large fleets without scanning every node.

use super::free::Free;
use super::workload::Vm;
use crate::simulate::fleet::Topology;

/// Nodes by the least-allocated score they have without a new VM (most free first), for
/// `pick_node_indexed`; and the range of the per-node weights the score applies.
#[derive(Debug, Clone, Default)]
pub struct ScoreIndex {
    order: Vec<usize>,
    base: Vec<f64>,
    min_ic: f64,
    min_im: f64,
}

impl ScoreIndex {
    /// Whether an index was built (fleets of `INDEX_FROM` hosts and more).
    pub(crate) fn is_built(&self) -> bool {
        !self.base.is_empty()
    }

    pub(crate) fn new(topo: &Topology, free: &Free) -> ScoreIndex {
        let base: Vec<f64> = (0..free.cpu.len())
            .map(|n| {
                let (ic, im) = topo.inv_cap[n];
                f64::midpoint(free.cpu[n] * ic, free.mem[n] * im)
            })
            .collect();
        let mut order: Vec<usize> = (0..base.len()).collect();
        order.sort_unstable_by(|&a, &b| base[b].total_cmp(&base[a]).then(a.cmp(&b)));
        let min_ic = topo
            .inv_cap
            .iter()
            .map(|c| c.0)
            .fold(f64::INFINITY, f64::min);
        let min_im = topo
            .inv_cap
            .iter()
            .map(|c| c.1)
            .fold(f64::INFINITY, f64::min);
        ScoreIndex {
            order,
            base,
            min_ic,
            min_im,
        }
    }
}

/// `pick_node`'s choice read off a score index: the nodes changed since it was built
/// (`changed`, flagged in `is_changed`) are scored directly, the others in index order
/// until no later one can score higher (a node's score is its base score less a penalty
/// of at least the VM's requests at the smallest weights).
#[allow(clippy::too_many_arguments)]
pub(crate) fn pick_node_indexed(
    vm: &Vm,
    free: &Free,
    topo: &Topology,
    groups: &[Vec<u32>],
    extra: &[Vec<u32>],
    alive: &[bool],
    index: &ScoreIndex,
    changed: &[usize],
    is_changed: &[bool],
) -> Option<usize> {
    if index.base.len() != free.cpu.len() {
        return pick_node(vm, free, topo, groups, extra, alive);
    }
    let feasible = |n: usize| {
        alive[n]
            && free.cpu[n] >= vm.cpu_req - 1e-9
            && free.mem[n] >= vm.mem_req - 1e-9
            && !vm.group.is_some_and(|g| {
                groups[n].contains(&g) || extra.get(n).is_some_and(|e| e.contains(&g))
            })
    };
    let score = |n: usize| {
        let (ic, im) = topo.inv_cap[n];
        f64::midpoint(
            (free.cpu[n] - vm.cpu_req) * ic,
            (free.mem[n] - vm.mem_req) * im,
        )
    };
    let mut best: Option<(f64, usize)> = None;
    let consider = |best: &mut Option<(f64, usize)>, s: f64, n: usize| {
        let better = match *best {
            None => true,
            Some((bs, bn)) => s > bs + 1e-12 || (s >= bs - 1e-12 && n < bn),
        };
        if better {
            *best = Some((s, n));
        }
    };
    for &n in changed {
        if feasible(n) {
            consider(&mut best, score(n), n);
        }
    }
    let min_pen = f64::midpoint(vm.cpu_req * index.min_ic, vm.mem_req * index.min_im);
    for &n in &index.order {
        if is_changed[n] {
            continue;
        }
        if let Some((bs, _)) = best
            && index.base[n] - min_pen < bs - 1e-9
        {
            break;
        }
        if feasible(n) {
            consider(&mut best, score(n), n);
        }
    }
    best.map(|(_, n)| n)
}

/// The scheduler's choice for one VM among `alive` nodes; `extra[n]` are the groups placed
/// on node n during a scenario, on top of `groups` (empty slice: no overlay).
pub(crate) fn pick_node(
    vm: &Vm,
    free: &Free,
    topo: &Topology,
    groups: &[Vec<u32>],
    extra: &[Vec<u32>],
    alive: &[bool],
) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for n in 0..free.cpu.len() {
        if !alive[n] || free.cpu[n] < vm.cpu_req - 1e-9 || free.mem[n] < vm.mem_req - 1e-9 {
            continue;
        }
        if let Some(g) = vm.group
            && (groups[n].contains(&g) || extra.get(n).is_some_and(|e| e.contains(&g)))
        {
            continue;
        }
        let (ic, im) = topo.inv_cap[n];
        let score = f64::midpoint(
            (free.cpu[n] - vm.cpu_req) * ic,
            (free.mem[n] - vm.mem_req) * im,
        );
        if best.is_none_or(|(s, _)| score > s + 1e-12) {
            best = Some((score, n));
        }
    }
    best.map(|(_, n)| n)
}
