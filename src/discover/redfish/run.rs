//! Discovery over Redfish for a list of BMCs: each one connected, crawled and normalised on
//! its own with a deadline, a global cap on BMCs in flight, one failure costing only its BMC;
//! then the records applied to the inventory.

use super::{crawl, identity, normalize};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde::Serialize;
use tokio::sync::Semaphore;

use crate::inventory::Node;
use crate::redfish::client::{BmcClient, ClientError, Limits};
use crate::redfish::config;
use crate::redfish::config::{AuthMode, BmcEntry};
use crate::redfish::connect::{ConnectError, explain, tls_for};
use crate::redfish::fetch::Fetch;

/// How a discovery run behaves.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) limits: Limits,
    /// Deadline for one whole BMC.
    pub(crate) bmc_timeout: Duration,
    /// BMCs crawled at once.
    pub(crate) concurrency: usize,
    /// Trust-on-first-use for every HTTPS BMC without a pin or CA bundle.
    pub(crate) trust_on_first_use: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            limits: Limits::default(),
            bmc_timeout: Duration::from_secs(300),
            concurrency: 64,
            trust_on_first_use: false,
        }
    }
}

/// What happened at one BMC.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct BmcOutcome {
    /// The address as written in bmcs.yaml.
    pub(crate) address: String,
    /// The resolved base URL.
    pub(crate) url: String,
    pub(crate) ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// Ids of the nodes found.
    pub(crate) nodes: Vec<String>,
    pub(crate) requests: usize,
    pub(crate) seconds: f64,
    pub(crate) auth: &'static str,
    pub(crate) session_deleted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) recorded_pin: Option<String>,
    pub(crate) notes: Vec<String>,
    /// URLs the BMC named outside its origin: refused, nothing sent there.
    pub(crate) refused: Vec<String>,
    #[serde(skip)]
    pub(crate) found: Vec<Node>,
    /// Per found node, the id it takes when its serial is another machine's.
    #[serde(skip)]
    pub(crate) fallback_ids: Vec<String>,
    /// Per found node, the sections (storage, nics, cpu, memory) that failed to read, with
    /// the error: the previous facts of those sections are kept and marked stale.
    #[serde(skip)]
    pub(crate) degraded: Vec<Vec<(String, String)>>,
    /// What was kept from an earlier run because a section failed (shown to the user).
    pub(crate) kept_from_earlier: Vec<String>,
    /// Systems another BMC entry already reported (same serial and UUID): one BMC listed
    /// twice, or a copied answer. Shown to the user; the run is partial.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) seen_twice: Vec<String>,
    /// Text the BMC gave that holds control or script characters: stored as given, shown
    /// as a warning now, refused by `check` until corrected.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) distrusted: Vec<String>,
}

/// Why a BMC gave no inventory: it could not be reached or logged into, or its systems
/// could not be read. Shown as the BMC's `error`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BmcError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The Systems collection or a system failed to read; the text is `explain`'s.
    #[error("Systems: {0}")]
    Systems(String),
}

/// The client of one BMC and its password, before any request.
struct Prepared {
    client: BmcClient,
    /// Whether the certificate seen is to be recorded as the pin.
    first_use: bool,
    password: Option<(String, crate::files::secrets::Secret)>,
}

fn client_for(
    entry: &BmcEntry,
    url: &str,
    site_dir: &Path,
    opts: &Options,
    shared: &Result<reqwest::Client, ClientError>,
    seen: &Arc<Mutex<Option<String>>>,
) -> Result<Prepared, ConnectError> {
    let (tls, first_use) = tls_for(entry, url, site_dir, opts.trust_on_first_use, seen)?;
    let http = match tls {
        Some(cfg) => BmcClient::http(Some(cfg), &opts.limits)?,
        None => shared.clone()?,
    };
    let client = BmcClient::new(url, http, opts.limits.clone())?;
    let password = match &entry.credentials {
        Some(c) => Some((c.username.clone(), c.password.resolve(site_dir)?)),
        None => None,
    };
    Ok(Prepared {
        client,
        first_use,
        password,
    })
}

