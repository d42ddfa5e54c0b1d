//! `check --cabling`: the cabling table (one row per NIC of a network: node, NIC, network,
//! switch, port, verdict, narrow enough to stay a table at 80 columns for a full rack),
//! then each switch's ports with what the rest of a row would say (speed, tagged VLANs,
//! native VLAN, frame size), then the findings, which name nodes as the table does. Text a
//! switch sent is shown with visible marks for anything hidden or look-alike.

use std::collections::BTreeMap;

use super::check::findings_table;
use super::grid;
use crate::inventory::text::shown;
use crate::plan::Finding;
use crate::plan::cabling::{CablingReport, SwitchView, ranges};

/// A link speed in a few characters: `25G`, `2.5G`, `100M`.
fn speed(mbps: u32) -> String {
    if mbps >= 1000 && mbps.is_multiple_of(1000) {
        format!("{}G", mbps / 1000)
    } else if mbps >= 1000 {
        format!("{}G", f64::from(mbps) / 1000.0)
    } else {
        format!("{mbps}M")
    }
}

/// The cabling table, then each switch's ports, then the findings.
pub fn table(r: &CablingReport) -> String {
    let mut out = String::new();
    if r.rows.is_empty() {
        out.push_str("no NIC of any network: nothing to show (is nodes.yaml empty?)\n");
        return out;
    }
    let mut t = grid::table(&["node", "nic", "network", "switch", "port", "verdict"]);
    let dash = || "-".to_string();
    for row in &r.rows {
        t.add_row(vec![
            row.node_name().to_string(),
            row.nic.clone(),
            row.network.to_string(),
            row.switch.as_deref().map_or_else(dash, shown),
            row.port.as_deref().map_or_else(dash, shown),
            row.verdict.replace(',', ", "),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    for sw in &r.switches {
        out.push_str(&format!("\n{}\n", heading(sw, r.design)));
        let mut t = grid::table(&[
            "port", "node", "nic", "network", "speed", "vlans", "native", "frame",
        ]);
        for p in &sw.ports {
            t.add_row(vec![
                shown(&p.port),
                p.node.clone(),
                p.nic.clone(),
                p.network.to_string(),
                p.speed_mbps.map_or_else(dash, speed),
                if p.vlans.is_empty() {
                    dash()
                } else {
                    ranges(&p.vlans)
                },
                p.native_vlan.map_or_else(dash, |v| v.to_string()),
                p.mtu.map_or_else(dash, |m| m.to_string()),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&grid::wrap_prose(&footer(r)));
    // Findings name the node as the table does.
    let names: BTreeMap<&str, &str> = r
        .rows
        .iter()
        .map(|x| (x.node.as_str(), x.node_name()))
        .collect();
    let findings: Vec<Finding> = r
        .findings
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some(n) = names.get(f.node.as_str()) {
                f.node = (*n).to_string();
            }
            f
        })
        .collect();
    out.push_str(&findings_table(&findings));
    out
}

/// `switch st-a (storage in the design)`, with the chassis id where the design names the
/// switch by it.
fn heading(sw: &SwitchView, design: bool) -> String {
    let mut notes = Vec::new();
    if let (Some(c), Some(e)) = (&sw.chassis_id, &sw.design_switch)
        && c.eq_ignore_ascii_case(e)
        && !c.eq_ignore_ascii_case(&sw.switch)
    {
        notes.push(format!("chassis {}", shown(c)));
    }
    if !sw.design.is_empty() {
        let nets: Vec<&str> = sw.design.iter().map(|n| n.as_str()).collect();
        notes.push(format!("{} in the design", nets.join(", ")));
    } else if design {
        notes.push("not in the design".into());
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    };
    format!("switch {}{notes}", shown(&sw.switch))
}

/// What the table cannot check, and why, in lines under it.
fn footer(r: &CablingReport) -> String {
    let mut out = String::new();
    if !r.design {
        out.push_str("no `cabling:` design in site.yaml: only LLDP itself, link speeds, bonds, shared switch ports and frame sizes are checked\n");
    }
    let has = |code: &str| {
        r.rows
            .iter()
            .filter(|x| x.verdict.split(',').any(|c| c == code))
            .collect::<Vec<_>>()
    };
    let never = has("no-lldp");
    if !never.is_empty() {
        let mut nodes: Vec<&str> = never.iter().map(|x| x.node_name()).collect();
        nodes.dedup();
        out.push_str(&format!(
            "{} NIC(s) on {} node(s) never had LLDP read: run `rackplan discover ssh` where lldpd runs on the hosts, or `rackplan discover redfish` where the BMC reports LLDP\n",
            never.len(),
            nodes.len()
        ));
    }
    let silent = has("no-neighbour");
    let down = silent
        .iter()
        .filter(|x| x.link == crate::inventory::LinkState::Down)
        .count();
    if down > 0 {
        out.push_str(&format!(
            "{down} NIC(s) with no link and no LLDP neighbour: not cabled, or a switch port down (see no-neighbour below)\n"
        ));
    }
    if silent.len() > down {
        out.push_str(&format!(
            "{} NIC(s) with a link but no LLDP neighbour: their switch ports send no LLDP (see no-neighbour below)\n",
            silent.len() - down
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four nodes of the example site (24 NICs), cabled as designed but for a VM link at
    /// 1 Gb/s and a storage port taking 9010-byte frames: at 80 columns the NIC table stays
    /// a boxed table, one line per NIC.
    #[test]
    fn a_rack_of_24_nics_stays_a_table_at_80_columns() {
        let mut i = crate::plan::cabling::cabling_tests::rack();
        i.inventory.nodes.truncate(4);
        let k = i.inventory.nodes.len() - 1;
        for n in &mut i.inventory.nodes[k].nics {
            let Some(l) = n.lldp.as_mut() else { continue };
            match l.switch.as_deref() {
                Some("leaf-a") => n.speed_mbps = Some(1000),
                Some("st-b") => l.mtu = Some(9010),
                _ => {}
            }
        }
        let r = crate::plan::cabling::cabling(&i);
        assert_eq!(r.rows.len(), 24);
        grid::set_width(80);
        let text = table(&r);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        let nic_table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert_eq!(
            nic_table.len(),
            24 + 4,
            "a boxed table, one line per NIC: {text}"
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn short_speeds() {
        assert_eq!(speed(25_000), "25G");
        assert_eq!(speed(2_500), "2.5G");
        assert_eq!(speed(100), "100M");
    }
}
