//! `rackplan serve`: HTTP for PXE installs, every route under the path of the base URL.
//!
//! - `GET /ipxe?mac=MAC`: the iPXE script of the node that owns this MAC, its `config_url`
//!   carrying a fresh one-time token (minutes long, at most two live per node); an unknown
//!   MAC gets a script that says so and stops; a node whose install SUCCEEDED gets a script
//!   that boots its disk, and no token, unless `serve --reinstall NODE`.
//! - `GET /nodes/<hostname>/config.yaml?token=T`: the node's install config. Configs hold the
//!   cluster token, so this route, with a token issued to that node, is the only way to one:
//!   any other spelling (`//`, `%2f`, `.`, case) is refused, and an artifacts folder that
//!   holds rendered configs is refused at start.
//! - `POST /webhook/<hostname>/<EVENT>`: the installer's STARTED/SUCCEEDED/FAILED webhooks,
//!   accepted only with the node's own key (rendered into that node's config, compared in
//!   constant time); `GET /status`: the install status of every node.
//! - Anything else: manifests, SUMMARY.md, and (with `--artifacts DIR`) the installer's
//!   kernel, initrd, rootfs and ISO through tower-http's `ServeDir`, with traversal and
//!   symlinks out of the folder refused.
//!
//! Every request is logged with the client address and the node it concerns; tokens and
//! keys never appear in the log. Risk that remains: a MAC is not a secret, so anyone on the
//! install network who knows a node's MAC can ask for its script; keep PXE on an isolated
//! provisioning network.

pub mod listener;
pub mod tokens;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path as UrlPath, Query, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use tower::ServiceExt;

use crate::files::secrets::constant_time_eq;
use crate::inventory::model::normalize_mac;
use crate::render::OutputFile;
use crate::render::node::WEBHOOK_KEY_HEADER;
use tokens::Tokens;

/// How long a config token stays good: time enough for a node to load kernel and initrd.
pub const TOKEN_TTL: Duration = Duration::from_secs(15 * 60);
/// Largest request body accepted (webhook payloads are a few hundred bytes).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub event: String,
    pub at: String,
}

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

pub struct ServeState {
    site: String,
    base_url: String,
    files: HashMap<String, OutputFile>,
    /// MAC -> (hostname, node id).
    macs: HashMap<String, (String, String)>,
    /// hostname -> webhook key.
    webhook_keys: HashMap<String, String>,
    /// Hostnames (or node ids) that may be installed again after a SUCCEEDED.
    reinstall: BTreeSet<String>,
    tokens: Mutex<Tokens>,
    status: Mutex<BTreeMap<String, Vec<Event>>>,
    artifacts: Option<PathBuf>,
    log: Box<dyn Fn(&LogLine) + Send + Sync>,
}

/// Everything a server is made of.
pub struct ServeInputs {
    pub site: String,
    pub base_url: String,
    pub files: Vec<OutputFile>,
    pub macs: HashMap<String, (String, String)>,
    pub webhook_keys: HashMap<String, String>,
    pub reinstall: Vec<String>,
    pub artifacts: Option<PathBuf>,
}

impl ServeState {
    pub fn new(inputs: ServeInputs, log: Box<dyn Fn(&LogLine) + Send + Sync>) -> ServeState {
        ServeState {
            site: inputs.site,
            base_url: inputs.base_url.trim_end_matches('/').to_string(),
            files: inputs
                .files
                .into_iter()
                .map(|f| (f.path.clone(), f))
                .collect(),
            macs: inputs.macs,
            webhook_keys: inputs.webhook_keys,
            reinstall: inputs.reinstall.into_iter().collect(),
            tokens: Mutex::new(Tokens::new(TOKEN_TTL)),
            status: Mutex::new(BTreeMap::new()),
            artifacts: inputs.artifacts,
            log,
        }
    }

    /// Live config tokens (bounded; see `tokens`).
    pub fn live_tokens(&self) -> usize {
        self.tokens.lock().expect("not poisoned").len()
    }

