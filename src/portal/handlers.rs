//! What each route does. A page that needs a session sends the browser to sign in when
//! there is none (or it expired, or the API server no longer accepts its token); every
//! POST of a session checks its CSRF token first; every Kubernetes call is made as the
//! user (`acting`), and its refusal becomes the page of its status.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;

use super::acting::{self, ApiFailure};
use super::clusters::{self, TeamRequests};
use super::pages::{self, AskForm, ShapeView, TeamView, Unread, VerdictView};
use super::respond::{Portal, page, see_other, with_cookie};
use super::session::{self, Session};
use crate::operator::admission::Outcome;
use crate::operator::{ClusterRequest, ClusterRequestSpec};
use crate::plan::compliance::{self, Verdict};

/// Most form fields read from one body.
const MAX_FIELDS: usize = 16;

type Form = BTreeMap<String, String>;

fn form(body: &Bytes) -> Form {
    let mut f = Form::new();
    for (k, v) in url::form_urlencoded::parse(body).take(MAX_FIELDS) {
        f.entry(k.into_owned()).or_insert_with(|| v.into_owned());
    }
    f
}

fn field<'a>(f: &'a Form, k: &str) -> &'a str {
    f.get(k).map_or("", |v| v.trim())
}

/// Back to sign-in, the session cookie removed, saying why.
fn to_sign_in(why: &str) -> Response {
    with_cookie(see_other(&format!("/signin?why={why}")), "", 0)
}

/// The session, or the redirect to sign in (behind a proxy: the page saying the proxy
/// named no one). Behind a proxy, the user's teams are looked up as the user each time.
async fn need(p: &Portal, headers: &HeaderMap) -> Result<Session, Response> {
    if p.proxy.is_some() {
        let Some(mut s) = p.session(headers) else {
            return Err(page(
                401,
                pages::error(
                    401,
                    "The authenticating proxy in front of this page named no user.",
                    "Reach this page through your organisation's sign-in.",
                    None,
                ),
            ));
        };
        let c = client(p, &s)?;
        let namespaces: Vec<(String, String)> = match crate::operator::team_namespaces(&p.ctx).await
        {
            Ok(n) => n.into_iter().collect(),
            Err(e) => {
                return Err(page(
                    502,
                    pages::error(
                        502,
                        "The team namespaces cannot be listed.",
                        &e.to_string(),
                        None,
                    ),
                ));
            }
        };
        s.teams = acting::teams_of(&c, &namespaces)
            .await
            .map_err(|e| failed(&e, "Your teams cannot be looked up.", &s))?;
        return Ok(s);
    }
    match p.session(headers) {
        Some(s) => Ok(s),
        None if headers
            .get("cookie")
            .and_then(|c| c.to_str().ok())
            .and_then(|c| session::cookie_value(c, session::COOKIE))
            .is_some() =>
        {
            Err(to_sign_in("expired"))
        }
        None => Err(to_sign_in("none")),
    }
}

/// The session of a POST whose CSRF token matches, or the page that refuses it.
async fn need_post(p: &Portal, headers: &HeaderMap, f: &Form) -> Result<Session, Response> {
    let s = need(p, headers).await?;
    if session::same(field(f, "csrf"), &s.csrf) {
        Ok(s)
    } else {
        Err(page(
            403,
            pages::error(
                403,
                "This form did not come from this page (its CSRF token is missing or wrong): nothing was done.",
                "Reload the page and submit the form again.",
                Some(&s.csrf),
            ),
        ))
    }
}

/// The signed-in user's session and a client acting as that user.
async fn acting_user(p: &Portal, headers: &HeaderMap) -> Result<(Session, kube::Client), Response> {
    let s = need(p, headers).await?;
    let c = client(p, &s)?;
    Ok((s, c))
}

/// As [`acting_user`], for a form post: its CSRF token checked first.
async fn acting_user_posting(
    p: &Portal,
    headers: &HeaderMap,
    f: &Form,
) -> Result<(Session, kube::Client), Response> {
    let s = need_post(p, headers, f).await?;
    let c = client(p, &s)?;
    Ok((s, c))
}

/// The page of an API failure (a token no longer accepted goes back to sign in).
fn failed(e: &ApiFailure, what: &str, s: &Session) -> Response {
    if let (ApiFailure::Unauthorized(_), None) = (e, &s.proxied) {
        return to_sign_in("rejected");
    }
    page(
        e.status(),
        pages::error(e.status(), what, &e.to_string(), Some(&s.csrf)),
    )
}

