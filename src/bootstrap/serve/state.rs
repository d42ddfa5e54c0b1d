//! What a running server is made of: the rendered files, the MAC and webhook-key tables,
//! the one-time tokens, the install record, and the log.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;

use super::log::{LogEntry, LogLine};
use super::progress::InstallEvent;
use super::record::InstallRecord;
use super::tokens::Tokens;
use crate::files::fsio::FsError;
use crate::render::OutputFile;

/// How long a config token stays good: time enough for a node to load kernel and initrd.
pub(crate) const TOKEN_TTL: Duration = Duration::from_secs(15 * 60);
/// Largest request body accepted (webhook payloads are a few hundred bytes).
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024;
/// How long a change that needs no immediate write (a token issued) waits, so that a burst
/// of them is written once.
const COALESCE: Duration = Duration::from_millis(200);

pub(crate) struct ServeState {
    pub(super) site: String,
    pub(super) base_url: String,
    pub(super) files: HashMap<String, OutputFile>,
    /// MAC -> (hostname, node id).
    pub(super) macs: HashMap<String, (String, String)>,
    /// hostname -> node id, for every planned node.
    pub(super) nodes: HashMap<String, String>,
    /// hostname -> webhook key.
    pub(super) webhook_keys: HashMap<String, String>,
    /// Hostnames (or node ids) that may be installed again after a SUCCEEDED.
    pub(super) reinstall: BTreeSet<String>,
    pub(super) tokens: Mutex<Tokens>,
    pub(super) install: Arc<InstallRecord>,
    /// A coalesced write is scheduled.
    write_pending: AtomicBool,
    pub(super) artifacts: Option<PathBuf>,
    log: Box<dyn Fn(&LogEntry) + Send + Sync>,
}

/// Everything a server is made of.
pub(crate) struct ServeInputs {
    pub(crate) site: String,
    pub(crate) base_url: String,
    pub(crate) files: Vec<OutputFile>,
    pub(crate) macs: HashMap<String, (String, String)>,
    pub(crate) webhook_keys: HashMap<String, String>,
    pub(crate) reinstall: Vec<String>,
    pub(crate) artifacts: Option<PathBuf>,
    /// The install progress, loaded from the site's state file.
    pub(crate) install: InstallRecord,
}

pub(crate) type Shared = Arc<ServeState>;

impl ServeState {
    pub(crate) fn new(
        inputs: ServeInputs,
        log: Box<dyn Fn(&LogEntry) + Send + Sync>,
    ) -> ServeState {
        // The planned nodes are the ones with a rendered config.
        let nodes = inputs
            .files
            .iter()
            .filter_map(|f| {
                let h = f
                    .path
                    .strip_prefix("nodes/")?
                    .strip_suffix("/config.yaml")?;
                Some((h.to_string(), f.node.clone()?))
            })
            .collect();
        ServeState {
            site: inputs.site,
            base_url: inputs.base_url.trim_end_matches('/').to_string(),
            files: inputs
                .files
                .into_iter()
                .map(|f| (f.path.clone(), f))
                .collect(),
            macs: inputs.macs,
            nodes,
            webhook_keys: inputs.webhook_keys,
            reinstall: inputs.reinstall.into_iter().collect(),
            tokens: Mutex::new(Tokens::new(TOKEN_TTL)),
            install: Arc::new(inputs.install),
            write_pending: AtomicBool::new(false),
            artifacts: inputs.artifacts,
            log,
        }
    }

    /// Live config tokens (bounded; see `tokens`).
    pub(crate) fn live_tokens(&self) -> usize {
        self.tokens.lock().expect("not poisoned").len()
    }

    /// The install record (to write it a last time when the server stops).
    pub(crate) fn install(&self) -> &InstallRecord {
        &self.install
    }

    /// Installed and not named by `--reinstall`: told to boot its disk.
    pub(super) fn installed(&self, hostname: &str, id: &str) -> bool {
        if self.reinstall.contains(hostname) || self.reinstall.contains(id) {
            return false;
        }
        self.install.installed(hostname, id)
    }

    /// Record an event that may wait a moment to be written (a burst is written once).
    pub(super) fn note_soon(self: &Arc<Self>, hostname: &str, id: &str, event: InstallEvent) {
        self.install.note(hostname, id, event);
        if self.write_pending.swap(true, Ordering::SeqCst) {
            return;
        }
        let state = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(COALESCE).await;
            // A change made from here on schedules another write.
            state.write_pending.store(false, Ordering::SeqCst);
            let install = state.install.clone();
            if let Err(e) = blocking_flush(install).await {
                state.problem(&format!("the install state was not saved: {e}"));
            }
        });
    }

    /// Record an event and write it before answering.
    pub(super) async fn note_now(
        &self,
        hostname: &str,
        id: &str,
        event: InstallEvent,
    ) -> Result<(), FsError> {
        self.install.note(hostname, id, event);
        blocking_flush(self.install.clone()).await
    }

    pub(super) fn record(
        &self,
        client: SocketAddr,
        method: &str,
        path: &str,
        status: StatusCode,
        node: Option<String>,
        message: impl Into<String>,
    ) {
        (self.log)(&LogEntry::Request(LogLine {
            client: client.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            status: status.as_u16(),
            node,
            message: message.into(),
        }));
    }

    pub(super) fn problem(&self, error: &str) {
        (self.log)(&LogEntry::Problem {
            error: error.to_string(),
        });
    }
}

/// Write the record on a thread that may block.
async fn blocking_flush(install: Arc<InstallRecord>) -> Result<(), FsError> {
    let path = install.path().to_path_buf();
    tokio::task::spawn_blocking(move || install.flush())
        .await
        .unwrap_or_else(|e| {
            Err(FsError {
                action: "cannot write",
                path,
                source: std::io::Error::other(e.to_string()),
            })
        })
}

/// MAC -> (hostname, node id) for every planned node: the only MACs that get a script.
pub(crate) fn mac_map(
    inv: &crate::inventory::Inventory,
    lock: &crate::plan::Lock,
) -> HashMap<String, (String, String)> {
    let mut macs = HashMap::new();
    for n in &inv.nodes {
        if let Some(a) = lock.get(&n.id) {
            for nic in &n.nics {
                macs.insert(nic.mac.clone(), (a.hostname.clone(), n.id.clone()));
            }
        }
    }
    macs
}
