//! `rackplan serve`: HTTP for PXE installs, every route under the path of the base URL.
//!
//! - `GET /ipxe?mac=MAC`: the iPXE script of the node that owns this MAC, its `config_url`
//!   carrying a fresh one-time token; an unknown MAC gets a script that says so and stops.
//! - `GET /nodes/<hostname>/config.yaml?token=T`: the node's install config. Configs hold the
//!   cluster token, so they are served only with a token issued to that node's own MAC, once.
//!   Risk that remains: a MAC is not a secret, so anyone on the install network who knows a
//!   node's MAC can ask for its script; keep PXE on an isolated provisioning network.
//! - `POST /webhook/<hostname>/<EVENT>`: the installer's STARTED/SUCCEEDED/FAILED webhooks;
//!   `GET /status`: the install status of every node.
//! - Anything else: manifests, SUMMARY.md, and (with `--artifacts DIR`) the installer's kernel,
//!   initrd, rootfs and ISO, with path traversal refused.
//!
//! Every request is logged with the node it concerns; tokens never appear in the log.

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

use crate::inventory::model::normalize_mac;
use crate::render::OutputFile;

const TOKEN_TTL: Duration = Duration::from_secs(3600);

#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub event: String,
    pub at: String,
}

pub struct ServeState {
    site: String,
    base_url: String,
    files: HashMap<String, OutputFile>,
    /// MAC -> (hostname, node id).
    macs: HashMap<String, (String, String)>,
    tokens: Mutex<HashMap<String, (String, Instant)>>,
    status: Mutex<BTreeMap<String, Vec<Event>>>,
    artifacts: Option<PathBuf>,
    log: Box<dyn Fn(String) + Send + Sync>,
}

impl ServeState {
    pub fn new(
        site: &str,
        base_url: &str,
        files: Vec<OutputFile>,
        macs: HashMap<String, (String, String)>,
        artifacts: Option<PathBuf>,
        log: Box<dyn Fn(String) + Send + Sync>,
    ) -> ServeState {
        ServeState {
            site: site.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            files: files.into_iter().map(|f| (f.path.clone(), f)).collect(),
            macs,
            tokens: Mutex::new(HashMap::new()),
            status: Mutex::new(BTreeMap::new()),
            artifacts,
            log,
        }
    }
}

type Shared = Arc<ServeState>;

