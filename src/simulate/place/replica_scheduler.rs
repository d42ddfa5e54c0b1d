//! How Longhorn picks a node and a disk for a volume's replica as the fleet fills up over
//! time (`scheduler/replica_scheduler.go` in longhorn-manager: `ScheduleReplica`,
//! `FindDiskCandidates`, `getDiskCandidates`, `filterDisksWithMatchingReplicas`):
//!
//! - only nodes Longhorn schedules to (`ListSchedulableNodes`: Ready and Schedulable,
//!   scheduling allowed) that carry the volume's node selector, on disks that carry its
//!   disk selector and pass the storage rules (`IsSchedulableToDisk`);
//! - first a node without a replica of the volume in a zone without one, then (zone
//!   anti-affinity soft, the default) any node without one, then (node anti-affinity soft)
//!   a node that holds one, on a disk without one unless disk anti-affinity is soft; a
//!   replica marks its zone used only when its node is one Longhorn schedules to
//!   (`getCurrentNodesAndZones`);
//! - among the candidates, the one with the most room. Volumes are created over months,
//!   and the data written between them changes which disk has the most room, so near-equal
//!   candidates (within 5 %) are drawn from with a seeded draw: reproducible, and the
//!   spread of copysets a real fleet has. The replicas that replace those of a failed node
//!   are all created at once, by the version's exact rule (`replenish`).

use super::free::{Free, StorageRules};
use super::workload::Volume;
use crate::simulate::fleet::Topology;

/// The disk of node `n` a replica of `size` bytes holding `data` bytes goes on: among those
/// the storage rules allow that carry selector `sel`'s disk tags, the one with the most
/// available room (ties to the first).
pub(crate) fn best_disk(
    topo: &Topology,
    free: &Free,
    rules: &StorageRules,
    n: usize,
    (size, data, sel): (f64, f64, u32),
) -> Option<usize> {
    topo.hosts[n]
        .disks
        .iter()
        .enumerate()
        .filter(|&(d, &max)| {
            rules.fits(max, free.disk[n][d], size, data) && topo.tags.disk_ok(sel, n, d)
        })
        .max_by(|a, b| {
            (a.1 - free.disk[n][a.0].1)
                .total_cmp(&(b.1 - free.disk[n][b.0].1))
                .then(b.0.cmp(&a.0))
        })
        .map(|(d, _)| d)
}

