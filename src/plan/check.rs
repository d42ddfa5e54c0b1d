//! `rackplan check`: every node against its role's profile, Harvester's own minima and the
//! rest of the fleet. Pure: inventory, profiles and site in, findings out.

use std::collections::BTreeMap;

use super::Inputs;
use super::findings::{Finding, Severity};
use super::roles::{self, MANAGEMENT_NODES, RoleDecision};
use crate::inventory::{LinkState, Node};
use crate::network;
use crate::profile::{NetworkKind, Profile, Role, select_disks, select_ports};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The result of a check: findings plus the role each node was checked as.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub findings: Vec<Finding>,
    pub roles: BTreeMap<String, RoleDecision>,
}

/// True when the node meets the profile's hardware minima (no error-level gap).
pub fn meets_profile(node: &Node, profile: &Profile) -> bool {
    !against_profile(node, profile)
        .iter()
        .any(|f| f.severity == Severity::Error)
}

fn gbe(mbps: u32) -> String {
    if mbps.is_multiple_of(1000) {
        format!("{} GbE", mbps / 1000)
    } else {
        format!("{mbps} Mb/s")
    }
}

fn nic_label(node: &Node, i: usize) -> String {
    let n = &node.nics[i];
    n.name.clone().unwrap_or_else(|| n.mac.clone())
}

