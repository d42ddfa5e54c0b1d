//! Where Longhorn puts the replicas that replace those a failure took. After
//! `replica-replenishment-wait-interval` every degraded attached volume creates its
//! replacement within seconds of the others, and the replica gets its node and disk at
//! creation (`controller/volume_controller.go` `replenishReplicas` -> `createReplica`;
//! `scheduler/replica_scheduler.go` `ScheduleReplica`), never looking at rebuild slots.
//!
//! The candidates are `pick_disk`'s (schedulable nodes with the selectors' tags, the
//! storage rules per disk, `getDiskCandidates`'s tiers: a node without a replica in a zone
//! without one, then any node without one under soft zone anti-affinity, then a node with
//! one under soft node anti-affinity). A replica on a node Longhorn no longer schedules to,
//! the failed one included, does not mark its zone used (`getCurrentNodesAndZones`), so
//! with three replicas in three zones the replacement goes back to the lost node's zone.
//! Among the candidates the version's rule decides, exactly:
//!
//! - up to v1.10, `getDiskWithMostUsableStorage`: the disk with the most
//!   `storageAvailable - storageReserved`. The replicas created in the burst hold no data
//!   yet, so they do not lower it, and every replacement goes to the same disk until the
//!   storage rules refuse it (longhorn/longhorn#12587 reports this pile-up). Exact ties are
//!   drawn from, as Go's map order does;
//! - from v1.11, `getDiskWithMostBalanceScore` (`selectBestNode`, then `selectBestDisk`):
//!   the node whose usable space (`available - reserved - scheduled`, summed over its
//!   candidate disks) after taking the replica leaves `(max - min) / mean` over the
//!   candidate nodes smallest, then the disk on it by the same score. `storageScheduled`
//!   counts the new replicas at once, so the burst spreads. When no node has room for the
//!   replica's size, Longhorn takes an arbitrary candidate: a seeded draw here.
//!
//! The storage rules are checked with the new replicas' data counted at once (Longhorn
//! reads `storageAvailable`, which they lower only as they fill), so no disk is filled past
//! its minimal-available share.

use super::free::{DiskChoice, Free};
use super::placement::Placement;
use super::replica_scheduler::{mix, node_open, used_zones};
use super::workload::Volume;
use crate::simulate::fleet::Topology;

/// Every disk of the fleet by its available space before the failure (most first): the
/// order Longhorn up to v1.10 ranks disks in for the whole burst.
#[derive(Debug, Clone, Default)]
pub(crate) struct BurstIndex {
    order: Vec<(f64, u32, u32)>,
    /// Per node, per disk: its position in `order`.
    pos: Vec<Vec<u32>>,
}

impl BurstIndex {
    pub(crate) fn new(topo: &Topology, base: &Free) -> BurstIndex {
        let mut order: Vec<(f64, u32, u32)> = Vec::new();
        for (n, h) in topo.hosts.iter().enumerate() {
            for (d, &max) in h.disks.iter().enumerate() {
                let used = base.disk.get(n).and_then(|x| x.get(d)).map_or(0.0, |x| x.1);
                order.push((max - used, n as u32, d as u32));
            }
        }
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
        let mut pos: Vec<Vec<u32>> = topo.hosts.iter().map(|h| vec![0; h.disks.len()]).collect();
        for (i, &(_, n, d)) in order.iter().enumerate() {
            pos[n as usize][d as usize] = i as u32;
        }
        BurstIndex { order, pos }
    }
}

/// One replica the failure took and where its replacement goes (`None`: nowhere).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replacement {
    pub(crate) volume: usize,
    pub(crate) target: Option<(usize, usize)>,
}

/// The state one burst is decided in: the fleet before the failure (`base`, whose
/// available space Longhorn up to v1.10 ranks by), what is up, and which zones still have
/// a node that takes replicas.
pub(crate) struct Burst<'a> {
    pub(crate) pl: &'a Placement,
    pub(crate) alive: &'a [bool],
    pub(crate) index: &'a BurstIndex,
    zone_open: Vec<bool>,
    /// Positions of `index` no replica of the burst can go to (closed node, or no room for
    /// the smallest replica of the burst; room only shrinks during a burst), skipped by
    /// `most_available`: `None` when not kept.
    closed: Option<std::cell::RefCell<Closed>>,
}

