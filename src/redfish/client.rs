//! The HTTP side of a BMC: one client per BMC, with its auth, its concurrency cap, bounded
//! retries, timeouts and a response size cap. Credentials live in [`Auth`] and are never
//! formatted into an error or a log line.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::fetch::{Fetch, FetchError};
use super::gate::{Gate, Priority};
use super::origin::{OffOrigin, Origin, OriginError, shown};
use crate::files::secrets::Secret;

/// The HTTP client could not be built (the TLS backend or the system trust store).
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub(crate) struct ClientError(std::sync::Arc<reqwest::Error>);

/// A login the BMC did not accept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoginError {
    /// The session service sits outside the BMC's origin.
    #[error(transparent)]
    OffOrigin(FetchError),
    #[error("session login refused (HTTP {0}): check the credentials")]
    Refused(u16),
    #[error("the BMC did not hand out a session token")]
    NoToken,
}

/// Limits for talking to one BMC.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// Requests in flight to one BMC at once (BMCs are slow and fragile).
    pub(crate) per_bmc_concurrency: usize,
    /// Time allowed for one request, body included. A BMC that answers nothing for this
    /// long while a request waits is silent: that request is not retried, and nothing more
    /// is asked of it (`BmcClient::silent`).
    pub(crate) request_timeout: Duration,
    /// Retries after the first attempt, for 5xx, 429, resets and timeouts.
    pub(crate) retries: u32,
    /// First back-off; doubled on every retry.
    pub(crate) backoff: Duration,
    /// Largest response accepted.
    pub(crate) max_body_bytes: usize,
    /// Bytes accepted from one BMC in all: a BMC that streams more is cut off.
    pub(crate) max_total_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_bmc_concurrency: 4,
            request_timeout: Duration::from_secs(30),
            retries: 2,
            backoff: Duration::from_millis(500),
            // Real documents are kilobytes; an expanded collection stays well under 1 MiB.
            max_body_bytes: 1 << 20,
            max_total_bytes: 16 << 20,
        }
    }
}

/// Time allowed to open a connection, at most (the request timeout when it is shorter): a
/// BMC on the management network accepts within milliseconds, and one that does not is
/// not waited for longer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Bodies up to this size are read without taking from the budget.
const SMALL_BODY: usize = 128 * 1024;
/// KiB of large response bodies read and parsed at once, across all BMCs of a run.
const BODY_BUDGET_KIB: usize = 48 * 1024;
static BODY_BUDGET: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(BODY_BUDGET_KIB);

/// How requests are authenticated.
pub(crate) enum Auth {
    None,
    Basic {
        user: String,
        password: Secret,
    },
    Session {
        token: Secret,
        location: Option<String>,
    },
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Auth::None => "Auth::None",
            Auth::Basic { .. } => "Auth::Basic(***)",
            Auth::Session { .. } => "Auth::Session(***)",
        })
    }
}

pub(crate) struct BmcClient {
    http: reqwest::Client,
    origin: Origin,
    /// URLs this BMC named that left its origin, refused (shown to the user as findings).
    refused: Mutex<Vec<String>>,
    auth: Mutex<Auth>,
    gate: Gate,
    limits: Limits,
    requests: AtomicUsize,
    /// Bytes read from this BMC so far.
    bytes: AtomicUsize,
    expand: AtomicBool,
    /// The largest `$levels` the BMC allows.
    expand_levels: AtomicU64,
    /// When the BMC last answered (milliseconds after `epoch`, plus one; 0: never), and
    /// whether it was found silent: a request waited its whole timeout with no answer to
    /// any request meanwhile. A silent BMC is asked nothing more, so that one that accepts
    /// connections and never answers costs one request timeout, not every request's
    /// retries up to the BMC's deadline.
    epoch: std::time::Instant,
    heard: AtomicU64,
    silent: AtomicBool,
}

