//! What-ifs on top of a placement: the rebuild what-if (a node loaded with a given amount of
//! replica data in the scenario's volume sizes), the warnings a capacity review must see,
//! and the smallest change found that makes a failing fleet pass.

use rayon::prelude::*;
use serde::Serialize;

use super::headroom::{Headroom, Kind};
use super::loader::Loaded;
use super::placement::{Placement, Volume, best_disk, pick_disk};
use super::scenario::{Pool, RebuildWhatIf};
use super::topology::{Host, Topology};
use super::{RebuildReport, Warning, passes};

const TIB: f64 = 1024.0 * 1024.0 * 1024.0 * 1024.0;

/// The scenario's largest node class: the one with the most nodes (then the biggest nodes).
fn largest_class(l: &Loaded) -> Option<&super::scenario::NodeClass> {
    l.scenario.fleet.classes.iter().max_by(|a, b| {
        a.count
            .cmp(&b.count)
            .then(
                (f64::from(a.threads) * a.memory_gib)
                    .total_cmp(&(f64::from(b.threads) * b.memory_gib)),
            )
            .then(b.name.cmp(&a.name))
    })
}

/// The host the what-if fails: the named one, else the first of the largest class (with a
/// site fleet: the host with the most disk).
pub fn what_if_node(l: &Loaded, topo: &Topology, w: &RebuildWhatIf) -> usize {
    if let Some(i) = w.node.as_deref().and_then(|n| topo.host_index(n)) {
        return i;
    }
    if l.site_topology.is_none()
        && l.live.is_none()
        && let Some(c) = largest_class(l)
        && let Some(i) = topo.host_index(&format!("{}-01", c.name))
    {
        return i;
    }
    (0..topo.hosts.len())
        .max_by(|&a, &b| {
            let da: f64 = topo.hosts[a].disks.iter().sum();
            let db: f64 = topo.hosts[b].disks.iter().sum();
            da.total_cmp(&db).then(b.cmp(&a))
        })
        .unwrap_or(0)
}

/// Nominal size over actual data of the scenario's volumes (1 / data_fill).
fn size_per_data(l: &Loaded) -> f64 {
    1.0 / l.scenario.platform.data_fill.max(1e-6)
}

/// Whether the what-if fits its node under Longhorn's storage rules; the reason if not.
pub fn check(l: &Loaded, topo: &Topology, w: &RebuildWhatIf) -> Result<(), String> {
    if let Some(name) = &w.node
        && topo.host_index(name).is_none()
    {
        let some: Vec<&str> = topo.hosts.iter().take(4).map(|h| h.name.as_str()).collect();
        return Err(format!(
            "no host `{name}` in the fleet; hosts are named like {}",
            some.join(", ")
        ));
    }
    if !(w.data_tib.is_finite() && w.data_tib > 0.0) {
        return Err(format!("{} TiB is not an amount of data", w.data_tib));
    }
    let node = what_if_node(l, topo, w);
    let h = &topo.hosts[node];
    let p = &l.scenario.platform;
    let min = p.minimal_available_pct / 100.0;
    let raw: f64 = h.disks.iter().sum();
    let data_cap = raw * (1.0 - min);
    let want = w.data_tib * TIB;
    if want >= data_cap {
        return Err(format!(
            "{} cannot hold {} TiB of replica data: its {} disk(s) total {:.2} TiB, and Longhorn keeps {:.0} % of each available (storage-minimal-available-percentage), which leaves {:.2} TiB; ask for less, or fail a node with more disk",
            h.name,
            w.data_tib,
            h.disks.len(),
            raw / TIB,
            p.minimal_available_pct,
            data_cap / TIB
        ));
    }
    let sched_cap = raw * p.overcommit_storage_pct / 100.0;
    let sizes = want * size_per_data(l);
    if sizes > sched_cap {
        return Err(format!(
            "{} cannot schedule volumes of {:.2} TiB nominal size ({} TiB of data at a data fill of {}): over-provisioning at {:.0} % allows {:.2} TiB",
            h.name,
            sizes / TIB,
            w.data_tib,
            p.data_fill,
            p.overcommit_storage_pct,
            sched_cap / TIB
        ));
    }
    if l.shapes
        .values()
        .flatten()
        .all(|pool| pool.disks_gib.is_empty())
    {
        return Err("the scenario has no volumes whose sizes the what-if could use".into());
    }
    Ok(())
}