/// Positions of a burst index known closed, as a skip list: `next[i]` is `i` when open,
/// else a later position to look from (path-compressed); `next[len]` ends it.
struct Closed {
    next: Vec<u32>,
    /// The smallest size and data of the burst's replicas.
    least: (f64, f64),
}

impl Closed {
    /// The first open position from `i`.
    fn open_from(&mut self, i: usize) -> usize {
        let mut r = i;
        while self.next[r] as usize != r {
            r = self.next[r] as usize;
        }
        let mut j = i;
        while self.next[j] as usize != j {
            let t = self.next[j] as usize;
            self.next[j] = r as u32;
            j = t;
        }
        r
    }
}

impl<'a> Burst<'a> {
    pub(crate) fn new(pl: &'a Placement, alive: &'a [bool], index: &'a BurstIndex) -> Burst<'a> {
        let mut zone_open = vec![false; pl.topo().zones.len()];
        for n in 0..pl.topo().hosts.len() {
            if node_open(pl.topo(), alive, 0, n) {
                zone_open[pl.topo().zone_of[n]] = true;
            }
        }
        Burst {
            pl,
            alive,
            index,
            zone_open,
            closed: None,
        }
    }

    /// `new`, keeping track of the disks no replica of sizes from `least` (size, data)
    /// can go to, starting from `free`.
    fn with_closed(
        pl: &'a Placement,
        alive: &'a [bool],
        index: &'a BurstIndex,
        free: &Free,
        least: (f64, f64),
    ) -> Burst<'a> {
        let mut b = Burst::new(pl, alive, index);
        let len = index.order.len();
        let mut closed = Closed {
            next: (0..=len as u32).collect(),
            least,
        };
        for (i, &(_, n, d)) in index.order.iter().enumerate() {
            if b.full(free, &closed, n as usize, d as usize) {
                closed.next[i] = i as u32 + 1;
            }
        }
        b.closed = Some(std::cell::RefCell::new(closed));
        b
    }

    /// Whether no replica of the burst can go to disk `d` of node `n` any more: its node
    /// takes no replica, or the smallest replica does not fit (`StorageRules::fits` only
    /// refuses more as sizes and data grow).
    fn full(&self, free: &Free, closed: &Closed, n: usize, d: usize) -> bool {
        let topo = &self.pl.topo();
        !node_open(topo, self.alive, 0, n)
            || !self.pl.rules().fits(
                topo.hosts[n].disks[d],
                free.disk[n][d],
                closed.least.0,
                closed.least.1,
            )
    }

    /// Disk `d` of node `n` took a replica: close it if it is now full.
    fn took(&self, free: &Free, n: usize, d: usize) {
        if let Some(c) = &self.closed {
            let mut c = c.borrow_mut();
            if self.full(free, &c, n, d) {
                let i = self.index.pos[n][d] as usize;
                c.next[i] = i as u32 + 1;
            }
        }
    }

    /// Longhorn's tier for a new replica of `vol` on disk `d` of node `n` (0 best), or
    /// `None` when it may not go there.
    fn tier(&self, vol: &Volume, free: &Free, used: &[usize], n: usize, d: usize) -> Option<u8> {
        let topo = self.pl.topo();
        let rules = self.pl.rules();
        if !node_open(topo, self.alive, vol.selector, n)
            || !topo.tags.disk_ok(vol.selector, n, d)
            || !rules.fits(topo.hosts[n].disks[d], free.disk[n][d], vol.size, vol.data)
        {
            return None;
        }
        if vol.replicas.iter().any(|&(h, _)| h == n) {
            if !(rules.zone_soft && rules.node_soft) {
                return None;
            }
            // A disk without a replica of the volume first; one with a replica only under
            // soft disk anti-affinity (`filterDisksWithMatchingReplicas`).
            if vol.replicas.contains(&(n, d)) {
                rules.disk_soft.then_some(3)
            } else {
                Some(2)
            }
        } else if !used.contains(&topo.zone_of[n]) {
            Some(0)
        } else {
            rules.zone_soft.then_some(1)
        }
    }

