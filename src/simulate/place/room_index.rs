//! The nodes by the room left on their emptiest disk, for placing many replicas in a row
//! on a fleet where every node is up (`Placement`'s batch placement): `pick_disk` makes the
//! same choice with a pass over every node per replica; this index finds each tier's most
//! room, how many of its nodes are within 5 % of it, and the drawn one in node order, by
//! looking at blocks of nodes kept sorted by room instead of at every node.
//!
//! The choice is `pick_disk`'s, node for node: the same tiers, the same most room, the same
//! near nodes counted in node order and the same draw among them. Where `pick_disk` would
//! leave its first look (a volume with a selector, a chosen node without a fitting disk),
//! it is asked instead.

use super::free::{Free, StorageRules};
use super::replica_scheduler::{disk_for, mix, pick_disk};
use super::workload::Volume;
use crate::simulate::fleet::Topology;

/// Nodes per block.
const BLOCK: usize = 64;

/// Blocks of consecutive nodes, each holding its nodes that Longhorn schedules replicas to
/// with their room, most first; kept in step with `Free::node_room` by `set`.
#[derive(Debug, Clone)]
pub(crate) struct RoomIndex {
    blocks: Vec<Vec<(f64, usize)>>,
    /// Per block: the distinct zones of its nodes.
    zones: Vec<Vec<usize>>,
    /// Per tier query: each block's count of near nodes (scratch).
    counts: Vec<usize>,
}

/// Which nodes a tier holds, besides room: outside the zones holding a replica of the
/// volume, or inside them on a node without one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Out,
    In,
}

impl RoomIndex {
    pub(crate) fn new(topo: &Topology, free: &Free) -> RoomIndex {
        let hosts = topo.hosts.len();
        let mut blocks = Vec::with_capacity(hosts.div_ceil(BLOCK));
        let mut zones = Vec::with_capacity(hosts.div_ceil(BLOCK));
        for start in (0..hosts).step_by(BLOCK) {
            let end = (start + BLOCK).min(hosts);
            let mut b: Vec<(f64, usize)> = (start..end)
                .filter(|&n| !topo.no_replicas.get(n).copied().unwrap_or(false))
                .map(|n| (free.node_room[n], n))
                .collect();
            b.sort_by(|x, y| y.0.total_cmp(&x.0));
            let mut z: Vec<usize> = b.iter().map(|&(_, n)| topo.zone_of[n]).collect();
            z.sort_unstable();
            z.dedup();
            blocks.push(b);
            zones.push(z);
        }
        RoomIndex {
            counts: vec![0; blocks.len()],
            blocks,
            zones,
        }
    }

    /// Node `n` now has `room` left (nodes Longhorn does not schedule to are not held).
    pub(crate) fn set(&mut self, n: usize, room: f64) {
        let Some(b) = self.blocks.get_mut(n / BLOCK) else {
            return;
        };
        let Some(at) = b.iter().position(|&(_, m)| m == n) else {
            return;
        };
        b.remove(at);
        let to = b.partition_point(|e| e.0.total_cmp(&room).is_gt());
        b.insert(to, (room, n));
    }

