//! `rackplan status`: the install state of every node, read from a running `serve`.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::error::{Error, exit};
use super::{Ctx, config, term};
use crate::report;

#[derive(Debug, Clone, Serialize)]
pub struct NodeState {
    pub hostname: String,
    pub node: String,
    pub state: String,
    pub last_event: Option<String>,
    pub at: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub url: String,
    pub site: String,
    pub nodes: Vec<NodeState>,
}

impl Status {
    fn done(&self) -> bool {
        self.nodes
            .iter()
            .all(|n| n.state == "installed" || n.state == "failed")
    }
}

/// The server's answer, read as untrusted text: only the fields used, each checked.
fn parse(url: &str, body: &str) -> Result<Status, String> {
    let v: Value = serde_json::from_str(body)
        .map_err(|e| format!("{url} did not answer with rackplan's status JSON: {e}"))?;
    let nodes = v["nodes"]
        .as_object()
        .ok_or_else(|| format!("{url}: the answer has no `nodes`"))?;
    let clean = |s: &str| -> String { s.chars().filter(|c| !c.is_control()).take(128).collect() };
    let mut out = Vec::new();
    for (host, n) in nodes.iter().take(100_000) {
        let last = n["events"].as_array().and_then(|e| e.last());
        out.push(NodeState {
            hostname: clean(host),
            node: clean(n["node"].as_str().unwrap_or("-")),
            state: clean(n["state"].as_str().unwrap_or("?")),
            last_event: last.and_then(|e| e["event"].as_str()).map(clean),
            at: last.and_then(|e| e["at"].as_str()).map(clean),
        });
    }
    Ok(Status {
        url: url.to_string(),
        site: clean(v["site"].as_str().unwrap_or("?")),
        nodes: out,
    })
}

fn text(s: &Status) -> String {
    let mut t = report::table(&["hostname", "node", "state", "last event", "at"]);
    for n in &s.nodes {
        t.add_row(vec![
            n.hostname.clone(),
            n.node.clone(),
            n.state.clone(),
            n.last_event.clone().unwrap_or_else(|| "-".into()),
            n.at.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    let count = |st: &str| s.nodes.iter().filter(|n| n.state == st).count();
    format!(
        "site {} at {}\n{t}\n{} installed, {} installing, {} waiting, {} failed\n",
        s.site,
        s.url,
        count("installed"),
        count("installing"),
        count("waiting"),
        count("failed")
    )
}

async fn fetch(client: &reqwest::Client, url: &str) -> Result<Status, Error> {
    let status_url = format!("{}/status", url.trim_end_matches('/'));
    let resp = client.get(&status_url).send().await.map_err(|e| {
        Error::Usage(format!(
            "cannot reach {status_url}: {}; is `rackplan serve` running there? (give its address with --url)",
            crate::redfish::tls::describe(&e)
        ))
    })?;
    if !resp.status().is_success() {
        return Err(Error::Usage(format!(
            "{status_url} answered {}; is this a rackplan serve base URL?",
            resp.status()
        )));
    }
    let body = resp
        .text()
        .await
        .map_err(|e| Error::Usage(format!("{status_url}: {e}")))?;
    if body.len() > 16 * 1024 * 1024 {
        return Err(Error::Usage(format!(
            "{status_url}: the answer is too large"
        )));
    }
    parse(url, &body).map_err(Error::Usage)
}

pub fn run(
    site: &Path,
    url: Option<&str>,
    watch: bool,
    interval: f64,
    count: Option<u32>,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let url = match url {
        Some(u) => u.to_string(),
        None => crate::site::load(site)?.site.harvester.pxe_base_url,
    };
    let pause = config::seconds("--interval", interval, 0.1, 3600.0)?;
    crate::redfish::tls::install_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| Error::Runtime(format!("HTTP client: {e}")))?;
    let rt = term::runtime()?;
    let redraw = std::io::stdout().is_terminal() && !ctx.json;
    let mut polls = 0u32;
    loop {
        let s = rt.block_on(fetch(&client, &url))?;
        polls += 1;
        if ctx.json {
            term::outln(&report::json_line(&s));
        } else {
            if redraw && polls > 1 {
                // Home and clear: the table updates in place.
                term::out("\x1b[H\x1b[2J");
            }
            term::out(&text(&s));
        }
        let last = !watch || s.done() || count.is_some_and(|c| polls >= c);
        if last {
            return Ok(if s.nodes.iter().any(|n| n.state == "failed") {
                exit::FINDINGS
            } else {
                exit::OK
            });
        }
        std::thread::sleep(pause);
    }
}
