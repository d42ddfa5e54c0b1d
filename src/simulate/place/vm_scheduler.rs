//! Where the scheduler puts a VM: kube-scheduler's filter (requests after Harvester's
//! overcommit must fit, required anti-affinity keeps a cluster's control planes apart) and
//! its least-allocated score, ties to the lowest node index so runs are reproducible. The
//! score index answers the same question on large fleets without scanning every node.

use super::free::Free;
use super::workload::Vm;
use crate::simulate::fleet::Topology;

/// Nodes by the least-allocated score they have without a new VM (most free first), for
/// `pick_node_indexed`; and the range of the per-node weights the score applies.
#[derive(Debug, Default)]
pub struct ScoreIndex {
    order: Vec<usize>,
    /// Per place in `order`: where the run of nodes with the very same base score that it
    /// is in ends (within a run, nodes are in index order).
    run_end: Vec<u32>,
    base: Vec<f64>,
    min_ic: f64,
    min_im: f64,
    /// The free CPU and memory the index was built from.
    cpu: Vec<f64>,
    mem: Vec<f64>,
    /// Per request size (CPU and memory bits) asked so far: the places in `order` of the
    /// nodes whose free, as indexed, fits it. Near a full fleet most nodes fit no large
    /// VM, and a pick walks only the ones that do.
    fitting: std::sync::Mutex<Vec<Fitting>>,
}

/// Per place in `order`: the end of its run of equal base scores.
fn run_ends(order: &[usize], base: &[f64]) -> Vec<u32> {
    let mut ends = vec![0u32; order.len()];
    let mut end = order.len();
    for i in (0..order.len()).rev() {
        if i + 1 < order.len() && base[order[i]].to_bits() != base[order[i + 1]].to_bits() {
            end = i + 1;
        }
        ends[i] = u32::try_from(end).unwrap_or(u32::MAX);
    }
    ends
}

/// Nodes changed since a score index was built after which a run of picks brings it up to
/// date (`ScoreIndex::updated`: a merge over every node) rather than scoring them all
/// directly at each pick.
pub(crate) const REINDEX_AFTER: usize = 64;

/// A request size and the places in a score index's order of the nodes it fits.
type Fitting = ((u64, u64), std::sync::Arc<Vec<u32>>);

impl Clone for ScoreIndex {
    fn clone(&self) -> ScoreIndex {
        ScoreIndex {
            order: self.order.clone(),
            run_end: self.run_end.clone(),
            base: self.base.clone(),
            min_ic: self.min_ic,
            min_im: self.min_im,
            cpu: self.cpu.clone(),
            mem: self.mem.clone(),
            fitting: std::sync::Mutex::new(Vec::new()),
        }
    }
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
            run_end: run_ends(&order, &base),
            order,
            base,
            min_ic,
            min_im,
            cpu: free.cpu.clone(),
            mem: free.mem.clone(),
            fitting: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// This index after the free CPU and memory of the `changed` nodes (each once) became
    /// `free`'s: the same as building it anew from `free`, in the time of a merge (the
    /// other nodes keep their order, the changed ones are put back in theirs).
    #[must_use]
    pub(crate) fn updated(&self, topo: &Topology, free: &Free, changed: &[usize]) -> ScoreIndex {
        self.updated_among(topo, free, changed, &[])
    }

    /// `updated`, and the nodes that are down (`alive[n]` false; an empty `alive`: none)
    /// left out of the order: no VM goes there, and a pick no longer walks past them.
    #[must_use]
    pub(crate) fn updated_among(
        &self,
        topo: &Topology,
        free: &Free,
        changed: &[usize],
        alive: &[bool],
    ) -> ScoreIndex {
        let down = |n: usize| alive.get(n).is_some_and(|&up| !up);
        let mut base = self.base.clone();
        let (mut cpu, mut mem) = (self.cpu.clone(), self.mem.clone());
        let mut moved = vec![false; base.len()];
        for &n in changed {
            let (ic, im) = topo.inv_cap[n];
            base[n] = f64::midpoint(free.cpu[n] * ic, free.mem[n] * im);
            cpu[n] = free.cpu[n];
            mem[n] = free.mem[n];
            moved[n] = true;
        }
        let before = |a: usize, b: usize| base[b].total_cmp(&base[a]).then(a.cmp(&b));
        let mut back: Vec<usize> = changed.iter().copied().filter(|&n| !down(n)).collect();
        back.sort_unstable_by(|&a, &b| before(a, b));
        let mut back = back.into_iter().peekable();
        let mut order = Vec::with_capacity(self.order.len());
        for &n in &self.order {
            if moved[n] || down(n) {
                continue;
            }
            while let Some(c) = back.next_if(|&c| before(c, n).is_lt()) {
                order.push(c);
            }
            order.push(n);
        }
        order.extend(back);
        ScoreIndex {
            run_end: run_ends(&order, &base),
            order,
            base,
            min_ic: self.min_ic,
            min_im: self.min_im,
            cpu,
            mem,
            fitting: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Whether the index was built from `free` but for the nodes in `changed` (sorted).
    pub(crate) fn indexes(&self, free: &Free, changed: &[usize]) -> bool {
        self.cpu.len() == free.cpu.len()
            && (0..free.cpu.len()).all(|n| {
                changed.binary_search(&n).is_ok()
                    || (self.cpu[n].to_bits() == free.cpu[n].to_bits()
                        && self.mem[n].to_bits() == free.mem[n].to_bits())
            })
    }

    /// How many nodes' indexed free fits a request of `cpu` and `mem`; `None` when no index
    /// was built.
    pub(crate) fn fit_count(&self, cpu: f64, mem: f64) -> Option<usize> {
        self.is_built().then(|| self.fitting(cpu, mem).len())
    }

    /// The places in `order` of the nodes whose indexed free fits a request of `cpu` and
    /// `mem` (as `pick_node` filters), kept for the next pick of that size.
    fn fitting(&self, cpu: f64, mem: f64) -> std::sync::Arc<Vec<u32>> {
        let key = (cpu.to_bits(), mem.to_bits());
        let mut known = self
            .fitting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, places)) = known.iter().find(|(k, _)| *k == key) {
            return places.clone();
        }
        let places: std::sync::Arc<Vec<u32>> = std::sync::Arc::new(
            (0..self.order.len())
                .filter(|&i| {
                    let n = self.order[i];
                    self.cpu[n] >= cpu - 1e-9 && self.mem[n] >= mem - 1e-9
                })
                .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect(),
        );
        // A handful of sizes in any fleet; a fleet of many keeps the latest.
        if known.len() >= 16 {
            known.remove(0);
        }
        known.push((key, places.clone()));
        places
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
    // An unchanged node's free is the indexed one: those it does not fit are passed over.
    let fitting = index.fitting(vm.cpu_req, vm.mem_req);
    let mut k = 0;
    while let Some(&place) = fitting.get(k) {
        let n = index.order[place as usize];
        k += 1;
        if is_changed[n] {
            continue;
        }
        if let Some((bs, bn)) = best {
            let bound = index.base[n] - min_pen;
            if bound < bs - 1e-9 {
                break;
            }
            // The rest of this node's run of equal base scores comes after the best in
            // index order and scores no more than it: none of it can be chosen.
            if n > bn && bound <= bs + 0.5e-12 {
                let end = index.run_end[place as usize];
                k = fitting.partition_point(|&p| p < end);
                continue;
            }
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

#[cfg(test)]
#[path = "vm_scheduler_tests.rs"]
mod tests;
