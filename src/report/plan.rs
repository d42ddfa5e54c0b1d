//! `plan`: the allocation table.

use super::grid::table;
use crate::plan::allocate::{Change, PlanOutcome};

pub(crate) fn plan_table(p: &PlanOutcome) -> String {
    let mut t = table(&["hostname", "node", "role", "mode", "address", "change"]);
    for n in &p.nodes {
        let change = match &n.change {
            Change::Added => "new".to_string(),
            Change::Kept => "kept".to_string(),
            Change::RoleChanged {
                from, old_hostname, ..
            } => {
                format!("role was {from} ({old_hostname})")
            }
            Change::Orphaned => "not in inventory (reserved)".to_string(),
            Change::Released => "released".to_string(),
        };
        t.add_row(vec![
            n.allocation.hostname.clone(),
            n.allocation.id.clone(),
            n.allocation.role.to_string(),
            n.install_mode.to_string(),
            n.allocation.management_ip.to_string(),
            change,
        ]);
    }
    let mut out = format!("{t}\n");
    out.push_str(&format!(
        "storage network {}: {} addresses needed, {} usable\n",
        p.storage_network.range, p.storage_network.needed, p.storage_network.usable
    ));
    for n in &p.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