impl BmcClient {
    /// An HTTP client for BMCs. One is shared by every BMC that uses the default trust
    /// store (building one loads the system CA certificates); BMCs with a pin, a CA bundle
    /// or first-use trust get their own.
    pub(crate) fn http(
        tls: Option<rustls::ClientConfig>,
        limits: &Limits,
    ) -> Result<reqwest::Client, ClientError> {
        // Redirects are followed only within the origin of the first request: reqwest drops
        // `Authorization` on a cross-origin hop but not `X-Auth-Token`, and a downgrade to
        // http would send either in clear text. A refused hop comes back as the 3xx itself.
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !same {
                attempt.stop()
            } else if attempt.previous().len() > 5 {
                attempt.error("too many redirects (a redirect loop?)")
            } else {
                attempt.follow()
            }
        });
        let mut b = reqwest::Client::builder()
            .redirect(policy)
            .connect_timeout(limits.request_timeout.min(CONNECT_TIMEOUT))
            .pool_max_idle_per_host(limits.per_bmc_concurrency)
            .user_agent(concat!("rackplan/", env!("CARGO_PKG_VERSION")));
        if let Some(cfg) = tls {
            b = b.tls_backend_preconfigured(cfg);
        }
        b.build().map_err(|e| ClientError(std::sync::Arc::new(e)))
    }

    /// A client for the BMC at `base` (`scheme://host[:port]`): credentials it holds go to
    /// that origin only.
    pub(crate) fn new(
        base: &str,
        http: reqwest::Client,
        limits: Limits,
    ) -> Result<BmcClient, OriginError> {
        Ok(BmcClient {
            http,
            origin: Origin::parse(base)?,
            refused: Mutex::new(Vec::new()),
            auth: Mutex::new(Auth::None),
            gate: Gate::new(limits.per_bmc_concurrency),
            limits,
            requests: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
            expand: AtomicBool::new(false),
            expand_levels: AtomicU64::new(1),
            epoch: std::time::Instant::now(),
            heard: AtomicU64::new(0),
            silent: AtomicBool::new(false),
        })
    }

    /// Now, as `heard` counts it.
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1
    }

    /// The BMC answered (a response's head arrived).
    fn answered(&self) {
        self.heard.fetch_max(self.now_ms(), Ordering::Relaxed);
    }

    /// A request asked at `asked` (`now_ms`) waited its whole time: the BMC is silent when
    /// nothing it answered arrived since. Returns whether it is.
    fn waited_from(&self, asked: u64) -> bool {
        if self.heard.load(Ordering::Relaxed) < asked {
            self.silent.store(true, Ordering::Relaxed);
        }
        self.silent()
    }

    /// Whether the BMC was found silent (`waited_from`).
    pub(crate) fn silent(&self) -> bool {
        self.silent.load(Ordering::Relaxed)
    }

    /// The refusals of this run: each URL the BMC named outside its origin.
    pub(crate) fn refused(&self) -> Vec<String> {
        self.refused.lock().expect("not poisoned").clone()
    }

    pub(crate) fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// Use `$expand=.($levels=n)` with `n` up to `max_levels` (0: not at all).
    pub(crate) fn set_expand(&self, max_levels: u64) {
        self.expand.store(max_levels > 0, Ordering::Relaxed);
        self.expand_levels
            .store(max_levels.max(1), Ordering::Relaxed);
    }

    /// The URL of `path` on this BMC, or the refusal (recorded) when it leaves the origin.
    fn url(&self, path: &str) -> Result<reqwest::Url, FetchError> {
        self.origin.resolve(path).map_err(|e| self.refuse(&e))
    }

    fn refuse(&self, e: &OffOrigin) -> FetchError {
        let msg = e.to_string();
        let mut r = self.refused.lock().expect("not poisoned");
        if !r.contains(&msg) {
            r.push(msg.clone());
        }
        FetchError::OffOrigin(msg)
    }

    fn authorize(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &*self.auth.lock().expect("not poisoned") {
            Auth::None => req,
            Auth::Basic { user, password } => req.basic_auth(user, Some(password.expose())),
            Auth::Session { token, .. } => req.header("X-Auth-Token", token.expose()),
        }
    }

    /// Log in: a session when the BMC hands out a token, else Basic (unless `session_only`).
    pub(crate) async fn login(
        &self,
        sessions_path: &str,
        user: &str,
        password: Secret,
        session_only: bool,
        try_session: bool,
    ) -> Result<&'static str, LoginError> {
        if try_session {
            let _permit = self.gate.acquire(Priority::Branch).await;
            self.requests.fetch_add(1, Ordering::Relaxed);
            let body = serde_json::json!({"UserName": user, "Password": password.expose()});
            let url = self.url(sessions_path).map_err(LoginError::OffOrigin)?;
            let resp = tokio::time::timeout(
                self.limits.request_timeout,
                self.http
                    .post(url)
                    .header("Content-Type", "application/json")
                    .body(body.to_string())
                    .send(),
            )
            .await;
            if let Ok(Ok(r)) = resp {
                let status = r.status().as_u16();
                let token = r
                    .headers()
                    .get("x-auth-token")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let location = r
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                // The logout DELETE carries the token: its target must stay on the origin.
                let location = match location {
                    Some(l) => match self.origin.resolve(&l) {
                        Ok(_) => Some(l),
                        Err(e) => {
                            self.refuse(&e);
                            None
                        }
                    },
                    None => None,
                };
                if (200..300).contains(&status)
                    && let Some(token) = token
                {
                    *self.auth.lock().expect("not poisoned") = Auth::Session {
                        token: Secret::new(token),
                        location,
                    };
                    return Ok("session");
                }
                if (status == 401 || status == 403) && session_only {
                    return Err(LoginError::Refused(status));
                }
            }
            if session_only {
                return Err(LoginError::NoToken);
            }
        }
        *self.auth.lock().expect("not poisoned") = Auth::Basic {
            user: user.to_string(),
            password,
        };
        Ok("basic")
    }

    /// Delete the session we created, if any. Best effort, one attempt; none at a silent
    /// BMC (its session expires by itself).
    pub(crate) async fn logout(&self) -> bool {
        if self.silent() {
            return false;
        }
        let loc = match &*self.auth.lock().expect("not poisoned") {
            Auth::Session {
                location: Some(l), ..
            } => l.clone(),
            _ => return false,
        };
        let Ok(url) = self.url(loc.trim_end_matches('/')) else {
            return false;
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        let req = self.authorize(self.http.delete(url));
        let ok = matches!(tokio::time::timeout(self.limits.request_timeout, req.send()).await, Ok(Ok(r)) if r.status().is_success());
        *self.auth.lock().expect("not poisoned") = Auth::None;
        ok
    }

    async fn read_body(&self, resp: reqwest::Response) -> Result<Value, FetchError> {
        // Bodies being read and parsed, across every BMC of the run, are bounded by
        // BODY_BUDGET (in KiB): a fleet of hostile BMCs streaming large bodies waits its turn
        // instead of growing memory with the concurrency.
        let mut budget: Option<tokio::sync::SemaphorePermit<'static>> = None;
        let body = self.read_bytes(resp, &mut budget).await?;
        let v = super::bounded::parse(&body).map_err(|e| FetchError::BadJson(e.to_string()));
        drop(budget);
        v
    }

    async fn read_bytes(
        &self,
        mut resp: reqwest::Response,
        budget: &mut Option<tokio::sync::SemaphorePermit<'static>>,
    ) -> Result<Vec<u8>, FetchError> {
        let cap = self.limits.max_body_bytes;
        if resp.content_length().is_some_and(|n| n as usize > cap) {
            return Err(FetchError::TooLarge(cap));
        }
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(c)) => {
                    if body.len() + c.len() > cap {
                        return Err(FetchError::TooLarge(cap));
                    }
                    let total = self.bytes.fetch_add(c.len(), Ordering::Relaxed) + c.len();
                    if total > self.limits.max_total_bytes {
                        return Err(FetchError::TooLarge(self.limits.max_total_bytes));
                    }
                    // Small bodies (every real one) read freely; a body that grows past
                    // SMALL_BODY takes a full body's share of the budget, once, so no
                    // reader ever waits while holding part of it.
                    if budget.is_none() && body.len() + c.len() > SMALL_BODY {
                        let kib = cap.div_ceil(1024).min(BODY_BUDGET_KIB) as u32;
                        *budget = BODY_BUDGET.acquire_many(kib).await.ok();
                    }
                    body.extend_from_slice(&c);
                }
                Ok(None) => return Ok(body),
                // Old BMC web servers (and sushy-static) answer HTTP/1.0 with the body ending
                // at connection close and skip TLS close_notify. The body is accepted only if
                // it parses as complete JSON (the caller checks), so a truncation is still
                // caught.
                Err(e) if !body.is_empty() && describe(&e).contains("close_notify") => {
                    return Ok(body);
                }
                Err(e) => return Err(self.transport(&e)),
            }
        }
    }

    /// A transport error of this BMC's: its cause in words with the fix where the words
    /// know one (`crate::reach`), else the innermost cause.
    fn transport(&self, e: &reqwest::Error) -> FetchError {
        let detail = describe(e);
        let address = self.origin.as_str();
        let peer = crate::reach::Peer {
            what: "the BMC",
            address: &address,
            set_in: "bmcs.yaml",
        };
        FetchError::Transport(crate::reach::explain(&peer, &detail).unwrap_or(detail))
    }

    async fn get_once(&self, url: &reqwest::Url) -> Result<Value, (FetchError, bool)> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let req = self
            .authorize(self.http.get(url.clone()))
            .header("Accept", "application/json")
            .header("OData-Version", "4.0");
        let asked = self.now_ms();
        let attempt = async {
            let resp = req.send().await.map_err(|e| {
                // A connection that could not be opened in time is a silence too.
                let silent = e.is_timeout() && self.waited_from(asked);
                let retry = !e.is_redirect() && !e.is_builder() && !silent;
                (self.transport(&e), retry)
            })?;
            self.answered();
            let status = resp.status().as_u16();
            if (300..400).contains(&status)
                && let Some(loc) = resp.headers().get("location")
            {
                // The redirect policy stopped here: the hop leaves the origin.
                let to = loc.to_str().unwrap_or("?");
                let target = url
                    .join(to)
                    .map_or_else(|_| shown(to), |u| shown(u.as_str()));
                return Err((
                    self.refuse(&OffOrigin {
                        shown: format!("{target} (by an HTTP {status} redirect)"),
                        origin: self.origin.as_str(),
                    }),
                    false,
                ));
            }
            if !(200..300).contains(&status) {
                let retry = matches!(status, 429 | 500 | 502 | 503 | 504);
                let wait = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
                return Err((FetchError::Status(status, wait), retry));
            }
            self.read_body(resp).await.map_err(|e| {
                let retry = matches!(e, FetchError::Transport(_));
                (e, retry)
            })
        };
        match tokio::time::timeout(self.limits.request_timeout, attempt).await {
            Ok(r) => r,
            Err(_) => Err((
                FetchError::Timeout(self.limits.request_timeout),
                !self.waited_from(asked),
            )),
        }
    }
}

