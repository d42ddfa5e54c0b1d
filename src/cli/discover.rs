//! `rackplan discover redfish`: read bmcs.yaml, crawl, merge into nodes.yaml, report.

use std::time::Duration;

use crate::cli::args::RedfishArgs;
use crate::cli::error::{Error, exit};
use crate::discover::redfish;
use crate::inventory::{Inventory, store, utc_now};
use crate::redfish::{client, config, config::BmcsFile, pins};
use crate::{
    files::{fsio, yaml},
    path, report,
};

pub fn run(args: &RedfishArgs, json: bool) -> Result<u8, Error> {
    let dir = &args.site.site;
    let bmcs_path = dir.join("bmcs.yaml");
    let (file, src): (BmcsFile, _) = yaml::load(&bmcs_path)?;
    if file.bmcs.is_empty() {
        return Err(src
            .error_at(
                &path!["bmcs"],
                "no BMC listed",
                Some("add entries like `- address: https://10.20.0.11`".into()),
            )
            .into());
    }
    for (i, e) in file.bmcs.iter().enumerate() {
        if let Err(msg) = config::base_url(e) {
            return Err(src
                .error_at(
                    &path!["bmcs", i, "address"],
                    msg,
                    Some("write scheme://host[:port], e.g. https://10.20.0.11".into()),
                )
                .into());
        }
        if let Some(c) = &e.credentials
            && let Err(msg) = c.password.check_shape()
        {
            return Err(src
                .error_at(
                    &path!["bmcs", i, "credentials", "password"],
                    msg,
                    Some("write `{env: VAR}` or `{file: path}`".into()),
                )
                .into());
        }
    }
    let nodes_path = dir.join("nodes.yaml");
    let mut inv = if nodes_path.exists() {
        store::load(&nodes_path)?.0
    } else {
        Inventory::default()
    };

    let secs = |s: f64| Duration::from_secs_f64(s.max(0.001));
    let opts = redfish::Options {
        limits: client::Limits {
            per_bmc_concurrency: args.per_bmc.max(1),
            request_timeout: secs(args.request_timeout),
            retries: args.retries,
            ..Default::default()
        },
        bmc_timeout: secs(args.bmc_timeout),
        concurrency: args.concurrency.max(1),
        trust_on_first_use: args.trust_on_first_use,
    };
    let bar = crate::cli::progress(file.bmcs.len(), "BMCs", json);
    let now = utc_now();
    let rt = crate::cli::runtime()?;
    let outcomes = rt.block_on(redfish::discover(&file.bmcs, dir, &opts, &now, &|o| {
        bar.inc(1);
        if !o.ok {
            bar.set_message(format!("{} failed", o.address));
        }
    }));
    bar.finish_and_clear();

    let merge = redfish::apply(&mut inv, &file.bmcs, &outcomes, &now);
    store::save(&nodes_path, &inv)?;

    // Record first-use pins in bmcs.yaml, keeping the file as written where we can.
    let mut text = src.text.clone();
    let mut rewrite_all = false;
    let mut file_out = file.clone();
    for (i, o) in outcomes.iter().enumerate() {
        if let Some(pin) = &o.recorded_pin {
            match pins::record(&text, &file.bmcs[i].address, pin) {
                Some(t) => text = t,
                None => rewrite_all = true,
            }
            let tls = file_out.bmcs[i].tls.get_or_insert_with(Default::default);
            tls.pin_sha256 = Some(pin.clone());
            tls.trust_on_first_use = false;
        }
    }
    if rewrite_all {
        text = yaml::to_string(&file_out);
    }
    if text != src.text {
        fsio::write_atomic(&bmcs_path, text.as_bytes(), fsio::Mode::Public)?;
    }

    let failed = outcomes.iter().filter(|o| !o.ok).count();
    if json {
        let nodes: Vec<_> = outcomes.iter().flat_map(|o| o.found.iter()).collect();
        let body = serde_json::json!({
            "nodes": nodes,
            "bmcs": outcomes,
            "merge": {
                "added": merge.added, "updated": merge.updated,
                "marked_stale": merge.marked_stale, "untouched": merge.untouched,
            },
        });
        println!("{}", report::json(&body));
    } else {
        print!("{}", report::discovery_table(&outcomes, &merge));
    }
    Ok(if failed > 0 { exit::PARTIAL } else { exit::OK })
}

/// `ssh.yaml` in a site: defaults for `discover ssh`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SshSite {
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    identity: Option<String>,
    #[serde(default)]
    known_hosts: Option<String>,
    #[serde(default)]
    accept_new: bool,
    #[serde(default)]
    hosts: Vec<String>,
}

