//! `rackplan simulate`: open the study, answer the review (or the drain, or the rolling
//! upgrade), hand it to `report/`, write the charts and the review report.

use std::path::Path;

use super::config::{ReportFormat, SimulateConfig, SimulateFlags};
use super::ctx::Ctx;
use super::error::{Error, exit};
use super::study::open_study;
use super::term;
use crate::files::fsio::{self, Mode};
use crate::report;
use crate::simulate::report::Provenance;
use crate::simulate::scenario::RebuildWhatIf;
use crate::simulate::{Study, questions};

fn write_report(
    path: &Path,
    format: ReportFormat,
    r: &crate::simulate::Report,
) -> Result<(), Error> {
    match format {
        ReportFormat::Html => {
            fsio::write_atomic(path, report::review::html(r).as_bytes(), Mode::Public)?;
        }
        ReportFormat::Markdown => {
            let dir = path.parent().unwrap_or(Path::new("."));
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("review");
            let (text, charts) = report::review::markdown(r, stem);
            for (name, body) in charts {
                fsio::write_atomic(&dir.join(name), body.as_bytes(), Mode::Public)?;
            }
            fsio::write_atomic(path, text.as_bytes(), Mode::Public)?;
        }
    }
    Ok(())
}

pub(crate) fn run(flags: &SimulateFlags<'_>, ctx: &Ctx) -> Result<u8, Error> {
    let started = std::time::Instant::now();
    let cfg = SimulateConfig::resolve(flags)?;
    let budget = flags
        .budget
        .map(|b| super::config::seconds("--budget", b, 0.0, 604_800.0))
        .transpose()?;
    let what_if = cfg
        .rebuild
        .clone()
        .map(|(data_tib, node)| RebuildWhatIf { node, data_tib });
    let mut study = open_study(
        cfg.scenario.as_deref(),
        cfg.site.as_deref(),
        cfg.dump.as_deref(),
        what_if,
    )?;
    super::study::read_site_catalogue(&mut study, cfg.site.as_deref(), cfg.dump.as_deref())?;
    if !cfg.drain.is_empty() {
        let r = questions::drain_named(&study, &cfg.drain)?;
        if ctx.json {
            term::outln(&report::json(&r));
        } else {
            term::out(&report::simulate::drain_text(&r));
        }
        return Ok(if r.survives_next_failure {
            exit::OK
        } else {
            exit::FINDINGS
        });
    }
    if let Some(order) = &cfg.upgrade {
        return upgrade(&cfg, &study, order, ctx);
    }
    let steps = term::Steps::new("simulating failures, rebuilds and risk");
    let note = |what: &str| steps.note(what);
    let mut r = questions::review_with(
        &study,
        &questions::Watch {
            note: &note,
            deadline: budget.map(|b| started + b),
            interrupted: Some(term::interrupts()),
        },
    );
    drop(steps);
    stamp(&cfg, &mut r);
    if let Some(dir) = &cfg.plot {
        for (name, body) in report::charts::plots(&r) {
            fsio::write_atomic(&dir.join(name), body.as_bytes(), Mode::Public)?;
        }
    }
    if let Some((path, format)) = &cfg.report {
        write_report(path, *format, &r)?;
    }
    if ctx.json {
        term::outln(&report::json(&r));
    } else {
        term::out(&report::simulate::simulate_text(&r));
        if let Some(dir) = &cfg.plot {
            term::outln(&format!("plots written to {}", dir.display()));
        }
        if let Some((path, _)) = &cfg.report {
            term::outln(&format!("report written to {}", path.display()));
        }
    }
    Ok(if r.verdict.passes() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}

/// `--upgrade`: the rolling upgrade's answer; with `--report`, the review report with
/// the upgrade's section and timeline chart (the review is what a report is, and the
/// upgrade is one more question it answers). Exit 0 when the upgrade completes cleanly.
/// The review's provenance: its inputs, and a dump's newest object.
fn stamp(cfg: &SimulateConfig, r: &mut crate::simulate::Report) {
    let newest = r.live.as_ref().and_then(|l| l.newest_object.clone());
    r.provenance = Some(Provenance::of_run(
        cfg.scenario.as_deref(),
        cfg.dump.as_deref(),
        cfg.site.as_deref(),
        newest,
    ));
}

fn upgrade(cfg: &SimulateConfig, study: &Study, order: &[String], ctx: &Ctx) -> Result<u8, Error> {
    let progress = term::spinner("taking the fleet through the rolling upgrade");
    let u = questions::upgrade(study, order)?;
    drop(progress);
    if let Some((path, format)) = &cfg.report {
        let progress = term::spinner("simulating failures, rebuilds and risk");
        let mut r = questions::review(study);
        drop(progress);
        stamp(cfg, &mut r);
        r.upgrade = Some(u.clone());
        write_report(path, *format, &r)?;
    }
    if ctx.json {
        term::outln(&report::json(&u));
    } else {
        term::out(&report::upgrade::text(&u));
        if let Some((path, _)) = &cfg.report {
            term::outln(&format!("report written to {}", path.display()));
        }
    }
    Ok(if u.clean { exit::OK } else { exit::FINDINGS })
}
