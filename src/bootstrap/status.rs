//! `rackplan status`: every planned node's install state, from a running `serve` (its
//! `/status`) or, with no server, from the state file `serve` keeps in the site folder.
//!
//! A server's answer is untrusted: its body is capped at [`MAX_STATUS_BYTES`] while it is
//! read (a server streaming an endless body costs that much, not gigabytes), and only the
//! fields used are taken, each cut to a printable 128 characters.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::serve::progress::{InstallState, NodeProgress, Progress};
use super::serve::state_file::{self, StateError};

/// Largest `/status` answer read: a node with a full event history takes about 1.6 KiB of
/// it, so this holds some 5,000 nodes.
pub(crate) const MAX_STATUS_BYTES: usize = 8 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct NodeState {
    pub(crate) hostname: String,
    pub(crate) node: String,
    pub(crate) state: String,
    pub(crate) last_event: Option<String>,
    pub(crate) at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct Status {
    /// The server asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
    /// Or the state file read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    pub(crate) site: String,
    pub(crate) nodes: Vec<NodeState>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
}

impl Status {
    /// Every node installed or failed: nothing more to wait for.
    pub(crate) fn done(&self) -> bool {
        self.nodes
            .iter()
            .all(|n| n.state == "installed" || n.state == "failed")
    }

    pub(crate) fn any_failed(&self) -> bool {
        self.nodes.iter().any(|n| n.state == "failed")
    }

    pub(crate) fn count(&self, state: &str) -> usize {
        self.nodes.iter().filter(|n| n.state == state).count()
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum StatusError {
    #[error(
        "cannot reach {url}: {why}; is `rackplan serve` running there? (give its address with --url)"
    )]
    Unreachable { url: String, why: String },
    #[error("{url} answered {code}; is this a rackplan serve base URL?")]
    HttpStatus { url: String, code: u16 },
    #[error(
        "{url}: the answer is larger than {limit} bytes and was not read further; is this a rackplan serve base URL?"
    )]
    TooLarge { url: String, limit: usize },
    #[error("{url}: the answer broke off: {why}")]
    Read { url: String, why: String },
    #[error("{url} did not answer with rackplan's status JSON: {why}")]
    NotStatus { url: String, why: String },
}

/// Ask the server at `base_url` for its `/status`.
pub(crate) async fn fetch(client: &reqwest::Client, base_url: &str) -> Result<Status, StatusError> {
    let url = format!("{}/status", base_url.trim_end_matches('/'));
    let mut resp = client.get(&url).send().await.map_err(|e| {
        let detail = crate::redfish::tls::describe(&e);
        let peer = crate::reach::Peer {
            what: "rackplan serve",
            address: base_url,
            set_in: "--url",
        };
        StatusError::Unreachable {
            url: url.clone(),
            why: if e.is_timeout() {
                crate::reach::timed_out(&peer, None, None)
            } else {
                crate::reach::explain(&peer, &detail).unwrap_or(detail)
            },
        }
    })?;
    if !resp.status().is_success() {
        return Err(StatusError::HttpStatus {
            url,
            code: resp.status().as_u16(),
        });
    }
    let too_large = |url: &str| StatusError::TooLarge {
        url: url.to_string(),
        limit: MAX_STATUS_BYTES,
    };
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_STATUS_BYTES as u64)
    {
        return Err(too_large(&url));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| StatusError::Read {
        url: url.clone(),
        why: crate::redfish::tls::describe(&e),
    })? {
        if body.len() + chunk.len() > MAX_STATUS_BYTES {
            return Err(too_large(&url));
        }
        body.extend_from_slice(&chunk);
    }
    parse(base_url, &body)
}

/// Printable, at most 128 characters.
fn clean(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(128).collect()
}

