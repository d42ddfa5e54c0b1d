//! What every handler shares and how it answers: the portal's state (its read-only
//! judging context, the base client configuration, the session sealer), the session of a
//! request, a page, a redirect, the session cookie.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::proxy::ProxyAuth;
use super::session::{COOKIE, Sealer, Session, cookie_value};
use crate::operator::OperatorError;
use crate::operator::context::Context;
use crate::operator::resource::Delivery;

/// Seconds a worked-out set of shape deliveries is shown before it is worked out again.
const DELIVERIES_FOR_S: i64 = 60;

/// A line the portal logs: a request served, or the address it listens on.
pub type Log = Box<dyn Fn(&str) + Send + Sync>;

/// What every handler shares.
pub struct Portal {
    /// The portal's own identity: reads for the check only.
    pub(super) ctx: Context,
    /// The API server's address and CA; each user's client puts its token in.
    pub(super) base: kube::Config,
    pub(super) sealer: Sealer,
    pub(super) session_seconds: i64,
    /// Sign-in by an authenticating proxy instead of a token.
    pub(super) proxy: Option<ProxyAuth>,
    pub(super) log: Log,
    /// Each shape's predicted delivery and when it was worked out (portal clock).
    pub(super) deliveries: tokio::sync::Mutex<Option<(i64, BTreeMap<String, Delivery>)>>,
}

impl Portal {
    pub(super) fn now(&self) -> i64 {
        self.ctx
            .s
            .clock
            .now()
            .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now().as_second())
    }

    /// Each catalogue shape's predicted delivery on the fleet as it runs, worked out at
    /// most once a minute (it reads the fleet as a judging pass does).
    pub(super) async fn shape_deliveries(
        &self,
    ) -> Result<BTreeMap<String, Delivery>, OperatorError> {
        let now = self.now();
        let mut cached = self.deliveries.lock().await;
        if let Some((at, d)) = cached.as_ref()
            && (*at..at + DELIVERIES_FOR_S).contains(&now)
        {
            return Ok(d.clone());
        }
        let d = crate::operator::shape_deliveries(&self.ctx).await?;
        *cached = Some((now, d.clone()));
        Ok(d)
    }

    /// The session of the request's cookie, if it opens and has not expired; behind a
    /// proxy, the identity its headers assert (its teams not yet looked up).
    pub(super) fn session(&self, headers: &HeaderMap) -> Option<Session> {
        if let Some(proxy) = &self.proxy {
            let who = proxy.identity(headers)?;
            return Some(Session {
                token: String::new(),
                csrf: proxy.csrf(&who),
                expires: i64::MAX,
                teams: Vec::new(),
                proxied: Some(who),
            });
        }
        let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
        let value = cookie_value(cookies, COOKIE)?;
        self.sealer.open(value, self.now())
    }
}

/// A page with `status`.
pub(super) fn page(status: u16, html: String) -> Response {
    let mut r = Response::new(Body::from(html));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

/// A redirect after a form (303: the browser follows with a GET).
pub(super) fn see_other(to: &str) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// The cookie that carries `value` (empty and expired: the cookie is removed).
pub(super) fn with_cookie(mut r: Response, value: &str, max_age: i64) -> Response {
    let c = format!(
        "{COOKIE}={value}; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age={}",
        max_age.max(0)
    );
    if let Ok(v) = HeaderValue::from_str(&c) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}
