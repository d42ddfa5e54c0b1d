//! Which node does what.
//!
//! Order of authority: a role annotated by a person, then the role recorded in the lock,
//! then inference. Inference picks three management nodes among the nodes that meet the
//! management profile, preferring dedicated management hardware (nodes that do not also
//! meet the compute profile) and spreading them over racks/zones, one per failure domain
//! before any domain gets a second. Everything else is compute. Witness is never inferred.

use std::collections::BTreeMap;

use serde::Serialize;

use super::allocations::Lock;
use super::fit::meets_profile;
use crate::inventory::{Inventory, Node};
use crate::profile::{Profiles, Role};

/// Harvester runs three control-plane (etcd) nodes.
pub(crate) const MANAGEMENT_NODES: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleSource {
    Annotation,
    Lock,
    Inferred,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RoleDecision {
    pub(crate) role: Role,
    pub(crate) source: RoleSource,
}

pub(crate) fn assign(
    inv: &Inventory,
    profiles: &Profiles,
    lock: &Lock,
) -> BTreeMap<String, RoleDecision> {
    let mut out = BTreeMap::new();
    for node in &inv.nodes {
        if let Some(role) = node.annotations.role {
            out.insert(
                node.id.clone(),
                RoleDecision {
                    role,
                    source: RoleSource::Annotation,
                },
            );
        } else if let Some(a) = lock.get(&node.id) {
            out.insert(
                node.id.clone(),
                RoleDecision {
                    role: a.role,
                    source: RoleSource::Lock,
                },
            );
        }
    }
    let have = out.values().filter(|d| d.role == Role::Management).count();
    let mut need = MANAGEMENT_NODES.saturating_sub(have);
    let mgmt_profile = profiles.get(Role::Management);
    let compute_profile = profiles.get(Role::Compute);
    // Each candidate with whether it would also make a compute node (those are kept
    // for compute when there is a choice); the profile check runs once per node.
    let mut candidates: Vec<(&Node, bool)> = inv
        .nodes
        .iter()
        .filter(|n| !out.contains_key(&n.id))
        .filter(|n| mgmt_profile.is_none_or(|p| meets_profile(n, p)))
        .map(|n| (n, compute_profile.is_some_and(|p| meets_profile(n, p))))
        .collect();
    // Domains already holding a management node count against spreading more there.
    let mut per_domain: BTreeMap<String, usize> = BTreeMap::new();
    for node in &inv.nodes {
        if out
            .get(&node.id)
            .is_some_and(|d| d.role == Role::Management)
        {
            *per_domain.entry(domain(node)).or_default() += 1;
        }
    }
    while need > 0 && !candidates.is_empty() {
        let best = candidates
            .iter()
            .enumerate()
            .min_by_key(|(_, (n, also_compute))| {
                (
                    per_domain.get(&domain(n)).copied().unwrap_or(0),
                    *also_compute,
                    n.id.as_str(),
                )
            })
            .map(|(i, _)| i)
            .expect("candidates is not empty");
        let (node, _) = candidates.remove(best);
        *per_domain.entry(domain(node)).or_default() += 1;
        out.insert(
            node.id.clone(),
            RoleDecision {
                role: Role::Management,
                source: RoleSource::Inferred,
            },
        );
        need -= 1;
    }
    for node in &inv.nodes {
        out.entry(node.id.clone()).or_insert(RoleDecision {
            role: Role::Compute,
            source: RoleSource::Inferred,
        });
    }
    out
}

fn domain(n: &Node) -> String {
    n.failure_domain().unwrap_or("").to_string()
}
