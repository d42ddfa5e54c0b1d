//! One node's ports held against their LLDP neighbours and the design. Which NIC serves
//! which network is the profile's port choice (`profile::select_ports`, the one render
//! builds the bonds from), except that a link slower than its network never moves the
//! network off the cables the design gives it without `link-slow` saying so. Findings, each
//! naming the node as the table does (hostname, else id) and with a fix drawn from the
//! cause it found:
//! - `no-lldp`: LLDP was never read for the node (nothing of its cabling is checked);
//! - `no-neighbour`: LLDP was read, this port had none: no link is a missing cable or a
//!   dead port, a link up is LLDP off on the switch port (or a NIC agent eating frames);
//! - `lldp-several-neighbours`: more than one speaker on one port (a device between, a
//!   loop, a rogue, or a cable moved within a TTL);
//! - `link-slow`: the link runs below the speed the profile asks of its network, with the
//!   measured and the required speed;
//! - `switch-mtu`: the port's maximum frame size (802.3 MFS, header and FCS included) below
//!   the network's MTU + 18, + 4 when the network is VLAN-tagged, the sum stated;
//! - with a design: `cabling-wrong-switch` (on another network's switch, or one the design
//!   does not name), `switch-vlan-missing` (a VLAN the network needs is not on the port);
//! - per bond: `bond-one-switch` (every member on one switch), `bond-one-member` (one port
//!   where the profile asks two or more).
//!
//! Pure: inventory, profiles, lock and site in, rows and findings out.

use std::collections::BTreeMap;

use super::collected::Collected;
use super::design::{Needs, design_switch, needs, networks_of};
use super::model::{CablingReport, CablingRow};
use super::site_wide;
use crate::inventory::{Lldp, LldpSource, Node};
use crate::plan::findings::{Finding, Severity};
use crate::plan::inputs::Inputs;
use crate::plan::roles;
use crate::profile::{PortChoice, Profile, select_ports};
use crate::site::Cabling;
use crate::vocab::Role;

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
    let design = inputs.site.site.cabling.as_ref();
    let mut out = Collected::default();
    for node in &inputs.inventory.nodes {
        let Some(role) = roles.get(&node.id).map(|d| d.role) else {
            continue;
        };
        let Some(profile) = inputs.profiles.get(role) else {
            continue;
        };
        let host = inputs
            .lock
            .nodes
            .iter()
            .find(|a| a.id == node.id)
            .map(|a| a.hostname.clone());
        NodeCheck {
            inputs,
            design,
            node,
            profile,
            role,
            name: host.clone().unwrap_or_else(|| node.id.clone()),
            host,
            out: &mut out,
        }
        .run();
    }
    site_wide::shared_ports(&mut out);
    if let Some(d) = design
        && d.dedicated_storage
    {
        site_wide::storage_shares(d, &mut out);
    }
    for (row, codes) in out.rows.iter_mut().zip(&out.codes) {
        row.verdict = if codes.is_empty() {
            "ok".into()
        } else {
            codes.join(",")
        };
    }
    let switches = site_wide::switch_views(&out.rows, design);
    CablingReport {
        design: design.is_some(),
        rows: out.rows,
        switches,
        findings: out.findings,
    }
}

/// The ports each network gets, and, when a slow link alone moved networks off the cables
/// the design gives them, the choice render would make. The choice kept is then the
/// profile's as if every link cabled to a design switch ran at its network's speed: a slow
/// link is the link's fault (`link-slow` says so), never a reason to blame good cables.
fn port_choice(
    node: &Node,
    p: &Profile,
    design: Option<&Cabling>,
) -> (Vec<PortChoice>, Option<Vec<PortChoice>>) {
    let chosen = select_ports(node, p);
    let Some(d) = design else {
        return (chosen, None);
    };
    let cabled = |nic: &crate::inventory::Nic| {
        nic.lldp
            .as_ref()
            .and_then(|l| design_switch(d, l))
            .map(|e| networks_of(d, e))
            .unwrap_or_default()
    };
    let mut raised = node.clone();
    let mut changed = false;
    for nic in &mut raised.nics {
        let want = cabled(nic)
            .iter()
            .filter_map(|n| p.networks.iter().find(|s| s.network == *n))
            .map(|s| s.speed_mbps)
            .max();
        if let (Some(w), Some(s)) = (want, nic.speed_mbps)
            && s < w
        {
            nic.speed_mbps = Some(w);
            changed = true;
        }
    }
    if !changed {
        return (chosen, None);
    }
    let on_cables = |choice: &[PortChoice]| {
        choice
            .iter()
            .flat_map(|c| c.ports.iter().map(move |&i| (c.network, i)))
            .filter(|(n, i)| cabled(&node.nics[*i]).contains(n))
            .count()
    };
    let alt = select_ports(&raised, p);
    if on_cables(&alt) > on_cables(&chosen) {
        (alt, Some(chosen))
    } else {
        (chosen, None)
    }
}

