//! `rackplan serve`: render the site in memory and serve it for PXE installs.

use std::sync::Arc;

use super::config::ServeConfig;
use super::error::{Error, exit};
use super::{Ctx, term};
use crate::cli::args::ServeArgs;
use crate::{bootstrap::serve, plan, render, report};

pub fn run(args: &ServeArgs, _ctx: &Ctx) -> Result<u8, Error> {
    let mut inputs = plan::load_inputs(&args.site.site)?;
    let cfg = ServeConfig::resolve(args, &inputs.site.site)?;
    if let Some(dir) = &cfg.artifacts
        && !dir.is_dir()
    {
        return Err(Error::Usage(format!(
            "--artifacts {}: not a folder",
            dir.display()
        )));
    }
    // Scripts, config URLs and webhooks must point at where this server really is.
    inputs
        .site
        .site
        .harvester
        .pxe_base_url
        .clone_from(&cfg.base_url);
    let files = render::build(&inputs)?;
    let state = Arc::new(serve::ServeState::new(
        &inputs.site.site.name.0,
        &cfg.base_url,
        files,
        serve::mac_map(&inputs.inventory, &inputs.lock),
        cfg.artifacts.clone(),
        Box::new(|line| term::errln(&line)),
    ));
    let rt = term::runtime()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(cfg.listen)
            .await
            .map_err(|source| Error::Bind {
                addr: cfg.listen.to_string(),
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Server(e.to_string()))?;
        term::out(&report::serve::banner(
            &inputs.site.site.name.0,
            addr,
            &cfg.base_url,
        ));
        axum::serve(listener, serve::router(state))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| Error::Server(e.to_string()))
    })?;
    Ok(exit::OK)
}
