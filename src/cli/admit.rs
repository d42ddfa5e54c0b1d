//! `rackplan admit`: judge one cluster request against a scenario's quotas and headroom.

use std::path::{Path, PathBuf};

use super::config::AdmitConfig;
use super::ctx::Ctx;
use super::error::{Error, exit};
use super::study::open_study;
use super::term;
use crate::report;
use crate::simulate::{delivery, questions, scenario};

/// The fleet a request is judged on: the scenario's (or a site's), or a dump's.
#[derive(Clone, Copy)]
pub(crate) struct Fleet<'a> {
    pub(crate) site: Option<&'a PathBuf>,
    pub(crate) dump: Option<&'a Path>,
}

pub(crate) fn run(
    request: &Path,
    scenario: &Path,
    fleet: Fleet<'_>,
    at: Option<&str>,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let cfg = AdmitConfig::resolve(request, scenario, at, now)?;
    let mut study = open_study(
        Some(scenario),
        fleet.site.map(PathBuf::as_path),
        fleet.dump,
        None,
    )?;
    super::study::read_site_catalogue(&mut study, fleet.site.map(PathBuf::as_path), fleet.dump)?;
    let req = if request == Path::new("-") {
        let text = term::read_stdin("REQUEST")?;
        scenario::request_from_text(Path::new("<stdin>"), &text, &study.shapes)?
    } else {
        scenario::load_request(request, &study.shapes)?
    };
    let mut d = questions::decide(&study, &req, cfg.at)
        .map_err(|e| Error::Usage(format!("{}: {e}", request.display())))?;
    let progress = term::spinner("predicting the delivery");
    d.delivery = Some(delivery::request_answer(
        &study,
        &delivery::FleetNow::of(&study),
        req.shape.as_deref().unwrap_or("cluster"),
        &req.pools,
        req.count,
        None,
    ));
    drop(progress);
    if ctx.json {
        term::outln(&report::json(&d));
    } else {
        term::out(&report::admit::admit_text(&d));
    }
    Ok(if d.admitted { exit::OK } else { exit::FINDINGS })
}
