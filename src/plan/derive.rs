//! Profiles derived from the hardware actually found, for `rackplan init --from`: per role,
//! the largest shape every node of that role has (fewest cores, least memory, smallest
//! disks, fewest data disks, the port layout every node can bond), so that `check` starts
//! from zero profile errors on the site's own hardware and people tighten from there.
//!
//! Roles come first: a person's annotation, else three management nodes spread over the
//! racks (the same inference `check` uses, without a profile to meet), else compute. The
//! roles are written into the new site's nodes.yaml, so a later `check` holds each node to
//! the profile derived for it.

use std::collections::BTreeMap;

use super::allocations::Lock;
use super::fit::against_profile;
use super::roles;
use crate::inventory::{Inventory, Node};
use crate::plan::Severity;
use crate::profile::{
    ByteSize, CpuSpec, DataDisks, DiskSpec, MemorySpec, NetworkKind, NetworkSpec, Profile,
    Profiles, Role,
};

/// A derived profile and what the derivation could not make fit.
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    pub(crate) profile: Profile,
    pub(crate) nodes: Vec<String>,
    /// Errors left on nodes of this role with the derived profile (missing facts, or
    /// hardware no profile can accept).
    pub(crate) remaining: Vec<String>,
}

/// Whole gigabytes, rounded down (drive labels are decimal).
fn floor_gb(bytes: u64) -> u64 {
    bytes / 1_000_000_000 * 1_000_000_000
}

/// When fewer than three nodes are management: each node neither annotated nor inferred
/// management, with why inference could not choose it ("SN1: CPU cores and memory
/// unknown"); empty otherwise.
pub(crate) fn role_gaps(inv: &Inventory, roles: &BTreeMap<String, Role>) -> Vec<String> {
    let management = roles.values().filter(|r| **r == Role::Management).count();
    if management >= roles::MANAGEMENT_NODES {
        return Vec::new();
    }
    let floor = floor_profile();
    inv.nodes
        .iter()
        .filter(|n| n.annotations.role.is_none() && roles.get(&n.id) != Some(&Role::Management))
        .map(|n| {
            let why = if n.cores().is_none() || n.memory_gib.is_none() {
                "its CPU cores or memory are unknown (discovery did not report them)".to_string()
            } else {
                against_profile(n, &floor)
                    .into_iter()
                    .find(|f| f.severity == Severity::Error && f.code != "link-down")
                    .map_or_else(|| "not chosen".to_string(), |f| f.what)
            };
            format!("{}: {why}", n.id)
        })
        .collect()
}

/// The least a management node must have: known cores and memory, a disk of known size
/// and a port.
fn floor_profile() -> Profile {
    Profile {
        role: Role::Management,
        description: String::new(),
        cpu: CpuSpec {
            min_cores: 1,
            min_threads: None,
        },
        memory: MemorySpec { min_gib: 1.0 },
        os_disk: DiskSpec {
            min_size: ByteSize(1),
            protocol: None,
        },
        data_disks: None,
        networks: vec![NetworkSpec {
            network: NetworkKind::Management,
            ports: 1,
            speed_mbps: 1,
        }],
        bios: Default::default(),
        gpus: None,
    }
}

/// Roles for every node: annotation, else inferred. A management node must at least have a
/// disk of known size, a port and known cores and memory: a node discovery knows nothing
/// about is not made one of the three that hold etcd.
pub(crate) fn roles(inv: &Inventory) -> BTreeMap<String, Role> {
    let floor = floor_profile();
    let mut profiles = Profiles::default();
    profiles.by_role.insert(Role::Management, floor.clone());
    let known = |n: &Node| n.cores().is_some() && n.memory_gib.is_some();
    let mut inv = inv.clone();
    // Unknown cores or memory are only warnings against a profile; hide such nodes from
    // the inference by giving them a role up front, then take it back.
    let unknown: Vec<String> = inv
        .nodes
        .iter()
        .filter(|n| n.annotations.role.is_none() && !known(n))
        .map(|n| n.id.clone())
        .collect();
    for n in &mut inv.nodes {
        if unknown.contains(&n.id) {
            n.annotations.role = Some(Role::Compute);
        }
        // A link that is down is the day's cabling, not the machine: it does not decide
        // which nodes hold etcd (check still reports it).
        for nic in &mut n.nics {
            if nic.link == crate::inventory::LinkState::Down {
                nic.link = crate::inventory::LinkState::Unknown;
            }
        }
    }
    roles::assign(&inv, &profiles, &Lock::default())
        .into_iter()
        .map(|(k, d)| (k, d.role))
        .collect()
}

fn disks_of(n: &Node) -> Vec<u64> {
    let mut v: Vec<u64> = n.disks.iter().filter_map(|d| d.capacity_bytes).collect();
    v.sort_unstable();
    v
}

