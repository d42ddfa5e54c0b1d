//! `rackplan plan`: roles, hostnames and addresses into allocations.yaml.

use std::path::Path;

use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::{plan, report};

pub(crate) fn run(site: &Path, release: &[String], dry_run: bool, ctx: &Ctx) -> Result<u8, Error> {
    let _lock = ctx.lock_site(site)?;
    let inputs = plan::load_inputs(site)?;
    let outcome = plan::allocate::plan(&inputs, release)?;
    if !dry_run {
        outcome.lock.save(&inputs.site.file("allocations.yaml"))?;
    }
    if ctx.json {
        term::outln(&report::json(&outcome));
    } else {
        term::out(&report::plan::plan_table(&outcome));
        if dry_run {
            term::outln("dry run: allocations.yaml not written");
        }
    }
    Ok(exit::OK)
}
