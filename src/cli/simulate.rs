//! `rackplan simulate`: run a scenario, print the verdicts, write the SVG charts.

use std::path::{Path, PathBuf};

use super::config::simulate_site;
use super::error::{Error, exit};
use super::{Ctx, term};
use crate::files::fsio::{self, Mode};
use crate::simulate::{self, loader};
use crate::{plan, report};

/// `--rebuild-data` and `--rebuild-node`.
#[derive(Clone, Copy)]
pub struct WhatIfFlags<'a> {
    pub data: Option<&'a str>,
    pub node: Option<&'a str>,
}

/// `15TiB`, `15 TiB`, `8TB`, `500GiB`, `1.5PiB` -> TiB.
pub fn parse_size_tib(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("--rebuild-data `{s}`: expected a size like 15TiB or 8TB"))?;
    let bytes = match unit.trim() {
        "TiB" => v * 1024f64.powi(4),
        "TB" => v * 1e12,
        "GiB" => v * 1024f64.powi(3),
        "GB" => v * 1e9,
        "PiB" => v * 1024f64.powi(5),
        "PB" => v * 1e15,
        "" => {
            return Err(format!(
                "--rebuild-data `{s}`: give a unit (TiB, TB, GiB, GB, PiB or PB), e.g. 15TiB"
            ));
        }
        u => {
            return Err(format!(
                "--rebuild-data `{s}`: unknown unit `{u}`; use TiB, TB, GiB, GB, PiB or PB"
            ));
        }
    };
    if !(bytes.is_finite() && bytes > 0.0) {
        return Err(format!("--rebuild-data `{s}`: give a size above zero"));
    }
    Ok(bytes / 1024f64.powi(4))
}

pub fn run(
    file: &Path,
    site: Option<&PathBuf>,
    plot: Option<&PathBuf>,
    what_if: WhatIfFlags<'_>,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let mut loaded = loader::load(file)?;
    if let Some(d) = what_if.data {
        let tib = parse_size_tib(d).map_err(Error::Usage)?;
        loaded.scenario.rebuild = Some(crate::simulate::scenario::RebuildWhatIf {
            node: what_if.node.map(str::to_string),
            data_tib: tib,
        });
    }
    let site_dir = simulate_site(
        site.map(PathBuf::as_path),
        &loaded.dir,
        loaded.scenario.fleet.site.as_deref(),
    );
    if let Some(dir) = site_dir {
        let inputs = plan::load_inputs(&dir)?;
        simulate::site_fleet::attach(&mut loaded, &inputs)?;
    } else {
        simulate::site_fleet::require_classes(&loaded)?;
    }
    if let Err((key, msg)) = simulate::whatif::check_fleet(&loaded) {
        return Err(if key == "rebuild" && what_if.data.is_some() {
            Error::Usage(format!("--rebuild-data: {msg}"))
        } else {
            loaded.source.error_at(&crate::path![key], msg, None).into()
        });
    }
    let r = simulate::run(&loaded);
    if let Some(dir) = plot {
        for (name, body) in report::simulate::plots(&r) {
            fsio::write_atomic(&dir.join(name), body.as_bytes(), Mode::Public)?;
        }
    }
    if ctx.json {
        term::outln(&report::json(&r));
    } else {
        term::out(&report::simulate::simulate_text(&r));
        if let Some(dir) = plot {
            term::outln(&format!("plots written to {}", dir.display()));
        }
    }
    Ok(if r.verdict.passes() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}
