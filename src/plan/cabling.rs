//! Cabling: every NIC's LLDP neighbour (the switch and port at the other end of its cable)
//! held against the site's network design (`cabling:` in site.yaml) and against itself.
//!
//! Which NIC serves which network is the profile's port choice (`profile::select_ports`,
//! the one render builds the bonds from). Findings, each with what to re-cable:
//! - `bond-one-switch`: the members of one network's bond all land on one switch (one
//!   switch reboot takes the network down on that node);
//! - `switch-port-shared`: two NICs (of one node or two) report the same switch port;
//! - `switch-mtu`: the switch port's maximum frame size (802.3 MFS) is below the network's
//!   MTU. Vendors count the MFS differently (some include the 18 bytes of header and FCS,
//!   some advertise the configured MTU), so only a frame size below the MTU itself is
//!   certain to drop full-size frames; that is what is flagged;
//! - with a design: `cabling-wrong-switch` (a NIC of network X on a switch of network Y,
//!   or on a switch the design does not name), `storage-shares-switch` (the storage
//!   network on a switch that also carries the VM or management network, when the design
//!   says dedicated), `switch-vlan-missing` (a VLAN the network needs is not on the switch
//!   port), `no-neighbour` (no LLDP from the switch since the node's LLDP was read: a link
//!   down is a missing cable or a dead port, a link up is LLDP off on the switch or a NIC
//!   agent that eats the frames).
//!
//! A speed below the profile is `check`'s `network-on-slow-port`; the table shows it too.
//! Pure: inventory, profiles, lock and site in, rows and findings out.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::findings::{Finding, Severity};
use super::inputs::Inputs;
use super::roles;
use crate::inventory::{LinkState, Lldp, Node};
use crate::profile::select_ports;
use crate::site::Cabling;
use crate::vocab::NetworkKind;

/// One NIC of one network, and its switch port.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CablingRow {
    /// Node id.
    pub node: String,
    /// The node's hostname in the lock, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// OS interface name, else MAC.
    pub nic: String,
    pub mac: String,
    pub network: NetworkKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u32>,
    pub link: LinkState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// VLANs the switch port advertises.
    pub vlans: Vec<u16>,
    /// The switch port's maximum frame size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Where the neighbour was read (`redfish`, `ssh`), and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_at: Option<String>,
    /// `ok`, or the codes of this NIC's findings, comma-separated.
    pub verdict: String,
}

/// What the person at the rack sees of one switch: its ports in order.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SwitchView {
    pub switch: String,
    /// The networks the design puts on it.
    pub design: Vec<NetworkKind>,
    pub ports: Vec<SwitchPort>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SwitchPort {
    pub port: String,
    pub node: String,
    pub nic: String,
    pub network: NetworkKind,
}

/// The cabling of a site.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CablingReport {
    /// True when site.yaml has a `cabling:` design (without one, only what needs none is
    /// checked).
    pub design: bool,
    pub rows: Vec<CablingRow>,
    pub switches: Vec<SwitchView>,
    pub findings: Vec<Finding>,
}

/// What the site says each network needs: its MTU and the VLANs its ports must carry.
struct Needs {
    mtu: u32,
    vlans: Vec<u16>,
}

fn needs(inputs: &Inputs, net: NetworkKind) -> Needs {
    let s = &inputs.site.site;
    let extra = s
        .cabling
        .as_ref()
        .and_then(|c| c.side(net))
        .map(|d| d.vlans.iter().map(|v| v.0).collect::<Vec<_>>())
        .unwrap_or_default();
    let (mtu, mut vlans) = match net {
        NetworkKind::Management => (
            s.management.mtu.0,
            s.management.vlan.map(|v| v.0).into_iter().collect(),
        ),
        NetworkKind::Vm => (
            s.vm_network.mtu.0,
            s.vm_network
                .tenants
                .iter()
                .map(|t| t.vlan.0)
                .collect::<Vec<_>>(),
        ),
        NetworkKind::Storage => (s.storage_network.mtu.0, vec![s.storage_network.vlan.0]),
    };
    vlans.extend(extra);
    vlans.sort_unstable();
    vlans.dedup();
    Needs {
        mtu: u32::from(mtu),
        vlans,
    }
}

/// The identity a switch is compared by: its name, else its chassis id.
fn switch_of(l: &Lldp) -> Option<&str> {
    l.switch.as_deref().or(l.chassis_id.as_deref())
}

/// Does `l` name one of `names` (by system name or chassis id, case-insensitively)?
fn is_one_of(l: &Lldp, names: &[String]) -> bool {
    names.iter().any(|n| {
        l.switch
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case(n))
            || l.chassis_id
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case(n))
    })
}

