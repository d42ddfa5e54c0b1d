//! How Longhorn picks a node and a disk for a replica: distinct nodes (hard node
//! anti-affinity), new racks first (soft zone anti-affinity, racks as zones), the disk with
//! the most room that the storage rules allow. The room index answers the same question on
//! large fleets without scanning every node.

use super::free::{Free, StorageRules};
use super::workload::Volume;
use crate::simulate::fleet::Topology;

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
