//! `rackplan discover redfish`: crawl the BMCs of bmcs.yaml into nodes.yaml.

use super::config::RedfishConfig;
use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::cli::args::RedfishArgs;
use crate::discover::redfish;
use crate::files::fsio;
use crate::inventory::{store, utc_now};
use crate::redfish::{config, pins};
use crate::report;

pub(crate) fn run(args: &RedfishArgs, ctx: &Ctx) -> Result<u8, Error> {
    let cfg = RedfishConfig::resolve(args)?;
    let dir = &cfg.site;
    let bmcs_path = dir.join("bmcs.yaml");
    let (file, _) = config::load(&bmcs_path)?;
    let nodes_path = dir.join("nodes.yaml");
    // Fail early on an unreadable inventory; the merge re-reads it under the lock.
    store::load_or_empty(&nodes_path)?;

    // The site's lock is taken before the first request: a second discovery started
    // alongside waits (--wait-lock) or stops at once, instead of crawling for nothing. The
    // merge still re-reads the files under it, so a hand edit made during the crawl is kept.
    let _lock = ctx.lock_site(dir)?;
    let bar = term::progress(file.bmcs.len(), "BMCs", ctx.json);
    let now = utc_now();
    let mut outcomes = term::runtime()?.block_on(redfish::discover(
        &file.bmcs,
        dir,
        &cfg.options,
        &now,
        &|o| {
            // Each BMC that ends leaves one line above the bar (none off a terminal).
            bar.println(term::fit_line(&report::discover::progress_line(o)));
            bar.inc(1);
        },
    ));
    bar.finish_and_clear();

    let mut inv = store::load_or_empty(&nodes_path)?;
    let merge = redfish::apply(&mut inv, &file.bmcs, &mut outcomes, &now);
    store::save(&nodes_path, &inv)?;
    let recorded: Vec<(usize, String)> = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.recorded_pin.clone().map(|p| (i, p)))
        .collect();
    if !recorded.is_empty() {
        let (now_file, now_src) = config::load(&bmcs_path)?;
        let recorded = pins::remap(&file, &now_file, recorded);
        if let Some(text) = pins::write_back(&now_src.text, &now_file, &recorded) {
            fsio::write_atomic(&bmcs_path, text.as_bytes(), fsio::Mode::Public)?;
        }
    }

    if ctx.json {
        term::outln(&report::json(&report::discover::RedfishJson::new(
            &outcomes, &merge,
        )));
    } else {
        term::out(&report::discover::discovery_table(&outcomes, &merge));
    }
    // A BMC that named another origin gave a partial answer: what it pointed at was refused;
    // a system two entries reported is one record for two entries.
    Ok(
        if outcomes.iter().any(|o| {
            !o.ok
                || !o.refused.is_empty()
                || !o.kept_from_earlier.is_empty()
                || !o.seen_twice.is_empty()
        }) {
            exit::PARTIAL
        } else {
            exit::OK
        },
    )
}
