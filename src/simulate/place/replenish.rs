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
//! Among the candidates the version's rule decides. Line numbers below are longhorn-manager
//! v1.10.2's.
//!
//! - up to v1.10, `getDiskWithMostUsableStorage` (`scheduler/replica_scheduler.go`
//!   706-724, called by `scheduleReplicaToDisk` 690-703): the disk with the most
//!   `StorageAvailable - StorageReserved`. `StorageAvailable` is what statfs reported at
//!   the disk monitor's last pass (every 30 s, `controller/monitor/disk_monitor.go` 30),
//!   rounded down to 100 MiB (`controller/node_controller.go` 803-811); the replicas
//!   created in the burst hold no data yet, so every disk keeps its free space from before
//!   the failure for the whole burst, and the same disk wins every time. Ties: the loop
//!   (713-721) keeps the last disk of Go's map order among equals, a different order on
//!   every call, so exact ties are drawn from with a seeded draw and reported (the rebuild
//!   answer gives the spread of other draws);
//! - from v1.11, `getDiskWithMostBalanceScore` (`selectBestNode`, then `selectBestDisk`):
//!   the node whose usable space (`available - reserved - scheduled`, summed over its
//!   candidate disks) after taking the replica leaves `(max - min) / mean` over the
//!   candidate nodes smallest, then the disk on it by the same score. `storageScheduled`
//!   counts the new replicas as soon as it is refreshed, so the burst spreads. When no node
//!   has room for the replica's size, Longhorn takes an arbitrary candidate: a seeded draw.
//!
//! The storage rules (`IsSchedulableToDisk`, 983-1020, from `filterNodeDisksForReplica`
//! 556-582) are read two ways:
//!
//! - [`Space::AsCreated`], the burst as Longhorn creates it (the rebuild): the actual-space
//!   rule (995-1005, `StorageAvailable - actualSize > StorageMaximum x minimal-available`)
//!   reads the free space from before the failure, which the burst does not lower; the
//!   scheduling rule (1007-1017, `StorageScheduled + size <= (StorageMaximum -
//!   StorageReserved) x over-provisioning`) counts the burst's replicas in
//!   `StorageScheduled`, which each receiving node's controller recomputes from its
//!   replicas when one is created (`controller/node_controller.go` 133-144, 875-906): by
//!   default at once; `platform.scheduled_refresh_every` makes it lag. Over-provisioning is
//!   then the only brake on a pile, and nothing checks that the data fits: the rebuild
//!   model says which disks overfill;
//! - [`Space::Settled`], the headroom question: whether the survivors have room for what
//!   was lost once it is rebuilt, so each replacement's data counts at once and no disk is
//!   filled past its minimal-available share.

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

/// Longhorn reports a filesystem disk's `StorageAvailable` rounded down to this
/// (`controller/node_controller.go` 803-811, `truncateTo`).
pub(crate) const AVAILABLE_STEP: f64 = 100.0 * 1024.0 * 1024.0;

impl BurstIndex {
    /// Ranked by the room before the failure (max - used), for the headroom question.
    pub(crate) fn new(topo: &Topology, base: &Free) -> BurstIndex {
        BurstIndex::ranked(topo, base, |_, _, avail| avail)
    }

    /// Ranked as `getDiskWithMostUsableStorage` sees the disks in a burst:
    /// `StorageAvailable` (rounded down to 100 MiB) less `StorageReserved`.
    pub(crate) fn as_created(topo: &Topology, base: &Free) -> BurstIndex {
        BurstIndex::ranked(topo, base, |n, d, avail| {
            (avail / AVAILABLE_STEP).floor() * AVAILABLE_STEP - topo.reserved(n, d)
        })
    }

