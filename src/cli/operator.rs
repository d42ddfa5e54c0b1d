//! `rackplan operator`: resolve the flags, run the request operator until SIGTERM or
//! SIGINT, print each transition it makes (a line, or a JSON line with `--output json`).

use std::path::PathBuf;
use std::time::Duration;

use super::config;
use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::cli::args::OperatorArgs;
use crate::operator::{self, Clock, ServiceOptions, Settings, catalogue::Catalogue, spec::Rules};
use crate::simulate::scenario::request::parse_duration_h;
use crate::{reach, report};

pub(super) fn duration_h(flag: &str, v: &str) -> Result<f64, Error> {
    parse_duration_h(v).map_err(|e| Error::Usage(format!("{flag}: {e}")))
}

/// A label selector, checked for what the watch would refuse later.
pub(super) fn team_selector(s: &str) -> Result<String, Error> {
    let s = s.trim();
    if s.is_empty() || s.len() > 1024 || s.chars().any(char::is_control) {
        return Err(Error::Usage(format!(
            "--team-namespaces `{}`: give a label selector such as `rackplan.io/team`",
            s.escape_debug()
        )));
    }
    Ok(s.to_string())
}

/// `--delivery-target`, seconds.
pub(super) fn delivery_target(t: Option<&str>) -> Result<Option<f64>, Error> {
    t.map(|t| match duration_h("--delivery-target", t)? {
        h if h > 0.0 => Ok(h * 3600.0),
        _ => Err(Error::Usage(format!(
            "--delivery-target `{}`: give a time such as 15m",
            t.escape_debug()
        ))),
    })
    .transpose()
}

fn rancher_url(s: &str) -> Result<String, Error> {
    match url::Url::parse(s) {
        Ok(u) if matches!(u.scheme(), "https" | "http") && u.host().is_some() => {
            Ok(s.trim_end_matches('/').to_string())
        }
        _ => Err(Error::Usage(format!(
            "--rancher-url `{}`: give Rancher's address, e.g. https://rancher.example.com",
            s.escape_debug()
        ))),
    }
}

pub(super) fn resolve(a: &OperatorArgs) -> Result<ServiceOptions, Error> {
    let catalogue = Catalogue::read(&a.catalogue).map_err(|e| Error::Usage(e.to_string()))?;
    // The scenario is read at every judgement; a bad one is refused now, not then.
    crate::simulate::scenario::load(&a.scenario)?;
    let listen = a
        .listen
        .parse()
        .map_err(|e| Error::Usage(format!("--listen `{}`: {e}; give HOST:PORT", a.listen)))?;
    let lease = config::seconds("--lease-seconds", a.lease_seconds, 2.0, 3600.0)?;
    let resync = config::seconds("--resync-seconds", a.resync_seconds, 0.2, 86_400.0)?;
    let identity = a.identity.clone().unwrap_or_else(|| {
        std::env::var("POD_NAME").unwrap_or_else(|_| {
            let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
            format!("{}-{}", host.trim(), std::process::id())
        })
    });
    Ok(ServiceOptions {
        settings: Settings {
            namespace: a
                .namespace
                .clone()
                .unwrap_or_else(|| catalogue.namespace().to_string()),
            team_namespaces: team_selector(&a.team_namespaces)?,
            rancher_url: a.rancher_url.as_deref().map(rancher_url).transpose()?,
            snapshot_timeout_s: (duration_h("--snapshot-timeout", &a.snapshot_timeout)? * 3600.0)
                .round() as i64,
            delivery_target_s: delivery_target(a.delivery_target.as_deref())?,
            catalogue,
            scenario: a.scenario.clone(),
            quotas: a.quotas.clone(),
            rules: Rules {
                max_lifetime_h: duration_h("--max-lifetime", &a.max_lifetime)?,
                versions: a.allow_version.clone(),
            },
            warn_before_s: (duration_h("--warn-before", &a.warn_before)? * 3600.0).round() as i64,
            dry_run: a.dry_run,
            resync,
            clock: a.clock_file.clone().map_or(Clock::System, Clock::File),
            identity,
            harvester_origin: a.harvester_kubeconfig.as_ref().map_or_else(
                || "the Harvester cluster".to_string(),
                |p| format!("the Harvester cluster of {}", p.display()),
            ),
        },
        rancher_kubeconfig: a.kubeconfig.clone(),
        harvester_kubeconfig: a.harvester_kubeconfig.clone(),
        listen,
        lease: (!a.no_leader_election).then(|| ("rackplan-operator".to_string(), lease)),
    })
}

