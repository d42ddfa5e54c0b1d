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
    /// Acknowledged by people in nodes.yaml (`annotations.acknowledged`): shown with its
    /// reason, and it no longer counts against the node or the site.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acknowledged: Option<FindingAck>,
}

/// The acknowledgement a finding is shown with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FindingAck {
    pub reason: String,
    /// The last day it holds (`YYYY-MM-DD`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
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
            acknowledged: None,
        }
    }

    /// An error nobody acknowledged: what stops plan, render and boot.
    pub(crate) fn blocks(&self) -> bool {
        self.severity == Severity::Error && self.acknowledged.is_none()
    }
}

/// True when any finding is an error nobody acknowledged.
pub(crate) fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(Finding::blocks)
}
