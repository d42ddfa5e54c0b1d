//! `rackplan render`: install configs, iPXE scripts and manifests into the output folder.

use std::path::{Path, PathBuf};

use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::{plan, render, report};

pub(crate) fn run(site: &Path, out: Option<&PathBuf>, ctx: &Ctx) -> Result<u8, Error> {
    let _lock = ctx.lock_site(site)?;
    let inputs = plan::load_inputs(site)?;
    let (files, acknowledged) = render::build_all(&inputs)?;
    let out_dir = out
        .cloned()
        .unwrap_or_else(|| render::default_out_dir(site, &inputs.site.site.name.0));
    let mut outcome = render::write(&out_dir, files)?;
    outcome.acknowledged = acknowledged;
    if ctx.json {
        term::outln(&report::json(&outcome));
    } else {
        term::out(&report::render::render_table(&outcome));
    }
    Ok(exit::OK)
}
