//! `rackplan serve`: render the site in memory and serve it for PXE installs.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use crate::cli::args::ServeArgs;
use crate::cli::error::{Error, exit};
use crate::{bootstrap::serve, render};

pub fn run(args: &ServeArgs) -> Result<u8, Error> {
    let mut inputs = crate::cli::load_inputs(&args.site.site)?;
    if let Some(base) = &args.base_url {
        // Scripts, config URLs and webhooks must point at where this server really is.
        inputs.site.site.harvester.pxe_base_url = base.trim_end_matches('/').to_string();
    }
    let files = render::build(&inputs)?;
    let mut macs = HashMap::new();
    for n in &inputs.inventory.nodes {
        if let Some(a) = inputs.lock.get(&n.id) {
            for nic in &n.nics {
                macs.insert(nic.mac.clone(), (a.hostname.clone(), n.id.clone()));
            }
        }
    }
    let base = inputs.site.site.harvester.pxe_base_url.clone();
    let listen = args
        .listen
        .clone()
        .or_else(|| {
            inputs
                .site
                .site
                .serve
                .as_ref()
                .map(|s| s.listen.to_string())
        })
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    if let Some(dir) = &args.artifacts
        && !dir.is_dir()
    {
        return Err(Error::Usage(format!(
            "--artifacts {}: not a folder",
            dir.display()
        )));
    }
    let state = Arc::new(serve::ServeState::new(
        &inputs.site.site.name.0,
        &base,
        files,
        macs,
        args.artifacts.clone(),
        Box::new(|line| eprintln!("{line}")),
    ));
    let rt = crate::cli::runtime()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&listen)
            .await
            .map_err(|e| Error::Usage(format!("cannot listen on {listen}: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Usage(e.to_string()))?;
        println!(
            "rackplan serve: site {} on http://{addr} (nodes reach it as {base}); Ctrl-C stops",
            inputs.site.site.name
        );
        let _ = std::io::stdout().flush();
        axum::serve(listener, serve::router(state))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| Error::Usage(format!("server error: {e}")))
    })?;
    Ok(exit::OK)
}
