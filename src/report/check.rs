//! `check`: the findings table and the JSON document.

use std::collections::BTreeMap;

use serde::Serialize;

use super::grid::table;
use crate::plan::check::CheckReport;
use crate::plan::roles::RoleDecision;
use crate::plan::{Finding, Severity};

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct CheckJson<'a> {
    pub(crate) ok: bool,
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    pub(crate) roles: &'a BTreeMap<String, RoleDecision>,
    pub(crate) findings: &'a [Finding],
}

impl<'a> CheckJson<'a> {
    pub(crate) fn new(r: &'a CheckReport) -> CheckJson<'a> {
        let count = |s: Severity| r.findings.iter().filter(|f| f.severity == s).count();
        CheckJson {
            ok: !crate::plan::findings::has_errors(&r.findings),
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            roles: &r.roles,
            findings: &r.findings,
        }
    }
}

/// Findings as a table; the same finding on several nodes is one row naming them all
/// ("3 nodes: 256 GiB memory, ..."). Notes (info) are counted, not shown.
pub fn findings_table(findings: &[Finding]) -> String {
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    let infos = findings.len() - errors - warnings;
    // (severity, code, what, why, fix) -> nodes, in first-seen order.
    let mut groups: Vec<(&Finding, Vec<&str>)> = Vec::new();
    for f in findings.iter().filter(|f| f.severity != Severity::Info) {
        match groups.iter_mut().find(|(g, _)| {
            (g.severity, g.code, &g.what, &g.why, &g.fix)
                == (f.severity, f.code, &f.what, &f.why, &f.fix)
        }) {
            Some((_, nodes)) => nodes.push(&f.node),
            None => groups.push((f, vec![&f.node])),
        }
    }
    let mut out = String::new();
    if !groups.is_empty() {
        let mut t = table(&["node", "severity", "what", "why", "how to fix"]);
        for (f, nodes) in &groups {
            let what = if nodes.len() > 1 {
                format!("{} nodes: {}", nodes.len(), f.what)
            } else {
                f.what.clone()
            };
            t.add_row(vec![
                nodes.join(", "),
                f.severity.to_string(),
                what,
                f.why.clone(),
                f.fix.clone(),
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

/// One line per node with findings: its role and its counts, worst first; the nodes
/// without findings in one closing line.
pub(crate) fn node_summary(r: &CheckReport, findings: &[Finding]) -> String {
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for f in findings {
        let e = per.entry(f.node.as_str()).or_default();
        match f.severity {
            Severity::Error => e.0 += 1,
            Severity::Warning => e.1 += 1,
            Severity::Info => {}
        }
    }
    per.retain(|_, (e, w)| *e + *w > 0);
    let mut rows: Vec<(&str, (usize, usize))> = per.into_iter().collect();
    rows.sort_by(|a, b| (b.1).cmp(&a.1).then(a.0.cmp(b.0)));
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let mut t = table(&["node", "role", "errors", "warnings"]);
    for (node, (e, w)) in &rows {
        let role = r
            .roles
            .get(*node)
            .map_or("-".to_string(), |d| d.role.to_string());
        t.add_row(vec![
            (*node).to_string(),
            role,
            e.to_string(),
            w.to_string(),
        ]);
    }
    out.push_str(&format!("per node:\n{t}\n"));
    let clean = r
        .roles
        .keys()
        .filter(|n| !rows.iter().any(|(m, _)| m == n))
        .count();
    if clean > 0 {
        out.push_str(&format!("{clean} other node(s) have no findings\n"));
    }
    out
}