/// MAC -> (hostname, node id) for every planned node: the only MACs that get a script.
pub fn mac_map(
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

fn text(code: StatusCode, body: String) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

async fn ipxe(State(s): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    let raw = q.get("mac").cloned().unwrap_or_default();
    let Some(mac) = normalize_mac(&raw) else {
        (s.log)(format!("GET /ipxe mac={raw:?} -> 400 (not a MAC)"));
        return text(
            StatusCode::BAD_REQUEST,
            format!("#!ipxe\necho rackplan: `{raw}` is not a MAC address\nshell\n"),
        );
    };
    let Some((hostname, id)) = s.macs.get(&mac).cloned() else {
        (s.log)(format!("GET /ipxe mac={mac} -> 200 unknown MAC, halting"));
        return text(
            StatusCode::OK,
            format!(
                "#!ipxe\necho rackplan: MAC {mac} is not in the inventory of site {}\necho Add the node (rackplan discover, plan, render) and boot again.\nshell\n",
                s.site
            ),
        );
    };
    let Some(file) = s.files.get(&format!("nodes/{hostname}/boot.ipxe")) else {
        return text(
            StatusCode::NOT_FOUND,
            "#!ipxe\necho rackplan: no script rendered for this node\nshell\n".into(),
        );
    };
    let mut raw = [0u8; 16];
    getrandom::fill(&mut raw).expect("the OS random source works");
    let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    s.tokens
        .lock()
        .expect("not poisoned")
        .insert(token.clone(), (hostname.clone(), Instant::now()));
    let script = String::from_utf8_lossy(&file.bytes).into_owned();
    let url = format!("{}/nodes/{hostname}/config.yaml", s.base_url);
    let script = script.replace(
        &format!("config_url={url}"),
        &format!("config_url={url}?token={token}"),
    );
    (s.log)(format!(
        "GET /ipxe mac={mac} -> 200 {hostname} ({id}), one-time config token issued"
    ));
    text(StatusCode::OK, script)
}

async fn config(
    State(s): State<Shared>,
    UrlPath(hostname): UrlPath<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let path = format!("nodes/{hostname}/config.yaml");
    let Some(file) = s.files.get(&path) else {
        (s.log)(format!("GET /{path} -> 404"));
        return text(StatusCode::NOT_FOUND, "no such node\n".into());
    };
    let node = file.node.clone().unwrap_or_default();
    let token = q.get("token").cloned().unwrap_or_default();
    let granted = {
        let mut t = s.tokens.lock().expect("not poisoned");
        t.retain(|_, (_, at)| at.elapsed() < TOKEN_TTL);
        match t.get(&token) {
            Some((h, _)) if *h == hostname => {
                t.remove(&token);
                true
            }
            _ => false,
        }
    };
    if !granted {
        (s.log)(format!(
            "GET /{path} -> 403 {hostname} ({node}): no valid one-time token"
        ));
        return text(
            StatusCode::FORBIDDEN,
            "this config holds the cluster token: it is served once, to the node that fetched its script from /ipxe?mac=...\n".into(),
        );
    }
    (s.log)(format!(
        "GET /{path} -> 200 {hostname} ({node}), token used"
    ));
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/yaml")],
        file.bytes.clone(),
    )
        .into_response()
}

async fn webhook(
    State(s): State<Shared>,
    UrlPath((hostname, event)): UrlPath<(String, String)>,
) -> Response {
    let event = event.to_ascii_uppercase();
    if !["STARTED", "SUCCEEDED", "FAILED"].contains(&event.as_str()) {
        return text(
            StatusCode::BAD_REQUEST,
            "event must be STARTED, SUCCEEDED or FAILED\n".into(),
        );
    }
    if !s
        .files
        .contains_key(&format!("nodes/{hostname}/config.yaml"))
    {
        return text(StatusCode::NOT_FOUND, "no such node\n".into());
    }
    s.status
        .lock()
        .expect("not poisoned")
        .entry(hostname.clone())
        .or_default()
        .push(Event {
            event: event.clone(),
            at: crate::inventory::utc_now(),
        });
    (s.log)(format!(
        "POST /webhook/{hostname}/{event} -> 204: install {}",
        event.to_lowercase()
    ));
    StatusCode::NO_CONTENT.into_response()
}

async fn status(State(s): State<Shared>) -> Response {
    let st = s.status.lock().expect("not poisoned").clone();
    let mut nodes = BTreeMap::new();
    for (path, f) in &s.files {
        if let Some(h) = path
            .strip_prefix("nodes/")
            .and_then(|p| p.strip_suffix("/config.yaml"))
        {
            let events = st.get(h).cloned().unwrap_or_default();
            let last = events.last().map_or("waiting", |e| match e.event.as_str() {
                "STARTED" => "installing",
                "SUCCEEDED" => "installed",
                _ => "failed",
            });
            nodes.insert(
                h.to_string(),
                serde_json::json!({"node": f.node, "state": last, "events": events}),
            );
        }
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string_pretty(&serde_json::json!({"site": s.site, "nodes": nodes}))
            .unwrap_or_default(),
    )
        .into_response()
}

