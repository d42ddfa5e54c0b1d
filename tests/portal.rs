//! `rackplan portal` on the real kube-apiserver with the operator running, as two users of
//! two teams (static tokens): sign-in, the shapes and the quota, the operator's verdict
//! before asking (one that fits, one refused by quota, one by the failure it would strand),
//! a request followed to Ready and its access, extended and protected; the other team's
//! user refused by the API server (the page names the user the call was made as); a
//! cross-site post and a post without its CSRF token refused; hostile values inert; an
//! expired session back to sign-in; the token in no page and no log. Then the same flow in
//! headless Chromium driven over DevTools (support/devtools.rs): signed in, checked,
//! requested, followed to Ready and extended with the page's script off, bob refused,
//! screenshots at 390 and 1280 px in `target/portal-screenshots/`.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::operator::World;
use crate::operator_team::requester_role;
use crate::support::devtools::Browser;
use crate::support::kube::{Audited, audited, kubeconfig, users, wait_audited, wait_for};
use crate::support::sushy::free_port;

/// A running `rackplan portal`, killed when dropped; its stderr (the request log) kept.
struct Portal {
    child: Child,
    addr: String,
    err: PathBuf,
}

impl Portal {
    fn start(w: &World, clock: &Path) -> Portal {
        Self::start_with(w, clock, &[])
    }

    fn start_with(w: &World, clock: &Path, extra: &[&str]) -> Portal {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let err = w.tmp.path().join(format!("portal-{port}.err"));
        let selector = format!("rackplan-test={}", w.id);
        let child = Command::new(env!("CARGO_BIN_EXE_rackplan"))
            .arg("portal")
            .arg("--kubeconfig")
            .arg(kubeconfig())
            .arg("--catalogue")
            .arg(w.catalogue())
            .arg("--scenario")
            .arg(w.scenario())
            .args(["--namespace", &w.ns, "--team-namespaces", &selector])
            .args(["--listen", &addr, "--session", "30m"])
            .arg("--clock-file")
            .arg(clock)
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("start rackplan portal");
        let p = Portal { child, addr, err };
        wait_for(30, "the portal", || {
            TcpStream::connect(&p.addr).ok().map(drop)
        });
        p
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }
}

impl Drop for Portal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: BTreeMap<String, String>,
    body: String,
}

impl Answer {
    fn header(&self, k: &str) -> &str {
        self.headers.get(k).map_or("", String::as_str)
    }

    /// The CSRF token of the page's forms.
    fn csrf(&self) -> String {
        let at = self.body.find("name=\"csrf\" value=\"").expect("a form") + 19;
        self.body[at..].split('"').next().unwrap().to_string()
    }
}