/// Gaps between a node and a profile.
pub fn against_profile(node: &Node, p: &Profile) -> Vec<Finding> {
    let id = node.id.as_str();
    let role = p.role;
    let mut out = Vec::new();
    let mut push = |sev, code, what: String, why: String, fix: String| {
        out.push(Finding::new(id, sev, code, what, why, fix));
    };
    match node.cores() {
        Some(c) if c < p.cpu.min_cores => push(
            Severity::Error,
            "cpu-cores",
            format!(
                "{c} CPU cores, the {role} profile needs {}",
                p.cpu.min_cores
            ),
            format!(
                "{role} nodes are sized for {} physical cores",
                p.cpu.min_cores
            ),
            "use a node with more cores, or give this node another role".into(),
        ),
        Some(_) => {}
        None => push(
            Severity::Warning,
            "cpu-unknown",
            "CPU core count unknown".into(),
            "discovery did not report the CPUs, so the core minimum cannot be checked".into(),
            "rerun `rackplan discover` (Redfish or SSH)".into(),
        ),
    }
    if let (Some(min), Some(t)) = (p.cpu.min_threads, node.cpu.as_ref().and_then(|c| c.threads))
        && t < min
    {
        push(
            Severity::Error,
            "cpu-threads",
            format!("{t} hardware threads, the {role} profile needs {min}"),
            "SMT may be disabled in the BIOS".into(),
            "enable hyper-threading / SMT in the BIOS".into(),
        );
    }
    match node.memory_gib {
        // DIMM totals and OS-visible memory differ by a few percent; allow 2 %.
        Some(m) if m < p.memory.min_gib * 0.98 => push(
            Severity::Error,
            "memory",
            format!(
                "{m:.0} GiB memory, the {role} profile needs {:.0} GiB",
                p.memory.min_gib
            ),
            "VMs are placed by memory; a smaller node strands capacity".into(),
            "add DIMMs or give this node another role".into(),
        ),
        Some(_) => {}
        None => push(
            Severity::Warning,
            "memory-unknown",
            "memory size unknown".into(),
            "discovery did not report memory".into(),
            "rerun `rackplan discover`".into(),
        ),
    }
    let disks = select_disks(node, p);
    if disks.os.is_none() {
        push(
            Severity::Error,
            "os-disk-missing",
            format!(
                "no disk fits the OS disk spec (at least {}{})",
                p.os_disk.min_size,
                p.os_disk
                    .protocol
                    .map(|x| format!(", {x:?}"))
                    .unwrap_or_default()
            ),
            "Harvester installs on one local disk".into(),
            "add a boot disk, or set `annotations.install_device`".into(),
        );
    }
    if let Some(spec) = &p.data_disks
        && disks.data.len() < spec.count as usize
        && !disks.from_annotation
    {
        let proto = spec
            .protocol
            .map(|x| format!("{x:?}").to_uppercase())
            .unwrap_or_default();
        push(
            Severity::Error,
            "data-disks-missing",
            format!(
                "{} of {} data disks ({proto} of at least {})",
                disks.data.len(),
                spec.count,
                spec.min_size
            ),
            "Longhorn capacity and rebuild speed are planned on the full set of data disks".into(),
            "install the missing drives or check that they are detected (BIOS/RAID mode)".into(),
        );
    }
    for choice in select_ports(node, p) {
        let net = choice.network;
        let want = gbe(choice.spec.speed_mbps);
        for name in &choice.unknown_names {
            push(
                Severity::Error,
                "nic-unknown",
                format!(
                    "annotation names port `{name}` for the {net} network, but the node has no such port"
                ),
                "the bond would be built on a port that does not exist".into(),
                "fix `annotations.networks` (names are OS interface names or MACs)".into(),
            );
        }
        if choice.ports.len() < choice.spec.ports as usize {
            push(
                Severity::Error,
                "ports-missing",
                format!(
                    "{net} network needs {} ports, {} left for it ({} ports on the node)",
                    choice.spec.ports,
                    choice.ports.len(),
                    node.nics.len()
                ),
                "the three bonded networks need two ports each".into(),
                "add a network adapter, or annotate which ports serve which network".into(),
            );
        }
        let speeds: Vec<Option<u32>> = choice
            .ports
            .iter()
            .map(|&i| node.nics[i].speed_mbps)
            .collect();
        let known: Vec<u32> = speeds.iter().flatten().copied().collect();
        if known.len() > 1 && known.iter().any(|s| *s != known[0]) {
            let list: Vec<String> = choice
                .ports
                .iter()
                .map(|&i| {
                    format!(
                        "{} {}",
                        nic_label(node, i),
                        node.nics[i].speed_mbps.map_or("?".into(), gbe)
                    )
                })
                .collect();
            push(
                Severity::Error,
                "bond-mixed-speed",
                format!(
                    "{net} bond members have different speeds: {}",
                    list.join(", ")
                ),
                "an LACP bond only aggregates links of equal speed; the slower one is left out"
                    .into(),
                "cable the bond to ports of the same speed".into(),
            );
        }
        for &i in &choice.ports {
            let nic = &node.nics[i];
            let label = nic_label(node, i);
            match nic.speed_mbps {
                Some(s) if s < choice.spec.speed_mbps => push(
                    Severity::Error,
                    "network-on-slow-port",
                    format!("{want} {net} network lands on {label}, a {} port", gbe(s)),
                    format!("the {net} network is planned at {want} per link"),
                    "cable the network to ports of the planned speed".into(),
                ),
                None => push(
                    Severity::Warning,
                    "nic-speed-unknown",
                    format!("speed of {label} ({net} network) unknown"),
                    "the BMC did not report a link speed".into(),
                    "check the link, or rerun `rackplan discover ssh`".into(),
                ),
                _ => {}
            }
            match nic.link {
                LinkState::Down => push(
                    Severity::Error,
                    "link-down",
                    format!("link down on {label}, which the {net} bond needs"),
                    "the bond would run degraded, without redundancy".into(),
                    "check the cable and the switch port".into(),
                ),
                LinkState::Unknown => push(
                    Severity::Info,
                    "link-unknown",
                    format!("link state of {label} ({net} network) unknown"),
                    "the BMC did not report a link state".into(),
                    "check the link once the host is booted".into(),
                ),
                LinkState::Up => {}
            }
        }
    }
    out
}

