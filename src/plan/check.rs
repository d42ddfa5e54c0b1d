//! `rackplan check`: every node against its role's profile, Harvester's own minima and the
//! rest of the fleet. Pure: inventory, profiles and site in, findings out.

use std::collections::BTreeMap;

use super::Inputs;
use super::findings::{Finding, Severity};
use super::fit::{against_profile, harvester_minima, meets_profile, storage_sizing};
use super::roles::{self, MANAGEMENT_NODES, RoleDecision};
use crate::inventory::Node;
use crate::network;
use crate::profile::Role;

/// The result of a check: findings plus the role each node was checked as.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub findings: Vec<Finding>,
    pub roles: BTreeMap<String, RoleDecision>,
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
    for node in &inv.nodes {
        findings.extend(untrusted_text(node));
    }
    findings.extend(site_findings(inputs, &roles));
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

/// Characters that must never reach a config, an iPXE script or a comment from what a BMC
/// or host said: control characters (a newline ends an iPXE command or a YAML comment) and
/// iPXE's and the shell's metacharacters.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '$' | '{' | '}' | '\\' | '|' | '&' | ';' | '`' | '"')
}

/// Every discovered string of a node, checked: one error finding per field that holds a
/// character that could turn into a command or break a file.
pub fn untrusted_text(node: &Node) -> Vec<Finding> {
    let mut fields: Vec<(String, &str)> = vec![("id".into(), node.id.as_str())];
    fn opt<'a>(name: &str, v: Option<&'a String>) -> Option<(String, &'a str)> {
        v.map(|x| (name.to_string(), x.as_str()))
    }
    fields.extend(opt("serial", node.serial.as_ref()));
    fields.extend(opt("manufacturer", node.manufacturer.as_ref()));
    fields.extend(opt("model", node.model.as_ref()));
    if let Some(b) = &node.bmc {
        fields.push(("bmc.address".into(), b.address.as_str()));
        fields.extend(opt("bmc.vendor", b.vendor.as_ref()));
        fields.extend(opt("bmc.firmware", b.firmware.as_ref()));
    }
    if let Some(c) = &node.cpu {
        fields.extend(opt("cpu.model", c.model.as_ref()));
    }
    for (i, d) in node.disks.iter().enumerate() {
        fields.push((format!("disks[{i}].id"), d.id.as_str()));
        fields.extend(opt(&format!("disks[{i}].path"), d.path.as_ref()));
        fields.extend(opt(&format!("disks[{i}].model"), d.model.as_ref()));
        fields.extend(opt(&format!("disks[{i}].serial"), d.serial.as_ref()));
    }
    for (i, n) in node.nics.iter().enumerate() {
        fields.push((format!("nics[{i}].mac"), n.mac.as_str()));
        fields.extend(opt(&format!("nics[{i}].name"), n.name.as_ref()));
        fields.extend(opt(&format!("nics[{i}].adapter"), n.adapter.as_ref()));
    }
    fields
        .into_iter()
        .filter(|(_, v)| v.chars().any(unsafe_char))
        .map(|(field, v)| {
            let shown: String = v
                .chars()
                .map(|c| if c.is_control() { '\u{fffd}' } else { c })
                .take(60)
                .collect();
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
    let capable = inputs
        .profiles
        .get(Role::Management)
        .map_or(inv.nodes.len(), |p| {
            inv.nodes.iter().filter(|n| meets_profile(n, p)).count()
        });
    if capable < MANAGEMENT_NODES {
        out.push(Finding::new("site", Severity::Error, "management-capable",
            format!("only {capable} node(s) meet the management profile; Harvester needs {MANAGEMENT_NODES}"),
            "Harvester runs etcd and the control plane on three management nodes; fewer means no HA",
            "add management-capable nodes or fix the ones that fall short"));
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