/// A client acting as the session's user: its token, or the proxy's identity
/// impersonated.
fn client(p: &Portal, s: &Session) -> Result<kube::Client, Response> {
    let c = match (&s.proxied, &p.proxy) {
        (Some(who), Some(proxy)) => acting::client_impersonating(&proxy.base, who),
        _ => acting::client_as(&p.base, &s.token),
    };
    c.map_err(|e| failed(&e, "No client could be made.", s))
}

pub(super) async fn home(State(p): State<Arc<Portal>>, headers: HeaderMap) -> Response {
    match p.session(&headers) {
        Some(_) => see_other("/clusters"),
        None => see_other("/signin"),
    }
}

pub(super) async fn sign_in_page(
    State(p): State<Arc<Portal>>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    if p.proxy.is_some() {
        return see_other("/clusters");
    }
    // Only fixed words are shown: nothing of the address is echoed.
    let note = match q.get("why").map(String::as_str) {
        Some("expired") => Some("Your session expired: sign in again."),
        Some("rejected") => Some("The API server no longer accepts your token: sign in again."),
        Some("none") => Some("Sign in to see this page."),
        Some("out") => Some("Signed out."),
        _ => None,
    };
    page(200, pages::sign_in(note))
}

pub(super) async fn sign_in(State(p): State<Arc<Portal>>, body: Bytes) -> Response {
    if p.proxy.is_some() {
        return see_other("/clusters");
    }
    let f = form(&body);
    let token = field(&f, "token");
    if !acting::token_shaped(token) {
        return page(
            400,
            pages::sign_in(Some(
                "That is not a bearer token: paste the token alone, without spaces.",
            )),
        );
    }
    let namespaces = match crate::operator::team_namespaces(&p.ctx).await {
        Ok(n) => n.into_iter().collect::<Vec<_>>(),
        Err(e) => {
            return page(
                502,
                pages::error(
                    502,
                    "The team namespaces cannot be listed.",
                    &e.to_string(),
                    None,
                ),
            );
        }
    };
    let teams = match acting::client_as(&p.base, token) {
        Ok(c) => acting::teams_of(&c, &namespaces).await,
        Err(e) => Err(e),
    };
    let teams = match teams {
        Ok(t) => t,
        Err(ApiFailure::Unauthorized(_)) => {
            return page(
                401,
                pages::sign_in(Some("The API server did not accept this token.")),
            );
        }
        Err(e) => {
            return page(
                e.status(),
                pages::error(e.status(), "Signing in failed.", &e.to_string(), None),
            );
        }
    };
    let now = p.now();
    let sealed = Session::new(token.to_string(), teams, now, p.session_seconds)
        .and_then(|s| p.sealer.seal(&s));
    match sealed {
        Ok(c) => with_cookie(see_other("/clusters"), &c, p.session_seconds),
        Err(e) => page(
            500,
            pages::error(500, "No session could be made.", &e.to_string(), None),
        ),
    }
}

pub(super) async fn sign_out(
    State(p): State<Arc<Portal>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match need_post(&p, &headers, &form(&body)).await {
        Ok(s) if s.proxied.is_some() => page(
            200,
            pages::layout(
                "Sign out",
                Some(&s.csrf),
                "<p class=\"card\">You are signed in by your organisation's proxy: sign out there.</p>",
            ),
        ),
        Ok(_) => to_sign_in("out"),
        Err(r) => r,
    }
}

/// The user's teams with their quota, what they hold and their longest lifetime.
async fn team_views(p: &Portal, s: &Session, c: &kube::Client) -> Vec<TeamView> {
    let teams = crate::operator::teams_now(&p.ctx)
        .await
        .map_err(|e| Unread::of(&e));
    let mut out = Vec::new();
    for (ns, team) in &s.teams {
        let cfg = teams.as_ref().ok().and_then(|t| t.by_name.get(team));
        let used = acting::list(c, ns)
            .await
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| r.status.as_ref())
                    .filter(|st| st.phase.is_some_and(crate::operator::Phase::holds))
                    .filter_map(|st| st.terms.as_ref().map(|t| t.vcpu))
                    .sum()
            })
            .map_err(|e| Unread::of(&e));
        out.push(TeamView {
            team: team.clone(),
            namespace: ns.clone(),
            quota: teams
                .as_ref()
                .map(|_| cfg.and_then(|c| c.vcpu_quota))
                .map_err(Clone::clone),
            used,
            max_lifetime: crate::operator::spec::hours(p.ctx.s.rules.max_lifetime_h(cfg)),
        });
    }
    out
}

