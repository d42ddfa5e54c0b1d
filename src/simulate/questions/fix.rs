//! What would fix a failing fleet: the fewest nodes to add, or the fewest clusters to
//! remove, each found by placing and checking again.

use rayon::prelude::*;

use crate::simulate::failure::headroom;
use crate::simulate::failure::rebuild::{
    self, largest_class, load_node, rebuild_input, rebuild_target, what_if_node,
};
use crate::simulate::fleet::{Host, Topology};
use crate::simulate::report::{AddNodes, Fix, RemoveClusters};
use crate::simulate::scenario::Pool;
use crate::simulate::study::Study;

/// Whether a fleet passes: headroom, and a rebuild that restores full redundancy.
pub(crate) fn passes(l: &Study, topo: &Topology, clusters: &[&[Pool]]) -> bool {
    let s = &l.scenario;
    let pl = l.place_on(topo.clone(), clusters);
    if !headroom::analyse_with(&pl, &l.headroom_spec(topo))
        .verdict
        .passes()
    {
        return false;
    }
    // The same rebuild the report runs: the what-if's loaded node, or the fullest one.
    let (pl, failed) = if let Some(w) = &s.rebuild {
        let node = what_if_node(topo, w, l.fleet_classes());
        let Ok(loaded) = load_node(&l.scenario.platform, &l.shapes, &pl, node, w.data_tib) else {
            return false;
        };
        (loaded, node)
    } else {
        let failed = rebuild_target(&l.scenario, &pl);
        (pl, failed)
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