/// Harvester's own hardware floor (installer preflight and requirements page).
fn harvester_minima(node: &Node, p: &Profile) -> Vec<Finding> {
    let id = node.id.as_str();
    let mut out = Vec::new();
    if let Some(c) = node.cores() {
        if c < 8 {
            out.push(Finding::new(
                id,
                Severity::Error,
                "harvester-min-cores",
                format!("{c} cores; Harvester needs at least 8 (16 for production)"),
                "the installer's preflight check stops an automatic install below 8 cores",
                "use a node with at least 16 cores",
            ));
        } else if c < 16 {
            out.push(Finding::new(id, Severity::Warning, "harvester-min-cores",
                format!("{c} cores; Harvester recommends 16 for production"),
                "the preflight check warns, and a warning stops an automatic install unless skipchecks is set",
                "use a node with at least 16 cores"));
        }
    }
    if let Some(m) = node.memory_gib {
        if m < 32.0 * 0.9 {
            out.push(Finding::new(
                id,
                Severity::Error,
                "harvester-min-memory",
                format!("{m:.0} GiB memory; Harvester needs at least 32 GiB (64 for production)"),
                "the installer's preflight check stops below 32 GiB",
                "add memory",
            ));
        } else if m < 64.0 * 0.9 {
            out.push(Finding::new(id, Severity::Warning, "harvester-min-memory",
                format!("{m:.0} GiB memory; Harvester recommends 64 GiB for production"),
                "the preflight check warns, which stops an automatic install unless skipchecks is set",
                "add memory"));
        }
    }
    let disks = select_disks(node, p);
    let gib = |b: u64| b as f64 / GIB;
    if let Some(os) = disks.os.map(|i| &node.disks[i]) {
        if let Some(size) = os.capacity_bytes {
            let separate = !disks.data.is_empty() || p.role == Role::Witness;
            let floor = if separate { 180.0 } else { 250.0 };
            if gib(size) < floor {
                out.push(Finding::new(
                    id,
                    Severity::Error,
                    "harvester-min-disk",
                    format!(
                        "install disk {} is {:.0} GiB; Harvester needs {floor:.0} GiB{}",
                        os.id,
                        gib(size),
                        if separate {
                            " with a separate data disk"
                        } else {
                            ""
                        }
                    ),
                    "the installer rejects smaller disks (\"device size too small\")",
                    "use a larger install disk",
                ));
            }
        }
        if os.path.is_none() && node.annotations.install_device.is_none() {
            out.push(Finding::new(id, Severity::Error, "disk-path-unknown",
                format!("install disk {} has no OS device path", os.id),
                "the install config needs a stable /dev/disk/by-id path, which only the OS view gives",
                "run `rackplan discover ssh`, or set `annotations.install_device`"));
        }
    }
    if let Some(d) = disks.data.first().map(|&i| &node.disks[i]) {
        if d.capacity_bytes.is_some_and(|b| gib(b) < 50.0) {
            out.push(Finding::new(
                id,
                Severity::Error,
                "harvester-min-disk",
                format!("data disk {} is under 50 GiB", d.id),
                "the installer rejects data disks under 50 GiB",
                "use a larger data disk",
            ));
        }
        if d.path.is_none() && node.annotations.data_disk.is_none() {
            out.push(Finding::new(
                id,
                Severity::Error,
                "disk-path-unknown",
                format!("data disk {} has no OS device path", d.id),
                "the install config needs a stable /dev/disk/by-id path",
                "run `rackplan discover ssh`, or set `annotations.data_disk`",
            ));
        }
    }
    for choice in select_ports(node, p) {
        if choice.network != NetworkKind::Management {
            continue;
        }
        for &i in &choice.ports {
            match node.nics[i].speed_mbps {
                Some(s) if s < 1000 => out.push(Finding::new(id, Severity::Error, "harvester-min-nic",
                    format!("management port {} runs at {s} Mb/s; Harvester needs 1 GbE (10 GbE for production)", nic_label(node, i)),
                    "the installer's preflight check stops below 1 Gb/s",
                    "use a faster management port")),
                Some(s) if s < 10_000 => out.push(Finding::new(id, Severity::Warning, "harvester-min-nic",
                    format!("management port {} runs at {}; Harvester recommends 10 GbE for production", nic_label(node, i), gbe(s)),
                    "the preflight check warns, which stops an automatic install unless skipchecks is set",
                    "use a 10 GbE management port")),
                _ => {}
            }
        }
    }
    out
}

/// Addresses the storage network needs and has: (needed, usable). Harvester's webhook rule:
/// 2 + 2 per data disk for every Longhorn (non-witness) node.
pub fn storage_sizing(inputs: &Inputs, roles: &BTreeMap<String, RoleDecision>) -> (u64, u64) {
    let sn = &inputs.site.site.storage_network;
    let disks_per_node: Vec<usize> = inputs
        .inventory
        .nodes
        .iter()
        .filter(|n| roles[&n.id].role != Role::Witness)
        .map(|n| {
            inputs
                .profiles
                .get(roles[&n.id].role)
                .map_or(n.disks.len(), |p| select_disks(n, p).data.len().max(1))
        })
        .collect();
    (
        network::storage_ips_needed(&disks_per_node),
        network::usable_storage_ips(&sn.cidr, &sn.exclude),
    )
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
                format!("no profile for role {role}"),
                "a node can only be checked and rendered against its role's profile",
                format!("add {role}.yaml to the profiles directory"),
            )),
        }
    }
    findings.extend(duplicates(inv));
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
    let (need, have) = storage_sizing(inputs, roles);
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
