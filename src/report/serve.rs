//! `serve`: the start-up banner.

use std::net::SocketAddr;

/// What to know when `serve` starts: where it listens, the line to chain from a DHCP/iPXE
/// setup, and each boot artefact it cannot hand out.
pub fn banner(site: &str, addr: SocketAddr, base_url: &str, missing: &[String]) -> String {
    let base = base_url.trim_end_matches('/');
    let mut s = format!(
        "rackplan serve: site {site}, listening on http://{addr}; nodes reach it as {base}\n\
         chain from your iPXE/DHCP setup with:\n  chain {base}/ipxe?mac=${{net0/mac}}\n\
         status: rackplan status --url {base}   (or GET {base}/status); Ctrl-C stops\n"
    );
    for m in missing {
        s.push_str(&format!(
            "warning: {base}/{m} is not served (no --artifacts folder holding it): nodes stop there unless another server publishes it\n"
        ));
    }
    s
}
