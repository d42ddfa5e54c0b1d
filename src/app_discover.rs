//! `rackplan discover redfish`: read bmcs.yaml, crawl, merge into nodes.yaml, report.

use std::io::IsTerminal;
use std::time::Duration;

use crate::cli::RedfishArgs;
use crate::error::{Error, exit};
use crate::inventory::redfish::{self, config::BmcsFile, pins};
use crate::inventory::{Inventory, store, utc_now};
use crate::{fsio, path, report, yamlio};

pub fn run(args: &RedfishArgs, json: bool) -> Result<u8, Error> {
    let dir = &args.site.site;
    let bmcs_path = dir.join("bmcs.yaml");
    let (file, src): (BmcsFile, _) = yamlio::load(&bmcs_path)?;
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
        if let Err(msg) = redfish::config::base_url(e) {
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
        limits: redfish::client::Limits {
            per_bmc_concurrency: args.per_bmc.max(1),
            request_timeout: secs(args.request_timeout),
            retries: args.retries,
            ..Default::default()
        },
        bmc_timeout: secs(args.bmc_timeout),
        concurrency: args.concurrency.max(1),
        trust_on_first_use: args.trust_on_first_use,
    };
    let bar = if !json && std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(file.bmcs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} BMCs {pos}/{len} [{bar:30}] {elapsed_precise} {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let now = utc_now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("cannot start the async runtime: {e}")))?;
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
        text = yamlio::to_string(&file_out);
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
