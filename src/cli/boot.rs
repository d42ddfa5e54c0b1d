//! `rackplan boot`: plan (and with --yes, run) the virtual-media boot of nodes.

use std::time::Duration;

use futures_util::future::join_all;
use serde::Serialize;

use crate::bootstrap::boot::{self, Action, Plan};
use crate::cli::args::BootArgs;
use crate::cli::error::{Error, exit};
use crate::redfish::{
    self,
    client::Limits,
    config::{AuthMode, BmcEntry, BmcsFile},
};
use crate::{files::yaml, report};

#[derive(Debug, Serialize)]
struct NodeResult {
    node: String,
    bmc: String,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<Plan>,
    done: Vec<String>,
}

pub fn run(args: &BootArgs, json: bool) -> Result<u8, Error> {
    let inputs = crate::cli::load_inputs(&args.site.site)?;
    let dir = &args.site.site;
    let bmcs: BmcsFile = if dir.join("bmcs.yaml").exists() {
        yaml::load(&dir.join("bmcs.yaml"))?.0
    } else {
        BmcsFile::default()
    };
    if args.node.is_empty() && !args.all {
        return Err(Error::Usage(
            "name the nodes with --node ID (repeatable) or use --all".into(),
        ));
    }
    let mut targets = Vec::new();
    for n in &inputs.inventory.nodes {
        let hostname = inputs.lock.get(&n.id).map(|a| a.hostname.clone());
        let wanted = args.all
            || args
                .node
                .iter()
                .any(|w| *w == n.id || Some(w) == hostname.as_ref());
        if !wanted {
            continue;
        }
        let Some(b) = &n.bmc else {
            if !args.all {
                return Err(Error::Usage(format!(
                    "node {} has no BMC address in nodes.yaml",
                    n.id
                )));
            }
            continue;
        };
        let entry = bmcs
            .bmcs
            .iter()
            .find(|e| redfish::config::base_url(e).ok().as_deref() == Some(b.address.as_str()))
            .cloned()
            .unwrap_or(BmcEntry {
                address: b.address.clone(),
                port: None,
                scheme: None,
                credentials: None,
                auth: AuthMode::Auto,
                tls: None,
                rack: None,
            });
        targets.push((hostname.unwrap_or_else(|| n.id.clone()), entry));
    }
    for w in &args.node {
        if !targets.iter().any(|(h, _)| h == w)
            && !inputs.inventory.nodes.iter().any(|n| n.id == *w)
        {
            return Err(Error::Usage(format!(
                "no node `{w}` in the inventory (give a node id or a planned hostname)"
            )));
        }
    }
    let iso = args
        .iso
        .clone()
        .unwrap_or_else(|| inputs.site.site.harvester.iso_url.clone());
    let action = if args.eject {
        Action::Eject
    } else {
        Action::Boot
    };
    let limits = Limits {
        retries: 1,
        ..Limits::default()
    };
    let rt = crate::cli::runtime()?;
    let results: Vec<NodeResult> = rt.block_on(join_all(targets.iter().map(|(name, entry)| {
        let (iso, limits, dir) = (&iso, &limits, dir);
        async move {
            let mut r = NodeResult {
                node: name.clone(),
                bmc: entry.address.clone(),
                ok: false,
                error: None,
                plan: None,
                done: Vec::new(),
            };
            let client = match redfish::connect::connect(entry, dir, limits).await {
                Ok(c) => c,
                Err(e) => {
                    r.error = Some(e);
                    return r;
                }
            };
            match boot::plan(&client, iso, action).await {
                Ok(p) => {
                    if args.yes {
                        match boot::execute(
                            &client,
                            &p,
                            Duration::from_secs_f64(args.wait.max(1.0)),
                        )
                        .await
                        {
                            Ok(done) => {
                                r.done = done;
                                r.ok = true;
                            }
                            Err(e) => r.error = Some(e),
                        }
                    } else {
                        r.ok = true;
                    }
                    r.plan = Some(p);
                }
                Err(e) => r.error = Some(e),
            }
            client.logout().await;
            r
        }
    })));
    if json {
        println!(
            "{}",
            report::json(&serde_json::json!({"dry_run": !args.yes, "nodes": results}))
        );
    } else {
        for r in &results {
            println!("{} (BMC {})", r.node, r.bmc);
            if let Some(p) = &r.plan {
                println!(
                    "  system {}, virtual media {}, power {}",
                    p.system, p.slot, p.power_state
                );
                for st in &p.steps {
                    let body = st
                        .body
                        .as_ref()
                        .map(|b| format!(" {b}"))
                        .unwrap_or_default();
                    let tag = st
                        .if_match
                        .as_ref()
                        .map(|t| format!(" [If-Match {t}]"))
                        .unwrap_or_default();
                    println!("  {} {}{body}{tag}\n      {}", st.method, st.path, st.why);
                }
                for n in &p.notes {
                    println!("  note: {n}");
                }
            }
            for d in &r.done {
                println!("  done: {d}");
            }
            if let Some(e) = &r.error {
                println!("  FAILED: {e}");
            }
        }
        if !args.yes {
            println!("dry run: nothing was sent; add --yes to carry out the plan");
        }
    }
    Ok(if results.iter().all(|r| r.ok) {
        exit::OK
    } else {
        exit::PARTIAL
    })
}