pub(super) async fn shapes(State(p): State<Arc<Portal>>, headers: HeaderMap) -> Response {
    let (s, c) = match acting_user(&p, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let teams = team_views(&p, &s, &c).await;
    let deliveries = p.shape_deliveries().await;
    let terms = compliance::Terms {
        versions: &p.ctx.s.rules.versions,
    };
    let shapes: Vec<ShapeView> = p
        .ctx
        .s
        .catalogue
        .offers
        .values()
        .map(|o| {
            let sum = |f: &dyn Fn(&crate::simulate::scenario::Pool) -> f64| -> f64 {
                o.pools.iter().map(|q| f64::from(q.count) * f(q)).sum()
            };
            ShapeView {
                shape: o.shape.clone(),
                version: o.kubernetes_version.clone(),
                pools: o
                    .pools
                    .iter()
                    .map(|q| {
                        (
                            q.name.clone(),
                            q.count,
                            q.vcpu,
                            q.memory_gib,
                            q.disks_gib.clone(),
                        )
                    })
                    .collect(),
                vcpu: sum(&|q| q.vcpu),
                memory_gib: sum(&|q| q.memory_gib),
                disk_gib: sum(&|q| q.disks_gib.iter().sum()),
                promises: compliance::review_cluster(o.cluster(), &terms)
                    .into_iter()
                    .map(|ch| {
                        let v = match ch.verdict {
                            Verdict::Kept => "kept",
                            Verdict::Broken => "broken",
                            Verdict::Unknown => "unknown",
                        };
                        (ch.promise.title().to_string(), v)
                    })
                    .collect(),
                delivery: match &deliveries {
                    Ok(d) => d.get(&o.shape).map_or_else(
                        || "delivery not predicted for this shape".into(),
                        clusters::delivery_words,
                    ),
                    Err(e) => format!("delivery not predicted: {e}"),
                },
            }
        })
        .collect();
    page(200, pages::shapes(&s.csrf, &teams, &shapes))
}

fn shape_names(p: &Portal) -> Vec<String> {
    p.ctx.s.catalogue.offers.keys().cloned().collect()
}

pub(super) async fn ask_page(
    State(p): State<Arc<Portal>>,
    headers: HeaderMap,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    let s = match need(&p, &headers).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let form = AskForm {
        namespace: s.teams.first().map(|t| t.0.clone()).unwrap_or_default(),
        shape: q.get("shape").cloned().unwrap_or_default(),
        duration: "72h".into(),
        ..AskForm::default()
    };
    page(
        200,
        pages::ask(&s.csrf, &s.teams, &shape_names(&p), &form, None),
    )
}

fn candidate(f: &AskForm, team: &str) -> ClusterRequest {
    let mut cr = ClusterRequest::new(
        &f.name,
        ClusterRequestSpec {
            team: team.to_string(),
            shape: f.shape.clone(),
            duration: f.duration.clone(),
            reason: (!f.reason.is_empty()).then(|| f.reason.clone()),
            ..ClusterRequestSpec::default()
        },
    );
    cr.metadata.namespace = Some(f.namespace.clone());
    cr
}

pub(super) async fn ask(State(p): State<Arc<Portal>>, headers: HeaderMap, body: Bytes) -> Response {
    let f = form(&body);
    let s = match need_post(&p, &headers, &f).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let a = AskForm {
        namespace: field(&f, "namespace").into(),
        shape: field(&f, "shape").into(),
        name: field(&f, "name").into(),
        duration: field(&f, "duration").into(),
        reason: field(&f, "reason").into(),
    };
    let c = match client(&p, &s) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let team = s.team_of(&a.namespace).unwrap_or_default().to_string();
    let cr = candidate(&a, &team);
    if field(&f, "action") == "request" {
        return match acting::create(&c, &cr).await {
            Ok(()) => see_other(&format!(
                "{}?done=requested",
                clusters::link(&a.namespace, &a.name)
            )),
            Err(e) => failed(&e, "The request was not created.", &s),
        };
    }
    // The check reads what the operator reads, with the portal's read-only identity: it
    // is made only for a namespace where the API server says this user may ask.
    let pair = [(a.namespace.clone(), team.clone())];
    match acting::teams_of(&c, &pair).await {
        Ok(t) if !t.is_empty() => {}
        Ok(_) => {
            return page(
                403,
                pages::error(
                    403,
                    &format!("You may not ask in namespace {}.", a.namespace),
                    "The API server does not let you create ClusterRequests there.",
                    Some(&s.csrf),
                ),
            );
        }
        Err(e) => return failed(&e, "The check was not made.", &s),
    }
    let verdict = match crate::operator::preview(&p.ctx, cr).await {
        Ok(v) => v,
        Err(e) => {
            return page(
                502,
                pages::error(
                    502,
                    "The check could not be made.",
                    &e.to_string(),
                    Some(&s.csrf),
                ),
            );
        }
    };
    let view = VerdictView {
        admitted: verdict.admitted(),
        outcome: match verdict.outcome {
            Outcome::Admitted => "admitted",
            Outcome::Waiting => "it would wait",
            Outcome::Refused => "refused",
        },
        message: verdict.message.clone(),
        delivery: verdict.delivery.as_ref().map(clusters::delivery_words),
    };
    page(
        200,
        pages::ask(&s.csrf, &s.teams, &shape_names(&p), &a, Some(&view)),
    )
}

/// Fixed notices a redirect may name.
fn notice(q: &BTreeMap<String, String>) -> Option<&'static str> {
    match q.get("done").map(String::as_str) {
        Some("requested") => Some("Requested: the operator judges it now."),
        Some("extended") => {
            Some("Lifetime change sent: the operator grants it within your team's cap.")
        }
        Some("protected") => Some("Protected: held past its expiry and deletion."),
        Some("unprotected") => Some("No longer protected."),
        Some("deleted") => Some("Deletion asked: the cluster is removed, then the request."),
        _ => None,
    }
}

