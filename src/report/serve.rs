//! `serve`: the start-up banner.

use std::net::SocketAddr;

pub fn banner(site: &str, addr: SocketAddr, base_url: &str) -> String {
    format!(
        "rackplan serve: site {site} on http://{addr} (nodes reach it as {base_url}); Ctrl-C stops\n"
    )
}