    fn ranked(topo: &Topology, base: &Free, key: impl Fn(usize, usize, f64) -> f64) -> BurstIndex {
        let mut order: Vec<(f64, u32, u32)> = Vec::new();
        for (n, h) in topo.hosts.iter().enumerate() {
            for (d, &max) in h.disks.iter().enumerate() {
                let used = base.disk.get(n).and_then(|x| x.get(d)).map_or(0.0, |x| x.1);
                order.push((key(n, d, max - used), n as u32, d as u32));
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

/// One replica the failure took and where its replacement goes (`None`: nowhere), and
/// among how many equally ranked candidates it was drawn (1: no tie).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replacement {
    pub(crate) volume: usize,
    pub(crate) target: Option<(usize, usize)>,
    pub(crate) tied: usize,
}

/// How the storage rules read a disk during a burst (the module docs say why two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Space {
    /// Each replacement's data counted at once: room for what was lost (headroom).
    Settled,
    /// As Longhorn creates the replicas: free space from before the failure, the burst's
    /// sizes in `StorageScheduled` (the rebuild).
    AsCreated,
}

/// How a burst is created as Longhorn does it: how often the scheduler's view of
/// `StorageScheduled` catches up (after every `refresh_every` new replicas; 1: at once, 0:
/// never during the burst), and a salt that changes every draw among exact ties (0: the
/// answer's own draws).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BurstHow {
    pub(crate) refresh_every: u32,
    pub(crate) salt: u64,
}

/// The state one burst is decided in: the fleet before the failure (`base`, whose
/// available space Longhorn up to v1.10 ranks by), what is up, and which zones still have
/// a node that takes replicas.
pub(crate) struct Burst<'a> {
    pub(crate) pl: &'a Placement,
    pub(crate) alive: &'a [bool],
    pub(crate) index: &'a BurstIndex,
    space: Space,
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

/// What one pick reads: `free`, the fleet with the burst's earlier replacements on it,
/// and `seen`, the `StorageScheduled` the scheduler last saw (`free` when refreshed at once).
#[derive(Clone, Copy)]
pub(crate) struct View<'f> {
    pub(crate) free: &'f Free,
    pub(crate) seen: &'f Free,
}

/// A pick: the (node, disk), and among how many equally ranked candidates it was drawn.
pub(crate) type Pick = (Option<(usize, usize)>, usize);

