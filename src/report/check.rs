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
    /// Errors and warnings nobody acknowledged.
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    /// Findings acknowledged in nodes.yaml (`annotations.acknowledged`): listed with the
    /// others, each with its `acknowledged` reason, and not counted above.
    pub(crate) acknowledged: usize,
    pub(crate) roles: &'a BTreeMap<String, RoleDecision>,
    pub(crate) findings: &'a [Finding],
}

impl<'a> CheckJson<'a> {
    pub(crate) fn new(r: &'a CheckReport) -> CheckJson<'a> {
        let count = |s: Severity| {
            r.findings
                .iter()
                .filter(|f| f.severity == s && f.acknowledged.is_none())
                .count()
        };
        CheckJson {
            ok: !crate::plan::findings::has_errors(&r.findings),
            errors: count(Severity::Error),
            warnings: count(Severity::Warning),
            acknowledged: r
                .findings
                .iter()
                .filter(|f| f.acknowledged.is_some())
                .count(),
            roles: &r.roles,
            findings: &r.findings,
        }
    }
}

/// Findings as a table, grouped: the same finding on several nodes is one row naming
/// them all ("3 nodes: 256 GiB memory, ..."), and findings of one kind that differ in
/// their details are one row per kind with the nodes (`findings_table_with` with `detail`
/// gives every finding its row). Acknowledged findings follow in a table of their own,
/// with their reasons; notes (info) are counted, not shown.
pub fn findings_table(findings: &[Finding]) -> String {
    findings_table_with(findings, false)
}

/// [`findings_table`], with every finding on its own row when `detail` (`--node`, `-v`).
pub fn findings_table_with(findings: &[Finding], detail: bool) -> String {
    let open: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.acknowledged.is_none())
        .collect();
    let acked: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.acknowledged.is_some())
        .collect();
    let count = |s: Severity| open.iter().filter(|f| f.severity == s).count();
    let (errors, warnings, infos) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    );
    let mut out = String::new();
    let shown: Vec<&Finding> = open
        .iter()
        .copied()
        .filter(|f| f.severity != Severity::Info)
        .collect();
    let mut grouped = false;
    if !shown.is_empty() {
        let mut t = table(&["node", "severity", "what", "why", "how to fix"]);
        for g in groups(&shown, detail) {
            grouped |= g.kind_row;
            t.add_row(vec![
                g.nodes.join(", "),
                g.first.severity.to_string(),
                g.what,
                g.why,
                g.fix,
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if !acked.is_empty() {
        out.push_str("acknowledged in nodes.yaml (shown, not counted):\n");
        let mut t = table(&["node", "what", "reason", "until"]);
        for g in groups(&acked, detail) {
            let a = g.first.acknowledged.as_ref().expect("acknowledged");
            t.add_row(vec![
                g.nodes.join(", "),
                g.what,
                a.reason.clone(),
                a.until.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    let mut tail = Vec::new();
    if !acked.is_empty() {
        tail.push(format!("{} acknowledged", acked.len()));
    }
    if infos > 0 {
        tail.push(format!("{infos} note(s) (see --output json)"));
    }
    out.push_str(&format!(
        "{errors} error(s), {warnings} warning(s){}\n",
        if tail.is_empty() {
            String::new()
        } else {
            format!(", {}", tail.join(", "))
        }
    ));
    if grouped {
        out.push_str("findings of one kind are one row: `--node NODE` or `-v` shows each\n");
    }
    out
}

/// One row of the table: the findings it stands for, by their nodes.
struct Group<'a> {
    first: &'a Finding,
    nodes: Vec<&'a str>,
    what: String,
    why: String,
    fix: String,
    /// Findings that differ in their details, summed up by their kind.
    kind_row: bool,
}

/// The rows: one per finding when `detail`; else identical findings share a row, and the
/// findings of one kind (severity, code, acknowledgement) that differ share one row naming
/// the kind, how many there are and their nodes.
fn groups<'a>(findings: &[&'a Finding], detail: bool) -> Vec<Group<'a>> {
    let key = |f: &Finding| {
        (
            f.severity,
            f.code,
            f.acknowledged
                .as_ref()
                .map(|a| (a.reason.clone(), a.until.clone())),
        )
    };
    let mut kinds: Vec<Vec<&Finding>> = Vec::new();
    for f in findings {
        match kinds.iter_mut().find(|k| key(k[0]) == key(f)) {
            Some(k) if !detail => k.push(f),
            _ => kinds.push(vec![f]),
        }
    }
    let mut out = Vec::new();
    for k in kinds {
        let mut nodes: Vec<&str> = Vec::new();
        for f in &k {
            if !nodes.contains(&f.node.as_str()) {
                nodes.push(&f.node);
            }
        }
        let first = k[0];
        let same = |get: fn(&Finding) -> &str| k.iter().all(|f| get(f) == get(first));
        if same(|f| f.what.as_str()) && same(|f| f.why.as_str()) && same(|f| f.fix.as_str()) {
            out.push(Group {
                first,
                what: if nodes.len() > 1 {
                    format!("{} nodes: {}", nodes.len(), first.what)
                } else {
                    first.what.clone()
                },
                nodes,
                why: first.why.clone(),
                fix: first.fix.clone(),
                kind_row: false,
            });
            continue;
        }
        let varies = "(differs per finding: `-v` shows each)";
        let count = if nodes.len() > 1 {
            format!("{} on {} nodes", k.len(), nodes.len())
        } else {
            k.len().to_string()
        };
        out.push(Group {
            first,
            what: format!(
                "{} ({count}), e.g. {}: {}",
                crate::plan::acknowledge::title(first.code),
                first.node,
                first.what,
            ),
            nodes,
            why: if same(|f| f.why.as_str()) {
                first.why.clone()
            } else {
                varies.into()
            },
            fix: if same(|f| f.fix.as_str()) {
                first.fix.clone()
            } else {
                format!("{} {varies}", first.fix)
            },
            kind_row: true,
        });
    }
    out
}

/// One line per node with findings: its role and its counts, worst first; the nodes
/// without findings in one closing line.
pub(crate) fn node_summary(r: &CheckReport, findings: &[Finding]) -> String {
    let mut per: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for f in findings {
        let e = per.entry(f.node.as_str()).or_default();
        match (f.severity, f.acknowledged.is_some()) {
            (Severity::Info, _) => {}
            (_, true) => e.2 += 1,
            (Severity::Error, false) => e.0 += 1,
            (Severity::Warning, false) => e.1 += 1,
        }
    }
    per.retain(|_, (e, w, a)| *e + *w + *a > 0);
    let acked = per.values().any(|c| c.2 > 0);
    let mut rows: Vec<(&str, (usize, usize, usize))> = per.into_iter().collect();
    rows.sort_by(|a, b| (b.1).cmp(&a.1).then(a.0.cmp(b.0)));
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let mut head = vec!["node", "role", "errors", "warnings"];
    if acked {
        head.push("acknowledged");
    }
    let mut t = table(&head);
    for (node, (e, w, a)) in &rows {
        let role = r
            .roles
            .get(*node)
            .map_or("-".to_string(), |d| d.role.to_string());
        let mut row = vec![(*node).to_string(), role, e.to_string(), w.to_string()];
        if acked {
            row.push(a.to_string());
        }
        t.add_row(row);
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