    /// A (node, disk) for one more replica of `vol` on a fleet where every node is up:
    /// `pick_disk`'s choice.
    pub(crate) fn pick(
        &mut self,
        vol: &Volume,
        free: &Free,
        topo: &Topology,
        rules: &StorageRules,
        alive: &[bool],
        draw: u64,
    ) -> Option<(usize, usize)> {
        if vol.selector != 0 || self.blocks.iter().map(Vec::len).sum::<usize>() == 0 {
            return pick_disk(vol, free, topo, rules, alive, draw);
        }
        debug_assert!(alive.iter().all(|&a| a), "the index is for a fleet all up");
        let open = |n: usize| !topo.no_replicas.get(n).copied().unwrap_or(false);
        let mut held: Vec<usize> = vol.replicas.iter().map(|&(n, _)| n).collect();
        held.sort_unstable();
        held.dedup();
        let mut used: Vec<usize> = held
            .iter()
            .filter(|&&n| open(n))
            .map(|&n| topo.zone_of[n])
            .collect();
        used.sort_unstable();
        used.dedup();
        let room = &free.node_room;
        let chosen = 'tiers: {
            let ask = (topo, room.as_slice(), used.as_slice(), held.as_slice());
            if let Some(n) = self.tier(ask, Side::Out, vol.data, draw) {
                break 'tiers n;
            }
            if !rules.zone_soft {
                return None;
            }
            if let Some(n) = self.tier(ask, Side::In, vol.data, draw) {
                break 'tiers n;
            }
            if !rules.node_soft {
                return None;
            }
            // The nodes holding a replica, in node order.
            let near: Vec<usize> = held
                .iter()
                .copied()
                .filter(|&n| open(n) && room[n] > vol.data)
                .collect();
            let top = near
                .iter()
                .map(|&n| room[n])
                .fold(f64::NEG_INFINITY, f64::max);
            let cut = top * 0.95;
            let near: Vec<usize> = near.into_iter().filter(|&n| room[n] >= cut).collect();
            let nth = (mix(draw) % (near.len() as u64).max(1)) as usize;
            match near.get(nth) {
                Some(&n) => n,
                None => return None,
            }
        };
        disk_for(vol, free, topo, rules, chosen)
            .map(|d| (chosen, d))
            .or_else(|| pick_disk(vol, free, topo, rules, alive, draw))
    }

    /// The drawn node of one tier (`None` when the tier has no node with room for `data`):
    /// among its nodes within 5 % of its most room, in node order.
    fn tier(
        &mut self,
        (topo, room, used, held): (&Topology, &[f64], &[usize], &[usize]),
        side: Side,
        data: f64,
        draw: u64,
    ) -> Option<usize> {
        let takes = |n: usize| {
            let inside = used.binary_search(&topo.zone_of[n]).is_ok();
            match side {
                Side::Out => !inside,
                Side::In => inside && held.binary_search(&n).is_err(),
            }
        };
        // Each block is wholly in the tier's zones, wholly outside, or mixed.
        let whole = |zones: &[usize]| match side {
            Side::Out => zones.iter().all(|z| used.binary_search(z).is_err()),
            Side::In => zones.iter().all(|z| used.binary_search(z).is_ok()),
        };
        let none = |zones: &[usize]| match side {
            Side::Out => zones.iter().all(|z| used.binary_search(z).is_ok()),
            Side::In => zones.iter().all(|z| used.binary_search(z).is_err()),
        };
        let mut top = f64::NEG_INFINITY;
        for (b, zones) in self.blocks.iter().zip(&self.zones) {
            if none(zones) {
                continue;
            }
            for &(r, n) in b {
                if r <= data || r <= top {
                    break;
                }
                if takes(n) {
                    top = r;
                    break;
                }
            }
        }
        if !top.is_finite() {
            return None;
        }
        let cut = top * 0.95;
        let near = |r: f64| r >= cut && r > data;
        let mut total = 0;
        for (i, ((b, zones), count)) in self
            .blocks
            .iter()
            .zip(&self.zones)
            .zip(&mut self.counts)
            .enumerate()
        {
            *count = if none(zones) {
                0
            } else if whole(zones) {
                // Inside the zones, the nodes holding a replica are not in the tier.
                let skip = match side {
                    Side::Out => 0,
                    Side::In => held
                        .iter()
                        .filter(|&&n| n / BLOCK == i && room[n] >= cut && room[n] > data)
                        .filter(|&&n| !topo.no_replicas.get(n).copied().unwrap_or(false))
                        .count(),
                };
                b.partition_point(|e| near(e.0)) - skip
            } else {
                b.iter()
                    .take_while(|e| near(e.0))
                    .filter(|e| takes(e.1))
                    .count()
            };
            total += *count;
        }
        let mut nth = (mix(draw) % (total as u64).max(1)) as usize;
        for (b, &count) in self.blocks.iter().zip(&self.counts) {
            if nth >= count {
                nth -= count;
                continue;
            }
            let mut here: Vec<usize> = b
                .iter()
                .take_while(|e| near(e.0))
                .map(|e| e.1)
                .filter(|&n| takes(n))
                .collect();
            here.sort_unstable();
            return here.get(nth).copied();
        }
        None
    }
}

#[cfg(test)]
#[path = "room_index_tests.rs"]
mod tests;