/// The server the current context of a kubeconfig points at, to name it in words (or how
/// the client finds one when no file is given).
fn server_of(kubeconfig: Option<&PathBuf>) -> String {
    let named = kubeconfig.and_then(|p| {
        let kc = kube::config::Kubeconfig::read_from(p).ok()?;
        let ctx_name = kc.current_context.clone()?;
        let ctx = kc
            .contexts
            .iter()
            .find(|c| c.name == ctx_name)?
            .context
            .clone()?;
        let cluster = kc.clusters.iter().find(|c| c.name == ctx.cluster)?;
        cluster.cluster.as_ref()?.server.clone()
    });
    named.unwrap_or_else(|| "the server of KUBECONFIG or the in-cluster config".to_string())
}

/// How long the API servers get to answer at start.
const REACH_WAIT: Duration = Duration::from_secs(15);

/// Each API server answers before the loop starts, so an address that cannot be reached
/// (a refused port, a name that does not resolve, plain HTTP against HTTPS, no answer) is
/// said at once in words with the fix, rather than retried in silence. Any answer at all,
/// a refusal of the request included, passes: the loop reports those itself.
pub(super) async fn reachable(kubeconfig: Option<&PathBuf>, flag: &str) -> Result<(), Error> {
    let client = operator::service::client(kubeconfig)
        .await
        .map_err(|e| Error::Runtime(e.to_string()))?;
    let address = server_of(kubeconfig);
    let set_in = match kubeconfig {
        Some(p) => format!("{} ({flag})", p.display()),
        None => "KUBECONFIG".to_string(),
    };
    let peer = reach::Peer {
        what: "the API server",
        address: &address,
        set_in: &set_in,
    };
    match tokio::time::timeout(REACH_WAIT, client.apiserver_version()).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => match reach::explain(&peer, &reach::innermost(&e)) {
            Some(words) => Err(Error::Runtime(words)),
            None => Ok(()),
        },
        Err(_) => Err(Error::Runtime(reach::timed_out(
            &peer,
            Some(REACH_WAIT),
            None,
        ))),
    }
}

pub(crate) fn run(a: &OperatorArgs, ctx: &Ctx) -> Result<u8, Error> {
    let o = resolve(a)?;
    term::errln(&report::wrap_prose(&report::operator::banner(&o)));
    let rt = term::runtime()?;
    let json = ctx.json;
    // The table style is set per thread, and the printer runs on a worker of the runtime:
    // it is handed the terminal's width (none into a pipe or a log: one line each).
    let width = match report::style() {
        report::Style::Boxed(w) => Some(usize::from(w)),
        report::Style::Plain => None,
    };
    rt.block_on(async {
        reachable(a.kubeconfig.as_ref(), "--kubeconfig").await?;
        if a.harvester_kubeconfig.is_some() && a.harvester_kubeconfig != a.kubeconfig {
            reachable(a.harvester_kubeconfig.as_ref(), "--harvester-kubeconfig").await?;
        }
        Ok::<_, Error>(())
    })?;
    let result = rt.block_on(async move {
        let stop = term::stop_signal()?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let printer = tokio::spawn(async move {
            while let Some(t) = rx.recv().await {
                // Written as is (no second wrap at a worker's default width), control
                // characters shown as visible marks as `term::out` shows them.
                let text = if json {
                    report::json_line(&t)
                } else {
                    match width {
                        Some(w) => report::operator::transition_lines(&t, w),
                        None => report::operator::transition_line(&t),
                    }
                };
                term::out_raw(&report::escape::terminal(&format!("{text}\n")));
            }
        });
        let r = operator::serve(o, tx, stop).await;
        let _ = printer.await;
        Ok::<_, Error>(r)
    })?;
    rt.shutdown_timeout(Duration::from_secs(5));
    match result {
        Ok(()) => Ok(exit::OK),
        Err(e) => Err(Error::Runtime(e.to_string())),
    }
}
