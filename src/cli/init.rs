//! `rackplan init DIR [--from nodes.yaml]`: a self-contained site to start from
//! (`crate::scaffold` decides what it holds and writes it).

use std::path::{Path, PathBuf};

use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::inventory::store;
use crate::report;
use crate::scaffold;

pub(crate) fn run(
    dir: &Path,
    from: Option<&PathBuf>,
    name: Option<&str>,
    force: bool,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let name = name.map_or_else(|| scaffold::site_name(dir), str::to_string);
    if !crate::site::types::is_dns_label(&name, 63) {
        return Err(Error::Usage(format!(
            "--name {name}: a site name is at most 63 lowercase letters, digits and `-`"
        )));
    }
    let inventory = match from {
        Some(p) => Some(store::load(p)?.0),
        None => None,
    };
    scaffold::check_target(dir)?;
    let _lock = if dir.exists() {
        Some(ctx.lock_site(dir)?)
    } else {
        None
    };
    let outcome = scaffold::init(
        dir,
        &scaffold::Request {
            name: &name,
            inventory: inventory.as_ref(),
            force,
        },
    )?;
    if ctx.json {
        term::outln(&report::json(&outcome));
    } else {
        term::out(&report::init::text(&outcome));
    }
    Ok(exit::OK)
}
