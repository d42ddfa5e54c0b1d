//! `rackplan check`: every node against its role's profile, Harvester's own minima and the
//! rest of the fleet. Pure: inventory, profiles and site in, findings out.

use std::collections::BTreeMap;

use super::disk_paths::disk_paths;
use super::findings::{Finding, Severity};
use super::fit::{against_profile, harvester_minima, meets_profile, storage_sizing};
use super::inputs::Inputs;
use super::roles::{self, MANAGEMENT_NODES, RoleDecision};
use crate::inventory::Node;
use crate::network;
use crate::profile::Role;

/// The result of a check: findings plus the role each node was checked as.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub findings: Vec<Finding>,
    pub(crate) roles: BTreeMap<String, RoleDecision>,
}

/// Check the whole site.
pub fn check(inputs: &Inputs) -> CheckReport {
    let inv = &inputs.inventory;
    let roles = roles::assign(inv, &inputs.profiles, &inputs.lock);
    let mut findings = Vec::new();
    for node in &inv.nodes {
        let role = roles[&node.id].role;
        if let Some(stale) = &node.stale {
            findings.push(Finding::new(
                &node.id,
                Severity::Warning,
                "stale",
                format!(
                    "last discovery failed ({}) since {}",
                    stale.error, stale.since
                ),
                "the facts checked here may be out of date",
                "fix the BMC/host access and rediscover",
            ));
        }
        match inputs.profiles.get(role) {
            Some(p) => {
                findings.extend(against_profile(node, p));
                findings.extend(harvester_minima(node, p));
                findings.extend(super::bios::bios_findings(node, p));
                findings.extend(super::bios::gpu_findings(node, p));
                findings.extend(disk_paths(
                    node,
                    p,
                    inputs.site.site.harvester.skip_preflight_checks,
                ));
            }
            None => findings.push(Finding::new(
                &node.id,
                Severity::Error,
                "profile-missing",
                format!(
                    "no profile for role {role} (looked for {})",
                    inputs.site.profiles_dir().join(format!("{role}.yaml")).display()
                ),
                "a node can only be checked and rendered against its role's profile",
                format!(
                    "add {role}.yaml there, or point `profiles_dir` in site.yaml at the folder that has it (`rackplan init --from nodes.yaml` derives one from the hardware)"
                ),
            )),
        }
    }
    findings.extend(duplicates(inv));
    findings.extend(super::drift::drift(
        inv,
        &inputs.site.site.firmware_baseline,
    ));
    for node in &inv.nodes {
        findings.extend(untrusted_text(node));
    }
    findings.extend(site_findings(inputs, &roles));
    findings.extend(super::catalogue_check::catalogue_findings(inputs));
    // Cabling's notes (LLDP never read, on a site without a design) belong to
    // `check --cabling`: a site that does not check its cabling is not told each time.
    findings.extend(
        super::cabling::cabling_with(inputs, &roles)
            .findings
            .into_iter()
            .filter(|f| f.severity != Severity::Info),
    );
    super::acknowledge::apply(&mut findings, inv, &inputs.expired);
    findings.sort_by(|a, b| {
        (a.node == "site", &a.node, a.severity, a.code).cmp(&(
            b.node == "site",
            &b.node,
            b.severity,
            b.code,
        ))
    });
    CheckReport { findings, roles }
}

/// Every discovered string of a node, checked: one error finding per field that holds a
/// character that could turn into a command or break a file.
pub fn untrusted_text(node: &Node) -> Vec<Finding> {
    crate::inventory::text::untrusted_fields(node)
        .into_iter()
        .map(|(field, shown)| {
            Finding::new(
                &crate::redfish::origin::shown(&node.id),
                Severity::Error,
                "untrusted-text",
                format!("{field} holds a control or script character: \"{shown}\""),
                "text from a BMC or host reaches install configs, iPXE scripts and comments; a newline or `$` there could become a command",
                "correct it in nodes.yaml (or at the BMC) and rediscover; nothing is rendered until then",
            )
        })
        .collect()
}

