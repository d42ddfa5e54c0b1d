//! Sound bounds on a failure scenario, so that the exact re-placement (`headroom`'s
//! scenario) runs only where a bound cannot settle what is asked.
//!
//! - **Survival.** A displaced VM strands only when no surviving node passes the
//!   scheduler's filter (`vm_scheduler`: requests within what is free, no member of its
//!   anti-affinity group). Count per node the *units* it has: how many copies of the
//!   largest VM request of the fleet fit in what it has free, with a margin for rounding.
//!   Each VM re-placed takes at most one unit from one node, and at most `B` nodes (those
//!   holding a member of the VM's group, before or during the scenario) are closed to it.
//!   So if the surviving nodes' units, less one per other displaced VM, less the units of
//!   the `B` richest surviving nodes, leave one, every VM finds a node. The same count on
//!   disks (copies of the largest replica that Longhorn's storage rules let a disk take;
//!   closed: the nodes holding a replica of the volume) proves every lost replica is
//!   re-homed, when no volume has a selector and zone anti-affinity is soft (so any node
//!   without a replica of the volume is a candidate, `replenish::Burst::tier`).
//! - **Survival by mass**, where counting whole units of the largest request is too
//!   coarse (VMs and volumes of mixed sizes): a node refuses a VM only once the restarts
//!   on it took more than its *reserve* (its free room less the largest request, in memory,
//!   CPU read through the largest CPU-per-memory ratio of any VM), so if what is displaced
//!   does not exceed the open nodes' reserves, nothing strands (`vm_mass`; per disk for
//!   replicas, `replica_mass`). Either proof suffices, separately for the VMs and for
//!   the replicas (`Bounds::survives_parts`).
//! - **Slack.** The free share of the survivors after re-placement is their free capacity
//!   before, less what was displaced, plus what stranded (it takes nothing), over their
//!   capacity: whatever nodes were chosen. `Bounds::share` computes it in one fixed order,
//!   and the re-placement (`replace::scenario_in`) reads its slack from the same function
//!   with the sums of what stranded, so a scenario proven to survive has its exact slack,
//!   bit for bit, without being re-placed.

use rayon::prelude::*;

use crate::simulate::place::{Placement, node_open};

/// Relative margin on unit sizes (rounding over many re-placements stays far below it).
const UNIT_MARGIN: f64 = 1e-6;
/// Below this share of the fleet's capacity of a kind, survivors count as having none of
/// it (their share is 0), so rounding in a subtraction never divides by almost nothing.
const NO_CAPACITY: f64 = 1e-9;
/// Relative margin of the mass bounds on their sums (rounding stays far below it).
const MASS_MARGIN: f64 = 1e-6;
/// Units counted per node at most (a node with no request to fit counts this many).
const UNIT_CAP: f64 = 1e12;

/// Per-node facts of one placement, read by every scenario.
pub(crate) struct Bounds {
    shares: Shares,
    vms_on: Vec<usize>,
    reps_on: Vec<usize>,
    vm: Units,
    /// `None`: the replica bound does not apply (selectors, hard zone anti-affinity).
    rep: Option<Units>,
    /// The mass bounds, in memory GiB and replica data bytes: `None` where they do not
    /// apply (a VM asking CPU and no memory; an empty volume; as `rep`).
    vm_mass: Option<Units>,
    rep_mass: Option<Units>,
}

/// What the slack of a failure is made of: per node, free (CPU, memory, disk bytes less
/// data), capacity (CPU, memory, disk bytes) and what its failure displaces (VM requests
/// and replica data, summed in the order of its lists), and the fleet's totals. The growth
/// questions keep one in step with a placement that only grows (`Shares::grow`), bit for
/// bit what `Shares::new` of the grown placement holds.
#[derive(Clone)]
pub(crate) struct Shares {
    free: Vec<[f64; 3]>,
    cap: Vec<[f64; 3]>,
    lost: Vec<[f64; 3]>,
    free_total: [f64; 3],
    cap_total: [f64; 3],
    /// The VMs and volumes counted in `lost` (the placement's first ones).
    counted: (usize, usize),
}