/// A small deterministic mix of a draw number (splitmix64).
pub(crate) fn mix(draw: u64) -> u64 {
    let mut z = draw.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether Longhorn may put a new replica of a volume with selector `sel` on node `n`:
/// the node is up, Longhorn schedules to it, and it carries the selector's node tags.
pub(crate) fn node_open(topo: &Topology, alive: &[bool], sel: u32, n: usize) -> bool {
    alive[n] && !topo.no_replicas.get(n).copied().unwrap_or(false) && topo.tags.node_ok(sel, n)
}

/// The zones holding a replica of `vol` that counts: on a node that is up and that
/// Longhorn schedules to (`getCurrentNodesAndZones` looks only at schedulable nodes).
pub(crate) fn used_zones(vol: &Volume, topo: &Topology, alive: &[bool]) -> Vec<usize> {
    let mut z: Vec<usize> = vol
        .replicas
        .iter()
        .filter(|&&(n, _)| alive[n] && !topo.no_replicas.get(n).copied().unwrap_or(false))
        .map(|&(n, _)| topo.zone_of[n])
        .collect();
    z.sort_unstable();
    z.dedup();
    z
}

/// The disk of node `n` for one more replica of `vol` on a node that holds one already
/// (soft node anti-affinity): a disk without a replica of the volume first, one with a
/// replica only under soft disk anti-affinity.
fn disk_on_used_node(
    vol: &Volume,
    free: &Free,
    topo: &Topology,
    rules: &StorageRules,
    n: usize,
) -> Option<usize> {
    let holds = |d: usize| vol.replicas.contains(&(n, d));
    let ok = |d: usize| {
        rules.fits(topo.hosts[n].disks[d], free.disk[n][d], vol.size, vol.data)
            && topo.tags.disk_ok(vol.selector, n, d)
    };
    let room = |d: usize| topo.hosts[n].disks[d] - free.disk[n][d].1;
    let best = |with: bool| {
        (0..topo.hosts[n].disks.len())
            .filter(|&d| ok(d) && holds(d) == with)
            .max_by(|&a, &b| room(a).total_cmp(&room(b)).then(b.cmp(&a)))
    };
    best(false).or_else(|| if rules.disk_soft { best(true) } else { None })
}

/// The disk of node `n` for one more replica of `vol`, on a node that holds one of its
/// replicas or not.
pub(crate) fn disk_for(
    vol: &Volume,
    free: &Free,
    topo: &Topology,
    rules: &StorageRules,
    n: usize,
) -> Option<usize> {
    if vol.replicas.iter().any(|&(rn, _)| rn == n) {
        disk_on_used_node(vol, free, topo, rules, n)
    } else {
        best_disk(topo, free, rules, n, (vol.size, vol.data, vol.selector))
    }
}

/// A (node, disk) for one more replica of `vol`: Longhorn's tiers (a node in a zone
/// without a replica, then any node without one, then a node with one when node
/// anti-affinity is soft), and within a tier a seeded draw among the nodes within 5 % of
/// the most room, on the disk with the most room the storage rules allow.
pub(crate) fn pick_disk(
    vol: &Volume,
    free: &Free,
    topo: &Topology,
    rules: &StorageRules,
    alive: &[bool],
    draw: u64,
) -> Option<(usize, usize)> {
    let used = used_zones(vol, topo, alive);
    let zone_of = &topo.zone_of;
    let room = &free.node_room;
    let holds = |n: usize| vol.replicas.iter().any(|&(rn, _)| rn == n);
    let disk_for = |n: usize| disk_for(vol, free, topo, rules, n);
    // Which tier a node is in (2: a zone without a replica of the volume, 1: any other node
    // without one, 0: a node with one), or `None` when it cannot take the replica at all.
    // Until a chosen node turns out to have no fitting disk, nodes are screened by room
    // alone; after that, by the storage rules on every disk (one pass), so that a full
    // fleet costs one extra pass per replica instead of one per node passed over.
    let class = |n: usize, exact: Option<&[bool]>| -> Option<usize> {
        if !node_open(topo, alive, vol.selector, n)
            || room[n] <= vol.data
            || exact.is_some_and(|fit| !fit[n])
        {
            return None;
        }
        if holds(n) {
            (rules.zone_soft && rules.node_soft).then_some(0)
        } else if !used.contains(&zone_of[n]) {
            Some(2)
        } else {
            rules.zone_soft.then_some(1)
        }
    };
    let tops = |exact: Option<&[bool]>| {
        let mut top = [f64::NEG_INFINITY; 3];
        for (n, &r) in room.iter().enumerate() {
            if let Some(c) = class(n, exact) {
                top[c] = top[c].max(r);
            }
        }
        top
    };
    // The first look, by room alone, in one pass: each tier's most room, and its nodes
    // that were within 5 % of the most seen so far (every node within 5 % of its tier's
    // most is among them, in node order).
    let mut top = [f64::NEG_INFINITY; 3];
    let mut seen: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (n, &r) in room.iter().enumerate() {
        if let Some(c) = class(n, None) {
            if r > top[c] {
                top[c] = r;
            }
            if r >= top[c] * 0.95 {
                seen[c].push(n);
            }
        }
    }
    for want in [2, 1, 0] {
        if !top[want].is_finite() {
            continue;
        }
        let cut = top[want] * 0.95;
        let near = || seen[want].iter().copied().filter(|&n| room[n] >= cut);
        let count = near().count();
        let nth = (mix(draw) % (count as u64).max(1)) as usize;
        if let Some(n) = near().nth(nth) {
            if let Some(d) = disk_for(n) {
                return Some((n, d));
            }
            // The chosen node has no disk the storage rules allow: every node is screened
            // by them (below), from the first tier on.
            break;
        }
    }
    let mut exact: Option<Vec<bool>> = None;
    // The nodes of the tier within 5 % of its most room, in node order.
    let mut near: Vec<usize> = Vec::new();
    let mut draw = draw;
    for want in [2, 1, 0] {
        loop {
            if !top[want].is_finite() {
                break;
            }
            let cut = top[want] * 0.95;
            let fit = exact.as_deref();
            near.clear();
            near.extend((0..room.len()).filter(|&n| class(n, fit) == Some(want) && room[n] >= cut));
            let nth = (mix(draw) % (near.len() as u64).max(1)) as usize;
            let Some(&n) = near.get(nth) else {
                break;
            };
            // The chosen node's disks are checked against the storage rules.
            if let Some(d) = disk_for(n) {
                return Some((n, d));
            }
            if exact.is_some() {
                // Cannot happen: in exact mode every candidate has a fitting disk.
                break;
            }
            exact = Some((0..room.len()).map(|n| disk_for(n).is_some()).collect());
            top = tops(exact.as_deref());
            draw = draw.wrapping_add(1);
        }
    }
    None
}