pub fn run_ssh(args: &crate::cli::args::SshArgs, json: bool) -> Result<u8, Error> {
    use crate::discover::ssh::{self, HostSpec, reconcile};
    let dir = &args.site.site;
    let site_file = dir.join("ssh.yaml");
    let (conf, conf_src) = if site_file.exists() {
        let (c, s): (SshSite, _) = yaml::load(&site_file)?;
        (c, Some(s))
    } else {
        (SshSite::default(), None)
    };
    let user = args
        .user
        .clone()
        .or(conf.user.clone())
        .unwrap_or_else(|| "root".into());
    let mut hosts: Vec<HostSpec> = Vec::new();
    let listed = if args.hosts.is_empty() {
        conf.hosts.clone()
    } else {
        args.hosts.clone()
    };
    for (i, h) in listed.iter().enumerate() {
        let spec =
            HostSpec::parse(h, &user).map_err(|msg| match (&conf_src, args.hosts.is_empty()) {
                (Some(src), true) => Error::from(src.error_at(
                    &path!["hosts", i],
                    msg,
                    Some("write user@host[:port]".into()),
                )),
                _ => Error::Usage(format!("--hosts: {msg}")),
            })?;
        hosts.push(spec);
    }
    if hosts.is_empty() {
        let (lock, _) = crate::plan::Lock::load(&dir.join("allocations.yaml"))?;
        for a in &lock.nodes {
            hosts.push(HostSpec {
                user: user.clone(),
                host: a.management_ip.to_string(),
                port: 22,
                node: Some(a.id.clone()),
            });
        }
    }
    if hosts.is_empty() {
        return Err(Error::Usage("no host to probe: give --hosts, a `hosts` list in ssh.yaml, or run `rackplan plan` first".into()));
    }
    let identity = args
        .identity
        .clone()
        .or_else(|| conf.identity.as_ref().map(|p| dir.join(p)))
        .ok_or_else(|| {
            Error::Usage("no SSH key: give --identity FILE (or `identity` in ssh.yaml)".into())
        })?;
    let key = russh::keys::load_secret_key(&identity, None)
        .map_err(|e| Error::Usage(format!("cannot load the SSH key {}: {e} (encrypted keys need an agent, which is not supported yet)", identity.display())))?;
    let known_hosts = args
        .known_hosts
        .clone()
        .or_else(|| conf.known_hosts.as_ref().map(|p| dir.join(p)))
        .unwrap_or_else(|| dir.join("known_hosts"));
    let opts = ssh::Options {
        known_hosts,
        accept_new: args.accept_new || conf.accept_new,
        timeout: Duration::from_secs_f64(args.timeout.max(0.1)),
        concurrency: args.concurrency.max(1),
        retries: args.retries,
    };
    let nodes_path = dir.join("nodes.yaml");
    let mut inv = if nodes_path.exists() {
        store::load(&nodes_path)?.0
    } else {
        Inventory::default()
    };
    let bar = crate::cli::progress(hosts.len(), "hosts", json);
    let now = utc_now();
    let rt = crate::cli::runtime()?;
    let mut outcomes = rt.block_on(ssh::discover(
        &hosts,
        std::sync::Arc::new(key),
        &opts,
        &now,
        &|_| bar.inc(1),
    ));
    bar.finish_and_clear();

    let mut found = crate::inventory::store::Discovery::default();
    let mut matched: Vec<Option<String>> = Vec::new();
    for o in &mut outcomes {
        match &o.node {
            Some(os) => {
                let target = o
                    .spec_node
                    .as_ref()
                    .and_then(|id| inv.nodes.iter().find(|n| n.id == *id))
                    .or_else(|| reconcile::find_match(&inv, os));
                match target {
                    Some(bmc) => {
                        let (merged, notes) = reconcile::merge(bmc, os);
                        o.notes.extend(notes);
                        matched.push(Some(merged.id.clone()));
                        found.seen.push(merged);
                    }
                    None => {
                        matched.push(Some(os.id.clone()));
                        found.seen.push(os.clone());
                    }
                }
            }
            None => {
                matched.push(None);
                if let Some(id) = &o.spec_node {
                    found.failed.push((
                        id.clone(),
                        o.error.clone().unwrap_or_else(|| "failed".into()),
                    ));
                }
            }
        }
    }
    let merge = store::merge(&mut inv, found, &now);
    store::save(&nodes_path, &inv)?;
    let failed = outcomes.iter().filter(|o| !o.ok).count();
    if json {
        let nodes: Vec<_> = matched
            .iter()
            .flatten()
            .filter_map(|id| inv.nodes.iter().find(|n| n.id == *id))
            .collect();
        let body = serde_json::json!({
            "nodes": nodes,
            "hosts": outcomes,
            "merge": {"added": merge.added, "updated": merge.updated, "marked_stale": merge.marked_stale},
        });
        println!("{}", report::json(&body));
    } else {
        let mut t = report::table(&[
            "host",
            "node",
            "cores",
            "memory",
            "disks (by-id)",
            "ports",
            "status",
        ]);
        for (o, id) in outcomes.iter().zip(&matched) {
            let n = id
                .as_ref()
                .and_then(|id| inv.nodes.iter().find(|n| n.id == *id));
            t.add_row(vec![
                o.address.clone(),
                id.clone().unwrap_or_else(|| "-".into()),
                n.and_then(|n| n.cores())
                    .map_or("?".into(), |c| c.to_string()),
                n.and_then(|n| n.memory_gib)
                    .map_or("?".into(), |m| format!("{m:.0} GiB")),
                n.map_or("-".into(), |n| {
                    format!(
                        "{} ({})",
                        n.disks.len(),
                        n.disks.iter().filter(|d| d.path.is_some()).count()
                    )
                }),
                n.map_or("-".into(), |n| n.nics.len().to_string()),
                if o.ok {
                    format!("ok, host key {}", o.host_key)
                } else {
                    "FAILED".into()
                },
            ]);
        }
        println!("{t}");
        for o in &outcomes {
            if let Some(e) = &o.error {
                println!("  {}: {e}", o.address);
            }
            for n in &o.notes {
                println!("  {}: note: {n}", o.address);
            }
        }
    }
    Ok(if failed > 0 { exit::PARTIAL } else { exit::OK })
}
