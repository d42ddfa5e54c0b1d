//! `rackplan serve`: render the site in memory and serve it for PXE installs, until SIGTERM
//! or SIGINT; then finish the requests in flight (bounded) and save the install state.

use std::sync::Arc;

use super::config::ServeConfig;
use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::cli::args::ServeArgs;
use crate::{bootstrap::serve, plan, render, report};

pub(crate) fn run(args: &ServeArgs, ctx: &Ctx) -> Result<u8, Error> {
    let mut inputs = plan::load_inputs(&args.site.site)?;
    let cfg = ServeConfig::resolve(args, &inputs.site.site)?;
    if let Some(dir) = &cfg.artifacts {
        serve::check_artifacts(dir).map_err(|e| Error::Usage(e.to_string()))?;
    }
    // Scripts, config URLs and webhooks must point at where this server really is.
    inputs
        .site
        .site
        .harvester
        .pxe_base_url
        .clone_from(&cfg.base_url);
    let files = render::build(&inputs)?;
    let webhook_keys = render::webhook_keys(&inputs)?;
    let install = serve::InstallRecord::open(&cfg.site, ctx.lock_wait)?;
    let restored = install.installed_count();
    let json = ctx.json;
    let state = Arc::new(serve::ServeState::new(
        serve::ServeInputs {
            site: inputs.site.site.name.0.clone(),
            base_url: cfg.base_url.clone(),
            files,
            macs: serve::mac_map(&inputs.inventory, &inputs.lock),
            webhook_keys,
            reinstall: cfg.reinstall.clone(),
            artifacts: cfg.artifacts.clone(),
            install,
        },
        Box::new(move |line| {
            if json {
                term::errln(&report::json_line(line));
            } else {
                term::errln(&line.text());
            }
        }),
    ));
    let rt = term::runtime()?;
    let app_state = state.clone();
    let stopped = rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(cfg.listen)
            .await
            .map_err(|source| Error::Bind {
                addr: cfg.listen.to_string(),
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Server(e.to_string()))?;
        let missing = serve::missing_artifacts(
            cfg.artifacts.as_deref(),
            &inputs.site.site.harvester.version,
        );
        let stop = term::stop_signal()?;
        term::out(&report::serve::banner(
            &inputs.site.site.name.0,
            addr,
            &cfg.base_url,
            &missing,
            app_state.install().path(),
            restored,
        ));
        Ok::<_, Error>(
            serve::listener::serve(
                listener,
                serve::router(app_state),
                serve::listener::ConnectionLimits::for_this_process(),
                stop,
            )
            .await,
        )
    })?;
    // Writes already under way finish; the last flush below saves whatever they missed.
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    state.install().flush()?;
    term::errln(&report::serve::stopped(stopped, state.install().path()));
    Ok(exit::OK)
}