/// One port of a network on one node, as the checks see it.
pub(super) struct Port<'a> {
    pub(super) row: usize,
    pub(super) nic: usize,
    pub(super) lldp: Option<&'a Lldp>,
    pub(super) entry: Option<&'a str>,
}

pub(super) struct NodeCheck<'a, 'o> {
    pub(super) inputs: &'a Inputs,
    pub(super) design: Option<&'a Cabling>,
    pub(super) node: &'a Node,
    pub(super) profile: &'a Profile,
    pub(super) role: Role,
    /// The name the table gives the node.
    pub(super) name: String,
    pub(super) host: Option<String>,
    pub(super) out: &'o mut Collected,
}

impl<'a> NodeCheck<'a, '_> {
    pub(super) fn nic(&self, i: usize) -> String {
        let n = &self.node.nics[i];
        n.name.clone().unwrap_or_else(|| n.mac.clone())
    }

    pub(super) fn finding(
        &self,
        sev: Severity,
        code: &'static str,
        what: String,
        why: String,
        fix: String,
    ) -> Finding {
        Finding::new(&self.node.id, sev, code, what, why, fix)
    }

    fn run(&mut self) {
        let (choice, by_speed) = port_choice(self.node, self.profile, self.design);
        let read = self.node.sources.lldp.is_some();
        let used: Vec<usize> = choice.iter().flat_map(|c| c.ports.clone()).collect();
        let mut all = Vec::new();
        for c in &choice {
            let need = needs(self.inputs, c.network);
            let ports: Vec<Port<'a>> = c.ports.iter().map(|&i| self.row(i, c, &need)).collect();
            all.extend(ports.iter().map(|p| p.row));
            for (k, port) in ports.iter().enumerate() {
                let peers: Vec<&Port<'a>> = ports
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != k)
                    .map(|(_, p)| p)
                    .collect();
                self.speed(c, port, &choice, by_speed.as_deref());
                match port.lldp {
                    None if read => self.no_neighbour(c.network, port, &peers),
                    None => {}
                    Some(l) => {
                        self.several(c.network, port, l);
                        self.frame(c.network, port, l, &need);
                        self.placement(c.network, port, l, &peers, &need);
                    }
                }
            }
            self.bond(c, &ports, &used);
        }
        if !read && !all.is_empty() {
            let f = self.finding(
                if self.design.is_some() {
                    Severity::Warning
                } else {
                    Severity::Info
                },
                "no-lldp",
                format!(
                    "LLDP was never read for {}: where its {} NICs' cables end is unchecked",
                    self.name,
                    all.len()
                ),
                "without the switch side of each cable nothing here can be checked".into(),
                "run `rackplan discover ssh` with lldpd running on the host (or `rackplan discover redfish` where the BMC reports LLDP)".into(),
            );
            self.out.flag(&all, f);
        }
    }

    fn row(&mut self, i: usize, c: &PortChoice, need: &Needs) -> Port<'a> {
        let nic = &self.node.nics[i];
        let l = nic.lldp.as_ref();
        let entry = self.design.zip(l).and_then(|(d, l)| design_switch(d, l));
        let r = self.out.rows.len();
        self.out.rows.push(CablingRow {
            node: self.node.id.clone(),
            hostname: self.host.clone(),
            nic: self.nic(i),
            mac: nic.mac.clone(),
            network: c.network,
            speed_mbps: nic.speed_mbps,
            required_mbps: c.spec.speed_mbps,
            link: nic.link,
            switch: l.and_then(|l| l.switch.clone().or_else(|| l.chassis_id.clone())),
            chassis_id: l.and_then(|l| l.chassis_id.clone()),
            design_switch: entry.map(str::to_string),
            port: l.and_then(|l| l.port.clone()),
            vlans: l.map_or_else(Vec::new, |l| {
                l.vlans
                    .iter()
                    .copied()
                    .filter(|v| Some(*v) != l.pvid)
                    .collect()
            }),
            native_vlan: l.and_then(|l| l.pvid),
            mtu: l.and_then(|l| l.mtu),
            frame_needed: need.frame(),
            others: l.map_or_else(Vec::new, |l| {
                l.others
                    .iter()
                    .map(|o| {
                        format!(
                            "{} {}",
                            o.switch
                                .as_deref()
                                .or(o.chassis_id.as_deref())
                                .unwrap_or("?"),
                            o.port.as_deref().unwrap_or("?")
                        )
                    })
                    .collect()
            }),
            source: l.map(|l| {
                match l.source {
                    LldpSource::Redfish => "redfish",
                    LldpSource::Ssh => "ssh",
                }
                .to_string()
            }),
            seen_at: l.map(|l| l.seen_at.clone()),
            verdict: String::new(),
        });
        self.out.codes.push(Vec::new());
        Port {
            row: r,
            nic: i,
            lldp: l,
            entry,
        }
    }
}
