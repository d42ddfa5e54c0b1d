//! `rackplan simulate`: run a scenario, print the verdicts, write the SVG charts.

use std::path::{Path, PathBuf};

use super::config::simulate_site;
use super::error::{Error, exit};
use super::{Ctx, term};
use crate::files::fsio::{self, Mode};
use crate::profile::ByteSize;
use crate::simulate::{self, loader};
use crate::{plan, report};

/// `--rebuild-data` and `--rebuild-node`.
#[derive(Clone, Copy)]
pub struct WhatIfFlags<'a> {
    pub data: Option<&'a str>,
    pub node: Option<&'a str>,
}

/// `15TiB`, `15 TiB`, `8TB`, `500GiB`, `1.5PiB` -> TiB. The unit is required: a bare
/// number would be bytes to the size parser and is almost surely not meant.
pub fn parse_size_tib(s: &str) -> Result<f64, String> {
    if !s.trim_end().ends_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!(
            "--rebuild-data `{s}`: give a unit (TiB, TB, GiB, GB, PiB or PB), e.g. 15TiB"
        ));
    }
    let bytes = ByteSize::parse(s)
        .map_err(|e| format!("--rebuild-data: {e}"))?
        .0;
    if bytes == 0 {
        return Err(format!("--rebuild-data `{s}`: give a size above zero"));
    }
    Ok(bytes as f64 / 1024f64.powi(4))
}

/// The fleet a scenario runs on: the site's inventory when it (or `--site`) names one,
/// else its node classes; then checked as a whole.
pub fn attach_fleet(
    loaded: &mut loader::Loaded,
    site: Option<&PathBuf>,
    rebuild_flag: bool,
) -> Result<(), Error> {
    let site_dir = simulate_site(
        site.map(PathBuf::as_path),
        &loaded.dir,
        loaded.scenario.fleet.site.as_deref(),
    );
    if let Some(dir) = site_dir {
        let inputs = plan::load_inputs(&dir)?;
        simulate::site_fleet::attach(loaded, &inputs)?;
    } else {
        simulate::site_fleet::require_classes(loaded)?;
    }
    if let Err((key, msg)) = simulate::whatif::check_fleet(loaded) {
        return Err(if key == "rebuild" && rebuild_flag {
            Error::Usage(format!("--rebuild-data: {msg}"))
        } else {
            loaded.source.error_at(&crate::path![key], msg, None).into()
        });
    }
    Ok(())
}

/// What `simulate` was asked.
pub struct Inputs<'a> {
    pub scenario: Option<&'a Path>,
    pub from_cluster: Option<&'a Path>,
    pub drain: &'a [String],
    pub report: Option<&'a Path>,
    pub site: Option<&'a PathBuf>,
    pub plot: Option<&'a PathBuf>,
    pub what_if: WhatIfFlags<'a>,
}

fn load_scenario(file: Option<&Path>) -> Result<loader::Loaded, Error> {
    Ok(match file {
        Some(f) if f == Path::new("-") => {
            let text = term::read_stdin("the scenario")?;
            loader::load_text(Path::new("<stdin>"), &text, PathBuf::from("."))?
        }
        Some(f) => loader::load(f)?,
        // A dump alone: the defaults, each named in the assumptions table.
        None => loader::load_text(
            Path::new("<no scenario>"),
            "name: the fleet as it runs\n",
            PathBuf::from("."),
        )?,
    })
}

/// The running fleet of a dump as the scenario's fleet: its settings win, its VMs replace
/// the scenario's clusters. Returns what the report says about the dump.
pub fn attach_live(
    loaded: &mut loader::Loaded,
    dump: &Path,
    scenario_given: bool,
) -> Result<
    (
        simulate::live_fleet::LiveSummary,
        Vec<simulate::live_fleet::Assumption>,
    ),
    Error,
> {
    use simulate::live_fleet;
    let progress = term::spinner(&format!("reading {}", dump.display()));
    let state = crate::live::read(dump).map_err(|e| Error::Usage(e.to_string()))?;
    drop(progress);
    let (platform, assumptions) =
        live_fleet::platform(&state, &loaded.scenario.platform, scenario_given);
    loaded.scenario.platform = platform;
    let fleet = live_fleet::adopt(&state, &loaded.scenario.platform)
        .map_err(|e| Error::Usage(format!("{}: {e}", dump.display())))?;
    let mut summary = live_fleet::summary(&state, &fleet, &dump.display().to_string());
    let s = &mut loaded.scenario;
    if !s.clusters.is_empty() {
        let n: u32 = s.clusters.iter().map(|c| c.count).sum();
        summary.scenario_overridden.push(format!(
            "clusters: the scenario's {n} running cluster(s) are not placed; the dump's VMs are what runs"
        ));
        s.clusters.clear();
    }
    if !s.fleet.classes.is_empty() || s.fleet.site.is_some() {
        summary.scenario_overridden.push(
            "fleet: the scenario's node classes and site are not used; the dump's Nodes are the fleet".into(),
        );
    }
    for a in assumptions
        .iter()
        .filter(|a| a.note.as_deref().is_some_and(|n| n.contains("dump wins")))
    {
        summary.scenario_overridden.push(format!(
            "{}: {}",
            a.input,
            a.note.clone().unwrap_or_default()
        ));
    }
    if s.name.is_empty() || !scenario_given {
        s.name = format!("the fleet in {}", dump.display());
    } else {
        s.name = format!("{} on the fleet in {}", s.name, dump.display());
    }
    loaded.live = Some(std::sync::Arc::new(fleet));
    Ok((summary, assumptions))
}