/// Port layouts tried, richest first: ports per (management, vm, storage). site.yaml
/// defines all three networks, so every layout gives each a port: a node with fewer ports
/// keeps its `ports-missing` error, which no profile can fix (`check` refuses a network a
/// profile leaves out, since its VlanConfig would have no uplinks).
const LAYOUTS: [[u32; 3]; 2] = [[2, 2, 2], [1, 1, 1]];

/// Every error `check` would raise on these nodes against `p`: the profile's own gaps and
/// what no profile changes (a disk path the BMC's data cannot give, Harvester's minima, a
/// BIOS setting, a GPU), each with its fix.
fn errors(nodes: &[&Node], p: &Profile) -> Vec<String> {
    nodes
        .iter()
        .flat_map(|n| {
            let mut f = against_profile(n, p);
            f.extend(super::fit::harvester_minima(n, p));
            f.extend(super::bios::bios_findings(n, p));
            f.extend(super::bios::gpu_findings(n, p));
            f.extend(super::disk_paths::disk_paths(n, p, false));
            f
        })
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{}: {}; {}", f.node, f.what, f.fix))
        .collect()
}

/// The profile of one role from its nodes.
pub(crate) fn derive(role: Role, nodes: &[&Node]) -> Derived {
    let cores = nodes.iter().filter_map(|n| n.cores()).min().unwrap_or(1);
    let memory = nodes
        .iter()
        .filter_map(|n| n.memory_gib)
        .fold(f64::INFINITY, f64::min);
    let memory = if memory.is_finite() {
        memory.floor()
    } else {
        1.0
    };
    let disk_lists: Vec<Vec<u64>> = nodes
        .iter()
        .map(|n| disks_of(n))
        .filter(|d| !d.is_empty())
        .collect();
    let os_min = disk_lists
        .iter()
        .map(|d| d[0])
        .min()
        .map_or(1, floor_gb)
        .max(1);
    let data_count = disk_lists.iter().map(|d| d.len() - 1).min().unwrap_or(0);
    let data_min = disk_lists
        .iter()
        .flat_map(|d| d[1..].iter().copied())
        .min()
        .map_or(1, floor_gb)
        .max(1);
    let speeds: Vec<u32> = nodes
        .iter()
        .flat_map(|n| n.nics.iter().filter_map(|c| c.speed_mbps))
        .filter(|&s| s > 0)
        .collect();
    // The slowest port any node has: every chosen port is at least that fast.
    let speed = speeds.iter().copied().min().unwrap_or(1000);
    let base = Profile {
        role,
        description: format!(
            "{role} nodes as found by discovery ({} node(s)); derived by rackplan init, tighten to your standard",
            nodes.len()
        ),
        cpu: CpuSpec {
            min_cores: cores,
            min_threads: None,
        },
        memory: MemorySpec { min_gib: memory },
        os_disk: DiskSpec {
            min_size: ByteSize(os_min),
            protocol: None,
        },
        data_disks: (data_count > 0).then_some(DataDisks {
            count: data_count as u32,
            min_size: ByteSize(data_min),
            protocol: None,
        }),
        networks: Vec::new(),
        bios: Default::default(),
        gpus: None,
    };
    let mut best: Option<(Profile, Vec<String>)> = None;
    for layout in LAYOUTS {
        let mut p = base.clone();
        p.networks = [
            NetworkKind::Management,
            NetworkKind::Vm,
            NetworkKind::Storage,
        ]
        .into_iter()
        .zip(layout)
        .filter(|(_, ports)| *ports > 0)
        .map(|(network, ports)| NetworkSpec {
            network,
            ports,
            speed_mbps: speed,
        })
        .collect();
        let errs = errors(nodes, &p);
        if errs.is_empty() {
            return Derived {
                profile: p,
                nodes: nodes.iter().map(|n| n.id.clone()).collect(),
                remaining: errs,
            };
        }
        if best.as_ref().is_none_or(|(_, e)| errs.len() < e.len()) {
            best = Some((p, errs));
        }
    }
    let (profile, remaining) = best.expect("two layouts tried");
    Derived {
        profile,
        nodes: nodes.iter().map(|n| n.id.clone()).collect(),
        remaining,
    }
}

/// Derived profiles for every role that has nodes, and the roles decided.
pub(crate) fn derive_all(inv: &Inventory) -> (BTreeMap<Role, Derived>, BTreeMap<String, Role>) {
    let roles = roles(inv);
    let mut out = BTreeMap::new();
    for role in Role::ALL {
        let nodes: Vec<&Node> = inv
            .nodes
            .iter()
            .filter(|n| roles.get(&n.id) == Some(&role))
            .collect();
        if !nodes.is_empty() {
            out.insert(role, derive(role, &nodes));
        }
    }
    (out, roles)
}
