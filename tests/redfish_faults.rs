//! Faults through our replay BMC server: each fault costs only its BMC, the run ends within
//! its bounded time, and the other BMCs' data is complete. Also sessions, `$expand`,
//! retries and connection limits.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::redfish_mockups::run_discovery;
use crate::support::replay::{BmcSpec, Fault, Fleet};
use crate::support::sushy::mockup;

fn write_bmcs(dir: &std::path::Path, fleet: &Fleet) {
    let mut y = String::from("bmcs:\n");
    for b in &fleet.bmcs {
        y.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    std::fs::write(dir.join("bmcs.yaml"), y).unwrap();
}

const FAST: &[&str] = &[
    "--request-timeout",
    "1",
    "--bmc-timeout",
    "6",
    "--retries",
    "1",
];

#[test]
fn each_fault_costs_only_its_bmc() {
    let dell = mockup("dell-poweredge-r750-idrac9-6.00");
    let faults = [
        (Fault::Status(500), "HTTP 500"),
        (Fault::Status(401), "authentication failed"),
        (Fault::TooMany, "HTTP 429"),
        (Fault::Reset, "connection"),
        (Fault::Hang, "did not answer within"),
        (Fault::Malformed, "malformed JSON"),
        (Fault::Oversized, "response larger than"),
        (Fault::RedirectLoop, "redirect"),
    ];
    let mut specs: Vec<BmcSpec> = faults
        .iter()
        .map(|(f, _)| {
            let mut s = BmcSpec::new(&dell);
            s.fault = *f;
            s
        })
        .collect();
    // Three healthy BMCs of different vendors, slowed down a little.
    for m in [
        "lenovo-thinksystem-sr670v2-xcc",
        "hpe-proliant-dl325-gen10plus-ilo5-2.46",
        "gigabyte-h262-z63-ami",
    ] {
        let mut s = BmcSpec::new(&mockup(m));
        s.latency = Duration::from_millis(20);
        specs.push(s);
    }
    let fleet = Fleet::start(specs);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &fleet);
    let started = Instant::now();
    let (code, v, stderr) = run_discovery(dir.path(), FAST);
    let took = started.elapsed();
    assert_eq!(code, 3, "{stderr}");
    assert!(took < Duration::from_secs(15), "bounded: took {took:?}");
    let bmcs = v["bmcs"].as_array().unwrap();
    for (i, (fault, words)) in faults.iter().enumerate() {
        let b = &bmcs[i];
        assert_eq!(b["ok"], false, "{fault:?}: {b:#}");
        let err = b["error"].as_str().unwrap();
        assert!(
            err.contains(words),
            "{fault:?}: `{err}` should say `{words}`"
        );
    }
    let ok: Vec<_> = bmcs.iter().filter(|b| b["ok"] == true).collect();
    assert_eq!(ok.len(), 3);
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    let lenovo = nodes.iter().find(|n| n["id"] == "J105958B").unwrap();
    assert_eq!(lenovo["cpu"]["cores"], 64);
    assert_eq!(lenovo["disks"].as_array().unwrap().len(), 4);
    assert_eq!(lenovo["nics"].as_array().unwrap().len(), 4);
    let hpe = nodes.iter().find(|n| n["id"] == "MXQ019020B").unwrap();
    assert_eq!(hpe["nics"].as_array().unwrap().len(), 4);
    // Retries are bounded: the 500 BMC saw 2 attempts at each of its two first requests
    // (ServiceRoot and Systems, asked together).
    assert_eq!(fleet.bmcs[0].stats.requests.load(Ordering::SeqCst), 4);
}

#[test]
fn transient_errors_are_retried() {
    let mut s = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    s.fault = Fault::Status(503);
    s.fault_times = Some(2);
    let mut r = BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc"));
    r.fault = Fault::Reset;
    r.fault_times = Some(1);
    let fleet = Fleet::start(vec![s, r]);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &fleet);
    let (code, v, stderr) = run_discovery(dir.path(), &["--retries", "2"]);
    assert_eq!(code, 0, "{stderr} {v:#}");
    assert_eq!(v["nodes"].as_array().unwrap().len(), 2);
}