    /// The (node, disk) of the replacement of one lost replica of `vol`, given `free` (the
    /// fleet with the burst's earlier replacements on it).
    pub(crate) fn pick(&self, vol: &Volume, free: &Free, draw: u64) -> Option<(usize, usize)> {
        let used = used_zones(vol, self.pl.topo(), self.alive);
        match self.pl.rules().choice {
            DiskChoice::MostAvailable => self.most_available(vol, free, &used, draw),
            DiskChoice::BalanceScore => self.balance_score(vol, free, &used, draw),
        }
    }

    /// The best tier's disks with the most available space before the burst; exact ties
    /// drawn from.
    fn most_available(
        &self,
        vol: &Volume,
        free: &Free,
        used: &[usize],
        draw: u64,
    ) -> Option<(usize, usize)> {
        // The best tier any disk can be in: 0 if a zone without a replica has a node that
        // takes replicas; else 1.
        let best_possible = u8::from(
            !self
                .zone_open
                .iter()
                .enumerate()
                .any(|(z, &open)| open && !used.contains(&z)),
        );
        let mut best: Option<(u8, f64)> = None;
        let mut tied: Vec<(usize, usize)> = Vec::new();
        let mut closed = self.closed.as_ref().map(std::cell::RefCell::borrow_mut);
        let mut i = 0;
        loop {
            // Closed disks would give no tier: skipping them changes nothing.
            if let Some(c) = closed.as_mut() {
                i = c.open_from(i);
            }
            let Some(&(key, n, d)) = self.index.order.get(i) else {
                break;
            };
            i += 1;
            if let Some((bt, bk)) = best
                && key < bk
                && bt <= best_possible
            {
                break;
            }
            let (n, d) = (n as usize, d as usize);
            let Some(t) = self.tier(vol, free, used, n, d) else {
                continue;
            };
            match best {
                Some((bt, bk)) if t > bt || (t == bt && key < bk) => {}
                Some((bt, bk)) if t == bt && key.to_bits() == bk.to_bits() => tied.push((n, d)),
                _ => {
                    best = Some((t, key));
                    tied.clear();
                    tied.push((n, d));
                }
            }
        }
        if tied.is_empty() {
            return None;
        }
        Some(tied[(mix(draw) % tied.len() as u64) as usize])
    }

    /// `selectBestNode` then `selectBestDisk` over the best tier's disks.
    fn balance_score(
        &self,
        vol: &Volume,
        free: &Free,
        used: &[usize],
        draw: u64,
    ) -> Option<(usize, usize)> {
        let topo = self.pl.topo();
        let base = self.pl.free();
        let mut cands: Vec<(usize, usize)> = Vec::new();
        let mut best_t = u8::MAX;
        for (n, h) in topo.hosts.iter().enumerate() {
            for d in 0..h.disks.len() {
                if let Some(t) = self.tier(vol, free, used, n, d) {
                    if t < best_t {
                        best_t = t;
                        cands.clear();
                    }
                    if t == best_t {
                        cands.push((n, d));
                    }
                }
            }
        }
        if cands.is_empty() {
            return None;
        }
        if cands.len() == 1 {
            return Some(cands[0]);
        }
        // Usable: available before the burst less what is scheduled now (the new replicas
        // count in storageScheduled at once), never below zero.
        let usable = |n: usize, d: usize| {
            (topo.hosts[n].disks[d] - base.disk[n][d].1 - free.disk[n][d].0).max(0.0)
        };
        let mut nodes: Vec<(usize, f64)> = Vec::new();
        for &(n, d) in &cands {
            match nodes.last_mut() {
                Some((last, u)) if *last == n => *u += usable(n, d),
                _ => nodes.push((n, usable(n, d))),
            }
        }
        let pick_min = |vals: &[f64]| -> Option<usize> {
            let best = best_balance(vals, vol.size)?;
            Some(best[(mix(draw) % best.len() as u64) as usize])
        };
        let node_vals: Vec<f64> = nodes.iter().map(|x| x.1).collect();
        let fallback = || Some(cands[(mix(draw ^ 0x5EED) % cands.len() as u64) as usize]);
        let Some(i) = pick_min(&node_vals) else {
            return fallback();
        };
        let n = nodes[i].0;
        let disks: Vec<usize> = cands.iter().filter(|c| c.0 == n).map(|c| c.1).collect();
        let disk_vals: Vec<f64> = disks.iter().map(|&d| usable(n, d)).collect();
        match pick_min(&disk_vals) {
            Some(j) => Some((n, disks[j])),
            None => fallback(),
        }
    }
}