fn duplicates(inv: &crate::inventory::Inventory) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut macs: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut serials: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for n in &inv.nodes {
        for nic in &n.nics {
            macs.entry(nic.mac.as_str()).or_default().push(&n.id);
        }
        if let Some(s) = n.serial.as_deref() {
            serials.entry(s).or_default().push(&n.id);
        }
    }
    for (mac, ids) in macs.iter().filter(|(_, v)| v.len() > 1) {
        for id in ids {
            out.push(Finding::new(id, Severity::Error, "duplicate-mac",
                format!("MAC {mac} is also on {}", others(ids, id)),
                "two ports with one MAC break DHCP, PXE and the bond",
                "rediscover both nodes; if the duplicate is real, change the MAC or replace the NIC"));
        }
    }
    for (serial, ids) in serials.iter().filter(|(_, v)| v.len() > 1) {
        for id in ids {
            out.push(Finding::new(id, Severity::Error, "duplicate-serial",
                format!("serial {serial} is also on {}", others(ids, id)),
                "a serial identifies one server; two records with one serial mean a copy or a mix-up",
                "remove the stale record or correct the serial"));
        }
    }
    out
}

fn others(ids: &[&str], me: &str) -> String {
    let mut seen = false;
    ids.iter()
        .filter(|i| {
            if **i == me && !seen {
                seen = true;
                false
            } else {
                true
            }
        })
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

fn site_findings(inputs: &Inputs, roles: &BTreeMap<String, RoleDecision>) -> Vec<Finding> {
    let mut out = Vec::new();
    let inv = &inputs.inventory;
    let mgmt: Vec<&Node> = inv
        .nodes
        .iter()
        .filter(|n| roles[&n.id].role == Role::Management)
        .collect();
    let mgmt_profile = inputs.profiles.get(Role::Management);
    let capable = mgmt_profile.map_or(inv.nodes.len(), |p| {
        inv.nodes.iter().filter(|n| meets_profile(n, p)).count()
    });
    if capable < MANAGEMENT_NODES {
        let short = mgmt_profile.map(|p| short_of(inv, p)).unwrap_or_default();
        out.push(Finding::new("site", Severity::Error, "management-capable",
            format!("only {capable} node(s) meet the management profile; Harvester needs {MANAGEMENT_NODES}"),
            format!(
                "Harvester runs etcd and the control plane on three management nodes; fewer means no HA{}",
                if short.is_empty() { String::new() } else { format!(". Short of the profile: {short}") }
            ),
            "fix the nodes that fall short, acknowledge a gap that is temporary (`annotations.acknowledged` in nodes.yaml), add management-capable nodes, or choose the three with `annotations.role: management` in nodes.yaml (check then holds them to the management profile)"));
    } else if mgmt.len() != MANAGEMENT_NODES {
        out.push(Finding::new(
            "site",
            Severity::Error,
            "management-count",
            format!(
                "{} management nodes assigned; Harvester promotes exactly {MANAGEMENT_NODES}",
                mgmt.len()
            ),
            "extra management annotations are ignored by Harvester's promotion controller",
            "annotate exactly three nodes with `role: management`",
        ));
    }
    let domains: std::collections::BTreeSet<&str> =
        mgmt.iter().filter_map(|n| n.failure_domain()).collect();
    let racks: std::collections::BTreeSet<&str> = inv
        .nodes
        .iter()
        .filter_map(|n| n.failure_domain())
        .collect();
    if mgmt.len() == MANAGEMENT_NODES
        && racks.len() >= MANAGEMENT_NODES
        && domains.len() < MANAGEMENT_NODES
    {
        out.push(Finding::new(
            "site",
            Severity::Warning,
            "management-spread",
            format!(
                "the management nodes sit in {} rack(s)/zone(s) although {} exist",
                domains.len(),
                racks.len()
            ),
            "losing one rack would take etcd quorum with it",
            "move a management node, or change the `role` annotations",
        ));
    }
    let zoned: Vec<&&Node> = mgmt
        .iter()
        .filter(|n| n.annotations.zone.is_some())
        .collect();
    if !zoned.is_empty() {
        let zones: std::collections::BTreeSet<_> = zoned
            .iter()
            .filter_map(|n| n.annotations.zone.as_deref())
            .collect();
        if zones.len() < MANAGEMENT_NODES {
            out.push(Finding::new("site", Severity::Error, "management-zones",
                format!("management nodes carry zone labels but span only {} zone(s)", zones.len()),
                "Harvester promotes management nodes only across 3 distinct zones once any has a zone label",
                "put the three management nodes in three zones, or drop the `zone` annotations"));
        }
    }
    out.extend(networks_without_ports(inputs, roles));
    let sn = &inputs.site.site.storage_network;
    let (need, have) = storage_sizing(inputs, |id| roles[id].role);
    if have < need {
        out.push(Finding::new("site", Severity::Error, "storage-range",
            format!("storage range {} has {have} usable addresses; {need} are needed", sn.cidr),
            "Harvester needs 2 + 2 per disk addresses per Longhorn node, and rejects a smaller range",
            "widen storage_network.cidr (no wider than /16) or remove excludes"));
    }
    let pool = network::pool_size(&inputs.site.site.management.pool);
    let nodes = inv.nodes.len() as u64;
    if pool < nodes {
        out.push(Finding::new(
            "site",
            Severity::Error,
            "pool-exhausted",
            format!("the management pool holds {pool} addresses for {nodes} nodes"),
            "every node needs a management address",
            "widen management.pool",
        ));
    }
    out
}

/// The nodes that fall short of the management profile, each with its first gap that
/// counts ("SN1: link down on eno1, ..."), at most five named.
fn short_of(inv: &crate::inventory::Inventory, p: &crate::profile::Profile) -> String {
    const NAMED: usize = 5;
    let gaps: Vec<String> = inv
        .nodes
        .iter()
        .filter_map(|n| {
            against_profile(n, p)
                .into_iter()
                .find(|f| {
                    f.severity == Severity::Error && super::acknowledge::covering(n, f).is_none()
                })
                .map(|f| format!("{}: {}", n.id, f.what))
        })
        .collect();
    let more = gaps.len().saturating_sub(NAMED);
    let mut s = gaps.into_iter().take(NAMED).collect::<Vec<_>>().join("; ");
    if more > 0 {
        s.push_str(&format!("; and {more} more"));
    }
    s
}

/// site.yaml defines the VM and the storage network for every cluster; a role whose
/// profile gives one of them no ports would get a VlanConfig without uplinks, which
/// Harvester cannot attach (and a storage network no node reaches).
fn networks_without_ports(inputs: &Inputs, roles: &BTreeMap<String, RoleDecision>) -> Vec<Finding> {
    let site = &inputs.site.site;
    let mut out = Vec::new();
    for role in [Role::Management, Role::Compute] {
        if !roles.values().any(|d| d.role == role) {
            continue;
        }
        let Some(p) = inputs.profiles.get(role) else {
            continue;
        };
        for (net, cn) in [
            (
                crate::vocab::NetworkKind::Vm,
                &site.vm_network.cluster_network,
            ),
            (
                crate::vocab::NetworkKind::Storage,
                &site.storage_network.cluster_network,
            ),
        ] {
            if p.networks.iter().any(|n| n.network == net && n.ports > 0) {
                continue;
            }
            let speed = p
                .networks
                .iter()
                .map(|n| n.speed_mbps)
                .min()
                .unwrap_or(10_000);
            out.push(Finding::new(
                "site",
                Severity::Error,
                "network-without-ports",
                format!(
                    "site.yaml defines the {net} network (cluster network `{}`), but the {role} profile gives it no ports",
                    cn.0
                ),
                format!(
                    "every {role} node would get a VlanConfig for `{}` without uplink NICs, which Harvester cannot attach",
                    cn.0
                ),
                format!(
                    "add `- {{network: {net}, ports: 2, speed_mbps: {speed}}}` to profiles/{role}.yaml (nodes need free ports for it)"
                ),
            ));
        }
    }
    out
}
