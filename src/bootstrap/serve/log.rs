//! What the server tells its operator: one line per request (client, node, outcome; never a
//! token or a key), and the problems it meets outside a request (a state file it could not
//! write).

use serde::Serialize;

/// One line of the request log.
#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    pub client: String,
    pub method: String,
    /// The path without its query (tokens live in the query).
    pub path: String,
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub message: String,
}

impl LogLine {
    pub fn text(&self) -> String {
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
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum LogEntry {
    Request(LogLine),
    Problem { error: String },
}

impl LogEntry {
    pub fn text(&self) -> String {
        match self {
            LogEntry::Request(l) => l.text(),
            LogEntry::Problem { error } => format!("error: {error}"),
        }
    }
}