    fn record(
        &self,
        client: SocketAddr,
        method: &str,
        path: &str,
        status: StatusCode,
        node: Option<String>,
        message: impl Into<String>,
    ) {
        (self.log)(&LogLine {
            client: client.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            status: status.as_u16(),
            node,
            message: message.into(),
        });
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

/// Refuse an artifacts folder that holds rendered install configs: serving it as it is
/// would hand out cluster tokens without the token route.
pub fn check_artifacts(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!("--artifacts {}: not a folder", dir.display()));
    }
    let mut todo = vec![(dir.to_path_buf(), 0)];
    let mut seen = 0usize;
    while let Some((d, depth)) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > 100_000 {
                return Ok(());
            }
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_ascii_lowercase();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if !is_dir && name == "config.yaml" {
                return Err(format!(
                    "--artifacts {} holds an install config ({}): it would be served without its one-time token; point --artifacts at the installer's kernel, initrd, rootfs and ISO only",
                    dir.display(),
                    p.strip_prefix(dir).unwrap_or(&p).display()
                ));
            }
            if is_dir && depth < 6 {
                todo.push((p, depth + 1));
            }
        }
    }
    Ok(())
}

fn text(code: StatusCode, body: String) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

fn installed(s: &ServeState, hostname: &str, id: &str) -> bool {
    if s.reinstall.contains(hostname) || s.reinstall.contains(id) {
        return false;
    }
    s.status
        .lock()
        .expect("not poisoned")
        .get(hostname)
        .and_then(|e| e.last())
        .is_some_and(|e| e.event == "SUCCEEDED")
}

async fn ipxe(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let raw = q.get("mac").cloned().unwrap_or_default();
    let Some(mac) = normalize_mac(&raw) else {
        s.record(
            peer,
            "GET",
            "/ipxe",
            StatusCode::BAD_REQUEST,
            None,
            format!("mac={:?} is not a MAC", crate::redfish::origin::shown(&raw)),
        );
        return text(
            StatusCode::BAD_REQUEST,
            "#!ipxe\necho rackplan: that is not a MAC address\nshell\n".into(),
        );
    };
    let Some((hostname, id)) = s.macs.get(&mac).cloned() else {
        s.record(
            peer,
            "GET",
            "/ipxe",
            StatusCode::OK,
            None,
            format!("mac={mac}: unknown MAC, halting"),
        );
        return text(
            StatusCode::OK,
            format!(
                "#!ipxe\necho rackplan: MAC {mac} is not in the inventory of site {}\necho Add the node (rackplan discover, plan, render) and boot again.\nshell\n",
                s.site
            ),
        );
    };
    let who = Some(format!("{hostname} ({id})"));
    let Some(file) = s.files.get(&format!("nodes/{hostname}/boot.ipxe")) else {
        s.record(
            peer,
            "GET",
            "/ipxe",
            StatusCode::NOT_FOUND,
            who,
            "no script rendered for this node",
        );
        return text(
            StatusCode::NOT_FOUND,
            "#!ipxe\necho rackplan: no script rendered for this node\nshell\n".into(),
        );
    };
    if installed(&s, &hostname, &id) {
        s.record(peer, "GET", "/ipxe", StatusCode::OK, who, "install already SUCCEEDED: boot from disk, no token (serve --reinstall NODE to install again)");
        return text(
            StatusCode::OK,
            format!(
                "#!ipxe\necho rackplan: {hostname} is installed; booting from its disk\nexit\n"
            ),
        );
    }
    let token = s
        .tokens
        .lock()
        .expect("not poisoned")
        .mint(&hostname, Instant::now());
    let script = String::from_utf8_lossy(&file.bytes).into_owned();
    let url = format!("{}/nodes/{hostname}/config.yaml", s.base_url);
    let script = script.replace(
        &format!("config_url={url}"),
        &format!("config_url={url}?token={token}"),
    );
    s.record(
        peer,
        "GET",
        "/ipxe",
        StatusCode::OK,
        who,
        format!("mac={mac}: one-time config token issued"),
    );
    text(StatusCode::OK, script)
}

async fn config(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    UrlPath(hostname): UrlPath<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let path = format!("nodes/{hostname}/config.yaml");
    let shown_path = format!("/{}", crate::redfish::origin::shown(&path));
    let Some(file) = s.files.get(&path) else {
        s.record(
            peer,
            "GET",
            &shown_path,
            StatusCode::NOT_FOUND,
            None,
            "no such node",
        );
        return text(StatusCode::NOT_FOUND, "no such node\n".into());
    };
    let who = Some(format!(
        "{hostname} ({})",
        file.node.clone().unwrap_or_default()
    ));
    let token = q.get("token").cloned().unwrap_or_default();
    let granted = s
        .tokens
        .lock()
        .expect("not poisoned")
        .redeem(&token, &hostname, Instant::now());
    if !granted {
        s.record(
            peer,
            "GET",
            &shown_path,
            StatusCode::FORBIDDEN,
            who,
            "no valid one-time token",
        );
        return text(
            StatusCode::FORBIDDEN,
            "this config holds the cluster token: it is served once, to the node that fetched its script from /ipxe?mac=...\n".into(),
        );
    }
    s.record(peer, "GET", &shown_path, StatusCode::OK, who, "token used");
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/yaml")],
        file.bytes.clone(),
    )
        .into_response()
}

