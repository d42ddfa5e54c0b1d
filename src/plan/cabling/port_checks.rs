//! The checks of one port and of one bond, each a finding whose fix is drawn from the
//! cause found: `link-slow`, `no-neighbour`, `lldp-several-neighbours`, `switch-mtu`,
//! `cabling-wrong-switch`, `switch-vlan-missing`, `bond-one-member`, `bond-one-switch`
//! (what each means: `node`).

use super::collected::{at, at_lldp};
use super::design::{Needs, either, networks_of, ranges, switch_key};
use super::node::{NodeCheck, Port};
use crate::inventory::text::shown;
use crate::inventory::{LinkState, Lldp};
use crate::plan::findings::Severity;
use crate::plan::fit::gbe;
use crate::profile::PortChoice;
use crate::vocab::NetworkKind;

impl NodeCheck<'_, '_> {
    /// `link-slow`: the link below the profile's speed for its network.
    pub(super) fn speed(
        &mut self,
        c: &PortChoice,
        port: &Port<'_>,
        kept: &[PortChoice],
        by_speed: Option<&[PortChoice]>,
    ) {
        let want = c.spec.speed_mbps;
        let Some(s) = self.node.nics[port.nic].speed_mbps.filter(|s| *s < want) else {
            return;
        };
        let (nic, net, role) = (self.nic(port.nic), c.network, self.role);
        let on = port
            .lldp
            .map(|l| format!(" on {}", at_lldp(l)))
            .unwrap_or_default();
        let mut what = format!(
            "{} {nic} ({net}) links at {}{on}; the {role} profile asks {} of the {net} network",
            self.name,
            gbe(s),
            gbe(want)
        );
        if let Some(moved) = by_speed {
            let differ: Vec<String> = moved
                .iter()
                .filter(|m| {
                    kept.iter()
                        .find(|k| k.network == m.network)
                        .is_none_or(|k| k.ports != m.ports)
                })
                .map(|m| {
                    let names: Vec<String> = m.ports.iter().map(|&i| self.nic(i)).collect();
                    format!("the {} network on {}", m.network, names.join(", "))
                })
                .collect();
            what.push_str(&format!(
                "; at that speed the port choice render builds the bonds from puts {}, off the cables the design gives them (this table keeps each network on its cables)",
                differ.join(" and ")
            ));
        }
        let speed_at = port
            .lldp
            .map(|l| format!(" and the speed set on {}", at_lldp(l)))
            .unwrap_or_default();
        let why = if net == NetworkKind::Storage {
            format!(
                "the storage network runs at its slowest link: Longhorn's replica writes and rebuilds are planned at {} per link",
                gbe(want)
            )
        } else {
            format!(
                "the {net} network runs at its slowest link: its traffic is planned at {} per link",
                gbe(want)
            )
        };
        let fix = format!(
            "fix {nic}'s link, not the cables: reseat or replace its cable or optic{speed_at} (a {w} port linking at {s} has a bad cable or optic, or a fixed speed); if {nic} is a {s} NIC, give the {net} network a {w} one; then rediscover",
            w = gbe(want),
            s = gbe(s)
        );
        let f = self.finding(Severity::Error, "link-slow", what, why, fix);
        self.out.flag(&[port.row], f);
    }

