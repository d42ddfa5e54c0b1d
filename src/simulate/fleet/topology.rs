//! The fleet as a graph: power domains feed racks, racks hold nodes (petgraph). Failure
//! domains for the headroom test are read off it: every node, every rack, every power
//! domain that feeds more than one rack. Longhorn's zones (`topology.kubernetes.io/zone`)
//! are kept beside the racks: the racks themselves by default, one zone for all when a
//! scenario says racks are not zones, the nodes' labels on a dump or a site.

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;

use crate::simulate::scenario::Scenario;

#[derive(Debug, Clone)]
pub struct Host {
    pub name: String,
    pub rack: usize,
    /// Logical CPUs and GiB the scheduler may hand out (after system reservations).
    pub cpu: f64,
    pub mem_gib: f64,
    /// Longhorn disks, bytes.
    pub disks: Vec<f64>,
}

/// Longhorn node tags and disk tags, and the node and disk selectors volumes name (a
/// volume's `selector` indexes `selectors`; 0 is the empty selector every node meets).
#[derive(Debug, Clone, Default)]
pub struct Tags {
    pub(crate) node: Vec<Vec<String>>,
    pub(crate) disk: Vec<Vec<Vec<String>>>,
    /// (node selector, disk selector).
    pub(crate) selectors: Vec<(Vec<String>, Vec<String>)>,
}

impl Tags {
    /// Whether node `n` carries every tag of selector `sel` (`types.IsSelectorsInTags`).
    pub(crate) fn node_ok(&self, sel: u32, n: usize) -> bool {
        sel == 0
            || self.selectors.get(sel as usize).is_none_or(|(want, _)| {
                let have = self.node.get(n).map_or(&[][..], Vec::as_slice);
                want.iter().all(|t| have.contains(t))
            })
    }