/// Units per node, their total, the nodes richest first, and how many nodes may be closed
/// to one item.
struct Units {
    per_node: Vec<f64>,
    total: f64,
    richest: Vec<usize>,
    closed: usize,
}

impl Units {
    fn new(per_node: Vec<f64>, closed: usize) -> Units {
        let total = per_node.iter().sum();
        let mut richest: Vec<usize> = (0..per_node.len()).collect();
        richest.sort_unstable_by(|&a, &b| per_node[b].total_cmp(&per_node[a]).then(a.cmp(&b)));
        Units {
            per_node,
            total,
            richest,
            closed,
        }
    }

    /// Whether `items` items each taking at most one unit all find an open node when
    /// `failed` is down.
    fn suffice(&self, failed: &[usize], items: usize) -> bool {
        if items == 0 {
            return true;
        }
        // Integers below 2^53 (capped per node): exact.
        self.open(failed) - (items as f64 - 1.0) >= 1.0
    }

    /// What the surviving nodes have, less the `closed` richest of them.
    fn open(&self, failed: &[usize]) -> f64 {
        let lost: f64 = failed.iter().map(|&f| self.per_node[f]).sum();
        let closed: f64 = self
            .richest
            .iter()
            .filter(|n| !failed.contains(n))
            .take(self.closed)
            .map(|&n| self.per_node[n])
            .sum();
        self.total - lost - closed
    }

    /// Whether items of `need` in all, with `per_node` the reserve each node has before it
    /// can refuse one (the mass bounds), all find an open node when `failed` is down.
    fn hold(&self, failed: &[usize], need: f64) -> bool {
        self.open(failed) > need * (1.0 + MASS_MARGIN)
    }
}

/// How many items of `size` fit in `room` (margin included), at least 0.
fn units(room: f64, size: f64) -> f64 {
    if size <= 0.0 {
        return if room >= 0.0 { UNIT_CAP } else { 0.0 };
    }
    (room / (size * (1.0 + UNIT_MARGIN)))
        .floor()
        .clamp(0.0, UNIT_CAP)
}

impl Shares {
    pub(crate) fn new(pl: &Placement) -> Shares {
        let hosts = pl.topo().hosts.len();
        let lost: Vec<[f64; 3]> = (0..hosts)
            .into_par_iter()
            .map(|h| {
                let mut lost = [0.0; 3];
                for &v in &pl.vms_on()[h] {
                    lost[0] += pl.vms()[v].cpu_req;
                    lost[1] += pl.vms()[v].mem_req;
                }
                for &v in &pl.vols_on()[h] {
                    lost[2] += pl.volumes()[v].data;
                }
                lost
            })
            .collect();
        let cap: Vec<[f64; 3]> = pl
            .topo()
            .hosts
            .iter()
            .map(|host| [host.cpu, host.mem_gib, host.disks.iter().sum()])
            .collect();
        let cap_total = [0, 1, 2].map(|r| cap.iter().map(|x| x[r]).sum());
        let mut s = Shares {
            free: Vec::new(),
            cap,
            lost,
            free_total: [0.0; 3],
            cap_total,
            counted: (pl.vms().len(), pl.volumes().len()),
        };
        s.read_free(pl);
        s
    }

    /// Free per node and in all, read from the placement.
    fn read_free(&mut self, pl: &Placement) {
        self.free = (0..pl.topo().hosts.len())
            .map(|h| {
                let used: f64 = pl.free().disk[h].iter().map(|d| d.1).sum();
                [pl.free().cpu[h], pl.free().mem[h], self.cap[h][2] - used]
            })
            .collect();
        self.free_total = [0, 1, 2].map(|r| self.free.iter().map(|x| x[r]).sum());
    }