    /// `no-neighbour`: LLDP was read for the node and this port had none.
    pub(super) fn no_neighbour(&mut self, net: NetworkKind, port: &Port<'_>, peers: &[&Port<'_>]) {
        let nic = self.nic(port.nic);
        let peer_entries: Vec<&str> = peers.iter().filter_map(|p| p.entry).collect();
        let targets: Vec<String> = self
            .design
            .and_then(|d| d.side(net))
            .map(|s| {
                let free: Vec<String> = s
                    .switches
                    .iter()
                    .filter(|w| !peer_entries.iter().any(|e| e.eq_ignore_ascii_case(w)))
                    .map(|w| shown(w))
                    .collect();
                if free.is_empty() {
                    s.switches.iter().map(|w| shown(w)).collect()
                } else {
                    free
                }
            })
            .unwrap_or_default();
        let peer = peers.iter().find_map(|p| {
            p.lldp
                .map(|l| format!("its bond peer {} is on {}", self.nic(p.nic), at_lldp(l)))
        });
        let (what, why, fix) = if self.node.nics[port.nic].link == LinkState::Down {
            let to = if targets.is_empty() {
                "its switch".to_string()
            } else {
                format!("a free port of {}", either(&targets))
            };
            (
                format!(
                    "{} {nic} ({net}) has no link and no LLDP neighbour",
                    self.name
                ),
                format!(
                    "no cable, or a switch port that is down: the {net} bond runs without this port"
                ),
                format!("cable {nic} to {to} (or bring that switch port up), then rediscover"),
            )
        } else {
            let mut hints = Vec::new();
            if !targets.is_empty() {
                hints.push(format!("the design puts it on {}", either(&targets)));
            }
            hints.extend(peer);
            let hint = if hints.is_empty() {
                String::new()
            } else {
                format!(" ({})", hints.join("; "))
            };
            let link = if self.node.nics[port.nic].link == LinkState::Up {
                "has a link"
            } else {
                "has an unknown link state"
            };
            (
                format!(
                    "{} {nic} ({net}) {link} but no LLDP neighbour, though LLDP was read on the node",
                    self.name
                ),
                "the switch sends no LLDP on that port (LLDP is off there), or the NIC's firmware LLDP agent consumes the frames before the host sees them: where this cable ends cannot be checked".to_string(),
                format!("turn LLDP on for the switch port {nic} is cabled to{hint}, or turn off the NIC firmware's LLDP agent; then rediscover"),
            )
        };
        let f = self.finding(Severity::Warning, "no-neighbour", what, why, fix);
        self.out.flag(&[port.row], f);
    }

    /// `lldp-several-neighbours`: more than one speaker on one port.
    pub(super) fn several(&mut self, net: NetworkKind, port: &Port<'_>, l: &Lldp) {
        if l.others.is_empty() {
            return;
        }
        let nic = self.nic(port.nic);
        let heard: Vec<String> = std::iter::once(at_lldp(l))
            .chain(l.others.iter().map(|o| {
                at(
                    o.switch.as_deref().or(o.chassis_id.as_deref()),
                    o.port.as_deref(),
                )
            }))
            .collect();
        let f = self.finding(
            Severity::Error,
            "lldp-several-neighbours",
            format!(
                "{} {nic} ({net}) hears {} LLDP neighbours on one port: {}",
                self.name,
                heard.len(),
                heard.join(", ")
            ),
            "a cable ends on one switch port, one LLDP neighbour: more is a device between the NIC and the switch (an unmanaged switch or a hub), a loop, a host sending LLDP as a switch, or a cable moved less than a TTL (about two minutes) ago; this port's other checks use the first".into(),
            format!("trace {nic}'s cable from {}: take out what sits between it and the switch (or break the loop), then rediscover", self.name),
        );
        self.out.flag(&[port.row], f);
    }

    /// `switch-mtu`: the port's frame size below what the network sends.
    pub(super) fn frame(&mut self, net: NetworkKind, port: &Port<'_>, l: &Lldp, need: &Needs) {
        let Some(m) = l.mtu.filter(|m| *m < need.frame()) else {
            return;
        };
        let nic = self.nic(port.nic);
        let sw = at_lldp(l);
        let tagged = if need.tagged() { ", VLAN-tagged," } else { "" };
        let lower = m.saturating_sub(need.frame() - need.mtu);
        let or_lower = if lower >= 1500 {
            format!(
                ", or lower `{}` in site.yaml to {lower}",
                match net {
                    NetworkKind::Management => "management.mtu",
                    NetworkKind::Vm => "vm_network.mtu",
                    NetworkKind::Storage => "storage_network.mtu",
                }
            )
        } else {
            String::new()
        };
        let f = self.finding(
            Severity::Error,
            "switch-mtu",
            format!(
                "{} {nic} ({net}): {sw} takes frames of at most {m} bytes; the {net} network's {}-byte MTU{tagged} needs frames of {} bytes",
                self.name,
                need.mtu,
                need.frame_sum()
            ),
            format!("frames larger than the port takes are dropped: full-size {net} packets stall while small ones (pings, heartbeats) still pass"),
            format!(
                "raise the maximum frame size (the MTU, as most switches call it) of {sw} to at least {} bytes{or_lower}",
                need.frame()
            ),
        );
        self.out.flag(&[port.row], f);
    }

    /// `cabling-wrong-switch` and `switch-vlan-missing`: the port against the design.
    pub(super) fn placement(
        &mut self,
        net: NetworkKind,
        port: &Port<'_>,
        l: &Lldp,
        peers: &[&Port<'_>],
        need: &Needs,
    ) {
        let Some(d) = self.design else { return };
        let nic = self.nic(port.nic);
        let sw = at_lldp(l);
        let named = |e: &str, side: &crate::site::SwitchSide| {
            side.switches.iter().any(|w| w.eq_ignore_ascii_case(e))
        };
        if let Some(side) = d.side(net)
            && !port.entry.is_some_and(|e| named(e, side))
        {
            let what = match port.entry.map(|e| networks_of(d, e)) {
                Some(nets) if !nets.is_empty() => {
                    let list: Vec<&str> = nets.iter().map(|n| n.as_str()).collect();
                    format!(
                        "{} {nic} ({net}) is cabled to {sw}, a switch of the {} network",
                        self.name,
                        list.join(" and ")
                    )
                }
                _ => format!(
                    "{} {nic} ({net}) is cabled to {sw}, a switch the design does not name",
                    self.name
                ),
            };
            // The switch of the pair the bond's well-placed members do not use already.
            let taken: Vec<&str> = peers
                .iter()
                .filter_map(|p| p.entry)
                .filter(|e| named(e, side))
                .collect();
            let mut to: Vec<String> = side
                .switches
                .iter()
                .filter(|w| !taken.iter().any(|e| e.eq_ignore_ascii_case(w)))
                .map(|w| shown(w))
                .collect();
            if to.is_empty() {
                to = side.switches.iter().map(|w| shown(w)).collect();
            }
            let f = self.finding(
                Severity::Error,
                "cabling-wrong-switch",
                what,
                "the port carries the wrong network: its traffic lands where the design does not put it, or nowhere".into(),
                format!("move {nic}'s cable from {sw} to a free port of {}", either(&to)),
            );
            self.out.flag(&[port.row], f);
            // On the wrong switch the VLANs are wrong too; the cable is the fix.
            return;
        }
        if l.vlans.is_empty() && l.pvid.is_none() {
            return;
        }
        let missing: Vec<u16> = need
            .vlans
            .iter()
            .copied()
            .filter(|v| !l.vlans.contains(v) && l.pvid != Some(*v))
            .collect();
        if missing.is_empty() {
            return;
        }
        let tagged: Vec<u16> = l
            .vlans
            .iter()
            .copied()
            .filter(|v| Some(*v) != l.pvid)
            .collect();
        let mut carries = if tagged.is_empty() {
            "it names no tagged VLAN".to_string()
        } else {
            format!("it carries {} tagged", ranges(&tagged))
        };
        if let Some(p) = l.pvid {
            carries.push_str(&format!(", native VLAN {p}"));
        }
        let list = ranges(&missing);
        let f = self.finding(
            Severity::Error,
            "switch-vlan-missing",
            format!("{} {nic} ({net}): {sw} does not carry VLAN {list} ({carries})", self.name),
            "traffic on those VLANs never leaves the node: the tenants or the storage network on them are cut off".into(),
            format!("add VLAN {list} to {sw}, tagged"),
        );
        self.out.flag(&[port.row], f);
    }

    /// `bond-one-switch` and `bond-one-member`.
    pub(super) fn bond(&mut self, c: &PortChoice, ports: &[Port<'_>], used: &[usize]) {
        let net = c.network;
        let side = self.design.and_then(|d| d.side(net));
        let others_than = |entry: Option<&str>| -> Vec<String> {
            side.map(|s| {
                s.switches
                    .iter()
                    .filter(|w| !entry.is_some_and(|e| e.eq_ignore_ascii_case(w)))
                    .map(|w| shown(w))
                    .collect()
            })
            .unwrap_or_default()
        };
        if let [one] = ports
            && c.spec.ports >= 2
        {
            let nic = self.nic(one.nic);
            let on = one
                .lldp
                .map(|l| format!(" on {}", at_lldp(l)))
                .unwrap_or_default();
            let target = match others_than(one.entry) {
                t if t.is_empty() => "a second switch".to_string(),
                t => format!("a free port of {}", either(&t)),
            };
            let free = (0..self.node.nics.len())
                .filter(|i| !used.contains(i))
                .min_by_key(|&i| (self.node.nics[i].link != LinkState::Up, i));
            let fix = match free {
                Some(f) => format!(
                    "cable {} to {target}, then rediscover (the port choice bonds it with {nic})",
                    self.nic(f)
                ),
                None => format!(
                    "add a NIC for the {net} network and cable it to {target}, then rediscover"
                ),
            };
            let storage = if net == NetworkKind::Storage {
                ", and Longhorn rebuilds every replica the node holds elsewhere"
            } else {
                ""
            };
            let f = self.finding(
                Severity::Error,
                "bond-one-member",
                format!(
                    "{} {net} bond has one member, {nic}{on}; the {} profile asks {} ports for the {net} network",
                    self.name, self.role, c.spec.ports
                ),
                format!("one NIC, one cable and one switch port carry the {net} network: when any of them fails the node is off it{storage}"),
                fix,
            );
            self.out.flag(&[one.row], f);
        }
        if ports.len() < 2 || ports.iter().any(|p| p.lldp.is_none()) {
            return;
        }
        let key = |p: &Port<'_>| {
            let l = p.lldp?;
            switch_key(p.entry, l.chassis_id.as_deref(), l.switch.as_deref())
        };
        let first = key(&ports[0]);
        if first.is_none() || ports.iter().any(|p| key(p) != first) {
            return;
        }
        let last = &ports[ports.len() - 1];
        let names: Vec<String> = ports.iter().map(|p| self.nic(p.nic)).collect();
        let sw = ports[0]
            .lldp
            .map(|l| shown(l.switch.as_deref().unwrap_or("?")));
        let from = last.lldp.map(at_lldp).unwrap_or_default();
        let to = match others_than(ports[0].entry) {
            t if t.is_empty() => "the other switch of the pair".to_string(),
            t => format!("a free port of {}", either(&t)),
        };
        let rows: Vec<usize> = ports.iter().map(|p| p.row).collect();
        let f = self.finding(
            Severity::Error,
            "bond-one-switch",
            format!(
                "{} {net} bond members {} are all on switch {}",
                self.name,
                names.join(", "),
                sw.unwrap_or_default()
            ),
            "no redundancy: one switch reboot or failure takes the node's network down".into(),
            format!(
                "move {}'s cable from {from} to {to}",
                names[names.len() - 1]
            ),
        );
        self.out.flag(&rows, f);
    }
}