    /// Whether disk `d` of node `n` carries every tag of selector `sel`.
    pub(crate) fn disk_ok(&self, sel: u32, n: usize, d: usize) -> bool {
        sel == 0
            || self.selectors.get(sel as usize).is_none_or(|(_, want)| {
                let have = self
                    .disk
                    .get(n)
                    .and_then(|x| x.get(d))
                    .map_or(&[][..], Vec::as_slice);
                want.iter().all(|t| have.contains(t))
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Domain {
    Node(usize),
    Rack(usize),
    Power(String),
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub hosts: Vec<Host>,
    /// The rack of each host, contiguous (the replica scheduler scans it per replica).
    pub(crate) rack_of: Vec<usize>,
    /// 1 / allocatable CPU and 1 / allocatable memory of each host, for scoring.
    pub(crate) inv_cap: Vec<(f64, f64)>,
    pub racks: Vec<String>,
    /// The power feed of each rack, if it shares one.
    pub(crate) power: Vec<Option<String>>,
    /// Longhorn's zone of each host, and the zone names (`""`: no zone label).
    pub(crate) zone_of: Vec<usize>,
    pub zones: Vec<String>,
    /// Hosts Longhorn puts no new replica on: its node is not Ready or not Schedulable, or
    /// scheduling is off on it.
    pub(crate) no_replicas: Vec<bool>,
    /// Longhorn node and disk tags, and the volumes' selectors.
    pub(crate) tags: Tags,
    /// Per host, its disks' names where the fleet names them (a dump's Longhorn disk
    /// names, a site's device paths); `disk_name` falls back to the position.
    pub(crate) disk_names: Vec<Vec<String>>,
    /// Per host, each disk's Longhorn `storageReserved`, bytes, where a dump states it;
    /// none elsewhere.
    pub(crate) disk_reserved: Vec<Vec<f64>>,
    graph: DiGraph<Domain, ()>,
    roots: Vec<NodeIndex>,
}

impl Topology {
    pub(crate) fn from_scenario(s: &Scenario) -> Topology {
        let mut racks: Vec<String> = s.fleet.racks.keys().cloned().collect();
        for c in &s.fleet.classes {
            for r in &c.racks {
                if !racks.contains(r) {
                    racks.push(r.clone());
                }
            }
        }
        let mut hosts = Vec::new();
        for c in &s.fleet.classes {
            for i in 0..c.count as usize {
                let rack_name = &c.racks[i % c.racks.len().max(1)];
                hosts.push(Host {
                    name: format!("{}-{:02}", c.name, i + 1),
                    rack: racks.iter().position(|r| r == rack_name).expect("listed"),
                    cpu: (f64::from(c.threads) - s.platform.reserved_cpu).max(0.0),
                    mem_gib: (c.memory_gib - s.platform.reserved_memory_gib).max(0.0),
                    disks: vec![c.disk_tb * 1e12; c.disks as usize],
                });
            }
        }
        let power: Vec<Option<String>> = racks
            .iter()
            .map(|r| s.fleet.racks.get(r).and_then(|x| x.power.clone()))
            .collect();
        let mut topo = Topology::build(hosts, racks, &power);
        if !s.fleet.racks_are_zones {
            topo.set_zones(&vec![String::new(); topo.hosts.len()]);
        }
        topo
    }

    /// Racks are zones unless told otherwise: each host's zone by name.
    pub fn set_zones(&mut self, names: &[String]) {
        self.zones.clear();
        self.zone_of = names
            .iter()
            .map(|z| {
                if let Some(i) = self.zones.iter().position(|x| x == z) {
                    i
                } else {
                    self.zones.push(z.clone());
                    self.zones.len() - 1
                }
            })
            .collect();
    }

    /// How the zones were told, for the assumptions: racks as zones, one zone, or named.
    pub(crate) fn zones_are_racks(&self) -> bool {
        self.zones == self.racks && self.zone_of == self.rack_of
    }

    pub fn build(hosts: Vec<Host>, racks: Vec<String>, power: &[Option<String>]) -> Topology {
        let mut graph = DiGraph::new();
        let mut roots = Vec::new();
        let mut power_nodes: Vec<(String, NodeIndex)> = Vec::new();
        let rack_nodes: Vec<NodeIndex> = (0..racks.len())
            .map(|r| graph.add_node(Domain::Rack(r)))
            .collect();
        for (r, p) in power.iter().enumerate() {
            match p {
                Some(p) => {
                    let idx = if let Some((_, i)) = power_nodes.iter().find(|(n, _)| n == p) {
                        *i
                    } else {
                        let i = graph.add_node(Domain::Power(p.clone()));
                        power_nodes.push((p.clone(), i));
                        roots.push(i);
                        i
                    };
                    graph.add_edge(idx, rack_nodes[r], ());
                }
                None => roots.push(rack_nodes[r]),
            }
        }
        for (h, host) in hosts.iter().enumerate() {
            let n = graph.add_node(Domain::Node(h));
            graph.add_edge(rack_nodes[host.rack], n, ());
        }
        let inv_cap = hosts
            .iter()
            .map(|h| (1.0 / h.cpu.max(1e-9), 1.0 / h.mem_gib.max(1e-9)))
            .collect();
        Topology {
            rack_of: hosts.iter().map(|h| h.rack).collect(),
            zone_of: hosts.iter().map(|h| h.rack).collect(),
            zones: racks.clone(),
            no_replicas: vec![false; hosts.len()],
            tags: Tags::default(),
            disk_names: Vec::new(),
            disk_reserved: Vec::new(),
            hosts,
            inv_cap,
            racks,
            power: power.to_vec(),
            graph,
            roots,
        }
    }

    /// The same fleet with `extra` hosts added.
    #[must_use]
    pub(crate) fn with_hosts(&self, extra: &[Host]) -> Topology {
        let mut hosts = self.hosts.clone();
        hosts.extend_from_slice(extra);
        let mut topo = Topology::build(hosts, self.racks.clone(), &self.power);
        if !self.zones_are_racks() {
            // A new host joins the zone of the hosts of its rack (none: no zone label).
            let names: Vec<String> = topo
                .hosts
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    let like = if i < self.hosts.len() {
                        Some(i)
                    } else {
                        self.rack_of.iter().position(|&r| r == h.rack)
                    };
                    like.map_or_else(String::new, |j| self.zones[self.zone_of[j]].clone())
                })
                .collect();
            topo.set_zones(&names);
        }
        topo.no_replicas[..self.hosts.len()].copy_from_slice(&self.no_replicas);
        topo.tags = self.tags.clone();
        topo.disk_names.clone_from(&self.disk_names);
        topo.disk_reserved.clone_from(&self.disk_reserved);
        topo
    }

    /// Disk `d` of host `n` as its fleet names it, else by position ("disk-2").
    pub(crate) fn disk_name(&self, n: usize, d: usize) -> String {
        self.disk_names
            .get(n)
            .and_then(|x| x.get(d))
            .filter(|x| !x.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("disk-{}", d + 1))
    }

    /// Longhorn's `storageReserved` on disk `d` of host `n`, bytes (0 unless stated).
    pub(crate) fn reserved(&self, n: usize, d: usize) -> f64 {
        self.disk_reserved
            .get(n)
            .and_then(|x| x.get(d))
            .copied()
            .unwrap_or(0.0)
            .max(0.0)
    }

    pub fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h.name == name)
    }

    /// Hosts below a domain in the graph.
    fn hosts_under(&self, start: NodeIndex) -> Vec<usize> {
        let mut out = Vec::new();
        let mut dfs = Dfs::new(&self.graph, start);
        while let Some(n) = dfs.next(&self.graph) {
            if let Domain::Node(h) = self.graph[n] {
                out.push(h);
            }
        }
        out.sort_unstable();
        out
    }

    /// Failure scenarios: (name, hosts that fail together).
    pub(crate) fn failure_domains(&self) -> Vec<(String, Vec<usize>)> {
        let mut out: Vec<(String, Vec<usize>)> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("node {}", h.name), vec![i]))
            .collect();
        for idx in self.graph.node_indices() {
            match &self.graph[idx] {
                Domain::Rack(r) => {
                    let hs = self.hosts_under(idx);
                    if hs.len() > 1 {
                        out.push((format!("rack {}", self.racks[*r]), hs));
                    }
                }
                Domain::Power(p) => {
                    let racks_fed = self.graph.neighbors(idx).count();
                    if racks_fed > 1 {
                        out.push((format!("power {p}"), self.hosts_under(idx)));
                    }
                }
                Domain::Node(_) => {}
            }
        }
        debug_assert!(!self.roots.is_empty() || self.hosts.is_empty());
        out
    }
}