async fn webhook(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    UrlPath((hostname, event)): UrlPath<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let event = event.to_ascii_uppercase();
    let path = format!(
        "/webhook/{}/{}",
        crate::redfish::origin::shown(&hostname),
        crate::redfish::origin::shown(&event)
    );
    if !["STARTED", "SUCCEEDED", "FAILED"].contains(&event.as_str()) {
        s.record(
            peer,
            "POST",
            &path,
            StatusCode::BAD_REQUEST,
            None,
            "unknown event",
        );
        return text(
            StatusCode::BAD_REQUEST,
            "event must be STARTED, SUCCEEDED or FAILED\n".into(),
        );
    }
    let Some(want) = s.webhook_keys.get(&hostname) else {
        s.record(
            peer,
            "POST",
            &path,
            StatusCode::NOT_FOUND,
            None,
            "refused: no such node",
        );
        return text(StatusCode::NOT_FOUND, "no such node\n".into());
    };
    let given = headers
        .get(WEBHOOK_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !constant_time_eq(given, want) {
        let why = if given.is_empty() {
            "refused: no webhook key"
        } else {
            "refused: wrong webhook key"
        };
        s.record(
            peer,
            "POST",
            &path,
            StatusCode::UNAUTHORIZED,
            Some(hostname),
            why,
        );
        return text(
            StatusCode::UNAUTHORIZED,
            "webhooks are accepted only with the key rendered into this node's config\n".into(),
        );
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
    s.record(
        peer,
        "POST",
        &path,
        StatusCode::NO_CONTENT,
        Some(hostname),
        format!("install {}", event.to_lowercase()),
    );
    StatusCode::NO_CONTENT.into_response()
}

async fn status(State(s): State<Shared>, ConnectInfo(peer): ConnectInfo<SocketAddr>) -> Response {
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
    s.record(peer, "GET", "/status", StatusCode::OK, None, "status");
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string_pretty(
            &serde_json::json!({"site": s.site, "live_tokens": s.live_tokens(), "nodes": nodes}),
        )
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

/// A request path made safe: decoded, relative, no `..`, no backslash, no NUL; empty and
/// `.` segments (`//`, `/./`) dropped.
pub fn safe_relative(raw: &str) -> Option<PathBuf> {
    let decoded = decode(raw)?;
    if decoded.contains('\\') || decoded.contains('\0') {
        return None;
    }
    let rel = decoded.trim_start_matches('/');
    let p = Path::new(rel);
    if rel.is_empty()
        || !p
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return None;
    }
    let clean: PathBuf = p
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    (!clean.as_os_str().is_empty()).then_some(clean)
}

/// A path that names an install config, however it is spelled.
fn names_a_config(rel: &Path) -> bool {
    rel.file_name()
        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("config.yaml"))
}

async fn other(State(s): State<Shared>, req: Request) -> Response {
    let peer =
        listener::client(req.extensions()).unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
    let method = req.method().clone();
    let uri: Uri = req.uri().clone();
    let raw = uri.path().to_string();
    let shown = crate::redfish::origin::shown(&raw);
    if method != Method::GET && method != Method::HEAD {
        s.record(
            peer,
            method.as_str(),
            &shown,
            StatusCode::METHOD_NOT_ALLOWED,
            None,
            "refused",
        );
        return text(StatusCode::METHOD_NOT_ALLOWED, "refused\n".into());
    }
    let Some(rel) = safe_relative(&raw) else {
        s.record(
            peer,
            "GET",
            &shown,
            StatusCode::BAD_REQUEST,
            None,
            "refused (path traversal)",
        );
        return text(StatusCode::BAD_REQUEST, "refused\n".into());
    };
    let key = rel.to_string_lossy().into_owned();
    if names_a_config(&rel) {
        s.record(peer, "GET", &shown, StatusCode::FORBIDDEN, None, "refused: install configs are served only by /nodes/<hostname>/config.yaml with a token");
        return text(StatusCode::FORBIDDEN, "refused\n".into());
    }
    if let Some(f) = s.files.get(&key) {
        if f.secret {
            s.record(
                peer,
                "GET",
                &shown,
                StatusCode::FORBIDDEN,
                None,
                "refused (secret)",
            );
            return text(StatusCode::FORBIDDEN, "refused\n".into());
        }
        s.record(peer, "GET", &shown, StatusCode::OK, None, "rendered file");
        return (StatusCode::OK, f.bytes.clone()).into_response();
    }
    if let Some(dir) = &s.artifacts {
        let full = dir.join(&rel);
        // Symlinks inside the artefact folder must not lead out of it.
        let inside = match (full.canonicalize(), dir.canonicalize()) {
            (Ok(f), Ok(d)) => f.starts_with(d),
            _ => false,
        };
        if inside && full.is_file() {
            let mut inner = Request::new(Body::empty());
            *inner.method_mut() = method;
            if let Ok(u) = format!("/{key}").parse::<Uri>() {
                *inner.uri_mut() = u;
            }
            if let Some(r) = req.headers().get(header::RANGE) {
                inner.headers_mut().insert(header::RANGE, r.clone());
            }
            let Ok(resp) = tower_http::services::ServeDir::new(dir)
                .oneshot(inner)
                .await
                .map(IntoResponse::into_response);
            let len = resp
                .headers()
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("?")
                .to_string();
            s.record(
                peer,
                "GET",
                &shown,
                resp.status(),
                None,
                format!("artifact ({len} bytes)"),
            );
            return resp;
        }
    }
    s.record(
        peer,
        "GET",
        &shown,
        StatusCode::NOT_FOUND,
        None,
        "not found",
    );
    text(StatusCode::NOT_FOUND, "not found\n".into())
}

/// The installer's boot artefacts the iPXE scripts fetch from the base URL, by version.
pub fn boot_artifacts(version: &str) -> [String; 3] {
    [
        format!("harvester-{version}-vmlinuz-amd64"),
        format!("harvester-{version}-initrd-amd64"),
        format!("harvester-{version}-rootfs-amd64.squashfs"),
    ]
}

/// The boot artefacts `serve` cannot hand out: not in `--artifacts` (or no `--artifacts`),
/// so the nodes' iPXE would stop at them unless another server publishes them.
pub fn missing_artifacts(dir: Option<&Path>, version: &str) -> Vec<String> {
    boot_artifacts(version)
        .into_iter()
        .filter(|a| dir.is_none_or(|d| !d.join(a).is_file()))
        .collect()
}

/// A request outside the base URL's path: logged with the path it would have under it.
fn outside(s: &ServeState, prefix: &str, req: &Request) -> Response {
    let peer =
        listener::client(req.extensions()).unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
    let raw = req.uri().path();
    let shown = crate::redfish::origin::shown(raw);
    let hint = format!(
        "not found: this server answers under {prefix}/ (the path of the base URL {}); try {prefix}/{}",
        s.base_url,
        crate::redfish::origin::shown(raw.trim_start_matches('/'))
    );
    s.record(
        peer,
        req.method().as_str(),
        &shown,
        StatusCode::NOT_FOUND,
        None,
        hint.clone(),
    );
    text(StatusCode::NOT_FOUND, format!("{hint}\n"))
}

/// The routes, under the path of the base URL (`http://h/harvester/v1` serves
/// `/harvester/v1/ipxe`...), so every URL handed to a node resolves against this server.
pub fn router(state: Shared) -> Router {
    let prefix = base_path(&state.base_url).to_string();
    let outer = state.clone();
    let app = Router::new()
        .route("/ipxe", get(ipxe))
        .route("/nodes/{hostname}/config.yaml", get(config))
        .route("/webhook/{hostname}/{event}", post(webhook))
        .route("/status", get(status))
        .fallback(other)
        .with_state(state);
    let app = if prefix.is_empty() {
        app
    } else {
        let p = prefix.clone();
        Router::new()
            .nest(&prefix, app)
            .fallback(move |req: Request| {
                let s = outer.clone();
                let p = p.clone();
                async move { outside(&s, &p, &req) }
            })
    };
    app.layer(tower_http::limit::RequestBodyLimitLayer::new(
        MAX_BODY_BYTES,
    ))
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
            safe_relative("/manifests/networks/20-vlanconfigs.yaml"),
            Some(PathBuf::from("manifests/networks/20-vlanconfigs.yaml"))
        );
    }
}
