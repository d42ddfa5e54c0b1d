//! Replay BMC server: serves a Redfish mockup folder like a BMC would, many virtual BMCs on
//! loopback, each with injected latency, faults and a connection limit. Used by the fault
//! tests and by the fleet benchmark (which includes this file by path).
//!
//! HTTP/1.1 is spoken by hand (one request per connection, `Connection: close`, as many
//! BMCs do) so that faults can be exact: a reset is a real RST, a hang is a socket that
//! never answers, an oversized body really streams.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a misbehaving BMC does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Answer with this status code.
    Status(u16),
    /// 429 with `Retry-After: 1`.
    TooMany,
    /// Close the connection with a TCP reset, no answer.
    Reset,
    /// Read the request and never answer.
    Hang,
    /// 200 with a truncated JSON body.
    Malformed,
    /// 200 with a 64 MiB body.
    Oversized,
    /// 302 to the same URL, forever.
    RedirectLoop,
}

#[derive(Debug, Clone)]
pub struct BmcSpec {
    pub mockup: PathBuf,
    pub latency: Duration,
    pub fault: Fault,
    /// The fault hits only the first N requests (then the BMC behaves); `None` = all.
    pub fault_times: Option<usize>,
    /// The fault hits only paths starting with this (after `/redfish/v1`); `None` = all.
    pub fault_path: Option<String>,
    /// The fault hits only requests asking `$expand`.
    pub fault_expanded: bool,
    /// Connections served at once; more get 503 (like an iDRAC under load). 0 = no limit.
    pub max_connections: usize,
    /// Honour `$expand` as DSP0266 describes it, within what the capture's ServiceRoot
    /// advertises (`ProtocolFeaturesSupported.ExpandQuery`: `.`, `~`, `*`, `$levels` up to
    /// `MaxLevels`); anything else asked is refused with 400. When false, `$expand` is
    /// refused with 400 (or ignored, with `ignore_query`).
    pub expand: bool,
    /// Discard query options instead of refusing them: the plain document comes back for
    /// `?$expand=...` (iLO documents this for options it does not implement).
    pub ignore_query: bool,
    /// Require these credentials (Basic or a session token) outside the ServiceRoot.
    pub credentials: Option<(String, String)>,
    /// JSON values to overwrite: (resource path, JSON pointer, value).
    pub patches: Vec<(String, String, Value)>,
    /// Hostile: answer requests under `fault_path` (all when unset) with a 302 to this URL
    /// prefix followed by the request target.
    pub redirect_to: Option<String>,
    /// Hostile: the `Location` of a created session.
    pub session_location: Option<String>,
    /// The address to listen on (default 127.0.0.1).
    pub host: std::net::IpAddr,
}

impl BmcSpec {
    pub fn new(mockup: &Path) -> BmcSpec {
        BmcSpec {
            mockup: mockup.to_path_buf(),
            latency: Duration::ZERO,
            fault: Fault::None,
            fault_times: None,
            fault_path: None,
            fault_expanded: false,
            max_connections: 0,
            expand: false,
            ignore_query: false,
            credentials: None,
            patches: Vec::new(),
            redirect_to: None,
            session_location: None,
            host: std::net::IpAddr::from([127, 0, 0, 1]),
        }
    }
}

#[derive(Debug, Default)]
pub struct Stats {
    pub requests: AtomicUsize,
    pub faults: AtomicUsize,
    pub refused: AtomicUsize,
    pub sessions_created: AtomicUsize,
    pub sessions_deleted: AtomicUsize,
    pub basic_auth_seen: AtomicUsize,
    /// Requests that carried `Authorization` or `X-Auth-Token`, whatever their value.
    pub credentials_seen: AtomicUsize,
    pub log: Mutex<Vec<String>>,
    active: AtomicUsize,
}

pub struct ReplayBmc {
    pub addr: SocketAddr,
    pub stats: Arc<Stats>,
}

