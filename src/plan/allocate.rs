//! Planning: extend the lock with the nodes the inventory gained, keeping every existing
//! entry (see `allocations` for the rules), and size the storage network.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use serde::Serialize;

use super::allocations::{Allocation, Lock};
use super::inputs::Inputs;
use super::roles::RoleSource;
use crate::files::secrets;
use crate::files::yaml::InputError;
use crate::network;
use crate::path;
use crate::profile::Role;

/// How a node's installer brings it into the cluster: the one `cluster_init` node creates
/// it, every other node joins through the VIP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InstallMode {
    Create,
    Join,
}

impl std::fmt::Display for InstallMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InstallMode::Create => "create",
            InstallMode::Join => "join",
        })
    }
}

/// What happened to one node in this plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Change {
    Added,
    Kept,
    RoleChanged {
        from: Role,
        to: Role,
        old_hostname: String,
    },
    /// In the lock but no longer in the inventory: still reserved.
    Orphaned,
    Released,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlannedNode {
    #[serde(flatten)]
    pub(crate) allocation: Allocation,
    pub(crate) install_mode: InstallMode,
    pub(crate) role_source: Option<RoleSource>,
    pub(crate) change: Change,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StorageSizing {
    pub(crate) range: String,
    pub(crate) needed: u64,
    pub(crate) usable: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlanOutcome {
    #[serde(skip)]
    pub(crate) lock: Lock,
    pub(crate) nodes: Vec<PlannedNode>,
    pub(crate) storage_network: StorageSizing,
    pub(crate) notes: Vec<String>,
}

fn hostname(prefix: &str, role: Role, index: u32) -> String {
    format!("{prefix}-{}{index:02}", role.letter())
}

fn index_of(prefix: &str, role: Role, name: &str) -> Option<u32> {
    name.strip_prefix(&format!("{prefix}-{}", role.letter()))?
        .parse()
        .ok()
}

/// Plan roles, hostnames and addresses; pure except for the random salts of new nodes.
pub fn plan(inputs: &Inputs, release: &[String]) -> Result<PlanOutcome, InputError> {
    let site = &inputs.site.site;
    let src = &inputs.site.source;
    let prefix = site.management.hostname_prefix.0.as_str();
    let roles = &super::roles::assign(&inputs.inventory, &inputs.profiles, &inputs.lock);
    let in_inventory: BTreeSet<&str> = inputs
        .inventory
        .nodes
        .iter()
        .map(|n| n.id.as_str())
        .collect();
    let mut notes = Vec::new();
    let mut lock = inputs.lock.clone();
    let mut changes: BTreeMap<String, Change> = BTreeMap::new();

    for id in release {
        match lock.nodes.iter().position(|a| a.id == *id) {
            Some(i) => {
                let a = lock.nodes.remove(i);
                notes.push(format!(
                    "released {} ({}, {}) as asked",
                    a.id, a.hostname, a.management_ip
                ));
                changes.insert(a.id, Change::Released);
            }
            None => notes.push(format!(
                "--release {id}: no such node in the lock; nothing freed"
            )),
        }
    }

    let used_names = |lock: &Lock, role: Role| -> BTreeSet<u32> {
        lock.nodes
            .iter()
            .filter_map(|a| index_of(prefix, role, &a.hostname))
            .collect()
    };
    // The lowest index not in use: at most `used.len() + 1`.
    let next_index = |used: &BTreeSet<u32>| {
        (1..=u32::try_from(used.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1))
            .find(|i| !used.contains(i))
            .unwrap_or(u32::MAX)
    };

    // Role changes asked for by annotations: new hostname, same address.
    for i in 0..lock.nodes.len() {
        let id = lock.nodes[i].id.clone();
        let Some(decision) = roles.get(&id) else {
            continue;
        };
        if decision.role != lock.nodes[i].role {
            let used = used_names(&lock, decision.role);
            let old = lock.nodes[i].clone();
            lock.nodes[i].role = decision.role;
            lock.nodes[i].hostname = hostname(prefix, decision.role, next_index(&used));
            notes.push(format!(
                "{id}: role {} -> {} by annotation; hostname {} -> {}, address {} kept",
                old.role, decision.role, old.hostname, lock.nodes[i].hostname, old.management_ip
            ));
            changes.insert(
                id,
                Change::RoleChanged {
                    from: old.role,
                    to: decision.role,
                    old_hostname: old.hostname,
                },
            );
        }
    }

    // New nodes: management first so they take the lowest numbers, then by rack and id.
    let mut new_nodes: Vec<_> = inputs
        .inventory
        .nodes
        .iter()
        .filter(|n| lock.get(&n.id).is_none())
        .collect();
    new_nodes.sort_by_key(|n| {
        (
            roles[&n.id].role,
            n.failure_domain().unwrap_or("").to_string(),
            n.id.clone(),
        )
    });
    let mut taken: BTreeSet<Ipv4Addr> = lock.nodes.iter().map(|a| a.management_ip).collect();
    taken.insert(site.management.vip);
    taken.insert(site.management.gateway);
    let free_total = (u32::from(site.management.pool.start)..=u32::from(site.management.pool.end))
        .filter(|a| !taken.contains(&Ipv4Addr::from(*a)))
        .count();
    if new_nodes.len() > free_total {
        return Err(src.error_at(
            &path!["management", "pool"],
            format!(
                "the management pool is exhausted: {} new node(s) need an address, {} are free",
                new_nodes.len(),
                free_total
            ),
            Some(
                "widen management.pool, or release nodes that left (`rackplan plan --release ID`)"
                    .into(),
            ),
        ));
    }
    for node in new_nodes {
        let role = roles[&node.id].role;
        let used = used_names(&lock, role);
        let ip = network::next_free(&site.management.pool, &taken).expect("counted above");
        taken.insert(ip);
        lock.nodes.push(Allocation {
            id: node.id.clone(),
            role,
            hostname: hostname(prefix, role, next_index(&used)),
            management_ip: ip,
            password_salt: secrets::random_salt(),
        });
        changes.insert(node.id.clone(), Change::Added);
    }

    for a in &lock.nodes {
        if !in_inventory.contains(a.id.as_str()) {
            notes.push(format!(
                "{} is no longer in the inventory; {} and {} stay reserved (free them with `rackplan plan --release {}`)",
                a.id, a.hostname, a.management_ip, a.id
            ));
            changes.insert(a.id.clone(), Change::Orphaned);
        }
    }

    // The create node: kept once chosen, unless it left the management role or the lock.
    let is_mgmt = |id: &str| lock.get(id).is_some_and(|a| a.role == Role::Management);
    let first_mgmt = lock
        .nodes
        .iter()
        .filter(|a| a.role == Role::Management && in_inventory.contains(a.id.as_str()))
        .min_by(|a, b| a.hostname.cmp(&b.hostname))
        .map(|a| a.id.clone());
    match lock.cluster_init.clone() {
        Some(id) if is_mgmt(&id) => {}
        Some(id) => {
            notes.push(format!(
                "cluster-init node {id} is no longer a management node; {} creates the cluster now \
                 (this matters only before the cluster is installed)",
                first_mgmt.as_deref().unwrap_or("no node")
            ));
            lock.cluster_init = first_mgmt;
        }
        None => lock.cluster_init = first_mgmt,
    }

    lock.nodes
        .sort_by(|a, b| (a.role, &a.hostname).cmp(&(b.role, &b.hostname)));

    let sn = &site.storage_network;
    let (needed, usable) = super::fit::storage_sizing(inputs, |id| roles[id].role);
    if usable < needed {
        return Err(src.error_at(
            &path!["storage_network", "cidr"],
            format!("storage range {} has {usable} usable addresses; the fleet needs {needed} (2 + 2 per disk per Longhorn node)", sn.cidr),
            Some("widen storage_network.cidr (Harvester accepts up to /16) or drop excludes".into()),
        ));
    }

    let nodes = lock
        .nodes
        .iter()
        .map(|a| PlannedNode {
            allocation: a.clone(),
            install_mode: if lock.cluster_init.as_deref() == Some(a.id.as_str()) {
                InstallMode::Create
            } else {
                InstallMode::Join
            },
            role_source: roles.get(&a.id).map(|d| d.source),
            change: changes.get(&a.id).cloned().unwrap_or(Change::Kept),
        })
        .collect();
    Ok(PlanOutcome {
        lock,
        nodes,
        storage_network: StorageSizing {
            range: sn.cidr.to_string(),
            needed,
            usable,
        },
        notes,
    })
}