/// The server's answer, read as untrusted text: only the fields used, each checked.
pub(crate) fn parse(base_url: &str, body: &[u8]) -> Result<Status, StatusError> {
    let not_status = |why: String| StatusError::NotStatus {
        url: base_url.to_string(),
        why,
    };
    let v: Value = serde_json::from_slice(body).map_err(|e| not_status(e.to_string()))?;
    let nodes = v["nodes"]
        .as_object()
        .ok_or_else(|| not_status("the answer has no `nodes`".into()))?;
    let mut out = Vec::new();
    for (host, n) in nodes.iter().take(100_000) {
        let last = n["events"].as_array().and_then(|e| e.last());
        out.push(NodeState {
            hostname: clean(host),
            node: clean(n["node"].as_str().unwrap_or("-")),
            state: clean(n["state"].as_str().unwrap_or("?")),
            last_event: last.and_then(|e| e["event"].as_str()).map(clean),
            at: last.and_then(|e| e["at"].as_str()).map(clean),
        });
    }
    Ok(Status {
        url: Some(base_url.to_string()),
        file: None,
        site: clean(v["site"].as_str().unwrap_or("?")),
        nodes: out,
        notes: Vec::new(),
    })
}

/// (hostname, node id) of every planned node in the inventory, by hostname.
pub(crate) fn planned(
    inv: &crate::inventory::Inventory,
    lock: &crate::plan::Lock,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = inv
        .nodes
        .iter()
        .filter_map(|n| lock.get(&n.id).map(|a| (a.hostname.clone(), n.id.clone())))
        .collect();
    out.sort();
    out
}

/// The status recorded in the site's state file, for the `planned` nodes.
pub(crate) fn from_site(
    site: &str,
    site_dir: &Path,
    planned: &[(String, String)],
) -> Result<Status, StateError> {
    let path = state_file::path(site_dir);
    let progress = state_file::load(&path)?;
    let mut notes = Vec::new();
    if progress.is_none() {
        notes.push(format!(
            "no install recorded yet: {} does not exist (`rackplan serve` writes it)",
            path.display()
        ));
    }
    Ok(from_progress(
        site,
        &path,
        planned,
        &progress.unwrap_or_default(),
        notes,
    ))
}

fn from_progress(
    site: &str,
    path: &Path,
    planned: &[(String, String)],
    progress: &Progress,
    notes: Vec<String>,
) -> Status {
    let nodes = planned
        .iter()
        .map(|(hostname, id)| {
            let record = progress.of(hostname, id);
            let last = record.and_then(|p| p.events.last());
            NodeState {
                hostname: hostname.clone(),
                node: id.clone(),
                state: record
                    .map_or(InstallState::Waiting, NodeProgress::state)
                    .name()
                    .to_string(),
                last_event: last.map(|e| e.event.name().to_string()),
                at: last.map(|e| e.at.clone()),
            }
        })
        .collect();
    Status {
        url: None,
        file: Some(path.display().to_string()),
        site: site.to_string(),
        nodes,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_answer_is_cleaned_and_a_wrong_one_refused() {
        let body = br#"{"site": "lab\u001b[2J", "nodes": {"hv-c01\u001b]0;x\u0007": {"node": "S1", "state": "installed", "events": [{"event": "SUCCEEDED", "at": "t"}]}}}"#;
        let s = parse("http://x", body).unwrap();
        assert_eq!(s.site, "lab[2J");
        assert_eq!(s.nodes[0].hostname, "hv-c01]0;x");
        assert_eq!(s.nodes[0].last_event.as_deref(), Some("SUCCEEDED"));
        assert!(matches!(
            parse("http://x", b"{}"),
            Err(StatusError::NotStatus { .. })
        ));
        assert!(parse("http://x", b"<html>").is_err());
    }

    #[test]
    fn the_file_gives_every_planned_node() {
        let mut p = Progress::default();
        p.note(
            "hv-c01",
            "S1",
            super::super::serve::progress::InstallEvent::Succeeded,
            "2025-06-01T12:00:00Z".into(),
        );
        // A record made for another machine under the hostname does not count.
        p.note(
            "hv-c02",
            "OLD",
            super::super::serve::progress::InstallEvent::Succeeded,
            "2025-06-01T12:00:00Z".into(),
        );
        let planned = vec![
            ("hv-c01".to_string(), "S1".to_string()),
            ("hv-c02".to_string(), "S2".to_string()),
        ];
        let s = from_progress("lab", Path::new("install-state.yaml"), &planned, &p, vec![]);
        assert_eq!(s.count("installed"), 1);
        assert_eq!(s.nodes[1].state, "waiting");
        assert!(!s.done());
    }
}