impl<'a> Burst<'a> {
    pub(crate) fn new(
        pl: &'a Placement,
        alive: &'a [bool],
        index: &'a BurstIndex,
        space: Space,
    ) -> Burst<'a> {
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
            space,
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
        space: Space,
        free: &Free,
        least: (f64, f64),
    ) -> Burst<'a> {
        let mut b = Burst::new(pl, alive, index, space);
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
                self.state(free, free, n, d),
                closed.least.0,
                closed.least.1,
            )
    }

    /// (scheduled, used) of disk `d` of node `n` as the storage rules read it: `free` is
    /// the fleet with the burst's earlier replacements on it, `seen` what the scheduler
    /// last saw of `StorageScheduled` (`free` itself when it is refreshed at once).
    fn state(&self, free: &Free, seen: &Free, n: usize, d: usize) -> (f64, f64) {
        match self.space {
            Space::Settled => free.disk[n][d],
            Space::AsCreated => (seen.disk[n][d].0, self.pl.free().disk[n][d].1),
        }
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
    fn tier(&self, vol: &Volume, view: View<'_>, used: &[usize], n: usize, d: usize) -> Option<u8> {
        let topo = self.pl.topo();
        let rules = self.pl.rules();
        if !node_open(topo, self.alive, vol.selector, n)
            || !topo.tags.disk_ok(vol.selector, n, d)
            || !rules.fits(
                topo.hosts[n].disks[d],
                self.state(view.free, view.seen, n, d),
                vol.size,
                vol.data,
            )
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

    /// The (node, disk) of the replacement of one lost replica of `vol`, and among how many
    /// equal candidates it was drawn.
    pub(crate) fn pick(&self, vol: &Volume, view: View<'_>, draw: u64) -> Pick {
        let used = used_zones(vol, self.pl.topo(), self.alive);
        match self.pl.rules().choice {
            DiskChoice::MostAvailable => self.most_available(vol, view, &used, draw),
            DiskChoice::BalanceScore => self.balance_score(vol, view, &used, draw),
        }
    }

    /// The best tier's disks with the most available space before the burst; exact ties
    /// drawn from.
    fn most_available(&self, vol: &Volume, view: View<'_>, used: &[usize], draw: u64) -> Pick {
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
            let Some(t) = self.tier(vol, view, used, n, d) else {
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
            return (None, 0);
        }
        (
            Some(tied[(mix(draw) % tied.len() as u64) as usize]),
            tied.len(),
        )
    }

    /// `selectBestNode` then `selectBestDisk` over the best tier's disks.
    fn balance_score(&self, vol: &Volume, view: View<'_>, used: &[usize], draw: u64) -> Pick {
        let topo = self.pl.topo();
        let base = self.pl.free();
        let mut cands: Vec<(usize, usize)> = Vec::new();
        let mut best_t = u8::MAX;
        for (n, h) in topo.hosts.iter().enumerate() {
            for d in 0..h.disks.len() {
                if let Some(t) = self.tier(vol, view, used, n, d) {
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
            return (None, 0);
        }
        if cands.len() == 1 {
            return (Some(cands[0]), 1);
        }
        // Usable: available before the burst less what is scheduled as last seen (the new
        // replicas count in storageScheduled once it is refreshed), never below zero.
        let usable = |n: usize, d: usize| {
            (topo.hosts[n].disks[d] - base.disk[n][d].1 - view.seen.disk[n][d].0).max(0.0)
        };
        let mut nodes: Vec<(usize, f64)> = Vec::new();
        for &(n, d) in &cands {
            match nodes.last_mut() {
                Some((last, u)) if *last == n => *u += usable(n, d),
                _ => nodes.push((n, usable(n, d))),
            }
        }
        let pick_min = |vals: &[f64]| -> Option<(usize, usize)> {
            let best = best_balance(vals, vol.size)?;
            Some((best[(mix(draw) % best.len() as u64) as usize], best.len()))
        };
        let node_vals: Vec<f64> = nodes.iter().map(|x| x.1).collect();
        // No candidate has room for the size: Longhorn's fallback, any candidate.
        let fallback = || {
            (
                Some(cands[(mix(draw ^ 0x5EED) % cands.len() as u64) as usize]),
                cands.len(),
            )
        };
        let Some((i, node_ties)) = pick_min(&node_vals) else {
            return fallback();
        };
        let n = nodes[i].0;
        let disks: Vec<usize> = cands.iter().filter(|c| c.0 == n).map(|c| c.1).collect();
        let disk_vals: Vec<f64> = disks.iter().map(|&d| usable(n, d)).collect();
        match pick_min(&disk_vals) {
            Some((j, disk_ties)) => (Some((n, disks[j])), node_ties.max(disk_ties)),
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
/// `free` starts as the placement's and ends with the replacements on it. The headroom
/// question: each replacement's data counts at once ([`Space::Settled`]).
pub(crate) fn replace_lost(
    pl: &Placement,
    alive: &[bool],
    failed: &[usize],
    index: &BurstIndex,
    free: &mut Free,
) -> Vec<Replacement> {
    let how = BurstHow {
        refresh_every: 1,
        salt: 0,
    };
    replace_lost_skipping(pl, alive, failed, (index, Space::Settled), free, how, true)
}

/// The same burst as Longhorn creates it ([`Space::AsCreated`]), for the rebuild: `index`
/// from `BurstIndex::as_created`, `StorageScheduled` refreshed as `how` says.
pub(crate) fn create_burst(
    pl: &Placement,
    alive: &[bool],
    failed: &[usize],
    index: &BurstIndex,
    free: &mut Free,
    how: BurstHow,
) -> Vec<Replacement> {
    replace_lost_skipping(
        pl,
        alive,
        failed,
        (index, Space::AsCreated),
        free,
        how,
        true,
    )
}

/// `replace_lost` and `create_burst`; with `skip`, the disks no replica of the burst can go
/// to are skipped (`Burst::with_closed`), which changes no answer (tested against the plain
/// scan). A lagging `StorageScheduled` is read from a copy taken at each refresh.
pub(super) fn replace_lost_skipping(
    pl: &Placement,
    alive: &[bool],
    failed: &[usize],
    (index, space): (&BurstIndex, Space),
    free: &mut Free,
    how: BurstHow,
    skip: bool,
) -> Vec<Replacement> {
    let mut affected = pl.volumes_on(failed);
    affected.sort_by_key(|&v| !pl.volumes()[v].attached);
    let least = affected
        .iter()
        .fold((f64::INFINITY, f64::INFINITY), |(s, d), &v| {
            (s.min(pl.volumes()[v].size), d.min(pl.volumes()[v].data))
        });
    let prompt = how.refresh_every == 1;
    let burst = if skip
        && prompt
        && pl.rules().choice == DiskChoice::MostAvailable
        && index.pos.len() == pl.topo().hosts.len()
    {
        Burst::with_closed(pl, alive, index, space, free, least)
    } else {
        Burst::new(pl, alive, index, space)
    };
    // What the scheduler last saw of `StorageScheduled` when it lags behind `free`.
    let mut seen: Option<Free> = (!prompt).then(|| free.clone());
    let mut created = 0u32;
    let mut out = Vec::new();
    for vi in affected {
        let mut v = pl.volumes()[vi].clone();
        let lost = v.replicas.iter().filter(|&&(h, _)| !alive[h]).count();
        for k in 0..lost {
            let draw = ((vi as u64) << 8 | k as u64) ^ how.salt;
            let view = View {
                free,
                seen: seen.as_ref().unwrap_or(free),
            };
            let (target, tied) = burst.pick(&v, view, draw);
            if let Some((h, d)) = target {
                free.add_replica(pl.topo(), h, d, &v);
                burst.took(free, h, d);
                v.replicas.push((h, d));
                created += 1;
                if how.refresh_every > 1 && created.is_multiple_of(how.refresh_every) {
                    seen = Some(free.clone());
                }
            }
            out.push(Replacement {
                volume: vi,
                target,
                tied,
            });
        }
    }
    out
}
