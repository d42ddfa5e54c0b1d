//! A whole `boot` run: each target connected, planned and (when asked) carried out on its
//! own, all at once; one node's failure never touches another.

use std::path::Path;
use std::time::Duration;

use futures_util::future::join_all;
use serde::Serialize;

use super::gate::Judged;
use super::virtual_media::{Action, Plan, execute, plan};
use crate::plan::bios::BiosChange;
use crate::redfish::client::Limits;
use crate::redfish::connect::open;

/// What happened at one node.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct NodeResult {
    pub(crate) node: String,
    pub(crate) bmc: String,
    pub(crate) ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) plan: Option<Plan>,
    pub(crate) done: Vec<String>,
    /// What `--yes` refuses (or refused) to do at this node, the same in a dry run and in
    /// the run: the gate's objection, or a powered-on host without `--restart-running`.
    /// Nothing but the read-only requests of the plan is sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) refused: Option<String>,
    /// Requests made to the BMC (in a dry run, all of them read-only GETs and the session
    /// login and logout).
    pub(crate) requests: usize,
    /// The gate's objections that `--force` overrode.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) forced_past: Vec<String>,
}

/// How a run behaves.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub(crate) iso: String,
    pub(crate) action: Action,
    /// Carry the plan out; otherwise only read the BMC and plan.
    pub(crate) execute: bool,
    /// How long to wait for the host to report power on after the reset.
    pub(crate) wait: Duration,
    /// Restart a host that is powered on.
    pub(crate) restart_running: bool,
    /// With `Action::Bios`: per node id, the attributes to write and what cannot be.
    pub(crate) bios: std::collections::BTreeMap<String, (Vec<BiosChange>, Vec<String>)>,
}

/// Plan (and with `opts.execute`, run) every target the gate judged.
pub(crate) async fn run(targets: &[Judged], site_dir: &Path, opts: &RunOptions) -> Vec<NodeResult> {
    let limits = Limits {
        retries: 1,
        ..Limits::default()
    };
    join_all(targets.iter().map(|j| one(j, site_dir, opts, &limits))).await
}

/// Why `--yes` leaves this planned node alone, if it does.
fn refusal(j: &Judged, p: &Plan, opts: &RunOptions) -> Option<String> {
    j.refused.clone().or_else(|| {
        (opts.action == Action::Boot && p.power_state == "On" && !opts.restart_running).then(
            || {
                "the host is powered on: it is left alone (add --restart-running to restart it into the installer)".to_string()
            },
        )
    })
}

async fn one(j: &Judged, site_dir: &Path, opts: &RunOptions, limits: &Limits) -> NodeResult {
    let t = &j.target;
    let mut r = NodeResult {
        node: t.name.clone(),
        bmc: t.entry.address.clone(),
        ok: false,
        error: None,
        plan: None,
        done: Vec::new(),
        refused: j.refused.clone(),
        requests: 0,
        forced_past: j.forced_past.clone(),
    };
    let client = match open(&t.entry, site_dir, limits).await {
        Ok(c) => c,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    let planned = if opts.action == Action::Bios {
        let (changes, cannot) = opts.bios.get(&t.node).cloned().unwrap_or_default();
        super::bios::plan(&client, &changes, &cannot).await
    } else {
        plan(&client, &opts.iso, opts.action).await
    };
    match planned {
        Ok(p) => {
            r.refused = refusal(j, &p, opts);
            if let Some(why) = &r.refused {
                // A dry run did what it was asked (read and plan); the run did not.
                r.ok = !opts.execute;
                if opts.execute {
                    r.error = Some(why.clone());
                }
            } else if opts.execute {
                match carry_out(&client, &p, opts).await {
                    Ok(done) => {
                        r.done = done;
                        r.ok = true;
                    }
                    Err(e) => r.error = Some(e.to_string()),
                }
            } else {
                r.ok = true;
            }
            r.plan = Some(p);
        }
        Err(e) => r.error = Some(e.to_string()),
    }
    client.logout().await;
    r.requests = client.requests();
    r
}

/// Run a plan; after a BIOS write, read the attributes back.
async fn carry_out(
    client: &crate::redfish::client::BmcClient,
    p: &Plan,
    opts: &RunOptions,
) -> Result<Vec<String>, super::error::BootError> {
    let mut done = execute(client, p, opts.wait).await?;
    if opts.action == Action::Bios {
        done.extend(super::bios::read_back(client, p).await?);
    }
    Ok(done)
}
