//! `rackplan portal`: resolve the flags into the operator's judging settings, serve the
//! self-service pages until SIGTERM or SIGINT, and log each request served (method, path,
//! status; never a body, query or cookie) on stderr.

use std::time::Duration;

use super::ctx::Ctx;
use super::error::{Error, exit};
use super::operator::{delivery_target, duration_h, reachable, team_selector};
use super::term;
use crate::cli::args::PortalArgs;
use crate::operator::{Clock, Settings, catalogue::Catalogue, spec::Rules};
use crate::portal::{self, PortalOptions, ProxyOptions};

/// Shortest and longest sign-in.
const SESSION_H: (f64, f64) = (5.0 / 60.0, 24.0 * 7.0);

fn header_name(flag: &str, v: &str) -> Result<axum::http::HeaderName, Error> {
    axum::http::HeaderName::from_bytes(v.trim().as_bytes()).map_err(|_| {
        Error::Usage(format!(
            "{flag} `{}`: give an HTTP header name such as X-Forwarded-User",
            v.escape_debug()
        ))
    })
}

pub(super) fn resolve(a: &PortalArgs) -> Result<PortalOptions, Error> {
    let catalogue = Catalogue::read(&a.catalogue).map_err(|e| Error::Usage(e.to_string()))?;
    crate::simulate::scenario::load(&a.scenario)?;
    let listen = a
        .listen
        .parse()
        .map_err(|e| Error::Usage(format!("--listen `{}`: {e}; give HOST:PORT", a.listen)))?;
    let session_h = duration_h("--session", &a.session)?;
    if !(SESSION_H.0..=SESSION_H.1).contains(&session_h) {
        return Err(Error::Usage(format!(
            "--session `{}`: give a time between 5m and 7d",
            a.session.escape_debug()
        )));
    }
    let delivery_target_s = delivery_target(a.delivery_target.as_deref())?;
    Ok(PortalOptions {
        settings: Settings {
            namespace: a
                .namespace
                .clone()
                .unwrap_or_else(|| catalogue.namespace().to_string()),
            team_namespaces: team_selector(&a.team_namespaces)?,
            catalogue,
            scenario: a.scenario.clone(),
            quotas: a.quotas.clone(),
            rules: Rules {
                max_lifetime_h: duration_h("--max-lifetime", &a.max_lifetime)?,
                versions: a.allow_version.clone(),
            },
            // What the judging settings hold beyond a check: never used by the portal,
            // which writes nothing with its own identity.
            warn_before_s: 0,
            dry_run: false,
            resync: Duration::from_secs(60),
            clock: a.clock_file.clone().map_or(Clock::System, Clock::File),
            identity: "rackplan-portal".into(),
            harvester_origin: a.harvester_kubeconfig.as_ref().map_or_else(
                || "the Harvester cluster".to_string(),
                |p| format!("the Harvester cluster of {}", p.display()),
            ),
            rancher_url: None,
            snapshot_timeout_s: 0,
            delivery_target_s,
        },
        kubeconfig: a.kubeconfig.clone(),
        harvester_kubeconfig: a.harvester_kubeconfig.clone(),
        listen,
        session_seconds: (session_h * 3600.0).round() as i64,
        proxy: match (&a.proxy_user_header, &a.impersonator_kubeconfig) {
            (Some(user), Some(kc)) => Some(ProxyOptions {
                user_header: header_name("--proxy-user-header", user)?,
                groups_header: a
                    .proxy_groups_header
                    .as_deref()
                    .map(|g| header_name("--proxy-groups-header", g))
                    .transpose()?,
                impersonator_kubeconfig: kc.clone(),
            }),
            _ => None,
        },
    })
}

pub(crate) fn run(a: &PortalArgs, ctx: &Ctx) -> Result<u8, Error> {
    let o = resolve(a)?;
    let rt = term::runtime()?;
    let json = ctx.json;
    let result = rt.block_on(async move {
        reachable(a.kubeconfig.as_ref(), "--kubeconfig").await?;
        let stop = term::stop_signal()?;
        let log: portal::Log = Box::new(move |line| {
            if json {
                term::errln(&serde_json::json!({"portal": line}).to_string());
            } else {
                term::errln(line);
            }
        });
        Ok::<_, Error>(portal::serve(o, log, stop).await)
    })?;
    rt.shutdown_timeout(Duration::from_secs(5));
    match result {
        Ok(()) => Ok(exit::OK),
        Err(e) => Err(Error::Runtime(e.to_string())),
    }
}
