//! `check`: the findings table and the JSON document.

use std::collections::BTreeMap;

use serde::Serialize;

use super::table;
use crate::plan::check::CheckReport;
use crate::plan::roles::RoleDecision;
use crate::plan::{Finding, Severity};

#[derive(Serialize)]
pub struct CheckJson<'a> {
    pub ok: bool,
    pub errors: usize,
    pub warnings: usize,
    pub roles: &'a BTreeMap<String, RoleDecision>,
    pub findings: &'a [Finding],
}

impl<'a> CheckJson<'a> {
    pub fn new(r: &'a CheckReport) -> CheckJson<'a> {
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