/// A transport error in words: the innermost cause says what happened (connection
/// refused, reset, certificate rejected) without repeating the URL.
fn describe(e: &reqwest::Error) -> String {
    if e.is_redirect() {
        return "too many redirects (a redirect loop?)".to_string();
    }
    let mut last = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        last = inner.to_string();
        src = inner.source();
    }
    last
}

impl BmcClient {
    async fn get_with(&self, path: &str, prio: Priority) -> Result<Value, FetchError> {
        let url = self.url(path)?;
        let _permit = self.gate.acquire(prio).await;
        let mut last = FetchError::Timeout(self.limits.request_timeout);
        for attempt in 0..=self.limits.retries {
            if self.silent() {
                break;
            }
            match self.get_once(&url).await {
                Ok(v) => return Ok(v),
                Err((e, retry)) => {
                    let wait = match &e {
                        FetchError::Status(_, Some(secs)) => Duration::from_secs((*secs).min(5)),
                        _ => self.limits.backoff * 2u32.pow(attempt),
                    };
                    last = e;
                    if !retry || attempt == self.limits.retries {
                        break;
                    }
                    tokio::time::sleep(wait).await;
                }
            }
        }
        Err(last)
    }
}

impl BmcClient {
    /// A state-changing request (POST/PATCH/DELETE) with an optional JSON body and
    /// If-Match; one attempt (actions are not blindly retried). Returns the status code.
    pub(crate) async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        if_match: Option<&str>,
    ) -> Result<u16, FetchError> {
        let url = self.url(path)?;
        let _permit = self.gate.acquire(Priority::Branch).await;
        self.requests.fetch_add(1, Ordering::Relaxed);
        let m = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| FetchError::Transport(e.to_string()))?;
        let mut req = self
            .authorize(self.http.request(m, url))
            .header("Accept", "application/json");
        if let Some(b) = body {
            req = req
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        if let Some(tag) = if_match {
            req = req.header("If-Match", tag);
        }
        match tokio::time::timeout(self.limits.request_timeout, req.send()).await {
            Ok(Ok(r)) => Ok(r.status().as_u16()),
            Ok(Err(e)) => Err(self.transport(&e)),
            Err(_) => Err(FetchError::Timeout(self.limits.request_timeout)),
        }
    }
}

impl Fetch for BmcClient {
    async fn get(&self, path: &str) -> Result<Value, FetchError> {
        self.get_with(path, Priority::Branch).await
    }

    async fn get_leaf(&self, path: &str) -> Result<Value, FetchError> {
        self.get_with(path, Priority::Leaf).await
    }

    fn expand(&self) -> bool {
        self.expand.load(Ordering::Relaxed)
    }

    fn expand_max_levels(&self) -> u64 {
        self.expand_levels.load(Ordering::Relaxed)
    }

    fn expand_failed(&self) {
        self.expand.store(false, Ordering::Relaxed);
    }
}
