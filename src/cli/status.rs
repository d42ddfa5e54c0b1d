//! `rackplan status`: the install state of every node, from a running `serve` (`--url`) or
//! from the state file it keeps in the site folder.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use super::ctx::Ctx;
use super::error::{Error, exit};
use super::{config, term};
use crate::bootstrap::status::{self, Status};
use crate::report;

/// Where the state is read from.
enum From {
    Server(reqwest::Client, tokio::runtime::Runtime, String),
    File {
        site: String,
        planned: Vec<(String, String)>,
    },
}

pub(crate) fn run(
    site: &Path,
    url: Option<&str>,
    watch: bool,
    interval: f64,
    count: Option<u32>,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let pause = config::seconds("--interval", interval, 0.1, 3600.0)?;
    let from = if let Some(u) = url {
        crate::redfish::tls::install_provider();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| Error::Runtime(format!("HTTP client: {e}")))?;
        From::Server(client, term::runtime()?, u.to_string())
    } else {
        let inputs = crate::plan::load_inputs(site)?;
        From::File {
            site: inputs.site.site.name.0.clone(),
            planned: status::planned(&inputs.inventory, &inputs.lock),
        }
    };
    let poll = || -> Result<Status, Error> {
        match &from {
            From::Server(client, rt, u) => rt
                .block_on(status::fetch(client, u))
                .map_err(|e| Error::Usage(e.to_string())),
            From::File {
                site: name,
                planned,
            } => Ok(status::from_site(name, site, planned)?),
        }
    };
    let redraw = std::io::stdout().is_terminal() && !ctx.json;
    let mut polls = 0u32;
    loop {
        let s = poll()?;
        polls += 1;
        if ctx.json && watch {
            // One document per poll, one per line (JSON Lines), for a consumer reading as
            // the polls come.
            term::outln(&report::json_line(&s));
        } else if ctx.json {
            term::outln(&report::json(&s));
        } else {
            if redraw && polls > 1 {
                // Home and clear: the table updates in place.
                term::out_raw("\x1b[H\x1b[2J");
            }
            term::out(&report::status::text(&s));
        }
        if !watch || s.done() || count.is_some_and(|c| polls >= c) {
            return Ok(if s.any_failed() {
                exit::FINDINGS
            } else {
                exit::OK
            });
        }
        std::thread::sleep(pause);
    }
}