fn vlan_list(v: &[u16]) -> String {
    v.iter().map(u16::to_string).collect::<Vec<_>>().join(",")
}

struct Ctx<'a> {
    node: &'a Node,
    out: Vec<(usize, Finding)>,
}

impl Ctx<'_> {
    fn push(
        &mut self,
        row: usize,
        sev: Severity,
        code: &'static str,
        what: String,
        why: &str,
        fix: String,
    ) {
        self.out
            .push((row, Finding::new(&self.node.id, sev, code, what, why, fix)));
    }
}

/// The cabling rows and findings of the whole site.
pub fn cabling(inputs: &Inputs) -> CablingReport {
    let roles = roles::assign(&inputs.inventory, &inputs.profiles, &inputs.lock);
    cabling_with(inputs, &roles)
}

/// `cabling` with the roles `check` already decided.
pub(crate) fn cabling_with(
    inputs: &Inputs,
    roles: &BTreeMap<String, roles::RoleDecision>,
) -> CablingReport {
    let inv = &inputs.inventory;
    let design: Option<&Cabling> = inputs.site.site.cabling.as_ref();
    let mut rows: Vec<CablingRow> = Vec::new();
    let mut row_findings: Vec<Vec<&'static str>> = Vec::new();
    let mut findings: Vec<Finding> = Vec::new();
    for node in &inv.nodes {
        let Some(p) = inputs.profiles.get(roles[&node.id].role) else {
            continue;
        };
        let hostname = inputs
            .lock
            .nodes
            .iter()
            .find(|a| a.id == node.id)
            .map(|a| a.hostname.clone());
        let mut cx = Ctx {
            node,
            out: Vec::new(),
        };
        for choice in select_ports(node, p) {
            let net = choice.network;
            let need = needs(inputs, net);
            let mut members: Vec<(usize, &Lldp)> = Vec::new();
            for &i in &choice.ports {
                let nic = &node.nics[i];
                let r = rows.len();
                let name = nic.name.clone().unwrap_or_else(|| nic.mac.clone());
                rows.push(CablingRow {
                    node: node.id.clone(),
                    hostname: hostname.clone(),
                    nic: name.clone(),
                    mac: nic.mac.clone(),
                    network: net,
                    speed_mbps: nic.speed_mbps,
                    link: nic.link,
                    switch: nic
                        .lldp
                        .as_ref()
                        .and_then(|l| switch_of(l).map(str::to_string)),
                    port: nic.lldp.as_ref().and_then(|l| l.port.clone()),
                    vlans: nic
                        .lldp
                        .as_ref()
                        .map(|l| l.vlans.clone())
                        .unwrap_or_default(),
                    mtu: nic.lldp.as_ref().and_then(|l| l.mtu),
                    source: nic.lldp.as_ref().map(|l| {
                        match l.source {
                            crate::inventory::LldpSource::Redfish => "redfish",
                            crate::inventory::LldpSource::Ssh => "ssh",
                        }
                        .to_string()
                    }),
                    seen_at: nic.lldp.as_ref().map(|l| l.seen_at.clone()),
                    verdict: String::new(),
                });
                row_findings.push(Vec::new());
                if nic.speed_mbps.is_some_and(|s| s < choice.spec.speed_mbps) {
                    row_findings[r].push("slow");
                }
                let Some(l) = &nic.lldp else {
                    if design.is_some() && node.sources.lldp.is_some() {
                        let (what, fix) = if nic.link == LinkState::Down {
                            (
                                format!("{name} ({net}) has no link and no LLDP neighbour"),
                                "cable the port (or bring the switch port up), then rediscover"
                                    .to_string(),
                            )
                        } else {
                            (
                                format!("{name} ({net}) has a link but no LLDP neighbour: the switch sends no LLDP on that port"),
                                "enable LLDP on the switch port (or turn off the NIC firmware's own LLDP agent, which consumes the frames), then rediscover".to_string(),
                            )
                        };
                        cx.push(
                            r,
                            Severity::Warning,
                            "no-neighbour",
                            what,
                            "without the switch's side the cabling of this port cannot be checked",
                            fix,
                        );
                    }
                    continue;
                };
                members.push((r, l));
                let sw = switch_of(l).unwrap_or("?").to_string();
                let port = l.port.clone().unwrap_or_else(|| "?".into());
                if let Some(m) = l.mtu
                    && m < need.mtu
                {
                    cx.push(
                        r,
                        Severity::Error,
                        "switch-mtu",
                        format!("{name} ({net}): switch {sw} port {port} takes frames of at most {m} bytes, the {net} network's MTU is {}", need.mtu),
                        "full-size frames are dropped on the way: storage and VM traffic stalls while small packets (pings, heartbeats) still pass",
                        format!("set the MTU of {sw} port {port} to at least {} (jumbo frames), or lower the network's `mtu` in site.yaml", need.mtu + 22),
                    );
                }
                let Some(d) = design else { continue };
                let wrong = d
                    .side(net)
                    .is_some_and(|side| !is_one_of(l, &side.switches));
                if let Some(side) = d.side(net)
                    && wrong
                {
                    let other = NETWORKS
                        .into_iter()
                        .filter(|o| *o != net)
                        .find(|o| d.side(*o).is_some_and(|s| is_one_of(l, &s.switches)));
                    let what = match other {
                        Some(o) => format!(
                            "{name} ({net}) is cabled to {sw} port {port}, a switch of the {o} network"
                        ),
                        None => format!(
                            "{name} ({net}) is cabled to {sw} port {port}, not one of the {net} network's switches"
                        ),
                    };
                    cx.push(
                        r,
                        Severity::Error,
                        "cabling-wrong-switch",
                        what,
                        "the port carries the wrong network: its traffic lands where the design does not put it, or nowhere",
                        format!("move the cable to a free port of {}", side.switches.join(" or ")),
                    );
                }
                // On the wrong switch the VLANs are wrong too; the cable is the fix.
                let advertises = !l.vlans.is_empty() || l.pvid.is_some();
                if advertises && !wrong {
                    let missing: Vec<u16> = need
                        .vlans
                        .iter()
                        .copied()
                        .filter(|v| !l.vlans.contains(v) && l.pvid != Some(*v))
                        .collect();
                    if !missing.is_empty() {
                        cx.push(
                            r,
                            Severity::Error,
                            "switch-vlan-missing",
                            format!("{name} ({net}): switch {sw} port {port} does not carry VLAN {} (it carries {})", vlan_list(&missing), vlan_list(&l.vlans)),
                            "traffic on those VLANs never leaves the node: the tenants or the storage network on them are cut off",
                            format!("add VLAN {} to {sw} port {port} (tagged)", vlan_list(&missing)),
                        );
                    }
                }
            }
            if choice.ports.len() > 1 && members.len() == choice.ports.len() {
                let switches: BTreeSet<String> = members
                    .iter()
                    .filter_map(|(_, l)| switch_of(l).map(str::to_lowercase))
                    .collect();
                if switches.len() == 1 {
                    let sw = members
                        .first()
                        .and_then(|(_, l)| switch_of(l))
                        .unwrap_or("?")
                        .to_string();
                    let names: Vec<String> =
                        members.iter().map(|(r, _)| rows[*r].nic.clone()).collect();
                    let others = design
                        .and_then(|d| d.side(net))
                        .map(|s| {
                            s.switches
                                .iter()
                                .filter(|x| !x.eq_ignore_ascii_case(&sw))
                                .cloned()
                                .collect::<Vec<_>>()
                        })
                        .filter(|v| !v.is_empty());
                    for (r, _) in &members {
                        cx.push(
                            *r,
                            Severity::Error,
                            "bond-one-switch",
                            format!("{net} bond members {} are all on switch {sw}", names.join(", ")),
                            "no redundancy: one switch reboot or failure takes the node's network down",
                            match &others {
                                Some(o) => format!("move {} to {}", names[names.len() - 1], o.join(" or ")),
                                None => format!("move {} to the other switch of the pair", names[names.len() - 1]),
                            },
                        );
                    }
                }
            }
        }
        for (r, f) in cx.out {
            row_findings[r].push(f.code);
            // The same finding for each member of a bond is one finding.
            if !findings.contains(&f) {
                findings.push(f);
            }
        }
    }
    // Two NICs on one switch port.
    let mut by_port: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (r, row) in rows.iter().enumerate() {
        if let (Some(s), Some(p)) = (&row.switch, &row.port) {
            by_port
                .entry((s.to_lowercase(), p.to_lowercase()))
                .or_default()
                .push(r);
        }
    }
    for ((_, _), rs) in by_port.iter().filter(|(_, v)| v.len() > 1) {
        let who: Vec<String> = rs
            .iter()
            .map(|&r| format!("{} {}", rows[r].node, rows[r].nic))
            .collect();
        let (sw, port) = (
            rows[rs[0]].switch.clone().unwrap_or_default(),
            rows[rs[0]].port.clone().unwrap_or_default(),
        );
        for &r in rs {
            row_findings[r].push("switch-port-shared");
            findings.push(Finding::new(
                &rows[r].node,
                Severity::Error,
                "switch-port-shared",
                format!("{} NICs report switch {sw} port {port}: {}", rs.len(), who.join(", ")),
                "one switch port cannot end two cables: a record is stale, or a port id is not unique on that switch",
                "check the cables at that port and rediscover the nodes named",
            ));
        }
    }
    // The storage network on a switch that carries another network.
    if let Some(d) = design
        && d.dedicated_storage
    {
        let mut others: BTreeMap<String, BTreeSet<NetworkKind>> = BTreeMap::new();
        for row in rows.iter().filter(|r| r.network != NetworkKind::Storage) {
            if let Some(s) = &row.switch {
                others
                    .entry(s.to_lowercase())
                    .or_default()
                    .insert(row.network);
            }
        }
        let storage_on: BTreeSet<String> = rows
            .iter()
            .filter(|r| r.network == NetworkKind::Storage)
            .filter_map(|r| r.switch.as_ref().map(|s| s.to_lowercase()))
            .collect();
        // On a shared switch, the cables out of place are marked: those of a network the
        // design does not put there (every storage cable, where the design names none).
        for (r, row) in rows.iter().enumerate() {
            let Some(s) = &row.switch else { continue };
            let key = s.to_lowercase();
            if !(storage_on.contains(&key) && others.contains_key(&key)) {
                continue;
            }
            let nets = designed(d, s);
            let out_of_place = if nets.is_empty() {
                row.network == NetworkKind::Storage
            } else {
                !nets.contains(&row.network)
            };
            if out_of_place {
                row_findings[r].push("storage-shares-switch");
            }
        }
        let mut named: BTreeSet<String> = BTreeSet::new();
        for row in &rows {
            if row.network != NetworkKind::Storage {
                continue;
            }
            let Some(s) = &row.switch else { continue };
            let Some(nets) = others.get(&s.to_lowercase()) else {
                continue;
            };
            if named.insert(s.to_lowercase()) {
                let list: Vec<&str> = nets.iter().map(|n| n.as_str()).collect();
                findings.push(Finding::new(
                    "site",
                    Severity::Error,
                    "storage-shares-switch",
                    format!("switch {s} carries the storage network and the {} network", list.join(" and ")),
                    "the design gives Longhorn a dedicated network: a rebuild saturating a shared switch slows VM traffic and disturbs heartbeats",
                    "move the storage NICs to the storage switches, or set `cabling.dedicated_storage: false` in site.yaml",
                ));
            }
        }
    }
    for (row, codes) in rows.iter_mut().zip(&row_findings) {
        let mut c: Vec<&str> = codes.clone();
        c.dedup();
        row.verdict = if c.is_empty() {
            "ok".into()
        } else {
            c.join(",")
        };
    }
    let switches = switch_views(&rows, design);
    CablingReport {
        design: design.is_some(),
        rows,
        switches,
        findings,
    }
}

