//! Placement like the real schedulers. VMs go through a kube-scheduler-like filter and
//! score: requests after Harvester's overcommit must fit, required anti-affinity keeps the
//! control-plane VMs of one cluster on different hosts, and the least-allocated node wins
//! (ties to the lowest index, so runs are reproducible). Each VM disk is a Longhorn volume
//! whose replicas go to distinct nodes (hard node anti-affinity), to new racks first (soft
//! zone anti-affinity, racks as zones), on the disk with most room, subject to Longhorn's
//! two storage rules (minimal available percentage, over-provisioning).

use super::scenario::{Platform, Pool};
use super::topology::Topology;

#[derive(Debug, Clone)]
pub struct Vm {
    pub cluster: usize,
    pub pool: String,
    /// Anti-affinity group (cluster x pool), if the pool asks for it.
    pub group: Option<u32>,
    pub vcpu: f64,
    pub mem_gib: f64,
    /// Scheduler-visible requests.
    pub cpu_req: f64,
    pub mem_req: f64,
    /// Physical memory the VM takes (its memory plus the virt-launcher overhead), GiB.
    pub mem_actual: f64,
    pub volumes: Vec<usize>,
    /// Stopped VMs hold storage but no CPU or memory, and are not restarted.
    pub running: bool,
}

#[derive(Debug, Clone)]
pub struct Volume {
    pub vm: usize,
    pub size: f64,
    pub data: f64,
    /// (node, disk) of each replica.
    pub replicas: Vec<(usize, usize)>,
    /// Attached to a running VM; Longhorn rebuilds only attached volumes by default.
    pub attached: bool,
}

/// Expand clusters of pools into VMs and volumes.
pub fn workload(clusters: &[&[Pool]], p: &Platform) -> (Vec<Vm>, Vec<Volume>) {
    let mut vms = Vec::new();
    let mut vols = Vec::new();
    let mut group = 0u32;
    for (c, pools) in clusters.iter().enumerate() {
        for pool in *pools {
            let g = pool.anti_affinity.then(|| {
                group += 1;
                group
            });
            for _ in 0..pool.count {
                let vm = vms.len();
                let volumes: Vec<usize> = pool
                    .disks_gib
                    .iter()
                    .map(|gib| {
                        let size = gib * 1024f64.powi(3);
                        vols.push(Volume {
                            vm,
                            size,
                            data: size * p.data_fill,
                            replicas: Vec::new(),
                            attached: pool.running,
                        });
                        vols.len() - 1
                    })
                    .collect();
                vms.push(Vm {
                    cluster: c,
                    pool: pool.name.clone(),
                    group: g,
                    vcpu: pool.vcpu,
                    mem_gib: pool.memory_gib,
                    cpu_req: pool.vcpu * 100.0 / p.overcommit_cpu_pct,
                    mem_req: pool.memory_gib * 100.0 / p.overcommit_memory_pct
                        + p.vm_memory_overhead_gib,
                    mem_actual: pool.memory_gib + p.vm_memory_overhead_gib,
                    volumes,
                    running: pool.running,
                });
            }
        }
    }
    (vms, vols)
}

/// Free capacity of every node; cloned per failure scenario.
#[derive(Debug, Clone)]
pub struct Free {
    pub cpu: Vec<f64>,
    pub mem: Vec<f64>,
    /// Per node, per disk: (scheduled bytes, used bytes).
    pub disk: Vec<Vec<(f64, f64)>>,
    /// Per node: the room left on its emptiest disk (kept in step with `disk`).
    pub node_room: Vec<f64>,
}

impl Free {
    /// Record a replica on (node, disk).
    pub fn add_replica(&mut self, topo: &Topology, n: usize, d: usize, vol: &Volume) {
        self.disk[n][d].0 += vol.size;
        self.disk[n][d].1 += vol.data;
        self.node_room[n] = self.room(topo, n);
    }

    /// Forget a replica on (node, disk).
    pub fn remove_replica(&mut self, topo: &Topology, n: usize, d: usize, vol: &Volume) {
        self.disk[n][d].0 -= vol.size;
        self.disk[n][d].1 -= vol.data;
        self.node_room[n] = self.room(topo, n);
    }

