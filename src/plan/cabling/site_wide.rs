//! What spans nodes: one switch port reported by two NICs (`switch-port-shared`), the
//! storage network on a switch that carries another network where the design says it is
//! dedicated (`storage-shares-switch`, with the NICs out of place named and where each
//! goes), and each switch's ports in order for the person at the rack. Switches are
//! grouped by the design's entry, else their chassis id, else their name
//! (`design::switch_key`), so a switch the design names by chassis id is one switch.

use std::collections::{BTreeMap, BTreeSet};

use super::collected::{Collected, at};
use super::design::{either, networks_of, switch_key};
use super::model::{CablingRow, SwitchPort, SwitchView};
use crate::inventory::text::shown;
use crate::plan::findings::{Finding, Severity};
use crate::site::Cabling;
use crate::vocab::NetworkKind;

fn key(row: &CablingRow) -> Option<String> {
    switch_key(
        row.design_switch.as_deref(),
        row.chassis_id.as_deref(),
        row.switch.as_deref(),
    )
}

/// `switch-port-shared`: two NICs report one switch port.
pub(super) fn shared_ports(out: &mut Collected) {
    let mut by_port: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (r, row) in out.rows.iter().enumerate() {
        if let (Some(k), Some(p)) = (key(row), &row.port) {
            by_port.entry((k, p.to_lowercase())).or_default().push(r);
        }
    }
    for rs in by_port.into_values().filter(|v| v.len() > 1) {
        let rows = &out.rows;
        let who: Vec<String> = rs
            .iter()
            .map(|&r| format!("{} {}", rows[r].node_name(), rows[r].nic))
            .collect();
        let port = at(rows[rs[0]].switch.as_deref(), rows[rs[0]].port.as_deref());
        let found: Vec<Finding> = rs
            .iter()
            .map(|&r| {
                Finding::new(
                    &rows[r].node,
                    Severity::Error,
                    "switch-port-shared",
                    format!("{} NICs report {port}: {}", rs.len(), who.join(", ")),
                    "one switch port cannot end two cables: a record is stale, or a port id is not unique on that switch",
                    format!("look at the cable in {port}, then rediscover {}", who.join(" and ")),
                )
            })
            .collect();
        for (r, f) in rs.iter().zip(found) {
            out.flag(&[*r], f);
        }
    }
}

/// `storage-shares-switch`: one finding per shared switch, naming the NICs out of place
/// (those of a network the design does not put there) and where each belongs.
pub(super) fn storage_shares(d: &Cabling, out: &mut Collected) {
    let mut nets: BTreeMap<String, BTreeSet<NetworkKind>> = BTreeMap::new();
    for row in &out.rows {
        if let Some(k) = key(row) {
            nets.entry(k).or_default().insert(row.network);
        }
    }
    let shared: Vec<String> = nets
        .into_iter()
        .filter(|(_, n)| n.contains(&NetworkKind::Storage) && n.len() > 1)
        .map(|(k, _)| k)
        .collect();
    for k in shared {
        let rows: Vec<usize> = (0..out.rows.len())
            .filter(|&r| key(&out.rows[r]).as_ref() == Some(&k))
            .collect();
        let first = &out.rows[rows[0]];
        let sw = shown(first.switch.as_deref().unwrap_or("?"));
        let designed = first
            .design_switch
            .as_deref()
            .map(|e| networks_of(d, e))
            .unwrap_or_default();
        let carried: BTreeSet<NetworkKind> = rows.iter().map(|&r| out.rows[r].network).collect();
        let others: Vec<&str> = carried
            .iter()
            .filter(|n| **n != NetworkKind::Storage)
            .map(|n| n.as_str())
            .collect();
        // Out of place: a network the design does not put on the switch; where the design
        // puts nothing there, or puts storage and another network there itself, the
        // storage NICs.
        let contradiction = designed.contains(&NetworkKind::Storage) && designed.len() > 1;
        let misplaced: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&r| {
                let n = out.rows[r].network;
                if designed.is_empty() || contradiction {
                    n == NetworkKind::Storage
                } else {
                    !designed.contains(&n)
                }
            })
            .collect();
        let fix = if contradiction {
            format!(
                "the design itself puts the storage network and the {} network on {sw}: give the storage network switches of its own in `cabling.storage.switches`, or set `cabling.dedicated_storage: false` in site.yaml",
                others.join(" and ")
            )
        } else {
            let moves: Vec<String> = misplaced
                .iter()
                .map(|&r| {
                    let row = &out.rows[r];
                    let to: Vec<String> = d
                        .side(row.network)
                        .map(|s| s.switches.iter().map(|w| shown(w)).collect())
                        .unwrap_or_default();
                    let to = if to.is_empty() {
                        format!("a switch of the {} network", row.network)
                    } else {
                        format!("a free port of {}", either(&to))
                    };
                    format!(
                        "move {} {} ({}) to {to}",
                        row.node_name(),
                        row.nic,
                        row.network
                    )
                })
                .collect();
            format!(
                "{}; the storage network's switches then carry it alone",
                moves.join("; ")
            )
        };
        let list: Vec<String> = misplaced
            .iter()
            .map(|&r| {
                let row = &out.rows[r];
                format!("{} {} ({})", row.node_name(), row.nic, row.network)
            })
            .collect();
        let f = Finding::new(
            "site",
            Severity::Error,
            "storage-shares-switch",
            format!(
                "switch {sw} carries the storage network and the {} network: {} out of place there",
                others.join(" and "),
                list.join(", ")
            ),
            "the design gives Longhorn a dedicated network: a rebuild saturating a shared switch slows VM traffic and disturbs heartbeats",
            fix,
        );
        out.flag(&misplaced, f);
    }
}

/// Each switch's ports in order, for the person at the rack.
pub(super) fn switch_views(rows: &[CablingRow], design: Option<&Cabling>) -> Vec<SwitchView> {
    let mut by: BTreeMap<String, SwitchView> = BTreeMap::new();
    for row in rows {
        let (Some(k), Some(s), Some(p)) = (key(row), &row.switch, &row.port) else {
            continue;
        };
        let v = by.entry(k).or_insert_with(|| SwitchView {
            switch: s.clone(),
            chassis_id: row.chassis_id.clone(),
            design_switch: row.design_switch.clone(),
            design: design
                .zip(row.design_switch.as_deref())
                .map(|(d, e)| networks_of(d, e))
                .unwrap_or_default(),
            ports: Vec::new(),
        });
        v.ports.push(SwitchPort {
            port: p.clone(),
            node: row.node_name().to_string(),
            nic: row.nic.clone(),
            network: row.network,
            speed_mbps: row.speed_mbps,
            vlans: row.vlans.clone(),
            native_vlan: row.native_vlan,
            mtu: row.mtu,
        });
    }
    let mut out: Vec<SwitchView> = by.into_values().collect();
    out.sort_by_key(|a| natural(&a.switch));
    for v in &mut out {
        v.ports.sort_by(|a, b| {
            natural(&a.port)
                .cmp(&natural(&b.port))
                .then(a.node.cmp(&b.node))
        });
    }
    out
}

/// A name's sort key: its digit runs as numbers (`Ethernet1/10` after `Ethernet1/9`).
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
