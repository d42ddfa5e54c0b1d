//! `rackplan boot`: plan (and with --yes, run) the virtual-media boot of nodes.

use super::config::BootConfig;
use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::bootstrap::boot::run::{RunOptions, run as boot_all};
use crate::bootstrap::boot::{Action, gate, targets};
use crate::cli::args::BootArgs;
use crate::redfish::config::BmcsFile;
use crate::{plan, render, report};

pub(crate) fn run(args: &BootArgs, ctx: &Ctx) -> Result<u8, Error> {
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
    // --bios: what each node's profile asks of its BIOS, from the discovered settings.
    let mut bios = std::collections::BTreeMap::new();
    if cfg.action == Action::Bios {
        let roles = plan::roles::assign(&inputs.inventory, &inputs.profiles, &inputs.lock);
        for t in &targets {
            let Some(node) = inputs.inventory.nodes.iter().find(|n| n.id == t.node) else {
                continue;
            };
            let wanted = match roles
                .get(&node.id)
                .and_then(|r| inputs.profiles.get(r.role))
            {
                Some(p) => plan::bios::bios_changes(node, p),
                None => (
                    Vec::new(),
                    vec!["no profile for the node's role".to_string()],
                ),
            };
            bios.insert(t.node.clone(), wanted);
        }
    }
    let opts = RunOptions {
        iso: cfg.iso.clone(),
        action: cfg.action,
        execute: cfg.execute,
        wait: cfg.wait,
        restart_running: cfg.restart_running,
        bios,
    };
    // The gate: only planned, rendered nodes without error findings are booted for real;
    // a dry run says which `--yes` will refuse.
    let out_dir = render::default_out_dir(&cfg.site, &inputs.site.site.name.0);
    let install = cfg.action == Action::Boot;
    let judged = gate::judge(&inputs, &out_dir, targets, install, cfg.force);
    let results = term::runtime()?.block_on(boot_all(&judged, &cfg.site, &opts));
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