pub(super) async fn clusters(
    State(p): State<Arc<Portal>>,
    headers: HeaderMap,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    let (s, c) = match acting_user(&p, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let mut teams = Vec::new();
    for (ns, team) in &s.teams {
        let requests = match acting::list(&c, ns).await {
            Ok(r) => Ok(r),
            Err(ApiFailure::Unauthorized(_)) => return to_sign_in("rejected"),
            Err(e) => Err(Unread::of(&e)),
        };
        teams.push(TeamRequests {
            namespace: ns.clone(),
            team: team.clone(),
            requests,
        });
    }
    page(200, clusters::list(&s.csrf, &teams, notice(&q)))
}

pub(super) async fn cluster(
    State(p): State<Arc<Portal>>,
    headers: HeaderMap,
    Path((ns, name)): Path<(String, String)>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    let (s, c) = match acting_user(&p, &headers).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    match acting::get(&c, &ns, &name).await {
        Ok(cr) => page(200, clusters::detail(&s.csrf, &cr, notice(&q))),
        Err(e) => failed(&e, &format!("Request {ns}/{name} cannot be shown."), &s),
    }
}

pub(super) async fn act(
    State(p): State<Arc<Portal>>,
    headers: HeaderMap,
    Path((ns, name)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let f = form(&body);
    let (s, c) = match acting_user_posting(&p, &headers, &f).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let (result, done) = match field(&f, "action") {
        "extend" => (
            acting::extend(&c, &ns, &name, field(&f, "duration")).await,
            "extended",
        ),
        "protect" => (acting::protect(&c, &ns, &name, true).await, "protected"),
        "unprotect" => (acting::protect(&c, &ns, &name, false).await, "unprotected"),
        "delete" if field(&f, "confirm") == "yes" => {
            (acting::delete(&c, &ns, &name).await, "deleted")
        }
        _ => {
            return page(
                400,
                pages::error(
                    400,
                    "That action is not one of this page's.",
                    "Tick the box to delete.",
                    Some(&s.csrf),
                ),
            );
        }
    };
    match result {
        Ok(()) if done == "deleted" => see_other("/clusters?done=deleted"),
        Ok(()) => see_other(&format!("{}?done={done}", clusters::link(&ns, &name))),
        Err(e) => failed(&e, &format!("Request {ns}/{name} was not changed."), &s),
    }
}