/// What can be checked only once the fleet is known (after a site is attached): the named
/// failure sets' hosts and racks exist, and the rebuild what-if fits its node. The error
/// comes with the scenario key it concerns.
pub fn check_fleet(l: &Loaded) -> Result<(), (&'static str, String)> {
    let topo = l.topology();
    if topo.hosts.is_empty() {
        return Err((
            "fleet",
            "the fleet has no nodes: every class has count 0".to_string(),
        ));
    }
    for set in &l.scenario.headroom.sets {
        for n in &set.nodes {
            if topo.host_index(n).is_none() {
                return Err((
                    "headroom",
                    format!("headroom.sets `{}`: no host `{n}` in the fleet", set.name),
                ));
            }
        }
        for r in &set.racks {
            if !topo.racks.contains(r) {
                return Err((
                    "headroom",
                    format!(
                        "headroom.sets `{}`: no rack `{r}`; racks are {}",
                        set.name,
                        topo.racks.join(", ")
                    ),
                ));
            }
        }
    }
    if let Some(w) = &l.scenario.rebuild {
        check(l, &topo, w).map_err(|e| ("rebuild", e))?;
    }
    Ok(())
}

/// The placement with `node` holding `data_tib` of replica data: its own replicas are
/// replaced by new volumes in the sizes of the scenario's volumes (cycled, the last one cut
/// to the remainder), each with its other replicas placed as Longhorn would.
pub fn load_node(
    l: &Loaded,
    pl: &Placement,
    node: usize,
    data_tib: f64,
) -> Result<Placement, String> {
    let mut pl = pl.clone();
    let p = &l.scenario.platform;
    for vi in std::mem::take(&mut pl.vols_on[node]) {
        let vol = &mut pl.volumes[vi];
        for &(n, d) in vol.replicas.iter().filter(|r| r.0 == node) {
            pl.free.disk[n][d].0 -= vol.size;
            pl.free.disk[n][d].1 -= vol.data;
        }
        vol.replicas.retain(|r| r.0 != node);
    }
    pl.free.node_room[node] = pl.topo.hosts[node]
        .disks
        .iter()
        .zip(&pl.free.disk[node])
        .map(|(max, s)| max - s.1)
        .fold(0.0, f64::max);
    let mut templates: Vec<(f64, f64, usize)> = pl
        .volumes
        .iter()
        .filter(|v| v.attached && v.data > 0.0)
        .map(|v| (v.size, v.data, v.vm))
        .collect();
    if templates.is_empty() {
        templates = l
            .shapes
            .values()
            .flatten()
            .flat_map(|pool| pool.disks_gib.iter())
            .map(|g| (g * 1024f64.powi(3), g * 1024f64.powi(3) * p.data_fill, 0))
            .filter(|t| t.1 > 0.0)
            .collect();
    }
    if templates.is_empty() {
        return Err("the scenario has no volumes whose sizes the what-if could use".into());
    }
    let target = data_tib * TIB;
    let alive = vec![true; pl.topo.hosts.len()];
    let r = p.replicas as usize;
    let mut loaded = 0.0;
    let mut i = 0usize;
    while loaded < target - 1.0 {
        let (size, data, vm) = templates[i % templates.len()];
        let (size, data) = if loaded + data > target {
            let d = target - loaded;
            (size * d / data, d)
        } else {
            (size, data)
        };
        let mut vol = Volume {
            vm: vm.min(pl.vms.len().saturating_sub(1)),
            size,
            data,
            replicas: Vec::new(),
            attached: true,
        };
        let disk = best_disk(&pl.topo, &pl.free, &pl.rules, node, size, data).ok_or_else(|| {
                format!(
                    "{} holds no more than {:.2} TiB in volumes of the scenario's sizes (the storage rules apply per disk)",
                    pl.topo.hosts[node].name,
                    loaded / TIB
                )
            })?;
        pl.free.add_replica(&pl.topo, node, disk, &vol);
        vol.replicas.push((node, disk));
        for k in 1..r {
            let draw = (0xFEED_0000_0000u64 + i as u64) << 8 | k as u64;
            if let Some((n, d)) = pick_disk(&vol, &pl.free, &pl.topo, &pl.rules, &alive, draw) {
                pl.free.add_replica(&pl.topo, n, d, &vol);
                vol.replicas.push((n, d));
            }
        }
        let vi = pl.volumes.len();
        for &(n, _) in &vol.replicas {
            pl.vols_on[n].push(vi);
        }
        pl.volumes.push(vol);
        loaded += data;
        i += 1;
    }
    Ok(pl)
}

fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// The limits a capacity review must know are crossed.
pub fn warnings(l: &Loaded, pl: &Placement, h: &Headroom, rb: &RebuildReport) -> Vec<Warning> {
    let s = &l.scenario;
    let p = &s.platform;
    let mut out = Vec::new();
    let running = pl.vms.iter().filter(|v| v.running).count();
    let limit = s.analysis.warn.vms_per_cluster as usize;
    if running > limit {
        out.push(Warning {
            kind: "vms-per-cluster",
            message: format!(
                "{running} VMs in one Harvester cluster: past about {limit} its apiserver saturates (analysis.warn.vms_per_cluster); split the fleet into more Harvester clusters"
            ),
        });
    }
    let deciding = || {
        h.scenarios
            .iter()
            .filter(|x| x.kind.decides())
            .chain(h.combined.iter().flat_map(|c| c.worst.iter()))
    };
    let base_pods = pl.pods.iter().copied().max().unwrap_or(0);
    let worst_pods = deciding().max_by_key(|x| x.vm_pods_peak);
    let (pods, at) = match worst_pods {
        Some(w) if w.vm_pods_peak > base_pods => (w.vm_pods_peak, format!("after {}", w.name)),
        _ => (base_pods, "with every host up".to_string()),
    };
    if pods + p.system_pods_per_node > p.max_pods {
        out.push(Warning {
            kind: "pods-per-node",
            message: format!(
                "a host runs {pods} virt-launcher pods {at}, plus {} system pods: over the kubelet's max-pods of {} (Harvester's default 200); VMs past it stay Pending",
                p.system_pods_per_node, p.max_pods
            ),
        });
    }
    if p.overcommit_memory_pct > 100.0 {
        let base = pl
            .topo
            .hosts
            .iter()
            .enumerate()
            .filter(|(_, x)| x.mem_gib > 0.0)
            .map(|(n, x)| pl.mem_actual[n] / x.mem_gib)
            .fold(0.0, f64::max);
        let worst = deciding().max_by(|a, b| a.memory_commit_peak.total_cmp(&b.memory_commit_peak));
        let (peak, at) = match worst {
            Some(w) if w.memory_commit_peak > base => {
                (w.memory_commit_peak, format!("after {}", w.name))
            }
            _ => (base, "with every host up".to_string()),
        };
        if peak > 1.0 {
            out.push(Warning {
                kind: "memory-overcommit",
                message: format!(
                    "memory overcommit {:.0} %: {at}, a host's VMs have {} of its physical memory; if they use what they were given, the host swaps or OOM-kills",
                    p.overcommit_memory_pct,
                    pct(peak)
                ),
            });
        }
    }
    let share = s.analysis.warn.rebuild_share;
    if rb.peak_link_share > share || rb.peak_disk_share > share {
        out.push(Warning {
            kind: "rebuild-share",
            message: format!(
                "at limit {}, the rebuild after losing {} takes up to {} of a node's storage link and {} of its disk throughput, above the {} share left for rebuilds (analysis.warn.rebuild_share): a rebuild storm degrades every VM on those nodes",
                rb.limit,
                rb.failed_node,
                pct(rb.peak_link_share),
                pct(rb.peak_disk_share),
                pct(share)
            ),
        });
    }
    if rb.recommendation_fell_back {
        out.push(Warning {
            kind: "rebuild-limit-fallback",
            message: format!(
                "no rebuild limit within 10 % of the fastest keeps rebuild traffic under {} of links and disks; the recommendation falls back to the smallest limit within 10 %",
                pct(share)
            ),
        });
    }
    if rb.peak_source_streams > rb.limit as usize && rb.peak_source_share > share {
        out.push(Warning {
            kind: "rebuild-source-load",
            message: format!(
                "one source node serves up to {} rebuild streams at once (the per-node limit is {}: Longhorn counts only the receiving node), taking {} of its egress or disk reads, above the {} share",
                rb.peak_source_streams,
                rb.limit,
                pct(rb.peak_source_share),
                pct(share)
            ),
        });
    }
    if rb.abort_restarts > 0 {
        out.push(Warning {
            kind: "rebuild-abort-limit",
            message: format!(
                "{} replica rebuild attempt(s) after losing {} run past Longhorn's {} h limit and start again from scratch",
                rb.abort_restarts, rb.failed_node, p.rebuild_abort_h
            ),
        });
    }
    out
}