/// An HTTP/1.1 request to the portal (one connection each).
fn http(
    addr: &str,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    extra: &[(&str, &str)],
    form: &[(&str, &str)],
) -> Answer {
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(c) = cookie {
        req.push_str(&format!("Cookie: rackplan_portal={c}\r\n"));
    }
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if method == "POST" {
        req.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, rest) = raw.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect::<BTreeMap<_, _>>();
    let body = if headers
        .get("transfer-encoding")
        .is_some_and(|t| t == "chunked")
    {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
    out
}

/// Sign in with `token`; the session cookie's value.
fn sign_in(p: &Portal, token: &str) -> String {
    let a = http(&p.addr, "POST", "/signin", None, &[], &[("token", token)]);
    assert_eq!(a.status, 303, "{a:#?}");
    let c = a.header("set-cookie");
    for attr in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/"] {
        assert!(c.contains(attr), "{c}");
    }
    c.strip_prefix("rackplan_portal=")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

fn set_clock(path: &Path, t: i64) {
    std::fs::write(path, rackplan::clock::format_at(t, false)).unwrap();
}

fn now() -> i64 {
    k8s_openapi::jiff::Timestamp::now().as_second()
}

#[test]
fn a_team_checks_asks_and_follows_its_cluster_as_itself_and_no_further() {
    let w = World::new("portal");
    let (pns, lns) = (w.team_ns("paiement"), w.team_ns("logistique"));
    requester_role(&w, &pns, "local://g-paiement");
    requester_role(&w, &lns, "local://g-logistique");
    let op = w.operator(&["--rancher-url", "https://rancher.example.com"]);
    let clock = w.tmp.path().join("portal-now");
    set_clock(&clock, now());
    let p = Portal::start(&w, &clock);
    let mut pages = Vec::new();

    // No session: to sign in. A token the API server does not know: refused.
    let a = http(&p.addr, "GET", "/clusters", None, &[], &[]);
    assert_eq!((a.status, a.header("location")), (303, "/signin?why=none"));
    let a = http(
        &p.addr,
        "POST",
        "/signin",
        None,
        &[],
        &[("token", "not-a-known-token")],
    );
    assert_eq!(a.status, 401, "{a:#?}");
    assert!(a.body.contains("did not accept this token"), "{}", a.body);
    assert!(!a.body.contains("not-a-known-token"));

    let alice = sign_in(&p, users::ALICE);
    // The shapes, the team's quota and lifetimes; the strict policy on every page.
    let a = http(&p.addr, "GET", "/shapes", Some(&alice), &[], &[]);
    assert_eq!(a.status, 200, "{a:#?}");
    assert!(
        a.header("content-security-policy")
            .starts_with("default-src 'none'"),
        "{a:#?}"
    );
    assert_eq!(a.header("x-frame-options"), "DENY");
    assert!(a.body.contains(&format!("<strong>paiement</strong> (namespace {pns}): 0 of 80 vCPU held, 80 left; lifetimes up to 90d")), "{}", a.body);
    assert!(!a.body.contains(&lns), "alice is not of logistique");
    assert!(
        a.body.contains("<h2>standard</h2><p class=\"big\">36 vCPU"),
        "{}",
        a.body
    );
    assert!(a.body.contains("Kubernetes v1.33.5+rke2r1"), "{}", a.body);
    assert!(
        a.body.contains("etcd snapshots scheduled: kept"),
        "{}",
        a.body
    );
    // Every shape says how long one cluster of it is predicted to take, against the promise.
    let shapes = a.body.matches("<section class=\"card shape\">").count();
    let lines: Vec<&str> = a
        .body
        .split("<p class=\"delivery\">")
        .skip(1)
        .map(|l| &l[..l.find("</p>").unwrap()])
        .collect();
    assert!(shapes >= 2 && lines.len() == shapes, "{}", a.body);
    for l in lines {
        assert!(
            (l.starts_with("delivery predicted in ") && l.contains("; promised within 15 min"))
                || l.starts_with("never delivered as things stand: "),
            "{l}"
        );
    }
    pages.push(a.body);

    // The verdict before asking: one that fits, one over the quota.
    let form = http(
        &p.addr,
        "GET",
        "/ask?shape=standard",
        Some(&alice),
        &[],
        &[],
    );
    let csrf = form.csrf();
    let check = |shape: &str, name: &str| {
        http(
            &p.addr,
            "POST",
            "/ask",
            Some(&alice),
            &[],
            &[
                ("csrf", &csrf),
                ("namespace", &pns),
                ("shape", shape),
                ("name", name),
                ("duration", "72h"),
                ("reason", "ci"),
                ("action", "check"),
            ],
        )
    };
    let a = check("standard", "web-a");
    assert_eq!(a.status, 200, "{a:#?}");
    assert!(a.body.contains("The verdict: admitted"), "{}", a.body);
    assert!(a.body.contains("admitted: quota 0 vCPU used + 36 requested = 36 of 80 allowed (within); headroom: node and rack failures pass with the request"), "{}", a.body);
    assert!(a.body.contains("delivery predicted in"), "{}", a.body);
    std::fs::write(w.tmp.path().join("verdict-admitted.html"), &a.body).unwrap();
    pages.push(a.body);
    let a = check("large", "big-one");
    assert!(a.body.contains("The verdict: it would wait"), "{}", a.body);
    assert!(
        a.body.contains(
            "quota: team paiement uses 0 vCPU and asks for 120; its quota allows 80 (40 over)"
        ),
        "{}",
        a.body
    );
    std::fs::write(w.tmp.path().join("verdict-quota.html"), &a.body).unwrap();
    // Nothing was created by a check.
    assert!(w.get("web-a").is_none() && w.get("big-one").is_none());

    // A post without its CSRF token, and one from another site, do nothing.
    let a = http(
        &p.addr,
        "POST",
        "/ask",
        Some(&alice),
        &[],
        &[
            ("namespace", &pns),
            ("shape", "standard"),
            ("name", "forged"),
            ("duration", "72h"),
            ("action", "request"),
        ],
    );
    assert_eq!(a.status, 403);
    assert!(
        a.body.contains("CSRF token is missing or wrong"),
        "{}",
        a.body
    );
    let a = http(
        &p.addr,
        "POST",
        "/ask",
        Some(&alice),
        &[("Origin", "http://evil.example")],
        &[
            ("csrf", &csrf),
            ("namespace", &pns),
            ("shape", "standard"),
            ("name", "forged"),
            ("duration", "72h"),
            ("action", "request"),
        ],
    );
    assert_eq!(a.status, 403);
    assert!(
        a.body.contains("posted from another site was refused"),
        "{}",
        a.body
    );
    assert!(w.get("forged").is_none());

    // The request, followed to Ready and its access.
    let a = http(
        &p.addr,
        "POST",
        "/ask",
        Some(&alice),
        &[("Origin", &format!("http://{}", p.addr))],
        &[
            ("csrf", &csrf),
            ("namespace", &pns),
            ("shape", "standard"),
            ("name", "web-a"),
            ("duration", "72h"),
            ("reason", "ci"),
            ("action", "request"),
        ],
    );
    assert_eq!(
        (a.status, a.header("location")),
        (
            303,
            format!("/clusters/{pns}/web-a?done=requested").as_str()
        )
    );
    w.wait_phase("web-a", "Provisioning", &op);
    let detail = format!("/clusters/{pns}/web-a");
    let a = http(&p.addr, "GET", &detail, Some(&alice), &[], &[]);
    assert!(
        a.body.contains("<dt>Phase</dt><dd>Provisioning</dd>"),
        "{}",
        a.body
    );
    assert!(
        a.body
            .contains("Access instructions appear here once the cluster is Ready")
    );
    let id = w.rancher_ready("web-a");
    w.wait_phase("web-a", "Ready", &op);
    let a = http(&p.addr, "GET", &detail, Some(&alice), &[], &[]);
    assert!(
        a.body.contains("<dt>Phase</dt><dd>Ready</dd>"),
        "{}",
        a.body
    );
    assert!(
        a.body
            .contains(&format!("Rancher cluster <code>{id}</code>")),
        "{}",
        a.body
    );
    assert!(
        a.body.contains("href=\"https://rancher.example.com/"),
        "{}",
        a.body
    );
    assert!(a.body.contains("delivered in"), "{}", a.body);
    pages.push(a.body.clone());
    std::fs::write(w.tmp.path().join("ready.html"), &a.body).unwrap();
    let list = http(&p.addr, "GET", "/clusters", Some(&alice), &[], &[]);
    assert!(
        list.body
            .contains("<span class=\"phase ready\">Ready</span>"),
        "{}",
        list.body
    );

    // Extended and protected, as alice.
    let csrf = a.csrf();
    let a = http(
        &p.addr,
        "POST",
        &detail,
        Some(&alice),
        &[],
        &[("csrf", &csrf), ("action", "extend"), ("duration", "96h")],
    );
    assert_eq!(a.status, 303, "{a:#?}");
    let a = http(
        &p.addr,
        "POST",
        &detail,
        Some(&alice),
        &[],
        &[("csrf", &csrf), ("action", "protect")],
    );
    assert_eq!(a.status, 303, "{a:#?}");
    let r = w.get("web-a").unwrap();
    assert_eq!(r["spec"]["duration"], "96h");
    assert_eq!(r["metadata"]["annotations"]["rackplan.io/protect"], "true");
    let r = wait_for(30, "the extension granted", || {
        w.get("web-a").filter(|r| {
            r["status"]["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["reason"] == "Extended"))
        })
    });
    let a = http(&p.addr, "GET", &detail, Some(&alice), &[], &[]);
    assert!(
        a.body.contains(&format!(
            "<dt>Expires</dt><dd>{}</dd>",
            r["status"]["expiresAt"].as_str().unwrap()
        )),
        "{}",
        a.body
    );
    assert!(a.body.contains("<dt>Protected</dt><dd>yes"), "{}", a.body);

    // Bob, of logistique: the API server refuses him alice's request, by his name.
    let bob = sign_in(&p, users::BOB);
    let a = http(&p.addr, "GET", &detail, Some(&bob), &[], &[]);
    assert_eq!(a.status, 403, "{a:#?}");
    assert!(
        a.body
            .contains("User &quot;bob&quot; cannot get resource &quot;clusterrequests&quot;"),
        "{}",
        a.body
    );
    std::fs::write(w.tmp.path().join("forbidden.html"), &a.body).unwrap();
    let bob_csrf = http(&p.addr, "GET", "/clusters", Some(&bob), &[], &[]).csrf();
    let a = http(
        &p.addr,
        "POST",
        &detail,
        Some(&bob),
        &[],
        &[
            ("csrf", &bob_csrf),
            ("action", "delete"),
            ("confirm", "yes"),
        ],
    );
    assert_eq!(a.status, 403, "{a:#?}");
    assert!(
        a.body.contains("User &quot;bob&quot; cannot delete"),
        "{}",
        a.body
    );
    assert!(w.get("web-a").unwrap()["metadata"]["deletionTimestamp"].is_null());
    // The API server's own audit log says who made each call: the request was created and
    // extended as alice, and the calls refused were made as bob, never as the portal.
    for (verb, user, code) in [
        ("create", "alice", 201),
        ("patch", "alice", 200),
        ("get", "bob", 403),
        ("delete", "bob", 403),
    ] {
        let a = wait_audited(&pns, &format!("{verb} of web-a as {user}"), |a| {
            a.verb == verb && a.name == "web-a" && a.user == user && a.code == code
        });
        assert_eq!(a.impersonated, None, "{a:?}");
    }
    assert!(
        audited(&pns)
            .iter()
            .all(|a| a.user != "bob" || a.code == 403),
        "bob was never let through: {:#?}",
        audited(&pns)
    );
    let a = http(&p.addr, "GET", "/clusters", Some(&bob), &[], &[]);
    assert!(
        a.body.contains(&lns) && !a.body.contains("web-a"),
        "{}",
        a.body
    );
    // Alice's session cannot be used with bob's CSRF token.
    let a = http(
        &p.addr,
        "POST",
        &detail,
        Some(&alice),
        &[],
        &[
            ("csrf", &bob_csrf),
            ("action", "delete"),
            ("confirm", "yes"),
        ],
    );
    assert_eq!(a.status, 403);
    // Bob checks a shape that fits his quota but not the fleet: the failure is named.
    let csrf_b = http(&p.addr, "GET", "/ask", Some(&bob), &[], &[]).csrf();
    let a = http(
        &p.addr,
        "POST",
        "/ask",
        Some(&bob),
        &[],
        &[
            ("csrf", &csrf_b),
            ("namespace", &lns),
            ("shape", "huge"),
            ("name", "no-room"),
            ("duration", "72h"),
            ("action", "check"),
        ],
    );
    assert!(
        a.body
            .contains("waiting: headroom: the fleet fails with this request: if "),
        "{}",
        a.body
    );
    std::fs::write(w.tmp.path().join("verdict-headroom.html"), &a.body).unwrap();
    // ...and cannot check in alice's namespace.
    let a = http(
        &p.addr,
        "POST",
        "/ask",
        Some(&bob),
        &[],
        &[
            ("csrf", &csrf_b),
            ("namespace", &pns),
            ("shape", "standard"),
            ("name", "x"),
            ("duration", "72h"),
            ("action", "check"),
        ],
    );
    assert_eq!(a.status, 403, "{a:#?}");

    // Hostile values in a request made behind the portal's back render inert.
    w.k.create_yaml(&pns, "apiVersion: rackplan.io/v1alpha1\nkind: ClusterRequest\nmetadata: {name: hostile}\nspec: {team: \"<img src=x onerror=alert(1)>\", shape: standard, duration: 72h, reason: \"<script>alert(1)</script>\"}\n");
    w.wait_phase("hostile", "Refused", &op);
    let a = http(&p.addr, "GET", "/clusters", Some(&alice), &[], &[]);
    assert!(
        a.body.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{}",
        a.body
    );
    let a = http(
        &p.addr,
        "GET",
        &format!("/clusters/{pns}/hostile"),
        Some(&alice),
        &[],
        &[],
    );
    assert!(
        a.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{}",
        a.body
    );
    for bad in ["<script", "<img"] {
        assert!(!a.body.contains(bad), "{bad}: {}", a.body);
    }
    std::fs::write(w.tmp.path().join("hostile.html"), &a.body).unwrap();
    pages.push(a.body);

    // Unprotected and deleted, as alice.
    let a = http(
        &p.addr,
        "POST",
        &detail,
        Some(&alice),
        &[],
        &[("csrf", &csrf), ("action", "unprotect")],
    );
    assert_eq!(a.status, 303);
    let a = http(
        &p.addr,
        "POST",
        &detail,
        Some(&alice),
        &[],
        &[("csrf", &csrf), ("action", "delete")],
    );
    assert_eq!(a.status, 400, "unconfirmed: {a:#?}");
    let a = http(
        &p.addr,
        "POST",
        &detail,
        Some(&alice),
        &[],
        &[("csrf", &csrf), ("action", "delete"), ("confirm", "yes")],
    );
    assert_eq!(
        (a.status, a.header("location")),
        (303, "/clusters?done=deleted")
    );
    wait_for(30, "the deletion", || {
        w.get("web-a").map_or(Some(()), |r| {
            (!r["metadata"]["deletionTimestamp"].is_null()).then_some(())
        })
    });

    // A body past the bound is refused; an unknown page is a page.
    let big = "x".repeat(20_000);
    let a = http(
        &p.addr,
        "POST",
        "/ask",
        Some(&alice),
        &[],
        &[("reason", &big)],
    );
    assert_eq!(a.status, 413, "{a:#?}");
    let a = http(&p.addr, "GET", "/nowhere", Some(&alice), &[], &[]);
    assert_eq!(a.status, 404);
    assert!(a.body.contains("<h1>Not found</h1>"));

    // The session ends: back to sign in.
    set_clock(&clock, now() + 3600);
    let a = http(&p.addr, "GET", "/clusters", Some(&alice), &[], &[]);
    assert_eq!(
        (a.status, a.header("location")),
        (303, "/signin?why=expired")
    );
    set_clock(&clock, now());

    // No page carries script; the token is in no page and no log line.
    assert!(pages.iter().all(|b| !b.contains("<script")));
    let log = p.log();
    assert!(log.contains("GET /clusters 200"), "{log}");
    for secret in [users::ALICE, users::BOB] {
        assert!(!log.contains(secret), "{log}");
        assert!(pages.iter().all(|b| !b.contains(secret)));
    }

    drop(p);
    op.stop();
}

/// Sign in through the page in `b`; the page it lands on.
fn sign_in_in(b: &mut Browser, p: &Portal, token: &str) -> String {
    b.goto(&format!("http://{}/signin", p.addr));
    b.type_into("#token", token);
    b.click("button[type=submit]");
    b.url()
}

#[test]
fn in_chromium_a_team_signs_in_checks_requests_and_extends_and_the_other_team_is_refused() {
    let w = World::new("portal-browser");
    let (pns, lns) = (w.team_ns("paiement"), w.team_ns("logistique"));
    requester_role(&w, &pns, "local://g-paiement");
    requester_role(&w, &lns, "local://g-logistique");
    let op = w.operator(&["--rancher-url", "https://rancher.example.com"]);
    let clock = w.tmp.path().join("portal-now");
    set_clock(&clock, now());
    let p = Portal::start(&w, &clock);
    let shots = crate::support::repo().join("target/portal-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shoot = |b: &mut Browser, name: &str| {
        for width in [390, 1280] {
            let png = shots.join(format!("{name}-{width}.png"));
            b.screenshot(width, &png);
            let size = std::fs::metadata(&png).map_or(0, |m| m.len());
            assert!(size > 5_000, "{name} at {width}: {size} bytes");
        }
    };

    let mut a = Browser::start(&w.tmp.path().join("chromium-alice"));
    a.goto(&format!("http://{}/clusters", p.addr));
    assert!(a.url().ends_with("/signin?why=none"), "{}", a.url());
    shoot(&mut a, "signin");
    // The Secure, HttpOnly cookie is kept by the browser (127.0.0.1 is a secure context).
    let landed = sign_in_in(&mut a, &p, users::ALICE);
    assert!(landed.ends_with("/clusters"), "{landed}\n{}", a.html());

    a.goto(&format!("http://{}/shapes", p.addr));
    let html = a.html();
    assert!(html.contains("0 of 80 vCPU held, 80 left"), "{html}");
    shoot(&mut a, "shapes");

    // A check that fits, one over the quota: typed and clicked.
    a.goto(&format!("http://{}/ask?shape=standard", p.addr));
    a.type_into("#name", "web-b");
    a.click("button[value=check]");
    let html = a.html();
    assert!(html.contains("The verdict: admitted"), "{html}");
    assert!(html.contains("36 of 80 allowed (within)"), "{html}");
    shoot(&mut a, "verdict-admitted");
    a.goto(&format!("http://{}/ask?shape=large", p.addr));
    a.type_into("#name", "big-one");
    a.click("button[value=check]");
    let html = a.html();
    assert!(html.contains("its quota allows 80 (40 over)"), "{html}");
    shoot(&mut a, "verdict-quota");
    assert!(w.get("web-b").is_none() && w.get("big-one").is_none());

    // The page's script off: the request, its delivery and the extension work the same.
    a.script(false);
    a.goto(&format!("http://{}/ask?shape=standard", p.addr));
    a.type_into("#name", "web-b");
    a.type_into("#reason", "load tests <b>not bold</b>");
    a.click("button[value=request]");
    assert!(
        a.url()
            .ends_with(&format!("/clusters/{pns}/web-b?done=requested")),
        "{}",
        a.url()
    );
    assert!(a.html().contains("Requested: the operator judges it now."));
    w.wait_phase("web-b", "Provisioning", &op);
    a.goto(&format!("http://{}/clusters/{pns}/web-b", p.addr));
    assert!(a.html().contains("<dd>Provisioning</dd>"), "{}", a.html());
    shoot(&mut a, "provisioning");
    let id = w.rancher_ready("web-b");
    w.wait_phase("web-b", "Ready", &op);
    a.goto(&format!("http://{}/clusters/{pns}/web-b", p.addr));
    let html = a.html();
    assert!(
        html.contains(&format!("Rancher cluster <code>{id}</code>")),
        "{html}"
    );
    assert!(
        html.contains("load tests &lt;b&gt;not bold&lt;/b&gt;"),
        "{html}"
    );
    shoot(&mut a, "ready");
    a.set_value("#duration", "96h");
    a.click("button[value=extend]");
    assert!(a.html().contains("Lifetime change sent"), "{}", a.html());
    assert_eq!(w.get("web-b").unwrap()["spec"]["duration"], "96h");
    a.script(true);
    a.goto(&format!("http://{}/clusters", p.addr));
    shoot(&mut a, "clusters");

    // Bob, in his own browser: the API server refuses him alice's request, by his name.
    let mut b = Browser::start(&w.tmp.path().join("chromium-bob"));
    sign_in_in(&mut b, &p, users::BOB);
    b.goto(&format!("http://{}/clusters/{pns}/web-b", p.addr));
    let html = b.html();
    assert!(html.contains("<h1>Forbidden</h1>"), "{html}");
    assert!(
        html.contains("User \"bob\" cannot get resource \"clusterrequests\""),
        "{html}"
    );
    shoot(&mut b, "forbidden-bob");
    b.goto(&format!("http://{}/clusters", p.addr));
    let html = b.html();
    assert!(html.contains(&lns) && !html.contains("web-b"), "{html}");
    b.goto(&format!("http://{}/ask?shape=huge", p.addr));
    b.type_into("#name", "no-room");
    b.click("button[value=check]");
    let html = b.html();
    assert!(
        html.contains("headroom: the fleet fails with this request: if "),
        "{html}"
    );
    shoot(&mut b, "verdict-headroom");

    // Signing out forgets the session.
    a.click("nav button");
    assert!(a.url().ends_with("/signin?why=out"), "{}", a.url());
    a.goto(&format!("http://{}/clusters", p.addr));
    assert!(a.url().ends_with("/signin?why=none"), "{}", a.url());
    drop(p);
    op.stop();
}

#[test]
fn behind_an_authenticating_proxy_every_call_is_made_as_the_user_it_names() {
    let w = World::new("portal-proxy");
    let (pns, lns) = (w.team_ns("paiement"), w.team_ns("logistique"));
    requester_role(&w, &pns, "local://g-paiement");
    requester_role(&w, &lns, "local://g-logistique");
    let op = w.operator(&[]);
    let clock = w.tmp.path().join("portal-now");
    set_clock(&clock, now());
    let kc = kubeconfig();
    let p = Portal::start_with(
        &w,
        &clock,
        &[
            "--proxy-user-header",
            "X-Forwarded-User",
            "--proxy-groups-header",
            "X-Forwarded-Groups",
            "--impersonator-kubeconfig",
            kc.to_str().unwrap(),
        ],
    );
    let alice = [
        ("X-Forwarded-User", "alice"),
        ("X-Forwarded-Groups", "local://g-paiement"),
    ];
    let bob = [
        ("X-Forwarded-User", "bob"),
        ("X-Forwarded-Groups", "local://g-logistique"),
    ];

    // No identity from the proxy: no page, and no sign-in form to fall back on.
    let a = http(&p.addr, "GET", "/clusters", None, &[], &[]);
    assert_eq!(a.status, 401, "{a:#?}");
    assert!(a.body.contains("named no user"), "{}", a.body);
    let a = http(&p.addr, "GET", "/signin", None, &alice, &[]);
    assert_eq!((a.status, a.header("location")), (303, "/clusters"));

    // Alice, impersonated: her team only, the verdict, the request made as her.
    let a = http(&p.addr, "GET", "/shapes", None, &alice, &[]);
    assert_eq!(a.status, 200, "{a:#?}");
    assert!(
        a.body
            .contains(&format!("<strong>paiement</strong> (namespace {pns})")),
        "{}",
        a.body
    );
    assert!(!a.body.contains(&lns));
    let csrf = a.csrf();
    let ask = |who: &[(&str, &str)], csrf: &str, action: &str| {
        http(
            &p.addr,
            "POST",
            "/ask",
            None,
            who,
            &[
                ("csrf", csrf),
                ("namespace", &pns),
                ("shape", "standard"),
                ("name", "web-p"),
                ("duration", "72h"),
                ("action", action),
            ],
        )
    };
    let a = ask(&alice, &csrf, "check");
    assert!(a.body.contains("The verdict: admitted"), "{}", a.body);
    let a = ask(&alice, "", "request");
    assert_eq!(a.status, 403, "no CSRF token: {a:#?}");
    let a = ask(&alice, &csrf, "request");
    assert_eq!(a.status, 303, "{a:#?}");
    w.wait_phase("web-p", "Provisioning", &op);

    // Bob, impersonated: refused alice's request by the API server in his name, and
    // alice's CSRF token is not his.
    let a = http(
        &p.addr,
        "GET",
        &format!("/clusters/{pns}/web-p"),
        None,
        &bob,
        &[],
    );
    assert_eq!(a.status, 403, "{a:#?}");
    assert!(
        a.body.contains("User &quot;bob&quot; cannot get resource"),
        "{}",
        a.body
    );
    let a = ask(&bob, &csrf, "request");
    assert_eq!(a.status, 403, "{a:#?}");
    assert!(a.body.contains("CSRF token"), "{}", a.body);
    let bob_csrf = http(&p.addr, "GET", "/ask", None, &bob, &[]).csrf();
    let a = ask(&bob, &bob_csrf, "request");
    assert_eq!(
        a.status, 403,
        "bob may not ask in paiement's namespace: {a:#?}"
    );
    assert!(
        a.body.contains("User &quot;bob&quot; cannot create"),
        "{}",
        a.body
    );
    // In the API server's audit log, the portal's calls carry the user the proxy named:
    // alice's create as alice, bob's refused read and create as bob.
    let me = |a: &Audited, who: &str| a.impersonated.as_deref() == Some(who);
    wait_audited(&pns, "web-p created as alice", |a| {
        a.verb == "create" && a.name == "web-p" && a.code == 201 && me(a, "alice")
    });
    wait_audited(&pns, "web-p read refused as bob", |a| {
        a.verb == "get" && a.name == "web-p" && a.code == 403 && me(a, "bob")
    });
    wait_audited(&pns, "bob's create refused as bob", |a| {
        a.verb == "create" && a.code == 403 && me(a, "bob")
    });
    drop(p);
    op.stop();
}
