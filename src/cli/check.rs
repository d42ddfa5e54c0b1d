//! `rackplan check`: every node against its profile and the site.

use super::error::{Error, exit};
use super::{Ctx, term};
use crate::cli::args::SiteArg;
use crate::{plan, report};

pub fn run(args: &SiteArg, ctx: &Ctx) -> Result<u8, Error> {
    let inputs = plan::load_inputs(&args.site)?;
    let r = plan::check::check(&inputs);
    if ctx.json {
        term::outln(&report::json(&report::check::CheckJson::new(&r)));
    } else {
        term::out(&report::check::findings_table(&r.findings));
    }
    Ok(if plan::findings::has_errors(&r.findings) {
        exit::FINDINGS
    } else {
        exit::OK
    })
}