#[derive(Debug, Clone, Serialize)]
pub struct AddNodes {
    /// The node class (or, with a site fleet, the host) the new nodes copy.
    pub like: String,
    pub count: u32,
    /// The rack of each new node, in order.
    pub racks: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RemoveClusters {
    pub shape: String,
    pub count: u32,
}

/// The smallest changes found that pass, each by placing and checking again.
#[derive(Debug, Clone, Serialize)]
pub struct Fix {
    /// `None`: no count up to `searched_nodes` passes.
    pub add_nodes: Option<AddNodes>,
    pub searched_nodes: u32,
    pub remove_clusters: Option<RemoveClusters>,
    pub searched_clusters: u32,
}

/// Most nodes the fix search adds.
const MAX_ADD: u32 = 32;

/// New hosts copying the largest class (or the biggest site host), in its racks in turn.
fn new_hosts(l: &Loaded, topo: &Topology, k: u32) -> (String, Vec<Host>) {
    let p = &l.scenario.platform;
    if l.site_topology.is_none()
        && l.live.is_none()
        && let Some(c) = largest_class(l)
    {
        let hosts = (0..k)
            .map(|j| {
                let i = c.count + j;
                let rack = &c.racks[i as usize % c.racks.len().max(1)];
                Host {
                    name: format!("{}-{:02}", c.name, i + 1),
                    rack: topo.racks.iter().position(|r| r == rack).unwrap_or(0),
                    cpu: (f64::from(c.threads) - p.reserved_cpu).max(0.0),
                    mem_gib: (c.memory_gib - p.reserved_memory_gib).max(0.0),
                    disks: vec![c.disk_tb * 1e12; c.disks as usize],
                }
            })
            .collect();
        return (c.name.clone(), hosts);
    }
    let template = topo
        .hosts
        .iter()
        .max_by(|a, b| (a.cpu * a.mem_gib).total_cmp(&(b.cpu * b.mem_gib)))
        .cloned();
    let Some(t) = template else {
        return (String::new(), Vec::new());
    };
    let mut per_rack = vec![0usize; topo.racks.len()];
    for h in &topo.hosts {
        per_rack[h.rack] += 1;
    }
    let hosts = (0..k)
        .map(|j| {
            let rack = (0..per_rack.len())
                .min_by_key(|&r| (per_rack[r], r))
                .unwrap_or(0);
            per_rack[rack] += 1;
            Host {
                name: format!("new-{:02}", j + 1),
                rack,
                ..t.clone()
            }
        })
        .collect();
    (t.name.clone(), hosts)
}

/// The first count in 1..=max for which `ok` holds, checked in parallel batches in order.
fn first_passing(max: u32, ok: impl Fn(u32) -> bool + Sync) -> Option<u32> {
    let batch = (rayon::current_num_threads() as u32).clamp(2, 8);
    let mut next = 1;
    while next <= max {
        let hi = (next + batch - 1).min(max);
        let got: Vec<(u32, bool)> = (next..=hi).into_par_iter().map(|k| (k, ok(k))).collect();
        if let Some((k, _)) = got.into_iter().find(|g| g.1) {
            return Some(k);
        }
        next = hi + 1;
    }
    None
}

/// How many nodes to add, or clusters of the most common running shape to remove.
pub fn fix(l: &Loaded, topo: &Topology, clusters: &[&[Pool]]) -> Fix {
    let add = first_passing(MAX_ADD, |k| {
        let (_, extra) = new_hosts(l, topo, k);
        passes(l, &topo.with_hosts(&extra), clusters)
    });
    let add_nodes = add.map(|k| {
        let (like, extra) = new_hosts(l, topo, k);
        AddNodes {
            like,
            count: k,
            racks: extra.iter().map(|h| topo.racks[h.rack].clone()).collect(),
        }
    });
    // The shape with the most clusters running.
    let mut counts: Vec<(&str, u32)> = Vec::new();
    for c in &l.scenario.clusters {
        match counts.iter_mut().find(|x| x.0 == c.shape) {
            Some(x) => x.1 += c.count,
            None => counts.push((c.shape.as_str(), c.count)),
        }
    }
    let shape = counts
        .iter()
        .max_by_key(|x| (x.1, std::cmp::Reverse(x.0)))
        .copied();
    let (remove_clusters, searched_clusters) = match shape {
        Some((name, total)) => {
            let pools = l.shapes[name].as_slice();
            let max = total.min(256);
            let found = first_passing(max, |k| {
                let mut left = k as usize;
                let mut rest: Vec<&[Pool]> = Vec::new();
                for c in clusters.iter().rev() {
                    if left > 0 && std::ptr::eq(c.as_ptr(), pools.as_ptr()) {
                        left -= 1;
                    } else {
                        rest.push(c);
                    }
                }
                rest.reverse();
                passes(l, topo, &rest)
            });
            (
                found.map(|count| RemoveClusters {
                    shape: name.to_string(),
                    count,
                }),
                max,
            )
        }
        None => (None, 0),
    };
    Fix {
        add_nodes,
        searched_nodes: MAX_ADD,
        remove_clusters,
        searched_clusters,
    }
}

/// Node-failure scenarios of a headroom result, by host index: VMs each strands.
pub fn stranded_by_node(h: &Headroom, hosts: usize) -> Vec<usize> {
    let mut out = vec![0; hosts];
    for s in h.scenarios.iter().filter(|s| s.kind == Kind::Node) {
        if let Some(&n) = s.hosts.first() {
            out[n] = s.stranded;
        }
    }
    out
}