    /// In step with `pl`, the placement these shares were made of with VMs and volumes
    /// added since (nothing moved): the new ones' requests and data added to their nodes
    /// after the old ones', as the per-node lists order them.
    pub(crate) fn grow(&mut self, pl: &Placement) {
        let (vms, vols) = self.counted;
        for (v, node) in pl.vm_node().iter().enumerate().skip(vms) {
            if let Some(n) = *node {
                self.lost[n][0] += pl.vms()[v].cpu_req;
                self.lost[n][1] += pl.vms()[v].mem_req;
            }
        }
        for vol in pl.volumes().iter().skip(vols) {
            for &(n, _) in &vol.replicas {
                self.lost[n][2] += vol.data;
            }
        }
        self.counted = (pl.vms().len(), pl.volumes().len());
        self.read_free(pl);
    }

    /// The free share (CPU, memory, storage) of the survivors when `failed` is down and
    /// everything it hosted is re-placed except what sums to `stranded` (VM requests and
    /// replica data that found no place): the slack of the scenario, whichever nodes took
    /// the rest. One fixed order of operations, so the same inputs give the same bits;
    /// 0 where the survivors have (almost) none of a kind.
    pub(crate) fn share(&self, failed: &[usize], stranded: [f64; 3]) -> [f64; 3] {
        let mut out = [0.0; 3];
        for (r, o) in out.iter_mut().enumerate() {
            let gone: f64 = failed.iter().map(|&f| self.free[f][r]).sum();
            let cap_gone: f64 = failed.iter().map(|&f| self.cap[f][r]).sum();
            let displaced: f64 = failed.iter().map(|&f| self.lost[f][r]).sum();
            let cap = self.cap_total[r] - cap_gone;
            if cap <= NO_CAPACITY * self.cap_total[r] || cap <= 0.0 {
                continue;
            }
            let mut free = self.free_total[r] - gone - displaced;
            // Nothing stranded adds nothing, not even a zero's sign.
            if stranded[r] != 0.0 {
                free += stranded[r];
            }
            *o = free / cap;
        }
        out
    }
}

impl Bounds {
    pub(crate) fn new(pl: &Placement) -> Bounds {
        let (shares, ((vm, vm_mass), (rep, rep_mass))) = rayon::join(
            || Shares::new(pl),
            || {
                rayon::join(
                    || {
                        let units = vm_units(pl);
                        let mass = vm_mass(pl, units.closed);
                        (units, mass)
                    },
                    || {
                        let units = replica_units(pl);
                        let mass = units.as_ref().and_then(|u| replica_mass(pl, u.closed));
                        (units, mass)
                    },
                )
            },
        );
        Bounds {
            vms_on: pl.vms_on().iter().map(Vec::len).collect(),
            reps_on: pl.vols_on().iter().map(Vec::len).collect(),
            vm_mass,
            rep_mass,
            vm,
            rep,
            shares,
        }
    }

    /// Whether every VM restarts and every replica is re-homed when `failed` is down: by
    /// counting units, or else by mass.
    pub(crate) fn survives(&self, failed: &[usize]) -> bool {
        self.survives_parts(failed) == (true, true)
    }

    /// `survives` for the VMs and for the replicas apart.
    pub(crate) fn survives_parts(&self, failed: &[usize]) -> (bool, bool) {
        let vms: usize = failed.iter().map(|&f| self.vms_on[f]).sum();
        let reps: usize = failed.iter().map(|&f| self.reps_on[f]).sum();
        let mass = |u: &Option<Units>, r: usize| {
            u.as_ref().is_some_and(|u| {
                u.hold(failed, failed.iter().map(|&f| self.shares.lost[f][r]).sum())
            })
        };
        (
            self.vm.suffice(failed, vms) || mass(&self.vm_mass, 1),
            reps == 0
                || self.rep.as_ref().is_some_and(|u| u.suffice(failed, reps))
                || mass(&self.rep_mass, 2),
        )
    }

    /// How many nodes may be closed to one VM by anti-affinity: those holding its group,
    /// and the other VMs of the group.
    pub(crate) fn vm_closed(&self) -> usize {
        self.vm.closed
    }