const NETWORKS: [NetworkKind; 3] = [
    NetworkKind::Management,
    NetworkKind::Vm,
    NetworkKind::Storage,
];

/// The networks the design puts on `switch`.
fn designed(d: &Cabling, switch: &str) -> Vec<NetworkKind> {
    NETWORKS
        .into_iter()
        .filter(|n| {
            d.side(*n)
                .is_some_and(|x| x.switches.iter().any(|w| w.eq_ignore_ascii_case(switch)))
        })
        .collect()
}

fn switch_views(rows: &[CablingRow], design: Option<&Cabling>) -> Vec<SwitchView> {
    let mut by: BTreeMap<String, SwitchView> = BTreeMap::new();
    for row in rows {
        let (Some(s), Some(p)) = (&row.switch, &row.port) else {
            continue;
        };
        let v = by.entry(s.clone()).or_insert_with(|| SwitchView {
            switch: s.clone(),
            design: design.map(|d| designed(d, s)).unwrap_or_default(),
            ports: Vec::new(),
        });
        v.ports.push(SwitchPort {
            port: p.clone(),
            node: row.hostname.clone().unwrap_or_else(|| row.node.clone()),
            nic: row.nic.clone(),
            network: row.network,
        });
    }
    let mut out: Vec<SwitchView> = by.into_values().collect();
    for v in &mut out {
        v.ports.sort_by(|a, b| {
            natural(&a.port)
                .cmp(&natural(&b.port))
                .then(a.node.cmp(&b.node))
        });
    }
    out
}

/// A port id's sort key: its digit runs as numbers (`Ethernet1/10` after `Ethernet1/9`).
fn natural(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(
                num.unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u64::from(d)),
            );
        } else {
            if let Some(n) = num.take() {
                out.push((std::mem::take(&mut text), n));
            }
            text.push(c);
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}