fn decode(p: &str) -> Option<String> {
    let b = p.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A request path made safe: decoded, relative, no `..`, no backslash, no NUL.
pub fn safe_relative(raw: &str) -> Option<PathBuf> {
    let decoded = decode(raw)?;
    if decoded.contains('\\') || decoded.contains('\0') {
        return None;
    }
    let rel = decoded.trim_start_matches('/');
    let p = Path::new(rel);
    if rel.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(p.to_path_buf())
}

async fn other(State(s): State<Shared>, uri: Uri) -> Response {
    let raw = uri.path().to_string();
    let Some(rel) = safe_relative(&raw) else {
        (s.log)(format!("GET {raw} -> 400 refused (path traversal)"));
        return text(StatusCode::BAD_REQUEST, "refused\n".into());
    };
    let key = rel.to_string_lossy().into_owned();
    if let Some(f) = s.files.get(&key) {
        if f.secret {
            (s.log)(format!("GET /{key} -> 403 (secret)"));
            return text(StatusCode::FORBIDDEN, "refused\n".into());
        }
        (s.log)(format!("GET /{key} -> 200"));
        return (StatusCode::OK, f.bytes.clone()).into_response();
    }
    if let Some(dir) = &s.artifacts {
        let full = dir.join(&rel);
        // Symlinks inside the artefact folder must not lead out of it.
        let inside = match (full.canonicalize(), dir.canonicalize()) {
            (Ok(f), Ok(d)) => f.starts_with(d),
            _ => false,
        };
        if inside
            && full.is_file()
            && let Ok(file) = tokio::fs::File::open(&full).await
        {
            let len = file.metadata().await.map_or(0, |m| m.len());
            (s.log)(format!("GET /{key} -> 200 ({len} bytes)"));
            let body = Body::from_stream(tokio_util::io::ReaderStream::new(file));
            return (
                StatusCode::OK,
                [(header::CONTENT_LENGTH, len.to_string())],
                body,
            )
                .into_response();
        }
    }
    (s.log)(format!("GET /{key} -> 404"));
    text(StatusCode::NOT_FOUND, "not found\n".into())
}

/// The routes, under the path of the base URL (`http://h/harvester/v1` serves
/// `/harvester/v1/ipxe`...), so every URL handed to a node resolves against this server.
pub fn router(state: Shared) -> Router {
    let prefix = base_path(&state.base_url).to_string();
    let app = Router::new()
        .route("/ipxe", get(ipxe))
        .route("/nodes/{hostname}/config.yaml", get(config))
        .route("/webhook/{hostname}/{event}", post(webhook))
        .route("/status", get(status))
        .fallback(get(other))
        .with_state(state);
    if prefix.is_empty() {
        app
    } else {
        Router::new().nest(&prefix, app)
    }
}

/// The path of a base URL without its trailing slash: `http://h:80/a/b/` -> `/a/b`, `http://h` -> ``.
fn base_path(base: &str) -> &str {
    let rest = base.split_once("://").map_or(base, |(_, r)| r);
    rest.find('/')
        .map_or("", |i| rest[i..].trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_path_is_the_url_path() {
        assert_eq!(
            base_path("http://10.10.0.5/harvester/v1.6.1"),
            "/harvester/v1.6.1"
        );
        assert_eq!(base_path("http://10.10.0.5:8080/pxe/"), "/pxe");
        assert_eq!(base_path("http://127.0.0.1:8080"), "");
        assert_eq!(base_path("http://127.0.0.1:8080/"), "");
    }

    #[test]
    fn traversal_is_refused() {
        for bad in [
            "/../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/a/../../b",
            "/a%2f..%2f..%2fb",
            "/..%5c..%5cwin.ini",
            "/",
            "/a%00b",
            "/%zz",
        ] {
            assert!(safe_relative(bad).is_none(), "{bad}");
        }
        assert_eq!(
            safe_relative("/harvester-v1.6.1-vmlinuz-amd64"),
            Some(PathBuf::from("harvester-v1.6.1-vmlinuz-amd64"))
        );
        assert_eq!(
            safe_relative("/manifests/20-vlanconfigs.yaml"),
            Some(PathBuf::from("manifests/20-vlanconfigs.yaml"))
        );
    }
}
