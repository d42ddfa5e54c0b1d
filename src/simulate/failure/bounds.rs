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
//! - **Slack.** When everything is re-placed, the free share of the survivors is their free
//!   capacity before less what was displaced, whatever the nodes chosen: a closed form
//!   exact up to rounding (bounded here by `delta`). When something strands, less is taken
//!   and the share is larger. So the closed form less `delta` is a lower bound on every
//!   scenario's slack, and the closed form plus `delta` an upper bound on any scenario
//!   proven to survive.

use std::collections::HashMap;

use crate::simulate::place::{Placement, node_open};

/// Relative margin on unit sizes (rounding over many re-placements stays far below it).
const UNIT_MARGIN: f64 = 1e-6;
/// Relative bound on the rounding of a closed-form slack against the re-placement's sums.
const ROUNDING: f64 = 1e-9;
/// Units counted per node at most (a node with no request to fit counts this many).
const UNIT_CAP: f64 = 1e12;

/// Per-node facts of one placement, read by every scenario.
pub(crate) struct Bounds {
    /// Per node: free (CPU, memory, disk bytes less data) and capacity (CPU, memory, disk
    /// bytes); what its failure displaces (VM requests and replica data).
    free: Vec<[f64; 3]>,
    cap: Vec<[f64; 3]>,
    lost: Vec<[f64; 3]>,
    free_total: [f64; 3],
    cap_total: [f64; 3],
    /// Sum of magnitudes the slack sums are made of, per resource (for `delta`).
    scale: [f64; 3],
    vms_on: Vec<usize>,
    reps_on: Vec<usize>,
    vm: Units,
    /// `None`: the replica bound does not apply (selectors, hard zone anti-affinity).
    rep: Option<Units>,
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
        richest.sort_by(|&a, &b| per_node[b].total_cmp(&per_node[a]).then(a.cmp(&b)));
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
        let lost: f64 = failed.iter().map(|&f| self.per_node[f]).sum();
        let closed: f64 = self
            .richest
            .iter()
            .filter(|n| !failed.contains(n))
            .take(self.closed)
            .map(|&n| self.per_node[n])
            .sum();
        // Integers below 2^53 (capped per node): exact.
        self.total - lost - (items as f64 - 1.0) - closed >= 1.0
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

impl Bounds {
    pub(crate) fn new(pl: &Placement) -> Bounds {
        let n = pl.topo().hosts.len();
        let (mut free, mut cap, mut lost) =
            (vec![[0.0; 3]; n], vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
        for (h, host) in pl.topo().hosts.iter().enumerate() {
            let max: f64 = host.disks.iter().sum();
            let used: f64 = pl.free().disk[h].iter().map(|d| d.1).sum();
            free[h] = [pl.free().cpu[h], pl.free().mem[h], max - used];
            cap[h] = [host.cpu, host.mem_gib, max];
            for &v in &pl.vms_on()[h] {
                lost[h][0] += pl.vms()[v].cpu_req;
                lost[h][1] += pl.vms()[v].mem_req;
            }
            for &v in &pl.vols_on()[h] {
                lost[h][2] += pl.volumes()[v].data;
            }
        }
        let sum = |a: &[[f64; 3]], r: usize, abs: bool| -> f64 {
            a.iter().map(|x| if abs { x[r].abs() } else { x[r] }).sum()
        };
        let free_total = [0, 1, 2].map(|r| sum(&free, r, false));
        let cap_total = [0, 1, 2].map(|r| sum(&cap, r, false));
        let scale =
            [0, 1, 2].map(|r| sum(&free, r, true) + sum(&lost, r, true) + sum(&cap, r, true));
        Bounds {
            vms_on: pl.vms_on().iter().map(Vec::len).collect(),
            reps_on: pl.vols_on().iter().map(Vec::len).collect(),
            vm: vm_units(pl),
            rep: replica_units(pl),
            free,
            cap,
            lost,
            free_total,
            cap_total,
            scale,
        }
    }

    /// Whether every VM restarts and every replica is re-homed when `failed` is down.
    pub(crate) fn survives(&self, failed: &[usize]) -> bool {
        let vms: usize = failed.iter().map(|&f| self.vms_on[f]).sum();
        let reps: usize = failed.iter().map(|&f| self.reps_on[f]).sum();
        self.vm.suffice(failed, vms)
            && (reps == 0 || self.rep.as_ref().is_some_and(|u| u.suffice(failed, reps)))
    }

    /// The closed-form slack (CPU, memory, storage) when `failed` is down and everything
    /// is re-placed, and the bound on its rounding; `None` when (almost) nothing survives
    /// and the closed form says nothing.
    pub(crate) fn slack(&self, failed: &[usize]) -> Option<([f64; 3], [f64; 3])> {
        let mut approx = [0.0; 3];
        let mut delta = [0.0; 3];
        for r in 0..3 {
            let gone: f64 = failed.iter().map(|&f| self.free[f][r]).sum();
            let cap_gone: f64 = failed.iter().map(|&f| self.cap[f][r]).sum();
            let displaced: f64 = failed.iter().map(|&f| self.lost[f][r]).sum();
            let cap = self.cap_total[r] - cap_gone;
            if cap <= 1e-6 * self.cap_total[r] {
                if self.cap_total[r] > 0.0 {
                    return None;
                }
                // No capacity of this kind anywhere: the share is 0 for every scenario.
                continue;
            }
            approx[r] = (self.free_total[r] - gone - displaced) / cap;
            delta[r] = ROUNDING * self.scale[r] / cap;
        }
        Some((approx, delta))
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
    let mut by_group: HashMap<u32, usize> = HashMap::new();
    for gs in pl.groups() {
        for &g in gs {
            *by_group.entry(g).or_default() += 1;
        }
    }
    for v in pl.vms() {
        if let Some(g) = v.group {
            *by_group.entry(g).or_default() += 1;
        }
    }
    Units::new(per_node, by_group.values().copied().max().unwrap_or(0))
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
    let alive = vec![true; pl.topo().hosts.len()];
    let rules = pl.rules();
    let (ss, ds) = (smax * (1.0 + UNIT_MARGIN), dmax * (1.0 + UNIT_MARGIN));
    let per_node = pl
        .topo()
        .hosts
        .iter()
        .enumerate()
        .map(|(n, host)| {
            if !node_open(pl.topo(), &alive, 0, n) {
                return 0.0;
            }
            let mut total = 0.0;
            for (d, &max) in host.disks.iter().enumerate() {
                let (sched, used) = pl.free().disk[n][d];
                if max.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
                    || !pl.topo().tags.disk_ok(0, n, d)
                {
                    continue;
                }
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
                if k > 0.0 && !ok(k) {
                    k = 0.0;
                }
                total += k;
            }
            total.min(UNIT_CAP)
        })
        .collect();
    let closed = pl
        .volumes()
        .iter()
        .map(|v| v.replicas.len().saturating_sub(1))
        .max()
        .unwrap_or(0);
    Some(Units::new(per_node, closed))
}
