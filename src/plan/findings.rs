//! A finding: what is wrong (or worth knowing) about a node or the site, why it matters and
//! how to fix it. Findings are data; `report` renders them as a table or JSON.

use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// Node id, or `site` for findings about the whole site.
    pub node: String,
    pub severity: Severity,
    /// Stable machine-readable kind, e.g. `cpu-cores`, `bond-mixed-speed`.
    pub code: &'static str,
    pub what: String,
    pub why: String,
    pub fix: String,
}

impl Finding {
    pub(crate) fn new(
        node: &str,
        severity: Severity,
        code: &'static str,
        what: impl Into<String>,
        why: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            node: node.to_string(),
            severity,
            code,
            what: what.into(),
            why: why.into(),
            fix: fix.into(),
        }
    }
}

/// True when any finding is an error.
pub(crate) fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}
