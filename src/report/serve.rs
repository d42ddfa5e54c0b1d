//! `serve`: the start-up banner and the closing line.

use std::net::SocketAddr;
use std::path::Path;

use crate::bootstrap::serve::listener::Stopped;

/// What to know when `serve` starts: where it listens, the line to chain from a DHCP/iPXE
/// setup, where the install state is kept (and how many installed nodes it restored), and
/// each boot artefact it cannot hand out.
pub(crate) fn banner(
    site: &str,
    addr: SocketAddr,
    base_url: &str,
    missing: &[String],
    state_file: &Path,
    installed: usize,
) -> String {
    let base = base_url.trim_end_matches('/');
    let mut s = format!(
        "rackplan serve: site {site}, listening on http://{addr}; nodes reach it as {base}\n\
         chain from your iPXE/DHCP setup with:\n  chain {base}/ipxe?mac=${{net0/mac}}\n\
         status: rackplan status --url {base}   (or GET {base}/status); Ctrl-C or SIGTERM stops\n\
         install state: {} ({installed} installed nodes restored; they boot their disk)\n",
        state_file.display()
    );
    for m in missing {
        s.push_str(&format!(
            "warning: {base}/{m} is not served (no --artifacts folder holding it): nodes stop there unless another server publishes it\n"
        ));
    }
    s
}

/// The last line: how the server stopped and where the install state was saved.
pub(crate) fn stopped(how: Stopped, state_file: &Path) -> String {
    let cut = if how.cut == 0 {
        String::new()
    } else {
        format!(
            "; {} connections were still busy after the drain time and were closed",
            how.cut
        )
    };
    format!(
        "rackplan serve: stopped{cut}; install state saved in {}",
        state_file.display()
    )
}
