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

pub fn run(
    file: &Path,
    site: Option<&PathBuf>,
    plot: Option<&PathBuf>,
    what_if: WhatIfFlags<'_>,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let mut loaded = if file == Path::new("-") {
        let text = term::read_stdin("the scenario")?;
        loader::load_text(Path::new("<stdin>"), &text, PathBuf::from("."))?
    } else {
        loader::load(file)?
    };
    if let Some(d) = what_if.data {
        let tib = parse_size_tib(d).map_err(Error::Usage)?;
        loaded.scenario.rebuild = Some(crate::simulate::scenario::RebuildWhatIf {
            node: what_if.node.map(str::to_string),
            data_tib: tib,
        });
    }
    attach_fleet(&mut loaded, site, what_if.data.is_some())?;
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