    /// The room left on node n's emptiest disk that takes replicas (a disk Longhorn closed
    /// to scheduling has infinite sizes scheduled and offers none).
    pub fn room(&self, topo: &Topology, n: usize) -> f64 {
        topo.hosts[n]
            .disks
            .iter()
            .zip(&self.disk[n])
            .filter(|(_, s)| s.0.is_finite())
            .map(|(max, s)| max - s.1)
            .fold(0.0, f64::max)
    }
}

/// Longhorn's storage rules for one replica on one disk.
#[derive(Debug, Clone, Copy)]
pub struct StorageRules {
    pub min_available: f64,
    pub overprovision: f64,
}

impl StorageRules {
    pub fn from(p: &Platform) -> StorageRules {
        StorageRules {
            min_available: p.minimal_available_pct / 100.0,
            overprovision: p.overcommit_storage_pct / 100.0,
        }
    }

    /// Whether a replica of `size` bytes (nominal) holding `data` bytes (actual) may go on a
    /// disk of `max` bytes that has `sched` bytes scheduled and `used` bytes used: the data
    /// must leave more than the minimal available share free, and the scheduled sizes must
    /// stay within the over-provisioning share (Longhorn's `IsSchedulableToDisk`). Placement,
    /// headroom re-homing and the rebuild model all ask this one question, per disk.
    pub fn fits(&self, max: f64, (sched, used): (f64, f64), size: f64, data: f64) -> bool {
        max > 0.0
            && max - used - data > max * self.min_available
            && sched + size <= max * self.overprovision
    }

    /// Replica data a disk can take at most under the minimal-available rule.
    pub fn data_capacity(&self, max: f64) -> f64 {
        max * (1.0 - self.min_available)
    }
}

