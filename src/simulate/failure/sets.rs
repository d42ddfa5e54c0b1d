//! The sets of nodes that fail together in the families of failures the headroom judges:
//! a named set plus any other node, every pair of nodes, every rack plus a node outside it.

use super::replace::NamedSet;
use crate::simulate::fleet::Topology;

/// A named set with `plus_any_node`: the set with each node outside it.
pub(crate) fn plus_any_node(topo: &Topology, set: &NamedSet) -> Vec<(String, Vec<usize>)> {
    let host = |h: usize| topo.hosts[h].name.as_str();
    (0..topo.hosts.len())
        .filter(|h| !set.hosts.contains(h))
        .map(|h| {
            let mut hs = set.hosts.clone();
            hs.push(h);
            hs.sort_unstable();
            (format!("{} + node {}", set.name, host(h)), hs)
        })
        .collect()
}

/// Every pair of nodes.
pub(crate) fn pairs(topo: &Topology) -> Vec<(String, Vec<usize>)> {
    let n = topo.hosts.len();
    let host = |h: usize| topo.hosts[h].name.as_str();
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .map(|(a, b)| (format!("nodes {} + {}", host(a), host(b)), vec![a, b]))
        .collect()
}

/// Every rack of `domains` with each node outside it.
pub(crate) fn rack_and_node(
    topo: &Topology,
    domains: &[(String, Vec<usize>)],
) -> Vec<(String, Vec<usize>)> {
    let n = topo.hosts.len();
    let host = |h: usize| topo.hosts[h].name.as_str();
    domains
        .iter()
        .filter(|(name, _)| name.starts_with("rack "))
        .flat_map(|(name, hs)| {
            (0..n).filter(|h| !hs.contains(h)).map(move |h| {
                let mut all = hs.clone();
                all.push(h);
                all.sort_unstable();
                (format!("{name} + node {}", host(h)), all)
            })
        })
        .collect()
}
