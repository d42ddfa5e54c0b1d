//! Rendering results for people (tables) and scripts (JSON). Domain modules return data;
//! only this module and `app` write to the terminal.

use std::io::IsTerminal;

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