#[derive(Clone)]
pub struct Placement {
    pub topo: Topology,
    pub vms: Vec<Vm>,
    pub volumes: Vec<Volume>,
    pub vm_node: Vec<Option<usize>>,
    pub free: Free,
    /// Anti-affinity groups present on each node (a few per node: a plain list is fastest).
    pub groups: Vec<Vec<u32>>,
    pub stranded_vms: usize,
    pub stranded_replicas: usize,
    pub rules: StorageRules,
    /// Per node: the VMs and the volumes (with a replica) it holds.
    pub vms_on: Vec<Vec<usize>>,
    pub vols_on: Vec<Vec<usize>>,
    /// Per node: physical memory of its VMs (GiB) and its virt-launcher pods.
    pub mem_actual: Vec<f64>,
    pub pods: Vec<u32>,
    /// The nodes of each rack by the room they have once everything is placed.
    pub index: RoomIndex,
    /// The nodes by their least-allocated score once everything is placed.
    pub scores: ScoreIndex,
}

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
    pub fn new(topo: &Topology, free: &Free) -> ScoreIndex {
        let base: Vec<f64> = (0..free.cpu.len())
            .map(|n| {
                let (ic, im) = topo.inv_cap[n];
                f64::midpoint(free.cpu[n] * ic, free.mem[n] * im)
            })
            .collect();
        let mut order: Vec<usize> = (0..base.len()).collect();
        order.sort_by(|&a, &b| base[b].total_cmp(&base[a]).then(a.cmp(&b)));
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
pub fn pick_node_indexed(
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
pub fn pick_node(
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

/// The disk of node `n` a replica of `size` bytes holding `data` bytes goes on: among those
/// the storage rules allow, the one with the most available room (ties to the first).
pub fn best_disk(
    topo: &Topology,
    free: &Free,
    rules: &StorageRules,
    n: usize,
    size: f64,
    data: f64,
) -> Option<usize> {
    topo.hosts[n]
        .disks
        .iter()
        .enumerate()
        .filter(|&(d, &max)| rules.fits(max, free.disk[n][d], size, data))
        .max_by(|a, b| {
            (a.1 - free.disk[n][a.0].1)
                .total_cmp(&(b.1 - free.disk[n][b.0].1))
                .then(b.0.cmp(&a.0))
        })
        .map(|(d, _)| d)
}

/// A small deterministic mix of a draw number (splitmix64).
fn mix(draw: u64) -> u64 {
    let mut z = draw.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A (node, disk) for one more replica of `vol`: not on a node that holds one, new racks
/// first, then among the disks with the most available room. Longhorn takes the disk with
/// the most usable storage; in a real fleet small differences in actual data make that
/// choice look random among near-equal candidates, so ties within 5 % are broken by a
/// seeded draw (reproducible, and it gives the spread of copysets a real fleet has).
pub fn pick_disk(
    vol: &Volume,
    free: &Free,
    topo: &Topology,
    rules: &StorageRules,
    alive: &[bool],
    draw: u64,
) -> Option<(usize, usize)> {
    // At most four replicas: their racks fit in a small array, no allocation.
    let mut used_racks = [usize::MAX; 4];
    for (k, &(n, _)) in vol.replicas.iter().take(4).enumerate() {
        used_racks[k] = topo.hosts[n].rack;
    }
    let rack_of = &topo.rack_of;
    let room = &free.node_room;
    // Which class a node is in (1: a rack without a replica of the volume, 0: the rest),
    // or `None` when it cannot take the replica at all.
    // Until a chosen node turns out to have no fitting disk, nodes are screened by room
    // alone; after that, by the storage rules on every disk (one pass), so that a full
    // fleet costs one extra pass per replica instead of one per node passed over.
    let node_fits = |n: usize| best_disk(topo, free, rules, n, vol.size, vol.data).is_some();
    let class = |n: usize, exact: Option<&[bool]>| -> Option<usize> {
        if !alive[n]
            || room[n] <= vol.data
            || vol.replicas.iter().any(|&(rn, _)| rn == n)
            || exact.is_some_and(|fit| !fit[n])
        {
            return None;
        }
        Some(usize::from(!used_racks.contains(&rack_of[n])))
    };
    let tops = |exact: Option<&[bool]>| {
        let mut top = [f64::NEG_INFINITY; 2];
        for (n, &r) in room.iter().enumerate() {
            if let Some(c) = class(n, exact) {
                top[c] = top[c].max(r);
            }
        }
        top
    };
    let mut exact: Option<Vec<bool>> = None;
    let mut top = tops(None);
    // Zone anti-affinity is soft: nodes in racks without a replica first, the rest after.
    let mut draw = draw;
    for want in [1, 0] {
        loop {
            if !top[want].is_finite() {
                break;
            }
            let cut = top[want] * 0.95;
            let fit = exact.as_deref();
            let near = |n: usize| class(n, fit) == Some(want) && room[n] >= cut;
            let count = (0..room.len()).filter(|&n| near(n)).count() as u64;
            let nth = (mix(draw) % count.max(1)) as usize;
            let Some(n) = (0..room.len()).filter(|&n| near(n)).nth(nth) else {
                break;
            };
            // The chosen node's disks are checked against the storage rules.
            if let Some(d) = best_disk(topo, free, rules, n, vol.size, vol.data) {
                return Some((n, d));
            }
            if exact.is_some() {
                // Cannot happen: in exact mode every candidate has a fitting disk.
                break;
            }
            exact = Some((0..room.len()).map(node_fits).collect());
            top = tops(exact.as_deref());
            draw = draw.wrapping_add(1);
        }
    }
    None
}

/// Fleets from this many hosts get the room and score indexes.
pub const INDEX_FROM: usize = 256;

/// The nodes of each rack sorted by room (most first), as placed: a failure scenario
/// changes the room of the few nodes that receive replicas, so the replica scheduler can
/// read the rest off these lists instead of scanning every node for every replica.
#[derive(Debug, Clone, Default)]
pub struct RoomIndex {
    by_room: Vec<Vec<(f64, usize)>>,
    pos: Vec<usize>,
    base: Vec<f64>,
}

impl RoomIndex {
    /// Whether an index was built (fleets of `INDEX_FROM` hosts and more).
    pub fn is_built(&self) -> bool {
        !self.base.is_empty()
    }

    pub fn new(topo: &Topology, free: &Free) -> RoomIndex {
        let mut by_room: Vec<Vec<(f64, usize)>> = vec![Vec::new(); topo.racks.len()];
        for (n, &r) in topo.rack_of.iter().enumerate() {
            by_room[r].push((free.node_room[n], n));
        }
        let mut pos = vec![0; topo.hosts.len()];
        for list in &mut by_room {
            list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for (i, &(_, n)) in list.iter().enumerate() {
                pos[n] = i;
            }
        }
        RoomIndex {
            by_room,
            pos,
            base: free.node_room.clone(),
        }
    }
}

/// Nodes whose room differs from the index during one scenario, and the entries of the
/// index's lists that do not count (dead or changed nodes), kept sorted by (rack, position).
#[derive(Debug, Clone)]
pub struct Dirty {
    flag: Vec<bool>,
    list: Vec<usize>,
    except: Vec<(usize, usize)>,
}

impl Dirty {
    /// Every node whose room is not the one the index holds, and the dead ones.
    pub fn of(index: &RoomIndex, topo: &Topology, free: &Free, dead: &[usize]) -> Dirty {
        let mut d = Dirty {
            flag: vec![false; free.node_room.len()],
            list: Vec::new(),
            except: Vec::new(),
        };
        if index.base.len() != free.node_room.len() {
            return d;
        }
        for &n in dead {
            d.except.push((topo.rack_of[n], index.pos[n]));
        }
        d.except.sort_unstable();
        d.except.dedup();
        for n in 0..free.node_room.len() {
            if index.base[n].to_bits() != free.node_room[n].to_bits() {
                d.mark(n, index, topo);
            }
        }
        d
    }

    /// How many nodes changed since the index was built.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn mark(&mut self, n: usize, index: &RoomIndex, topo: &Topology) {
        if !self.flag[n] {
            self.flag[n] = true;
            self.list.push(n);
            if let Some(&pos) = index.pos.get(n) {
                let e = (topo.rack_of[n], pos);
                if let Err(at) = self.except.binary_search(&e) {
                    self.except.insert(at, e);
                }
            }
        }
    }
}

/// The choice `pick_disk` describes, read off the room index: the same rules (not on a
/// node holding a replica, racks without one first, near the most room, a seeded draw
/// among the near ones, a node without a fitting disk passed over), with the near nodes in
/// index-list order. The caller re-indexes once many nodes have changed.
#[allow(clippy::too_many_arguments)]
pub fn pick_disk_indexed(
    vol: &Volume,
    free: &Free,
    topo: &Topology,
    rules: &StorageRules,
    alive: &[bool],
    dirty: &Dirty,
    index: &RoomIndex,
    draw: u64,
) -> Option<(usize, usize)> {
    let n_hosts = free.node_room.len();
    if index.base.len() != n_hosts {
        return pick_disk(vol, free, topo, rules, alive, draw);
    }
    let mut used_racks = [usize::MAX; 4];
    for (k, &(n, _)) in vol.replicas.iter().take(4).enumerate() {
        used_racks[k] = topo.rack_of[n];
    }
    let room = &free.node_room;
    let holds = |n: usize| vol.replicas.iter().any(|&(rn, _)| rn == n);
    let rejected: [usize; 0] = [];
    for want_new in [true, false] {
        let in_class = |r: usize| used_racks.contains(&r) != want_new;
        'class: {
            let skip = |n: usize, rejected: &[usize]| {
                !alive[n] || dirty.flag[n] || holds(n) || rejected.contains(&n)
            };
            let ok_dirty = |n: usize, rejected: &[usize]| {
                alive[n] && !holds(n) && !rejected.contains(&n) && room[n] > vol.data
            };
            // The most room in the class: the first clean entry of each rack's list, and
            // the changed nodes.
            let mut top = f64::NEG_INFINITY;
            for (r, list) in index.by_room.iter().enumerate() {
                if !in_class(r) {
                    continue;
                }
                for &(rm, n) in list {
                    if rm <= vol.data {
                        break;
                    }
                    if !skip(n, &rejected) {
                        top = top.max(rm);
                        break;
                    }
                }
            }
            for &n in &dirty.list {
                if in_class(topo.rack_of[n]) && ok_dirty(n, &rejected) {
                    top = top.max(room[n]);
                }
            }
            if !top.is_finite() {
                break 'class;
            }
            let cut = top * 0.95;
            let near = |rm: f64| rm >= cut && rm > vol.data;
            // Entries of the clean lists to skip: dead and changed nodes (kept by `dirty`),
            // and this volume's holders and the rejected nodes, unless already there.
            let mut own: Vec<(usize, usize)> = vol
                .replicas
                .iter()
                .map(|r| r.0)
                .chain(rejected.iter().copied())
                .map(|n| (topo.rack_of[n], index.pos[n]))
                .filter(|e| dirty.except.binary_search(e).is_err())
                .collect();
            own.sort_unstable();
            own.dedup();
            let except = &dirty.except;
            let in_prefix = |list: &[(usize, usize)], r: usize, p: usize| {
                let lo = list.partition_point(|&(er, _)| er < r);
                let hi = list.partition_point(|&(er, ep)| er < r || (er == r && ep < p));
                hi - lo
            };
            let mut counts: Vec<(usize, usize, usize)> = Vec::new(); // (rack, prefix, count)
            let mut total = 0usize;
            for (r, list) in index.by_room.iter().enumerate() {
                if !in_class(r) {
                    continue;
                }
                let p = list.partition_point(|&(rm, _)| near(rm));
                let c = p - in_prefix(except, r, p) - in_prefix(&own, r, p);
                total += c;
                counts.push((r, p, c));
            }
            let changed: Vec<usize> = dirty
                .list
                .iter()
                .copied()
                .filter(|&n| in_class(topo.rack_of[n]) && ok_dirty(n, &rejected) && near(room[n]))
                .collect();
            total += changed.len();
            if total == 0 {
                break 'class;
            }
            let mut k = (mix(draw) % total as u64) as usize;
            let mut chosen = None;
            for &(r, _, c) in &counts {
                if k < c {
                    // The k-th entry of the rack's list that is not an exception.
                    let range = |list: &[(usize, usize)]| {
                        let lo = list.partition_point(|&(er, _)| er < r);
                        let hi = list.partition_point(|&(er, _)| er <= r);
                        (lo, hi)
                    };
                    let (a, b) = range(except);
                    let (c0, c1) = range(&own);
                    // Both lists hold distinct positions; walk them merged, in order.
                    let (mut i, mut j) = (a, c0);
                    let mut idx = k;
                    loop {
                        let next = match (except[a..b].get(i - a), own[c0..c1].get(j - c0)) {
                            (Some(x), Some(y)) if x.1 <= y.1 => {
                                i += 1;
                                x.1
                            }
                            (_, Some(y)) => {
                                j += 1;
                                y.1
                            }
                            (Some(x), None) => {
                                i += 1;
                                x.1
                            }
                            (None, None) => break,
                        };
                        if next <= idx {
                            idx += 1;
                        } else {
                            break;
                        }
                    }
                    chosen = Some(index.by_room[r][idx].1);
                    break;
                }
                k -= c;
            }
            let n = chosen.unwrap_or_else(|| changed[k]);
            if let Some(d) = best_disk(topo, free, rules, n, vol.size, vol.data) {
                return Some((n, d));
            }
            // A node passed over: the full scan with the storage rules on every disk.
            return pick_disk(vol, free, topo, rules, alive, draw);
        }
    }
    None
}

impl Placement {
    /// Every host whole, the VMs where `vm_node` says (their requests not yet taken), no
    /// volume: what `build` places into and `adopt` records into.
    fn empty(topo: Topology, vms: Vec<Vm>, vm_node: Vec<Option<usize>>, p: &Platform) -> Placement {
        let free = Free {
            cpu: topo.hosts.iter().map(|h| h.cpu).collect(),
            mem: topo.hosts.iter().map(|h| h.mem_gib).collect(),
            disk: topo
                .hosts
                .iter()
                .map(|h| vec![(0.0, 0.0); h.disks.len()])
                .collect(),
            node_room: topo
                .hosts
                .iter()
                .map(|h| h.disks.iter().copied().fold(0.0, f64::max))
                .collect(),
        };
        Placement {
            groups: vec![Vec::new(); topo.hosts.len()],
            vm_node,
            topo,
            vms,
            volumes: Vec::new(),
            free,
            stranded_vms: 0,
            stranded_replicas: 0,
            rules: StorageRules::from(p),
            vms_on: Vec::new(),
            vols_on: Vec::new(),
            mem_actual: Vec::new(),
            pods: Vec::new(),
            index: RoomIndex::default(),
            scores: ScoreIndex::default(),
        }
    }

    /// Place every VM, then every volume's replicas.
    pub fn build(topo: Topology, vms: Vec<Vm>, volumes: Vec<Volume>, p: &Platform) -> Placement {
        let mut pl = Placement::empty(topo, Vec::new(), Vec::new(), p);
        pl.add_workload(vms, volumes, p);
        pl
    }

    /// A placement as it is (a running fleet's): `vm_node` says where each VM runs and each
    /// volume lists its replicas' (node, disk). Nothing is re-placed; capacity is what is left.
    pub fn adopt(
        topo: Topology,
        vms: Vec<Vm>,
        volumes: Vec<Volume>,
        vm_node: Vec<Option<usize>>,
        p: &Platform,
    ) -> Placement {
        let mut pl = Placement::empty(topo, vms, vm_node, p);
        for v in 0..pl.vms.len() {
            if let (true, Some(n)) = (pl.vms[v].running, pl.vm_node[v]) {
                let (cpu, mem, group) = (pl.vms[v].cpu_req, pl.vms[v].mem_req, pl.vms[v].group);
                pl.take(n, cpu, mem, group);
            }
        }
        for vol in &volumes {
            for &(n, d) in &vol.replicas {
                pl.free.add_replica(&pl.topo, n, d, vol);
            }
        }
        pl.volumes = volumes;
        pl.finish();
        pl
    }

    /// This placement on `topo` (the same hosts, possibly with more appended), with `vms`
    /// and `volumes` (numbered as `workload` numbers them) placed into what is left, like
    /// `build` places: what runs stays where it is.
    #[must_use]
    pub fn extend(
        &self,
        topo: Topology,
        vms: Vec<Vm>,
        volumes: Vec<Volume>,
        p: &Platform,
    ) -> Placement {
        let mut pl = self.clone();
        for h in &topo.hosts[pl.topo.hosts.len().min(topo.hosts.len())..] {
            pl.free.cpu.push(h.cpu);
            pl.free.mem.push(h.mem_gib);
            pl.free.disk.push(vec![(0.0, 0.0); h.disks.len()]);
            pl.free
                .node_room
                .push(h.disks.iter().copied().fold(0.0, f64::max));
            pl.groups.push(Vec::new());
        }
        pl.topo = topo;
        pl.add_workload(vms, volumes, p);
        pl
    }

    /// A node takes a VM's requests (and its anti-affinity group).
    fn take(&mut self, n: usize, cpu: f64, mem: f64, group: Option<u32>) {
        self.free.cpu[n] -= cpu;
        self.free.mem[n] -= mem;
        if let Some(g) = group
            && !self.groups[n].contains(&g)
        {
            self.groups[n].push(g);
        }
    }

    /// Place replicas of volume `i` until it has `r`, as Longhorn would; those that find
    /// no disk are counted stranded.
    fn top_up(&mut self, vol: &mut Volume, i: usize, r: usize, alive: &[bool]) {
        for k in vol.replicas.len()..r {
            let draw = (i as u64) << 8 | k as u64;
            match pick_disk(vol, &self.free, &self.topo, &self.rules, alive, draw) {
                Some((n, d)) => {
                    self.free.add_replica(&self.topo, n, d, vol);
                    vol.replicas.push((n, d));
                }
                None => self.stranded_replicas += 1,
            }
        }
    }

    /// Place `vms`, then `volumes`' replicas (numbered as `workload` numbers them, from
    /// zero) after what this placement holds, and index the result.
    fn add_workload(&mut self, vms: Vec<Vm>, mut volumes: Vec<Volume>, p: &Platform) {
        let (vm_off, vol_off) = (self.vms.len(), self.volumes.len());
        let group_off = self.vms.iter().filter_map(|v| v.group).max().unwrap_or(0);
        let cluster_off = self.vms.iter().map(|v| v.cluster + 1).max().unwrap_or(0);
        let alive = vec![true; self.topo.hosts.len()];
        for mut vm in vms {
            vm.group = vm.group.map(|g| g + group_off);
            vm.cluster += cluster_off;
            for v in &mut vm.volumes {
                *v += vol_off;
            }
            let node = if vm.running {
                pick_node(&vm, &self.free, &self.topo, &self.groups, &[], &alive)
            } else {
                None
            };
            match node {
                Some(n) => self.take(n, vm.cpu_req, vm.mem_req, vm.group),
                None if vm.running => self.stranded_vms += 1,
                None => {}
            }
            self.vm_node.push(node);
            self.vms.push(vm);
        }
        let r = p.replicas as usize;
        for (i, vol) in volumes.iter_mut().enumerate() {
            vol.vm += vm_off;
            self.top_up(vol, vol_off + i, r, &alive);
        }
        self.volumes.extend(volumes);
        self.finish();
    }

    /// Every volume at `r` replicas: the newest beyond `r` dropped, missing ones placed as
    /// Longhorn would (a what-if on a running fleet).
    #[must_use]
    pub fn with_replicas(&self, r: usize) -> Placement {
        let mut pl = self.clone();
        let alive = vec![true; pl.topo.hosts.len()];
        let mut volumes = std::mem::take(&mut pl.volumes);
        for (i, vol) in volumes.iter_mut().enumerate() {
            while vol.replicas.len() > r {
                if let Some((n, d)) = vol.replicas.pop() {
                    pl.free.remove_replica(&pl.topo, n, d, vol);
                }
            }
            pl.top_up(vol, i, r, &alive);
        }
        pl.volumes = volumes;
        pl.finish();
        pl
    }

    /// The per-node lists and indexes, once every VM and replica has its place (again,
    /// after VMs or replicas were moved by hand).
    pub fn finish(&mut self) {
        let pl = self;
        let hosts = pl.topo.hosts.len();
        pl.vms_on = vec![Vec::new(); hosts];
        pl.vols_on = vec![Vec::new(); hosts];
        pl.mem_actual = vec![0.0; hosts];
        pl.pods = vec![0; hosts];
        for (v, n) in pl.vm_node.iter().enumerate() {
            if let Some(n) = n {
                pl.vms_on[*n].push(v);
                pl.mem_actual[*n] += pl.vms[v].mem_actual;
                pl.pods[*n] += 1;
            }
        }
        for (i, vol) in pl.volumes.iter().enumerate() {
            for &(n, _) in &vol.replicas {
                pl.vols_on[n].push(i);
            }
        }
        // On small fleets a scan of every node is cheaper than keeping indexes.
        if hosts >= INDEX_FROM {
            pl.index = RoomIndex::new(&pl.topo, &pl.free);
            pl.scores = ScoreIndex::new(&pl.topo, &pl.free);
        }
    }

    /// Fleet-wide use of (cpu requests, memory requests, storage data) over capacity.
    pub fn utilisation(&self) -> (f64, f64, f64) {
        let (mut ac, mut am, mut fc, mut fm) = (0.0, 0.0, 0.0, 0.0);
        let (mut smax, mut sused) = (0.0, 0.0);
        for (n, h) in self.topo.hosts.iter().enumerate() {
            ac += h.cpu;
            am += h.mem_gib;
            fc += self.free.cpu[n];
            fm += self.free.mem[n];
            for (d, max) in h.disks.iter().enumerate() {
                smax += max;
                sused += self.free.disk[n][d].1;
            }
        }
        let frac = |used: f64, total: f64| if total > 0.0 { used / total } else { 0.0 };
        (frac(ac - fc, ac), frac(am - fm, am), frac(sused, smax))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::scenario::Platform;
    use crate::simulate::topology::Host;

    fn host(rack: usize, tb: f64) -> Host {
        Host {
            name: format!("h{rack}"),
            rack,
            cpu: 64.0,
            mem_gib: 256.0,
            disks: vec![tb * 1e12],
        }
    }

    #[test]
    fn zone_anti_affinity_is_soft_and_node_anti_affinity_hard() {
        // Two racks, three replicas: the third shares a rack, never a node.
        let topo = Topology::build(
            vec![host(0, 4.0), host(0, 4.0), host(1, 4.0)],
            vec!["a".into(), "b".into()],
            &[None, None],
        );
        let pools = [Pool {
            name: "w".into(),
            count: 1,
            vcpu: 2.0,
            memory_gib: 4.0,
            disks_gib: vec![100.0],
            anti_affinity: false,
            running: true,
        }];
        let p = Platform::default();
        let (vms, vols) = workload(&[&pools[..]], &p);
        let pl = Placement::build(topo, vms, vols, &p);
        let nodes: Vec<usize> = pl.volumes[0].replicas.iter().map(|r| r.0).collect();
        assert_eq!(nodes.len(), 3);
        let mut sorted = nodes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 3, "three distinct nodes: {nodes:?}");
        // The first two replicas went to different racks.
        assert_ne!(pl.topo.hosts[nodes[0]].rack, pl.topo.hosts[nodes[1]].rack);
    }

    #[test]
    fn control_planes_of_one_cluster_never_share_a_host() {
        let topo = Topology::build(
            (0..4).map(|i| host(i % 2, 4.0)).collect(),
            vec!["a".into(), "b".into()],
            &[None, None],
        );
        let pools = [Pool {
            name: "cp".into(),
            count: 3,
            vcpu: 4.0,
            memory_gib: 8.0,
            disks_gib: vec![60.0],
            anti_affinity: true,
            running: true,
        }];
        let p = Platform::default();
        let (vms, vols) = workload(&[&pools[..], &pools[..]], &p);
        let pl = Placement::build(topo, vms, vols, &p);
        for c in 0..2 {
            let mut hosts: Vec<usize> = (0..pl.vms.len())
                .filter(|&v| pl.vms[v].cluster == c)
                .map(|v| pl.vm_node[v].unwrap())
                .collect();
            hosts.sort_unstable();
            hosts.dedup();
            assert_eq!(hosts.len(), 3, "cluster {c}");
        }
    }

    #[test]
    fn the_indexed_scheduler_keeps_the_rules() {
        // Twelve nodes in four racks with uneven room; some changed after indexing, one
        // dead. Every pick is on a live node without a replica of the volume, in a rack
        // without one when such a node can take it, and within 5 % of the most room there.
        let topo = Topology::build(
            (0..12)
                .map(|i| host(i % 4, 1.0 + (i % 5) as f64 * 0.1))
                .collect(),
            vec!["a".into(), "b".into(), "c".into(), "d".into()],
            &[None, None, None, None],
        );
        let p = Platform::default();
        let (_, vols) = workload(
            &[&[Pool {
                name: "w".into(),
                count: 1,
                vcpu: 1.0,
                memory_gib: 1.0,
                disks_gib: vec![50.0],
                anti_affinity: false,
                running: true,
            }][..]],
            &p,
        );
        let rules = StorageRules::from(&p);
        let mut free = Free {
            cpu: vec![1.0; 12],
            mem: vec![1.0; 12],
            disk: vec![vec![(0.0, 0.0)]; 12],
            node_room: topo.hosts.iter().map(|h| h.disks[0]).collect(),
        };
        let index = RoomIndex::new(&topo, &free);
        let mut vol = vols[0].clone();
        free.add_replica(&topo, 3, 0, &vol);
        vol.replicas.push((3, 0));
        free.add_replica(&topo, 6, 0, &vol);
        let mut alive = vec![true; 12];
        alive[5] = false;
        let mut dirty = Dirty::of(&index, &topo, &free, &[5]);
        dirty.mark(6, &index, &topo);
        for draw in 0..500u64 {
            let (n, _) =
                pick_disk_indexed(&vol, &free, &topo, &rules, &alive, &dirty, &index, draw)
                    .unwrap();
            assert!(alive[n] && n != 3, "draw {draw}: {n}");
            let rack_of_replica = topo.rack_of[3];
            assert_ne!(
                topo.rack_of[n], rack_of_replica,
                "a rack without a replica exists"
            );
            let top = (0..12)
                .filter(|&m| alive[m] && m != 3 && topo.rack_of[m] != rack_of_replica)
                .map(|m| free.node_room[m])
                .fold(0.0, f64::max);
            assert!(free.node_room[n] >= top * 0.95, "draw {draw}: {n}");
        }
        // Every near node is drawn sometimes.
        let mut seen = std::collections::BTreeSet::new();
        for draw in 0..500u64 {
            seen.insert(
                pick_disk_indexed(&vol, &free, &topo, &rules, &alive, &dirty, &index, draw)
                    .unwrap()
                    .0,
            );
        }
        assert!(seen.len() > 1, "{seen:?}");
    }

    #[test]
    fn requests_are_taken_after_overcommit() {
        let p = Platform::default();
        let pools = [Pool {
            name: "w".into(),
            count: 1,
            vcpu: 16.0,
            memory_gib: 30.0,
            disks_gib: vec![],
            anti_affinity: false,
            running: true,
        }];
        let (vms, _) = workload(&[&pools[..]], &p);
        assert!(
            (vms[0].cpu_req - 1.0).abs() < 1e-12,
            "16 vCPU at 1600 % overcommit request one CPU"
        );
        assert!(
            (vms[0].mem_req - (20.0 + 0.25)).abs() < 1e-9,
            "30 GiB at 150 % plus overhead"
        );
    }
}
