//! `rackplan boot`: plan (and with --yes, run) the virtual-media boot of nodes.

use super::config::BootConfig;
use super::error::{Error, exit};
use super::{Ctx, term};
use crate::bootstrap::boot::{run::RunOptions, run::run as boot_all, targets};
use crate::cli::args::BootArgs;
use crate::redfish::config::BmcsFile;
use crate::{plan, report};

pub fn run(args: &BootArgs, ctx: &Ctx) -> Result<u8, Error> {
    let inputs = plan::load_inputs(&args.site.site)?;
    let cfg = BootConfig::resolve(args, &inputs.site.site)?;
    let bmcs_path = cfg.site.join("bmcs.yaml");
    let bmcs = if bmcs_path.exists() {
        crate::files::yaml::load::<BmcsFile>(&bmcs_path)?.0
    } else {
        BmcsFile::default()
    };
    let targets = targets::select(&inputs.inventory, &inputs.lock, &bmcs, &cfg.nodes, cfg.all)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let opts = RunOptions {
        iso: cfg.iso.clone(),
        action: cfg.action,
        execute: cfg.execute,
        wait: cfg.wait,
    };
    let results = term::runtime()?.block_on(boot_all(&targets, &cfg.site, &opts));
    if ctx.json {
        term::outln(&report::json(&report::boot::BootJson {
            dry_run: !cfg.execute,
            nodes: &results,
        }));
    } else {
        term::out(&report::boot::boot_text(&results, !cfg.execute));
    }
    Ok(if results.iter().all(|r| r.ok) {
        exit::OK
    } else {
        exit::PARTIAL
    })
}
