//! `check --cabling`: the cabling table (one row per NIC of a network), the ports of each
//! switch for the person at the rack, and the cabling findings.

use super::check::findings_table;
use super::grid;
use crate::plan::cabling::CablingReport;

/// VLAN ids as ranges: `100-103,200`.
pub(crate) fn ranges(v: &[u16]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// The cabling table, then each switch's ports, then the findings.
pub fn table(r: &CablingReport) -> String {
    let mut out = String::new();
    if r.rows.is_empty() {
        out.push_str("no NIC of any network: nothing to show (is nodes.yaml empty?)\n");
        return out;
    }
    let mut t = grid::table(&[
        "node", "nic", "network", "switch", "port", "vlans", "mtu", "verdict",
    ]);
    let dash = || "-".to_string();
    for row in &r.rows {
        t.add_row(vec![
            row.hostname.clone().unwrap_or_else(|| row.node.clone()),
            row.nic.clone(),
            row.network.to_string(),
            row.switch.clone().unwrap_or_else(dash),
            row.port.clone().unwrap_or_else(dash),
            if row.vlans.is_empty() {
                dash()
            } else {
                ranges(&row.vlans)
            },
            row.mtu.map_or_else(dash, |m| m.to_string()),
            row.verdict.replace(',', ", "),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    for sw in &r.switches {
        let design = if sw.design.is_empty() {
            if r.design {
                " (not in the design)".to_string()
            } else {
                String::new()
            }
        } else {
            let nets: Vec<&str> = sw.design.iter().map(|n| n.as_str()).collect();
            format!(" ({} in the design)", nets.join(", "))
        };
        out.push_str(&format!("\nswitch {}{design}\n", sw.switch));
        let mut t = grid::table(&["port", "node", "nic", "network"]);
        for p in &sw.ports {
            t.add_row(vec![
                p.port.clone(),
                p.node.clone(),
                p.nic.clone(),
                p.network.to_string(),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    let unseen = r.rows.iter().filter(|x| x.switch.is_none()).count();
    out.push('\n');
    if !r.design {
        out.push_str(
            "no `cabling:` design in site.yaml: only bond members on one switch, shared switch ports and frame sizes below the MTU are checked\n",
        );
    }
    if unseen > 0 {
        out.push_str(&format!(
            "{unseen} NIC(s) without an LLDP neighbour (run `discover ssh` on hosts with lldpd, or `discover redfish` on BMCs that report LLDP)\n"
        ));
    }
    out.push_str(&findings_table(&r.findings));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlan_ranges() {
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[5]), "5");
        assert_eq!(
            ranges(&[100, 101, 102, 103, 200, 202, 203]),
            "100-103,200,202-203"
        );
    }
}