/// The review report's format, from its file name: checked before anything runs.
#[derive(Clone, Copy)]
enum ReportFormat {
    Html,
    Markdown,
}

fn report_format(path: &Path) -> Result<ReportFormat, Error> {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => Ok(ReportFormat::Html),
        "md" | "markdown" => Ok(ReportFormat::Markdown),
        _ => Err(Error::Usage(format!(
            "--report {}: give a file ending in .html or .md",
            path.display()
        ))),
    }
}

fn write_report(path: &Path, format: ReportFormat, r: &simulate::Report) -> Result<(), Error> {
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

pub fn run(i: &Inputs<'_>, ctx: &Ctx) -> Result<u8, Error> {
    if i.scenario.is_none() && i.from_cluster.is_none() {
        return Err(Error::Usage(
            "give a scenario file (simulations/reference-factory.yaml), or --from-cluster PATH for the fleet as it runs (a scenario beside it adds what-ifs)".into(),
        ));
    }
    let report_to = i
        .report
        .map(|path| report_format(path).map(|f| (path, f)))
        .transpose()?;
    let mut loaded = load_scenario(i.scenario)?;
    if let Some(d) = i.what_if.data {
        let tib = parse_size_tib(d).map_err(Error::Usage)?;
        loaded.scenario.rebuild = Some(crate::simulate::scenario::RebuildWhatIf {
            node: i.what_if.node.map(str::to_string),
            data_tib: tib,
        });
    }
    let live = if let Some(dump) = i.from_cluster {
        if i.site.is_some() {
            return Err(Error::Usage(
                "--site and --from-cluster: give one fleet; the dump's Nodes are the fleet".into(),
            ));
        }
        let got = attach_live(&mut loaded, dump, i.scenario.is_some())?;
        if let Err((key, msg)) = simulate::whatif::check_fleet(&loaded) {
            return Err(if i.scenario.is_some() && key != "fleet" {
                loaded.source.error_at(&crate::path![key], msg, None).into()
            } else {
                Error::Usage(format!("{}: {msg}", dump.display()))
            });
        }
        Some(got)
    } else {
        attach_fleet(&mut loaded, i.site, i.what_if.data.is_some())?;
        None
    };
    if !i.drain.is_empty() {
        return run_drain(&loaded, i.drain, ctx);
    }
    let progress = term::spinner("simulating failures, rebuilds and risk");
    let mut r = simulate::run(&loaded);
    drop(progress);
    if let Some((summary, assumptions)) = live {
        r.live = Some(summary);
        r.assumptions = assumptions;
    }
    if let Some(dir) = i.plot {
        for (name, body) in report::simulate::plots(&r) {
            fsio::write_atomic(&dir.join(name), body.as_bytes(), Mode::Public)?;
        }
    }
    if let Some((path, format)) = report_to {
        write_report(path, format, &r)?;
    }
    if ctx.json {
        term::outln(&report::json(&r));
    } else {
        term::out(&report::simulate::simulate_text(&r));
        if let Some(dir) = i.plot {
            term::outln(&format!("plots written to {}", dir.display()));
        }
        if let Some(path) = i.report {
            term::outln(&format!("report written to {}", path.display()));
        }
    }
    Ok(if r.verdict.passes() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}

fn run_drain(loaded: &loader::Loaded, names: &[String], ctx: &Ctx) -> Result<u8, Error> {
    let Some(live) = loaded.live.as_deref() else {
        return Err(Error::Usage("--drain needs --from-cluster".into()));
    };
    let topo = &live.placement.topo;
    let mut drained = Vec::new();
    for raw in names {
        let n = raw.trim();
        if n.is_empty() {
            continue;
        }
        let Some(h) = topo.host_index(n) else {
            let all: Vec<&str> = topo.hosts.iter().map(|h| h.name.as_str()).collect();
            let hint = all
                .iter()
                .map(|c| (strsim::jaro_winkler(n, c), *c))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .filter(|b| b.0 > 0.8)
                .map_or_else(String::new, |(_, s)| format!(" (did you mean `{s}`?)"));
            return Err(Error::Usage(format!(
                "--drain: no node `{n}` in the dump{hint}; nodes that can host VMs: {}",
                all.join(", ")
            )));
        };
        if !drained.contains(&h) {
            drained.push(h);
        }
    }
    if drained.is_empty() {
        return Err(Error::Usage("--drain: name at least one node".into()));
    }
    if drained.len() >= topo.hosts.len() {
        return Err(Error::Usage(
            "--drain: that is every node that can host VMs; nothing would be left to migrate to"
                .into(),
        ));
    }
    let r = simulate::drain::drain(loaded, live, &drained, &live.node_drain_policy);
    if ctx.json {
        term::outln(&report::json(&r));
    } else {
        term::out(&report::simulate::drain_text(&r));
    }
    Ok(if r.survives_next_failure {
        exit::OK
    } else {
        exit::FINDINGS
    })
}
