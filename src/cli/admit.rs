//! `rackplan admit`: judge one cluster request against a scenario's quotas and headroom.

use std::path::{Path, PathBuf};

use super::error::{Error, exit};
use super::simulate::{attach_fleet, attach_live};
use super::{Ctx, term};
use crate::report;
use crate::simulate::{admit, loader};

/// The fleet a request is judged on: the scenario's (or a site's), or a dump's.
#[derive(Clone, Copy)]
pub struct Fleet<'a> {
    pub site: Option<&'a PathBuf>,
    pub dump: Option<&'a Path>,
}

pub fn run(
    request: &Path,
    scenario: &Path,
    fleet: Fleet<'_>,
    at: Option<&str>,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let at = match at {
        Some(s) => admit::parse_at(s).map_err(|e| Error::Usage(format!("--at {e}")))?,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
    };
    if request == Path::new("-") && scenario == Path::new("-") {
        return Err(Error::Usage(
            "only one of REQUEST and SCENARIO can be `-` (standard input)".into(),
        ));
    }
    let mut loaded = if scenario == Path::new("-") {
        let text = term::read_stdin("SCENARIO")?;
        loader::load_text(Path::new("<stdin>"), &text, PathBuf::from("."))?
    } else {
        loader::load(scenario)?
    };
    match fleet.dump {
        Some(dump) => {
            attach_live(&mut loaded, dump, true)?;
        }
        None => attach_fleet(&mut loaded, fleet.site, false)?,
    }
    let req = if request == Path::new("-") {
        let text = term::read_stdin("REQUEST")?;
        admit::request_from_text(Path::new("<stdin>"), &text, &loaded)?
    } else {
        admit::load_request(request, &loaded)?
    };
    let d = admit::decide(&loaded, &req, at)
        .map_err(|e| Error::Usage(format!("{}: {e}", request.display())))?;
    if ctx.json {
        term::outln(&report::json(&d));
    } else {
        term::out(&report::admit::admit_text(&d));
    }
    Ok(if d.admitted { exit::OK } else { exit::FINDINGS })
}
