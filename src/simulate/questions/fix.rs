//! What would fix a failing fleet: the fewest nodes to add, or the fewest clusters to
//! remove, each found by placing and checking again. Headroom is judged as max clusters
//! judges it (the bounds, then only the failures they cannot settle re-placed:
//! `pruned`), the verdict `headroom::analyse_with` gives. Removing the last clusters of
//! the list leaves a shorter list, so when the shape's clusters come last, every count
//! removed is one placement grown a cluster at a time (`Growth`), not a placement each.

use rayon::prelude::*;

use super::growth::Growth;
use crate::simulate::failure::pruned::{self, Failures};
use crate::simulate::failure::rebuild::{
    self, largest_class, load_node, rebuild_input, rebuild_target, what_if_node,
};
use crate::simulate::fleet::{Host, Topology};
use crate::simulate::place::Placement;
use crate::simulate::report::{AddNodes, Fix, RemoveClusters};
use crate::simulate::scenario::Pool;
use crate::simulate::study::Study;

/// Whether a fleet passes: headroom, and a rebuild that restores full redundancy.
pub(crate) fn passes(l: &Study, topo: &Topology, clusters: &[&[Pool]]) -> bool {
    let failures = Failures::new(topo, &l.headroom_spec(topo));
    placed_passes(l, &l.place_on(topo.clone(), clusters), &failures)
}

/// `passes` of a fleet placed already (`failures` named for its topology).
fn placed_passes(l: &Study, pl: &Placement, failures: &Failures) -> bool {
    let s = &l.scenario;
    let topo = pl.topo();
    if !(pruned::proven(pl, failures) || pruned::verdict_and_min_slack(pl, failures).0.passes()) {
        return false;
    }
    // The same rebuild the report runs: the what-if's loaded node, or the fullest one.
    let (pl, failed) = if let Some(w) = &s.rebuild {
        let node = what_if_node(topo, w, l.fleet_classes());
        let Ok(loaded) = load_node(&l.scenario.platform, &l.shapes, pl, node, w.data_tib) else {
            return false;
        };
        (std::borrow::Cow::Owned(loaded), node)
    } else {
        (
            std::borrow::Cow::Borrowed(pl),
            rebuild_target(&l.scenario, pl),
        )
    };
    let (input, _) = rebuild_input(&l.scenario, &pl, failed, s.platform.rebuild_limit);
    rebuild::simulate(&input).hours_to_full_redundancy.is_some()
}

/// Most nodes the fix search adds.
const MAX_ADD: u32 = 32;

/// New hosts copying the largest class (or the biggest site host), in its racks in turn.
fn new_hosts(l: &Study, topo: &Topology, k: u32) -> (String, Vec<Host>) {
    let p = &l.scenario.platform;
    if let Some(c) = largest_class(l.fleet_classes()) {
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

/// Most clusters the fix search removes.
const MAX_REMOVE: u32 = 256;

/// The fewest of the last clusters of `pools` in `clusters` (1 to `max`) whose removal
/// makes the fleet pass. When the last `max` clusters of the list are all of `pools`, the
/// list with `k` removed is the one with `max` removed plus `max - k` clusters, placed by
/// growing one placement (the same placement as placing each list whole); else each
/// count is placed on its own.
fn fewest_removed(
    l: &Study,
    topo: &Topology,
    clusters: &[&[Pool]],
    pools: &[Pool],
    max: u32,
) -> Option<u32> {
    let of_shape = |c: &&[Pool]| std::ptr::eq(c.as_ptr(), pools.as_ptr());
    let m = max as usize;
    let last_are_shape = m <= clusters.len() && clusters[clusters.len() - m..].iter().all(of_shape);
    if !last_are_shape {
        return first_passing(max, |k| {
            let mut left = k as usize;
            let mut rest: Vec<&[Pool]> = Vec::new();
            for c in clusters.iter().rev() {
                if left > 0 && of_shape(c) {
                    left -= 1;
                } else {
                    rest.push(c);
                }
            }
            rest.reverse();
            passes(l, topo, &rest)
        });
    }
    let failures = Failures::new(topo, &l.headroom_spec(topo));
    let base = &clusters[..clusters.len() - m];
    let mut growth = Growth::on(l, l.place_on(topo.clone(), base), base, pools);
    // From `max` removed down to 1: the last count that passes is the fewest.
    let mut fewest = None;
    for k in (1..=max).rev() {
        if placed_passes(l, growth.at(max - k), &failures) {
            fewest = Some(k);
        }
    }
    fewest
}

/// How many nodes to add, or clusters of the most common running shape to remove.
pub(crate) fn fix(l: &Study, topo: &Topology, clusters: &[&[Pool]]) -> Fix {
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
            let max = total.min(MAX_REMOVE);
            let found = fewest_removed(l, topo, clusters, pools, max);
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

#[cfg(test)]
#[path = "fix_tests.rs"]
mod tests;