/// The entries `i` with `vals[i] >= size` whose subtraction of `size` leaves
/// `(max - min) / mean` smallest (`computeBalanceScoreFromUsableStorage`), all of them
/// when tied; `None` when no entry has room or every score is undefined (mean <= 0).
pub(crate) fn best_balance(vals: &[f64], size: f64) -> Option<Vec<usize>> {
    let k = vals.len();
    if k == 0 {
        return None;
    }
    // The two largest and two smallest values, so each trial costs O(1).
    let (mut max1, mut max2, mut min1, mut min2) = (
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::INFINITY,
    );
    let (mut imax, mut imin) = (usize::MAX, usize::MAX);
    let mut sum = 0.0;
    for (i, &v) in vals.iter().enumerate() {
        sum += v;
        if v > max1 {
            max2 = max1;
            max1 = v;
            imax = i;
        } else if v > max2 {
            max2 = v;
        }
        if v < min1 {
            min2 = min1;
            min1 = v;
            imin = i;
        } else if v < min2 {
            min2 = v;
        }
    }
    let mean = (sum - size) / k as f64;
    if mean <= 0.0 {
        return None;
    }
    let mut best = f64::INFINITY;
    let mut out = Vec::new();
    for (i, &v) in vals.iter().enumerate() {
        if v < size {
            continue;
        }
        let after = v - size;
        let others_max = if i == imax { max2 } else { max1 };
        let others_min = if i == imin { min2 } else { min1 };
        let hi = after.max(others_max);
        let lo = after.min(others_min);
        let score = (hi - lo) / mean;
        if score < best - 1e-12 {
            best = score;
            out.clear();
            out.push(i);
        } else if (score - best).abs() <= 1e-12 {
            out.push(i);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The replacements of every replica on the `failed` hosts, in the order Longhorn creates
/// them: attached volumes first (they replenish together after the wait), then detached
/// ones (replenished when they attach; their room must exist too), each in volume order.
/// `free` starts as the placement's and ends with the replacements on it.
pub(crate) fn replace_lost(
    pl: &Placement,
    alive: &[bool],
    failed: &[usize],
    index: &BurstIndex,
    free: &mut Free,
) -> Vec<Replacement> {
    replace_lost_skipping(pl, alive, failed, index, free, true)
}

/// `replace_lost`; with `skip`, the disks no replica of the burst can go to are skipped
/// (`Burst::with_closed`), which changes no answer (tested against the plain scan).
fn replace_lost_skipping(
    pl: &Placement,
    alive: &[bool],
    failed: &[usize],
    index: &BurstIndex,
    free: &mut Free,
    skip: bool,
) -> Vec<Replacement> {
    let mut affected: Vec<usize> = failed
        .iter()
        .flat_map(|&f| pl.vols_on()[f].iter().copied())
        .collect();
    affected.sort_unstable();
    affected.dedup();
    affected.sort_by_key(|&v| !pl.volumes()[v].attached);
    let least = affected
        .iter()
        .fold((f64::INFINITY, f64::INFINITY), |(s, d), &v| {
            (s.min(pl.volumes()[v].size), d.min(pl.volumes()[v].data))
        });
    let burst = if skip
        && pl.rules().choice == DiskChoice::MostAvailable
        && index.pos.len() == pl.topo().hosts.len()
    {
        Burst::with_closed(pl, alive, index, free, least)
    } else {
        Burst::new(pl, alive, index)
    };
    let mut out = Vec::new();
    for vi in affected {
        let mut v = pl.volumes()[vi].clone();
        let lost = v.replicas.iter().filter(|&&(h, _)| !alive[h]).count();
        for k in 0..lost {
            let draw = (vi as u64) << 8 | k as u64;
            let target = burst.pick(&v, free, draw);
            if let Some((h, d)) = target {
                free.add_replica(pl.topo(), h, d, &v);
                burst.took(free, h, d);
                v.replicas.push((h, d));
            }
            out.push(Replacement { volume: vi, target });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skipping the disks no replica of a burst can go to re-homes every replica where
    /// the plain scan does, for every node and rack failure of fleets filled from a
    /// little to past full, with volumes of two sizes.
    #[test]
    fn skipping_closed_disks_changes_no_replacement() {
        use crate::simulate::fleet::Host;
        use crate::simulate::place::workload;
        use crate::simulate::scenario::{Platform, Pool};
        let hosts = (0..12)
            .map(|i| Host {
                name: format!("n{i}"),
                rack: i % 3,
                cpu: 64.0,
                mem_gib: 512.0,
                disks: vec![1.5e12 + (i % 4) as f64 * 2e11, 9e11],
            })
            .collect();
        let topo = Topology::build(
            hosts,
            vec!["a".into(), "b".into(), "c".into()],
            &[None, None, None],
        );
        let pools = [Pool {
            name: "w".into(),
            count: 3,
            vcpu: 4.0,
            memory_gib: 8.0,
            disks_gib: vec![50.0, 400.0],
            anti_affinity: false,
            running: true,
        }];
        let p = Platform::default();
        let mut compared = 0;
        let mut stranded = 0;
        for clusters in [10, 40, 80, 120] {
            let list: Vec<&[Pool]> = std::iter::repeat_n(&pools[..], clusters).collect();
            let (vms, vols) = workload(&list, &p);
            let pl = Placement::build(topo.clone(), vms, vols, &p);
            let index = BurstIndex::new(pl.topo(), pl.free());
            for (_, failed) in pl.topo().failure_domains() {
                let mut alive = vec![true; pl.topo().hosts.len()];
                for &f in &failed {
                    alive[f] = false;
                }
                let (mut a, mut b) = (pl.free().clone(), pl.free().clone());
                let fast = replace_lost_skipping(&pl, &alive, &failed, &index, &mut a, true);
                let plain = replace_lost_skipping(&pl, &alive, &failed, &index, &mut b, false);
                let key =
                    |r: &[Replacement]| r.iter().map(|x| (x.volume, x.target)).collect::<Vec<_>>();
                assert_eq!(key(&fast), key(&plain), "{clusters} clusters, {failed:?}");
                assert_eq!(format!("{:?}", a.disk), format!("{:?}", b.disk));
                compared += fast.len();
                stranded += fast.iter().filter(|r| r.target.is_none()).count();
            }
        }
        assert!(compared > 1000, "{compared} replacements compared");
        assert!(stranded > 0, "the fullest fleet strands replicas");
    }

    #[test]
    fn the_balance_score_takes_the_node_with_most_usable_space() {
        // Usable 10, 7, 4; a replica of 2: taking it from 10 leaves (8, 7, 4): range 4;
        // from 7: (10, 5, 4): 6; from 4: (10, 7, 2): 8.
        assert_eq!(best_balance(&[10.0, 7.0, 4.0], 2.0), Some(vec![0]));
        // A replica larger than all but one node's space goes there.
        assert_eq!(best_balance(&[1.0, 9.0, 1.0], 5.0), Some(vec![1]));
        // Ties are all returned.
        assert_eq!(best_balance(&[5.0, 5.0], 1.0), Some(vec![0, 1]));
        // No room anywhere: Longhorn's fallback.
        assert_eq!(best_balance(&[1.0, 1.0], 5.0), None);
        // A big replica can make the largest node the new minimum: then another wins.
        // (10, 9, 9), replica 8: from 10 -> (2, 9, 9) range 7; from 9 -> (10, 1, 9) 9.
        assert_eq!(best_balance(&[10.0, 9.0, 9.0], 8.0), Some(vec![0]));
    }
}