async fn one(
    entry: &BmcEntry,
    site_dir: &Path,
    opts: &Options,
    now: &str,
    shared: &Result<reqwest::Client, ClientError>,
) -> BmcOutcome {
    let started = Instant::now();
    let mut out = BmcOutcome {
        address: entry.address.clone(),
        url: String::new(),
        ok: false,
        error: None,
        nodes: Vec::new(),
        requests: 0,
        seconds: 0.0,
        auth: "none",
        session_deleted: false,
        recorded_pin: None,
        notes: Vec::new(),
        refused: Vec::new(),
        found: Vec::new(),
        fallback_ids: Vec::new(),
        degraded: Vec::new(),
        kept_from_earlier: Vec::new(),
        seen_twice: Vec::new(),
        distrusted: Vec::new(),
    };
    let url = match config::base_url(entry) {
        Ok(u) => u,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    out.url = url.clone();
    let seen = Arc::new(Mutex::new(None));
    let Prepared {
        client,
        first_use,
        password,
    } = match client_for(entry, &url, site_dir, opts, shared, &seen) {
        Ok(p) => p,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let work = async {
        // The Systems collection sits at a path the standard fixes; asking for it together
        // with the ServiceRoot saves a round trip on every BMC. With credentials it is asked
        // after login instead.
        let (root, systems) = if password.is_none() {
            let (r, s) = tokio::join!(client.get("/redfish/v1"), client.get("/redfish/v1/Systems"));
            (r, s.ok())
        } else {
            (client.get("/redfish/v1").await, None)
        };
        let root = root
            .map_err(|e| ConnectError::ServiceRoot(explain(&e, &url, Some("--request-timeout"))))?;
        client.set_expand(super::expand::levels_advertised(&root));
        let mut auth = "none";
        if let Some((user, pw)) = password.clone() {
            let sessions = root
                .pointer("/Links/Sessions")
                .and_then(crate::redfish::fetch::link)
                .unwrap_or_else(|| "/redfish/v1/SessionService/Sessions".into());
            auth = client
                .login(
                    &sessions,
                    &user,
                    pw,
                    entry.auth == AuthMode::Session,
                    entry.auth != AuthMode::Basic,
                )
                .await
                .map_err(ConnectError::from)?;
        }
        let raw = crawl::crawl(&client, root, systems)
            .await
            .map_err(|e| BmcError::Systems(explain(&e, &url, Some("--request-timeout"))));
        Ok::<_, BmcError>((auth, raw))
    };
    let result = tokio::time::timeout(opts.bmc_timeout, work).await;
    out.session_deleted = client.logout().await;
    match result {
        Err(_) => {
            out.error = Some(format!(
                "no complete answer within {:?}; the BMC is too slow or hangs",
                opts.bmc_timeout
            ));
        }
        Ok(Err(e)) => out.error = Some(e.to_string()),
        Ok(Ok((auth, Err(e)))) => {
            out.auth = auth;
            out.error = Some(e.to_string());
        }
        Ok(Ok((auth, Ok(raw)))) => {
            out.auth = auth;
            out.notes.clone_from(&raw.notes);
            for sys in &raw.systems {
                let node = normalize::node(sys, &raw.root, &url, now, &mut out.notes);
                for (field, shown) in crate::inventory::text::untrusted_fields(&node) {
                    out.distrusted.push(format!(
                        "{}: {field} holds a control or script character: \"{shown}\"; stored as given, and `rackplan check` refuses it until corrected",
                        crate::redfish::origin::shown(&node.id)
                    ));
                }
                out.nodes.push(node.id.clone());
                out.fallback_ids
                    .push(normalize::fallback_id(&sys.system, &url));
                out.degraded.push(
                    crawl::degraded_sections(&sys.system, &raw.failed)
                        .into_iter()
                        .map(|(s, e)| (s.to_string(), e))
                        .collect(),
                );
                out.found.push(node);
            }
            out.ok = true;
        }
    }
    if first_use && out.ok {
        out.recorded_pin
            .clone_from(&seen.lock().expect("not poisoned"));
    }
    out.refused = client.refused();
    if !out.refused.is_empty() {
        out.notes.extend(out.refused.iter().cloned());
    }
    out.requests = client.requests();
    out.seconds = started.elapsed().as_secs_f64();
    out
}

/// Crawl every BMC, at most `opts.concurrency` at once; `progress` is called as each ends.
pub(crate) async fn discover(
    entries: &[BmcEntry],
    site_dir: &Path,
    opts: &Options,
    now: &str,
    progress: &(dyn Fn(&BmcOutcome) + Sync),
) -> Vec<BmcOutcome> {
    crate::redfish::tls::install_provider();
    let gate = Semaphore::new(opts.concurrency.max(1));
    let shared = BmcClient::http(None, &opts.limits);
    join_all(entries.iter().map(|e| async {
        let _permit = gate.acquire().await.expect("never closed");
        tracing::debug!(bmc = %e.address, "crawl starts");
        let o = one(e, site_dir, opts, now, &shared).await;
        match &o.error {
            None => tracing::info!(bmc = %o.address, requests = o.requests, seconds = o.seconds, nodes = o.nodes.len(), "crawled"),
            // The run's summary lists every failure; the log has it at -v.
            Some(err) => tracing::info!(bmc = %o.address, requests = o.requests, "crawl failed: {err}"),
        }
        progress(&o);
        o
    }))
    .await
}

/// Fold a run's outcomes into the inventory: new facts for every node found, the previous
/// record kept and marked stale for every node behind a BMC that failed. The rack given in
/// bmcs.yaml fills `annotations.rack` where people have not set one.
pub(crate) fn apply(
    inv: &mut crate::inventory::Inventory,
    entries: &[BmcEntry],
    outcomes: &mut [BmcOutcome],
    now: &str,
) -> crate::inventory::store::MergeReport {
    // Serials repeat: give each machine an id no other machine holds first.
    let mut all: Vec<(Node, String)> = Vec::new();
    let mut at: Vec<(usize, usize)> = Vec::new();
    for (oi, o) in outcomes.iter().enumerate() {
        if !o.ok {
            continue;
        }
        for (ni, n) in o.found.iter().enumerate() {
            let alt = o
                .fallback_ids
                .get(ni)
                .cloned()
                .unwrap_or_else(|| n.id.clone());
            all.push((n.clone(), alt));
            at.push((oi, ni));
        }
    }
    let bmc: Vec<(usize, &str)> = at
        .iter()
        .map(|(oi, _)| (*oi, outcomes[*oi].address.as_str()))
        .collect();
    for (i, warning) in identity::seen_twice(&all, &bmc) {
        let (oi, _) = at[i];
        outcomes[oi].seen_twice.push(warning);
    }
    for (i, note) in identity::disambiguate(inv, &mut all) {
        let (oi, ni) = at[i];
        let o = &mut outcomes[oi];
        o.notes.push(note);
        o.nodes[ni].clone_from(&all[i].0.id);
        o.found[ni] = all[i].0.clone();
    }
    // A section that failed to read keeps the facts of the last good run: a degraded
    // answer never replaces a good record.
    let mut stale_sections: Vec<(String, String)> = Vec::new();
    for o in outcomes.iter_mut() {
        if !o.ok {
            continue;
        }
        for (ni, node) in o.found.iter_mut().enumerate() {
            let Some(sections) = o.degraded.get(ni).filter(|d| !d.is_empty()) else {
                continue;
            };
            let old = inv.nodes.iter().find(|n| n.id == node.id);
            let mut what = Vec::new();
            for (section, err) in sections {
                if let Some(old) = old {
                    match section.as_str() {
                        "storage" => node.disks.clone_from(&old.disks),
                        "nics" => node.nics.clone_from(&old.nics),
                        "cpu" => node.cpu.clone_from(&old.cpu),
                        "memory" => node.memory_gib = old.memory_gib,
                        _ => {}
                    }
                    what.push(format!("{section} kept from the last good run ({err})"));
                } else {
                    what.push(format!("{section} incomplete ({err})"));
                }
            }
            let msg = format!("{}: {}", node.id, what.join("; "));
            o.kept_from_earlier.push(msg.clone());
            stale_sections.push((node.id.clone(), msg));
        }
    }
    let mut found = crate::inventory::store::Discovery::default();
    for o in outcomes.iter() {
        if o.ok {
            found.seen.extend(o.found.iter().cloned());
        } else {
            let err = o.error.clone().unwrap_or_else(|| "failed".into());
            for n in &inv.nodes {
                let same = n
                    .bmc
                    .as_ref()
                    .is_some_and(|b| !o.url.is_empty() && b.address == o.url);
                if same {
                    found.failed.push((n.id.clone(), err.clone()));
                }
            }
        }
    }
    let mut report = crate::inventory::store::merge(inv, found, now);
    report.orphaned = inv
        .nodes
        .iter()
        .filter_map(|n| {
            let b = n.bmc.as_ref()?;
            (!outcomes
                .iter()
                .any(|o| o.url == b.address || o.address == b.address))
            .then(|| format!("{} ({})", n.id, b.address))
        })
        .collect();
    for (id, msg) in stale_sections {
        if let Some(n) = inv.nodes.iter_mut().find(|n| n.id == id) {
            n.stale = Some(crate::inventory::Stale {
                since: now.to_string(),
                error: msg,
            });
        }
    }
    for (e, o) in entries.iter().zip(outcomes.iter()) {
        let Some(rack) = &e.rack else { continue };
        for id in &o.nodes {
            if let Some(n) = inv.nodes.iter_mut().find(|n| n.id == *id)
                && n.annotations.rack.is_none()
            {
                n.annotations.rack = Some(rack.clone());
            }
        }
    }
    report
}
