//! A discovery run as people meet it: a second run started alongside stops before asking
//! any BMC, and nodes whose BMC left bmcs.yaml are kept and named.

use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::sushy::{Sushy, mockup, write_bmcs};

fn discover(dir: &std::path::Path, json: bool) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rackplan"));
    if json {
        cmd.args(["--output", "json"]);
    }
    let out = cmd
        .args(["discover", "redfish", "--site"])
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Another writer holds the site: discovery says so and exits 2 without one request to
/// the BMC (before, it crawled every BMC and then threw the results away).
#[test]
fn a_held_site_stops_discovery_before_any_request() {
    let bmc = TcpListener::bind("127.0.0.1:0").unwrap();
    bmc.set_nonblocking(true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(
        dir.path(),
        &[format!("http://{}", bmc.local_addr().unwrap())],
    );
    let _held = rackplan::files::sitelock::SiteLock::acquire(dir.path(), Duration::ZERO).unwrap();
    let (code, _, stderr) = discover(dir.path(), false);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("lock"), "{stderr}");
    assert!(
        bmc.accept().is_err(),
        "the BMC was contacted while the site was held"
    );
}

/// A BMC taken out of bmcs.yaml: its node stays in nodes.yaml (nothing is deleted by a
/// discovery) and the run names it, in the table's summary and in JSON.
#[test]
fn nodes_whose_bmc_left_bmcs_yaml_are_kept_and_named() {
    let dell = Sushy::start(&mockup("dell-poweredge-r750-idrac9-6.00"), None);
    let lenovo = Sushy::start(&mockup("lenovo-thinksystem-sr670v2-xcc"), None);
    let dir = tempfile::tempdir().unwrap();
    let bmcs = |urls: &[String]| write_bmcs(dir.path(), urls);
    bmcs(&[dell.url(), lenovo.url()]);
    let (code, out, err) = discover(dir.path(), false);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("no longer in bmcs.yaml"), "{out}");
    bmcs(&[dell.url()]);
    let (code, out, err) = discover(dir.path(), false);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "1 node(s) kept whose BMC is no longer in bmcs.yaml: J105958B ({})",
            lenovo.url()
        )),
        "{out}"
    );
    let nodes = std::fs::read_to_string(dir.path().join("nodes.yaml")).unwrap();
    assert!(nodes.contains("J105958B"), "the node was deleted");
    let (_, out, _) = discover(dir.path(), true);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["merge"]["orphaned"],
        serde_json::json!([format!("J105958B ({})", lenovo.url())])
    );
}