#[test]
fn a_dangling_subresource_costs_only_that_resource() {
    let mut s = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    s.fault = Fault::Status(500);
    s.fault_path = Some("/Systems/System.Embedded.1/Storage".into());
    let fleet = Fleet::start(vec![s]);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &fleet);
    let (code, v, _) = run_discovery(dir.path(), &["--retries", "0"]);
    // Partial: the storage section of this system could not be read (issue: a failed
    // Storage used to pass as exit 0 with ok: true).
    assert_eq!(code, 3);
    let n = &v["nodes"][0];
    assert_eq!(n["cpu"]["cores"], 36, "the rest is complete");
    assert_eq!(n["nics"].as_array().unwrap().len(), 5);
    let notes = v["bmcs"][0]["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|x| x.as_str().unwrap().contains("Storage: HTTP 500")),
        "{notes:?}"
    );
}

#[test]
fn sessions_are_used_and_always_deleted_and_secrets_stay_out_of_output() {
    let mut s = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    s.credentials = Some(("root".into(), "s3cr3t-Pa55".into()));
    let mut bad = BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc"));
    bad.credentials = Some(("root".into(), "another-password".into()));
    let fleet = Fleet::start(vec![s, bad]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pw"), "s3cr3t-Pa55\n").unwrap();
    std::fs::write(
        dir.path().join("bmcs.yaml"),
        format!(
            "bmcs:\n  - address: \"{}\"\n    credentials: {{username: root, password: {{file: pw}}}}\n  - address: \"{}\"\n    credentials: {{username: root, password: {{file: pw}}}}\n    auth: basic\n",
            fleet.bmcs[0].url(),
            fleet.bmcs[1].url()
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["--output", "json", "discover", "redfish", "--site"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        !stdout.contains("s3cr3t") && !stderr.contains("s3cr3t"),
        "password leaked"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["bmcs"][0]["auth"], "session");
    assert_eq!(v["bmcs"][0]["session_deleted"], true);
    let st = &fleet.bmcs[0].stats;
    assert_eq!(st.sessions_created.load(Ordering::SeqCst), 1);
    assert_eq!(st.sessions_deleted.load(Ordering::SeqCst), 1);
    assert_eq!(
        st.basic_auth_seen.load(Ordering::SeqCst),
        0,
        "the token is used, not Basic"
    );
    // Wrong password with Basic: 401, named as an authentication failure.
    assert!(
        v["bmcs"][1]["error"]
            .as_str()
            .unwrap()
            .contains("authentication failed")
    );
    assert_eq!(
        fleet.bmcs[1].stats.sessions_created.load(Ordering::SeqCst),
        0
    );
}

#[test]
fn expand_saves_requests_and_memory_is_cross_checked_with_dimms() {
    let dell = mockup("dell-poweredge-r750-idrac9-6.00");
    let mut with = BmcSpec::new(&dell);
    with.expand = true;
    // The summary disagrees with the 16 x 32 GiB DIMMs.
    with.patches.push((
        "/redfish/v1/Systems/System.Embedded.1".into(),
        "/MemorySummary/TotalSystemMemoryGiB".into(),
        serde_json::json!(500),
    ));
    let without = BmcSpec::new(&dell);
    let fleet = Fleet::start(vec![with, without]);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &fleet);
    let (code, v, _) = run_discovery(dir.path(), &[]);
    // Two copies of one capture are one machine seen twice: one record and a warning.
    assert_eq!(code, 3);
    assert_eq!(v["bmcs"][1]["seen_twice"].as_array().map(Vec::len), Some(1));
    let (a, b) = (
        v["bmcs"][0]["requests"].as_u64().unwrap(),
        v["bmcs"][1]["requests"].as_u64().unwrap(),
    );
    assert!(a < b, "expand {a} requests, no expand {b}");
    let notes = v["bmcs"][0]["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("MemorySummary says 500 GiB but the DIMMs add up to 512.0 GiB")),
        "{notes:?}"
    );
    // The service refused $expand once (400 here): it is not asked again.
    let log = fleet.bmcs[1].stats.log.lock().unwrap().clone();
    assert_eq!(
        log.iter().filter(|l| l.contains("expand")).count(),
        1,
        "{log:#?}"
    );
}

#[test]
fn a_connection_limit_is_survived_with_retries() {
    let mut s = BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc"));
    s.max_connections = 2;
    s.latency = Duration::from_millis(30);
    let fleet = Fleet::start(vec![s]);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &fleet);
    let (code, v, _) = run_discovery(dir.path(), &["--per-bmc", "4", "--retries", "4"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(
        fleet.bmcs[0].stats.refused.load(Ordering::SeqCst) > 0,
        "the limit was hit"
    );
    assert_eq!(v["nodes"][0]["disks"].as_array().unwrap().len(), 4);
}

#[test]
fn a_failing_storage_section_keeps_the_known_disks_and_exits_3() {
    let dell = mockup("dell-poweredge-r750-idrac9-6.00");
    let dir = tempfile::tempdir().unwrap();
    let good = Fleet::start(vec![BmcSpec::new(&dell)]);
    write_bmcs(dir.path(), &good);
    let (code, v, _) = run_discovery(dir.path(), FAST);
    assert_eq!(code, 0);
    let disks_before = v["nodes"][0]["disks"].clone();
    assert!(!disks_before.as_array().unwrap().is_empty());
    drop(good);
    let mut spec = BmcSpec::new(&dell);
    spec.fault = Fault::Status(500);
    spec.fault_path = Some("/Systems/System.Embedded.1/Storage".into());
    let bad = Fleet::start(vec![spec]);
    write_bmcs(dir.path(), &bad);
    let (code, v, stderr) = run_discovery(dir.path(), FAST);
    assert_eq!(code, 3, "{stderr} {:#}", v["bmcs"]);
    let kept = v["bmcs"][0]["kept_from_earlier"][0].as_str().unwrap();
    assert!(
        kept.contains("storage kept from the last good run") && kept.contains("500"),
        "{kept}"
    );
    let (inv, _) = rackplan::inventory::store::load(&dir.path().join("nodes.yaml")).unwrap();
    let disks_now = serde_json::to_value(&inv.nodes[0].disks).unwrap();
    assert_eq!(
        disks_now, disks_before,
        "the degraded answer did not replace the good one"
    );
    assert!(inv.nodes[0].stale.is_some(), "marked stale with the error");
}

/// One BMC listed twice (two addresses answering with the same serial and UUID, as a
/// copied capture does) is one record, with a warning naming both addresses, and exit 3.
#[test]
fn one_bmc_listed_twice_is_one_record_and_a_warning() {
    let dell = mockup("dell-poweredge-r750-idrac9-6.00");
    let fleet = Fleet::start(vec![BmcSpec::new(&dell), BmcSpec::new(&dell)]);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &fleet);
    let (code, v, stderr) = run_discovery(dir.path(), FAST);
    assert_eq!(code, 3, "{stderr}\n{v:#}");
    let (first, second) = (fleet.bmcs[0].url(), fleet.bmcs[1].url());
    let warnings: Vec<&str> = v["bmcs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["seen_twice"].as_array().into_iter().flatten())
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(warnings.len(), 1, "{v:#}");
    assert!(
        warnings[0].starts_with(&format!("{second} answers with the same serial"))
            && warnings[0].contains(&format!("as {first}:")),
        "{}",
        warnings[0]
    );
    let inv = std::fs::read_to_string(dir.path().join("nodes.yaml")).unwrap();
    assert_eq!(
        inv.lines().filter(|l| l.starts_with("- id: ")).count(),
        1,
        "{inv}"
    );
    // The table says it too.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .env("NO_COLOR", "1")
        .args(["discover", "redfish", "--site"])
        .arg(dir.path())
        .args(FAST)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = crate::support::flat(&String::from_utf8_lossy(&out.stdout));
    assert!(
        text.contains("warning:") && text.contains("listed twice"),
        "{text}"
    );
}
