//! Rendering results for people (tables) and scripts (JSON). Domain modules return data;
//! only this module and `app` write to the terminal.

use std::io::IsTerminal;

pub mod svg;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;

use crate::plan::lock::PlanOutcome;
use crate::plan::{Finding, Severity};
use crate::render::RenderOutcome;

/// A table sized to the terminal, or 120 columns when output is piped.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().copied());
    if !std::io::stdout().is_terminal() {
        t.set_width(120);
    }
    t
}

pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("report data serializes")
}

#[derive(Serialize)]
pub struct CheckJson<'a> {
    pub ok: bool,
    pub errors: usize,
    pub warnings: usize,
    pub roles: &'a std::collections::BTreeMap<String, crate::plan::roles::RoleDecision>,
    pub findings: &'a [Finding],
}

pub fn findings_table(findings: &[Finding]) -> String {
    let shown: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.severity != Severity::Info)
        .collect();
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    let infos = findings.len() - errors - warnings;
    let mut out = String::new();
    if !shown.is_empty() {
        let mut t = table(&["node", "severity", "what", "why", "how to fix"]);
        for f in shown {
            t.add_row(vec![
                f.node.as_str(),
                &f.severity.to_string(),
                &f.what,
                &f.why,
                &f.fix,
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out.push_str(&format!(
        "{errors} error(s), {warnings} warning(s){}\n",
        if infos > 0 {
            format!(", {infos} note(s) (see --output json)")
        } else {
            String::new()
        }
    ));
    out
}

pub fn plan_table(p: &PlanOutcome) -> String {
    let mut t = table(&["hostname", "node", "role", "mode", "address", "change"]);
    for n in &p.nodes {
        let change = match &n.change {
            crate::plan::lock::Change::Added => "new".to_string(),
            crate::plan::lock::Change::Kept => "kept".to_string(),
            crate::plan::lock::Change::RoleChanged {
                from, old_hostname, ..
            } => {
                format!("role was {from} ({old_hostname})")
            }
            crate::plan::lock::Change::Orphaned => "not in inventory (reserved)".to_string(),
            crate::plan::lock::Change::Released => "released".to_string(),
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

pub fn render_table(r: &RenderOutcome) -> String {
    let mut t = table(&["file", "kind", "node", "mode"]);
    for f in &r.files {
        t.add_row(vec![
            f.path.clone(),
            f.kind.to_string(),
            f.node.clone().unwrap_or_default(),
            if f.secret { "0600" } else { "0644" }.to_string(),
        ]);
    }
    let mut out = format!("{t}\n{} file(s) in {}\n", r.files.len(), r.out_dir);
    for p in &r.removed {
        out.push_str(&format!("removed {p} (no longer generated)\n"));
    }
    out
}

fn ports_by_speed(n: &crate::inventory::Node) -> String {
    let mut by: std::collections::BTreeMap<Option<u32>, usize> = std::collections::BTreeMap::new();
    for nic in &n.nics {
        *by.entry(nic.speed_mbps).or_default() += 1;
    }
    by.iter()
        .rev()
        .map(|(s, c)| match s {
            Some(s) if s % 1000 == 0 => format!("{c}x{}G", s / 1000),
            Some(s) => format!("{c}x{s}M"),
            None => format!("{c}x?"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn discovery_table(
    outcomes: &[crate::discover::redfish::BmcOutcome],
    merge: &crate::inventory::store::MergeReport,
) -> String {
    let mut t = table(&[
        "node", "BMC", "model", "cores", "memory", "NVMe", "ports", "status",
    ]);
    for o in outcomes {
        if o.found.is_empty() {
            t.add_row(vec![
                "-".to_string(),
                o.address.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                if o.ok {
                    "no system".to_string()
                } else {
                    "FAILED".to_string()
                },
            ]);
        }
        for n in &o.found {
            let nvme = n
                .disks
                .iter()
                .filter(|d| d.protocol == Some(crate::inventory::Protocol::Nvme))
                .count();
            let status = if merge.added.contains(&n.id) {
                "new"
            } else {
                "updated"
            };
            t.add_row(vec![
                n.id.clone(),
                o.address.clone(),
                n.model.clone().unwrap_or_else(|| "?".into()),
                n.cores().map_or("?".into(), |c| c.to_string()),
                n.memory_gib.map_or("?".into(), |m| format!("{m:.0} GiB")),
                nvme.to_string(),
                ports_by_speed(n),
                status.to_string(),
            ]);
        }
    }
    let ok = outcomes.iter().filter(|o| o.ok).count();
    let requests: usize = outcomes.iter().map(|o| o.requests).sum();
    let mut out = format!(
        "{t}\n{ok} of {} BMC(s) inventoried, {requests} requests",
        outcomes.len()
    );
    if !merge.marked_stale.is_empty() {
        out.push_str(&format!(
            "; {} node(s) kept from earlier and marked stale",
            merge.marked_stale.len()
        ));
    }
    out.push('\n');
    let failed: Vec<_> = outcomes.iter().filter(|o| !o.ok).collect();
    if !failed.is_empty() {
        out.push_str("\nerrors:\n");
        for o in failed {
            out.push_str(&format!(
                "  {}: {}\n",
                o.address,
                o.error.as_deref().unwrap_or("failed")
            ));
        }
    }
    for o in outcomes.iter().filter(|o| o.recorded_pin.is_some()) {
        out.push_str(&format!(
            "recorded the certificate pin of {} in bmcs.yaml (trust on first use): {}\n",
            o.address,
            o.recorded_pin.as_deref().unwrap_or("")
        ));
    }
    out
}
