//! The portal's HTTP side: the routes, the headers every answer carries (a strict
//! Content-Security-Policy, no framing, no sniffing, no caching, no referrer to other sites), the bounded
//! body, the cross-site refusal (an `Origin` or `Sec-Fetch-Site` from elsewhere) and the
//! session cookie. A request's path, method and status are logged; never its body, query,
//! cookie or headers, so the token is in no log.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};

use super::proxy::ProxyAuth;
use super::respond::{Log, Portal, page};
use super::session::Sealer;
use crate::operator::context::Context;
use crate::operator::fence::Fence;
use crate::operator::metrics::Metrics;
use crate::operator::{OperatorError, Settings};

/// Largest request body read (a form with a 1 KiB reason and a token fits many times).
pub const MAX_BODY: usize = 16 * 1024;
/// The policy every page is served with: nothing runs, nothing is framed, forms post here.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const STYLE: &str = include_str!("style.css");

/// How the portal is started.
#[derive(Debug, Clone)]
pub struct PortalOptions {
    /// What the operator judges with (catalogue, scenario, quotas, rules, team namespaces).
    pub settings: Settings,
    /// The API server's address and CA for every user's calls, and the portal's own
    /// read-only identity for what a check reads (see the module docs of `portal`).
    pub kubeconfig: Option<PathBuf>,
    /// The Harvester cluster the check reads the fleet from; Rancher's when absent.
    pub harvester_kubeconfig: Option<PathBuf>,
    pub listen: SocketAddr,
    /// How long a session lasts, seconds.
    pub session_seconds: i64,
    /// Sign-in by an authenticating proxy, when given.
    pub proxy: Option<ProxyOptions>,
}

/// The authenticating proxy's headers and the impersonator's kubeconfig.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    pub user_header: HeaderName,
    pub groups_header: Option<HeaderName>,
    /// A service account that may impersonate and nothing else.
    pub impersonator_kubeconfig: PathBuf,
}

/// Why the portal could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum PortalError {
    #[error(transparent)]
    Operator(#[from] OperatorError),
    #[error(transparent)]
    Session(#[from] super::session::SessionError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server: {0}")]
    Server(std::io::Error),
}

/// Does a POST come from another site? An `Origin` that is not this host, or the
/// browser's own `Sec-Fetch-Site: cross-site`.
fn cross_site(headers: &HeaderMap) -> bool {
    let value = |h: &str| headers.get(h).and_then(|v| v.to_str().ok());
    if value("sec-fetch-site").is_some_and(|s| s == "cross-site" || s == "same-site") {
        return true;
    }
    match (value("origin"), value("host")) {
        (Some(o), Some(h)) => o != format!("http://{h}") && o != format!("https://{h}"),
        (Some(_), None) => true,
        _ => false,
    }
}

async fn guard(State(p): State<Arc<Portal>>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let mut r = if method == Method::POST && cross_site(req.headers()) {
        let csrf = p.session(req.headers()).map(|s| s.csrf);
        page(
            403,
            super::pages::error(
                403,
                "A form posted from another site was refused: nothing was done.",
                "Use the forms of this page.",
                csrf.as_deref(),
            ),
        )
    } else {
        next.run(req).await
    };
    let h = r.headers_mut();
    h.insert("content-security-policy", HeaderValue::from_static(CSP));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    // `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null`
    // with this page's own form posts, which the cross-site check must refuse.
    h.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    (p.log)(&format!("{method} {path} {}", r.status().as_u16()));
    r
}

async fn style() -> Response {
    let mut r = Response::new(Body::from(STYLE));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/css; charset=utf-8"),
    );
    r
}

async fn not_found(State(p): State<Arc<Portal>>, headers: HeaderMap) -> Response {
    let csrf = p.session(&headers).map(|s| s.csrf);
    page(
        404,
        super::pages::error(404, "There is no such page.", "", csrf.as_deref()),
    )
}

/// The routes.
pub(super) fn router(p: Arc<Portal>) -> Router {
    use super::handlers as h;
    Router::new()
        .route("/", get(h::home))
        .route("/style.css", get(style))
        .route("/signin", get(h::sign_in_page).post(h::sign_in))
        .route("/signout", post(h::sign_out))
        .route("/shapes", get(h::shapes))
        .route("/ask", get(h::ask_page).post(h::ask))
        .route("/clusters", get(h::clusters))
        .route("/clusters/{ns}/{name}", get(h::cluster).post(h::act))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(p.clone(), guard))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(p)
}

/// Serve until `shutdown` resolves.
pub async fn serve(
    o: PortalOptions,
    log: Log,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), PortalError> {
    let base = crate::operator::service::config(o.kubeconfig.as_ref()).await?;
    let rancher = crate::operator::service::client(o.kubeconfig.as_ref()).await?;
    let harvester = match &o.harvester_kubeconfig {
        Some(p) if Some(p) != o.kubeconfig.as_ref() => {
            crate::operator::service::client(Some(p)).await?
        }
        _ => rancher.clone(),
    };
    // The judging context writes nothing: its transitions go nowhere.
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = Context::new(
        o.settings,
        rancher,
        harvester,
        Arc::new(Metrics::default()),
        Fence::none(),
        tx,
    );
    let listener = tokio::net::TcpListener::bind(o.listen)
        .await
        .map_err(|source| PortalError::Bind {
            addr: o.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(PortalError::Server)?;
    log(&format!("portal listening on http://{addr}"));
    let proxy = match o.proxy {
        Some(x) => {
            let base = crate::operator::service::config(Some(&x.impersonator_kubeconfig)).await?;
            Some(ProxyAuth::new(
                x.user_header,
                x.groups_header,
                &super::session::random_key()?,
                base,
            ))
        }
        None => None,
    };
    let p = Arc::new(Portal {
        ctx,
        base,
        sealer: Sealer::random()?,
        session_seconds: o.session_seconds,
        proxy,
        log,
        deliveries: tokio::sync::Mutex::new(None),
    });
    axum::serve(listener, router(p))
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(PortalError::Server)
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