impl ReplayBmc {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// A set of virtual BMCs on one runtime; dropping it stops them all.
pub struct Fleet {
    rt: Option<tokio::runtime::Runtime>,
    pub bmcs: Vec<ReplayBmc>,
}

impl Fleet {
    pub fn start(specs: Vec<BmcSpec>) -> Fleet {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let bmcs = specs
            .into_iter()
            .map(|spec| {
                let listener = rt
                    .block_on(TcpListener::bind(SocketAddr::new(spec.host, 0)))
                    .unwrap();
                let addr = listener.local_addr().unwrap();
                let stats = Arc::new(Stats::default());
                let server = Arc::new(Server {
                    spec,
                    stats: stats.clone(),
                    cache: Mutex::new(HashMap::new()),
                    bytes: Mutex::new(HashMap::new()),
                    tokens: Mutex::new(Vec::new()),
                });
                rt.spawn(async move {
                    loop {
                        let Ok((sock, _)) = listener.accept().await else {
                            break;
                        };
                        let s = server.clone();
                        tokio::spawn(async move { s.connection(sock).await });
                    }
                });
                ReplayBmc { addr, stats }
            })
            .collect();
        Fleet { rt: Some(rt), bmcs }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(Duration::from_millis(100));
        }
    }
}

struct Server {
    spec: BmcSpec,
    stats: Arc<Stats>,
    cache: Mutex<HashMap<String, Option<Value>>>,
    bytes: Mutex<HashMap<String, Option<Arc<Vec<u8>>>>>,
    tokens: Mutex<Vec<String>>,
}

struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

