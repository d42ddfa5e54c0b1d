//! `rackplan simulate`: run a scenario, print the verdicts, write the SVG charts.

use std::path::{Path, PathBuf};

use super::config::simulate_site;
use super::error::{Error, exit};
use super::{Ctx, term};
use crate::files::fsio::{self, Mode};
use crate::simulate::{self, loader};
use crate::{plan, report};

pub fn run(
    file: &Path,
    site: Option<&PathBuf>,
    plot: Option<&PathBuf>,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let mut loaded = loader::load(file)?;
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
    Ok(if r.headroom.verdict.passes() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}
