//! A node held against a role profile: every gap as a finding (`against_profile`), the
//! yes/no question role inference asks (`meets_profile`), Harvester's own hardware floor,
//! and the storage-network addresses the planned fleet needs.
//!
//! Its own file so that `check` (which reports the gaps) and `roles` (which only asks
//! whether a node fits) both use it without importing each other.

use super::findings::{Finding, Severity};
use super::inputs::Inputs;
use crate::inventory::{LinkState, Node};
use crate::network;
use crate::profile::{NetworkKind, Profile, Role, select_disks, select_ports};

use crate::units::GIB;

/// True when the node meets the profile's hardware minima (no error-level gap people have
/// not acknowledged in nodes.yaml).
pub(crate) fn meets_profile(node: &Node, profile: &Profile) -> bool {
    !against_profile(node, profile)
        .iter()
        .any(|f| f.severity == Severity::Error && super::acknowledge::covering(node, f).is_none())
}

pub(crate) fn gbe(mbps: u32) -> String {
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
pub(crate) fn against_profile(node: &Node, p: &Profile) -> Vec<Finding> {
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
    // An annotated install disk that names no disk is reported by `disk_paths`.
    if disks.os.is_none() && node.annotations.install_device.is_none() {
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
    {
        // "NVME of at least 3.84 TB", or "of at least 960 GB" when no protocol is asked.
        let kind = spec.protocol.map_or_else(
            || format!("of at least {}", spec.min_size),
            |x| {
                format!(
                    "{} of at least {}",
                    format!("{x:?}").to_uppercase(),
                    spec.min_size
                )
            },
        );
        push(
            Severity::Error,
            "data-disks-missing",
            format!(
                "{} of {} data disk{} ({kind})",
                disks.data.len(),
                spec.count,
                plural(spec.count as usize)
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
                    "{net} network needs {} port{}, {} left for it ({} port{} on the node)",
                    choice.spec.ports,
                    plural(choice.spec.ports as usize),
                    choice.ports.len(),
                    node.nics.len(),
                    plural(node.nics.len())
                ),
                format!(
                    "the {role} profile gives the {net} network {} port{}",
                    choice.spec.ports,
                    plural(choice.spec.ports as usize)
                ),
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
                    "check the cable and the switch port; while it is not in yet, acknowledge it in nodes.yaml (`annotations.acknowledged`) to plan and render meanwhile".into(),
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
pub(crate) fn harvester_minima(node: &Node, p: &Profile) -> Vec<Finding> {
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
    if let Some(os) = disks.os.map(|i| &node.disks[i])
        && let Some(size) = os.capacity_bytes
    {
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
    if let Some(d) = disks.data.first().map(|&i| &node.disks[i])
        && d.capacity_bytes.is_some_and(|b| gib(b) < 50.0)
    {
        out.push(Finding::new(
            id,
            Severity::Error,
            "harvester-min-disk",
            format!("data disk {} is under 50 GiB", d.id),
            "the installer rejects data disks under 50 GiB",
            "use a larger data disk",
        ));
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
pub(crate) fn storage_sizing(inputs: &Inputs, role_of: impl Fn(&str) -> Role) -> (u64, u64) {
    let sn = &inputs.site.site.storage_network;
    let disks_per_node: Vec<usize> = inputs
        .inventory
        .nodes
        .iter()
        .filter(|n| role_of(&n.id) != Role::Witness)
        .map(|n| {
            inputs
                .profiles
                .get(role_of(&n.id))
                .map_or(n.disks.len(), |p| select_disks(n, p).data.len().max(1))
        })
        .collect();
    (
        network::storage_ips_needed(&disks_per_node),
        network::usable_storage_ips(sn.cidr, &sn.exclude),
    )
}

/// "s" for any count but one.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