async fn read_request(sock: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn respond(sock: &mut TcpStream, status: u16, headers: &[(&str, String)], body: &[u8]) {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        302 => "Found",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = sock.write_all(head.as_bytes()).await;
    let _ = sock.write_all(body).await;
    let _ = sock.shutdown().await;
}

impl Server {
    fn load(&self, path: &str) -> Option<Value> {
        if let Some(v) = self.cache.lock().unwrap().get(path) {
            return v.clone();
        }
        let rel = path.trim_start_matches('/');
        let file = self.spec.mockup.join(rel).join("index.json");
        let mut v: Option<Value> = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        if let Some(doc) = v.as_mut() {
            for (p, ptr, val) in &self.spec.patches {
                if p == path
                    && let Some(slot) = doc.pointer_mut(ptr)
                {
                    *slot = val.clone();
                }
            }
        }
        self.cache
            .lock()
            .unwrap()
            .insert(path.to_string(), v.clone());
        v
    }

    /// The serialised document, cached: a BMC under test should not cost the rig CPU.
    fn load_bytes(&self, path: &str) -> Option<Arc<Vec<u8>>> {
        if let Some(b) = self.bytes.lock().unwrap().get(path) {
            return b.clone();
        }
        let b = self
            .load(path)
            .map(|v| Arc::new(serde_json::to_vec(&v).unwrap()));
        self.bytes
            .lock()
            .unwrap()
            .insert(path.to_string(), b.clone());
        b
    }

    fn authorized(&self, req: &Request) -> bool {
        let Some((user, pass)) = &self.spec.credentials else {
            return true;
        };
        if let Some(tok) = req.header("X-Auth-Token") {
            return self.tokens.lock().unwrap().iter().any(|t| t == tok);
        }
        if let Some(b) = req
            .header("Authorization")
            .and_then(|a| a.strip_prefix("Basic "))
        {
            self.stats.basic_auth_seen.fetch_add(1, Ordering::Relaxed);
            return b == base64(&format!("{user}:{pass}"));
        }
        false
    }

    async fn connection(self: Arc<Self>, mut sock: TcpStream) {
        let active = self.stats.active.fetch_add(1, Ordering::SeqCst) + 1;
        let guard = ActiveGuard(self.stats.clone());
        let Some(req) = read_request(&mut sock).await else {
            return;
        };
        let n = self.stats.requests.fetch_add(1, Ordering::SeqCst);
        if req.header("Authorization").is_some() || req.header("X-Auth-Token").is_some() {
            self.stats.credentials_seen.fetch_add(1, Ordering::SeqCst);
        }
        let body = String::from_utf8_lossy(&req.body).into_owned();
        self.stats.log.lock().unwrap().push(if body.is_empty() {
            format!("{} {}", req.method, req.target)
        } else {
            format!("{} {} {body}", req.method, req.target)
        });
        if self.spec.max_connections > 0 && active > self.spec.max_connections {
            self.stats.refused.fetch_add(1, Ordering::Relaxed);
            respond(&mut sock, 503, &[], b"{\"error\":\"too many connections\"}").await;
            return;
        }
        tokio::time::sleep(self.spec.latency).await;
        let (raw_path, query) = req
            .target
            .split_once('?')
            .unwrap_or((req.target.as_str(), ""));
        let path = {
            let p = decode(raw_path);
            let t = p.trim_end_matches('/').to_string();
            if t.is_empty() { "/".to_string() } else { t }
        };
        let faulty = self.spec.fault != Fault::None
            && self.spec.fault_times.is_none_or(|k| n < k)
            && (!self.spec.fault_expanded || decode(query).contains("$expand"))
            && self
                .spec
                .fault_path
                .as_ref()
                .is_none_or(|p| path.starts_with(&format!("/redfish/v1{p}")));
        if let Some(to) = &self.spec.redirect_to
            && self
                .spec
                .fault_path
                .as_ref()
                .is_none_or(|p| path.starts_with(&format!("/redfish/v1{p}")))
        {
            self.stats.faults.fetch_add(1, Ordering::Relaxed);
            return respond(
                &mut sock,
                302,
                &[("Location", format!("{to}{}", req.target))],
                b"",
            )
            .await;
        }
        if faulty {
            self.stats.faults.fetch_add(1, Ordering::Relaxed);
            match self.spec.fault {
                Fault::Status(code) => {
                    return respond(
                        &mut sock,
                        code,
                        &[],
                        b"{\"error\":{\"code\":\"Base.1.0.GeneralError\"}}",
                    )
                    .await;
                }
                Fault::TooMany => {
                    return respond(&mut sock, 429, &[("Retry-After", "1".into())], b"").await;
                }
                Fault::Reset => {
                    let _ = sock.set_zero_linger();
                    drop(sock);
                    return;
                }
                Fault::Hang => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    return;
                }
                Fault::Malformed => {
                    return respond(
                        &mut sock,
                        200,
                        &[],
                        b"{\"@odata.id\": \"/redfish/v1\", \"Systems\": {\"@odata.id\"",
                    )
                    .await;
                }
                Fault::Oversized => {
                    let head = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 67108864\r\n\r\n";
                    let _ = sock.write_all(head.as_bytes()).await;
                    let chunk = vec![b' '; 1 << 16];
                    for _ in 0..1024 {
                        if sock.write_all(&chunk).await.is_err() {
                            break;
                        }
                    }
                    return;
                }
                Fault::RedirectLoop => {
                    return respond(&mut sock, 302, &[("Location", req.target.clone())], b"").await;
                }
                Fault::None => {}
            }
        }
        let sessions = "/redfish/v1/SessionService/Sessions";
        if req.method == "POST" && path == sessions {
            let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            let ok = self
                .spec
                .credentials
                .as_ref()
                .is_some_and(|(u, p)| body["UserName"] == *u && body["Password"] == *p);
            if !ok {
                return respond(&mut sock, 401, &[], b"").await;
            }
            let id = self.stats.sessions_created.fetch_add(1, Ordering::SeqCst) + 1;
            let token = format!(
                "token-{id}-{}",
                self.spec.mockup.display().to_string().len()
            );
            self.tokens.lock().unwrap().push(token.clone());
            return respond(
                &mut sock,
                201,
                &[
                    ("X-Auth-Token", token),
                    (
                        "Location",
                        self.spec
                            .session_location
                            .clone()
                            .unwrap_or_else(|| format!("{sessions}/{id}")),
                    ),
                ],
                b"{}",
            )
            .await;
        }
        if path != "/redfish/v1" && path != "/redfish" && !self.authorized(&req) {
            return respond(&mut sock, 401, &[], b"").await;
        }
        if req.method == "DELETE" && path.starts_with(&format!("{sessions}/")) {
            if let Some(tok) = req.header("X-Auth-Token") {
                self.tokens.lock().unwrap().retain(|t| t != tok);
            }
            self.stats.sessions_deleted.fetch_add(1, Ordering::SeqCst);
            return respond(&mut sock, 204, &[], b"").await;
        }
        // A PATCH is kept, as a BMC keeps pending settings: its JSON merged into the
        // resource, which later GETs return (`@Redfish.*` annotations are not stored).
        if req.method == "PATCH"
            && let Ok(Value::Object(patch)) = serde_json::from_slice::<Value>(&req.body)
            && let Some(mut doc) = self.load(&path)
        {
            fn merge(into: &mut Value, from: &Value) {
                match (into, from) {
                    (Value::Object(a), Value::Object(b)) => {
                        for (k, v) in b {
                            if k.starts_with("@Redfish.") {
                                continue;
                            }
                            merge(a.entry(k.clone()).or_insert(Value::Null), v);
                        }
                    }
                    (slot, v) => *slot = v.clone(),
                }
            }
            merge(&mut doc, &Value::Object(patch));
            self.cache.lock().unwrap().insert(path.clone(), Some(doc));
            self.bytes.lock().unwrap().remove(&path);
            return respond(&mut sock, 204, &[], b"").await;
        }
        if req.method != "GET" {
            return respond(&mut sock, 204, &[], b"").await;
        }
        let query = decode(query);
        let wants_expand = query.contains("$expand");
        if !wants_expand || (!self.spec.expand && self.spec.ignore_query) {
            let Some(body) = self.load_bytes(&path) else {
                return respond(&mut sock, 404, &[], b"").await;
            };
            drop(guard);
            return respond(&mut sock, 200, &[], &body).await;
        }
        let Some((kind, levels)) = self
            .spec
            .expand
            .then(|| self.expand_asked(&query))
            .flatten()
        else {
            return respond(&mut sock, 400, &[], b"{\"error\":\"QueryNotSupported\"}").await;
        };
        let Some(mut doc) = self.load(&path) else {
            return respond(&mut sock, 404, &[], b"").await;
        };
        self.expand_in(&mut doc, kind, levels, false);
        let body = serde_json::to_vec(&doc).unwrap();
        drop(guard);
        respond(&mut sock, 200, &[], &body).await;
    }

    /// The `$expand` asked (`.`, `~` or `*`, and `$levels`, 1 when not given), when the
    /// capture's ServiceRoot advertises both.
    fn expand_asked(&self, query: &str) -> Option<(char, u64)> {
        let arg = query.split('&').find_map(|p| p.strip_prefix("$expand="))?;
        let kind = arg.chars().next()?;
        let levels = match arg[1..].strip_prefix("($levels=") {
            Some(rest) => rest.strip_suffix(')')?.parse().ok()?,
            None if arg.len() == 1 => 1,
            None => return None,
        };
        let root = self.load("/redfish/v1")?;
        let adv = root.pointer("/ProtocolFeaturesSupported/ExpandQuery")?;
        let yes = |k: &str| adv.get(k).and_then(Value::as_bool) == Some(true);
        let kind_ok = match kind {
            '.' => yes("NoLinks"),
            '~' => yes("Links"),
            '*' => yes("ExpandAll"),
            _ => false,
        };
        let max = adv.get("MaxLevels").and_then(Value::as_u64).unwrap_or(1);
        let levels_ok = levels >= 1 && (levels == 1 || yes("Levels")) && levels <= max;
        (kind_ok && levels_ok).then_some((kind, levels))
    }

    /// Replace the references in `v` with the documents they name, `levels` deep: `.`
    /// those outside any `Links` property, `~` those inside, `*` all. A reference to a
    /// document the capture lacks stays a reference.
    fn expand_in(&self, v: &mut Value, kind: char, levels: u64, in_links: bool) {
        if levels == 0 {
            return;
        }
        let wanted = match kind {
            '.' => !in_links,
            '~' => in_links,
            _ => true,
        };
        match v {
            Value::Object(o) => {
                if wanted
                    && o.len() == 1
                    && let Some(id) = o.get("@odata.id").and_then(Value::as_str)
                {
                    let id = decode(id.split('#').next().unwrap_or(id));
                    let id = id.trim_end_matches('/');
                    if let Some(mut doc) = self.load(id) {
                        self.expand_in(&mut doc, kind, levels - 1, false);
                        *v = doc;
                    }
                    return;
                }
                for (k, child) in o.iter_mut() {
                    self.expand_in(child, kind, levels, in_links || k == "Links");
                }
            }
            Value::Array(a) => {
                for child in a {
                    self.expand_in(child, kind, levels, in_links);
                }
            }
            _ => {}
        }
    }
}

struct ActiveGuard(Arc<Stats>);

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

fn base64(s: &str) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = s.as_bytes();
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if c.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}
