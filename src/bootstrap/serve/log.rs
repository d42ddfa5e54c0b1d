//! What the server tells its operator: one line per request (client, node, outcome; never a
//! token or a key), and the problems it meets outside a request (a state file it could not
//! write).

use serde::Serialize;

/// One line of the request log.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct LogLine {
    pub(crate) client: String,
    pub(crate) method: String,
    /// The path without its query (tokens live in the query).
    pub(crate) path: String,
    pub(crate) status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    pub(crate) message: String,
}

impl LogLine {
    pub(crate) fn text(&self) -> String {
        let node = self
            .node
            .as_ref()
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        format!(
            "{} {} {} -> {}{node}: {}",
            self.client, self.method, self.path, self.status, self.message
        )
    }
}

/// A log entry: a request, or a problem of the server itself.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum LogEntry {
    Request(LogLine),
    Problem { error: String },
}

impl LogEntry {
    pub(crate) fn text(&self) -> String {
        match self {
            LogEntry::Request(l) => l.text(),
            LogEntry::Problem { error } => format!("error: {error}"),
        }
    }
}