    /// `survives` by counting units only (what the mass bounds add is tested).
    #[cfg(test)]
    pub(crate) fn survives_by_units(&self, failed: &[usize]) -> bool {
        let vms: usize = failed.iter().map(|&f| self.vms_on[f]).sum();
        let reps: usize = failed.iter().map(|&f| self.reps_on[f]).sum();
        self.vm.suffice(failed, vms)
            && (reps == 0 || self.rep.as_ref().is_some_and(|u| u.suffice(failed, reps)))
    }

    /// `Shares::share` of this placement.
    pub(crate) fn share(&self, failed: &[usize], stranded: [f64; 3]) -> [f64; 3] {
        self.shares.share(failed, stranded)
    }
}

/// VM units: copies of the largest request of the fleet per node; closed to a VM, the
/// nodes holding its group now plus the members of the group that may move there.
fn vm_units(pl: &Placement) -> Units {
    let running = || {
        pl.vm_node()
            .iter()
            .zip(pl.vms())
            .filter(|(n, _)| n.is_some())
    };
    let cmax = running().map(|(_, v)| v.cpu_req).fold(0.0, f64::max);
    let mmax = running().map(|(_, v)| v.mem_req).fold(0.0, f64::max);
    let per_node = (0..pl.topo().hosts.len())
        .map(|h| units(pl.free().cpu[h], cmax).min(units(pl.free().mem[h], mmax)))
        .collect();
    // The nodes holding each group now plus the VMs of each group, counted per group id
    // (ids are numbered densely from 0).
    let ids = || {
        pl.groups()
            .iter()
            .flatten()
            .copied()
            .chain(pl.vms().iter().filter_map(|v| v.group))
    };
    let top = ids().max().map_or(0, |g| g as usize + 1);
    let most = if top <= 4 * (pl.vms().len() + pl.topo().hosts.len()) + 1024 {
        let mut count = vec![0u32; top];
        for g in ids() {
            count[g as usize] += 1;
        }
        count.into_iter().max().unwrap_or(0) as usize
    } else {
        let mut all: Vec<u32> = ids().collect();
        all.sort_unstable();
        all.chunk_by(|a, b| a == b)
            .map(<[u32]>::len)
            .max()
            .unwrap_or(0)
    };
    Units::new(per_node, most)
}

/// Replica units: copies of the largest replica (size and data) each disk of a node that
/// takes replicas can still take under the storage rules; closed to a replica, the nodes
/// holding the other replicas of its volume.
fn replica_units(pl: &Placement) -> Option<Units> {
    if !pl.rules().zone_soft || pl.volumes().iter().any(|v| v.selector != 0) {
        return None;
    }
    let smax = pl.volumes().iter().map(|v| v.size).fold(0.0, f64::max);
    let dmax = pl.volumes().iter().map(|v| v.data).fold(0.0, f64::max);
    let rules = pl.rules();
    let (ss, ds) = (smax * (1.0 + UNIT_MARGIN), dmax * (1.0 + UNIT_MARGIN));
    let per_node = over_replica_disks(pl, |max, (sched, used)| {
        // k replicas fit when the data leaves more than the minimal share and the
        // scheduled sizes stay within over-provisioning (`StorageRules::fits`).
        let ok = |k: f64| {
            max - used - k * ds > max * rules.min_available
                && sched + k * ss <= max * rules.overprovision
        };
        let mut k = units(max * (1.0 - rules.min_available) - used, dmax)
            .min(units(max * rules.overprovision - sched, smax));
        // The closed form is off by rounding at most: a few steps down, else none.
        for _ in 0..4 {
            if k <= 0.0 || ok(k) {
                break;
            }
            k -= 1.0;
        }
        if k > 0.0 && !ok(k) { 0.0 } else { k }
    })
    .into_iter()
    .map(|t| t.min(UNIT_CAP))
    .collect();
    let closed = pl
        .volumes()
        .iter()
        .map(|v| v.replicas.len().saturating_sub(1))
        .max()
        .unwrap_or(0);
    Some(Units::new(per_node, closed))
}

/// The VM mass bound, in memory requested. A VM strands only when every open node refuses
/// it: its CPU or its memory no longer fits. With `cmax`, `mmax` the largest requests and
/// `rho` the largest CPU per memory of any VM, a node with free `c`, `m` refuses only
/// after the VMs restarted on it took more than `a = c - cmax` CPU or `b = m - mmax`
/// memory; since they took at most `rho` CPU per GiB, more than `min(b, a / rho)` GiB.
/// So the VMs placed before a stranded one took more than the sum of those reserves over
/// the open nodes, and if what is displaced does not exceed it, nothing strands. The
/// `closed` richest nodes (anti-affinity, as `vm_units`) count for nothing.
fn vm_mass(pl: &Placement, closed: usize) -> Option<Units> {
    let placed = || pl.vms_on().iter().flatten().map(|&v| &pl.vms()[v]);
    let mut rho: f64 = 0.0;
    for v in placed() {
        if v.mem_req <= 0.0 {
            if v.cpu_req > 0.0 {
                return None;
            }
            continue;
        }
        rho = rho.max(v.cpu_req / v.mem_req);
    }
    let cmax = placed().map(|v| v.cpu_req).fold(0.0, f64::max);
    let mmax = placed().map(|v| v.mem_req).fold(0.0, f64::max);
    let per_node = (0..pl.topo().hosts.len())
        .map(|h| {
            let (a, b) = (pl.free().cpu[h] - cmax, pl.free().mem[h] - mmax);
            if !(a >= 0.0 && b >= 0.0) {
                return 0.0;
            }
            let by_cpu = if rho > 0.0 { a / rho } else { f64::INFINITY };
            b.min(by_cpu) * (1.0 - MASS_MARGIN)
        })
        .collect();
    Some(Units::new(per_node, closed))
}

/// The replica mass bound, in data: as `vm_mass`, per disk. A disk refuses a replica
/// only after the replicas re-homed to it took at least `max * (1 - min_available) - used -
/// dmax` data or more than `max * overprovision - scheduled - smax` size, which is at most
/// `rho` times their data (`rho` the largest size per byte of data of any volume).
fn replica_mass(pl: &Placement, closed: usize) -> Option<Units> {
    let mut rho: f64 = 0.0;
    for v in pl.volumes() {
        if v.data <= 0.0 {
            if v.size > 0.0 {
                return None;
            }
            continue;
        }
        rho = rho.max(v.size / v.data);
    }
    let smax = pl.volumes().iter().map(|v| v.size).fold(0.0, f64::max);
    let dmax = pl.volumes().iter().map(|v| v.data).fold(0.0, f64::max);
    let rules = pl.rules();
    let per_node = over_replica_disks(pl, |max, (sched, used)| {
        let a = max * (1.0 - rules.min_available) - used - dmax;
        let b = max * rules.overprovision - sched - smax;
        if !(a > 0.0 && b > 0.0) {
            return 0.0;
        }
        let by_size = if rho > 0.0 { b / rho } else { f64::INFINITY };
        a.min(by_size) * (1.0 - MASS_MARGIN)
    });
    Some(Units::new(per_node, closed))
}

/// Per node, the sum of `per_disk(max, (scheduled, used))` over its disks that take
/// replicas (a node Longhorn schedules to, a disk with room and no tag excluding it); 0
/// for a node that takes none.
fn over_replica_disks(pl: &Placement, per_disk: impl Fn(f64, (f64, f64)) -> f64) -> Vec<f64> {
    let alive = vec![true; pl.topo().hosts.len()];
    pl.topo()
        .hosts
        .iter()
        .enumerate()
        .map(|(n, host)| {
            if !node_open(pl.topo(), &alive, 0, n) {
                return 0.0;
            }
            host.disks
                .iter()
                .enumerate()
                .filter(|&(d, &max)| max > 0.0 && pl.topo().tags.disk_ok(0, n, d))
                .fold(0.0, |total, (d, &max)| {
                    total + per_disk(max, pl.free().disk[n][d])
                })
        })
        .collect()
}
