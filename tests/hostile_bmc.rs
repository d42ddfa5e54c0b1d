//! A hostile BMC tries every way to make rackplan send its credentials elsewhere: a redirect
//! to another host, an absolute `@odata.id` on another port, a session `Location` on another
//! host. A second server listens where the BMC points; it must receive no credential (and
//! here, no request at all), and the run must name the refusal and exit 3.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::redfish_mockups::run_discovery;
use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::mockup;

const PASSWORD: &str = "s3cr3t-Pa55";

fn hostile(mut spec: impl FnMut(&mut BmcSpec, &str)) -> (i32, Value, Fleet, Fleet) {
    // The server the BMC points at, on another loopback address.
    let mut sink_spec = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    sink_spec.host = std::net::IpAddr::from([127, 0, 0, 2]);
    let sink = Fleet::start(vec![sink_spec]);
    let elsewhere = sink.bmcs[0].url();
    let mut s = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    s.credentials = Some(("root".into(), PASSWORD.into()));
    spec(&mut s, &elsewhere);
    let bmc = Fleet::start(vec![s]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pw"), PASSWORD).unwrap();
    std::fs::write(
        dir.path().join("bmcs.yaml"),
        format!(
            "bmcs:\n  - address: \"{}\"\n    credentials: {{username: root, password: {{file: pw}}}}\n",
            bmc.bmcs[0].url()
        ),
    )
    .unwrap();
    let (code, v, stderr) = run_discovery(
        dir.path(),
        &[
            "--request-timeout",
            "2",
            "--bmc-timeout",
            "10",
            "--retries",
            "0",
        ],
    );
    assert!(!stderr.contains(PASSWORD), "the password is never printed");
    (code, v, bmc, sink)
}

fn assert_refused(code: i32, v: &Value, sink: &Fleet, words: &str) {
    let stats = &sink.bmcs[0].stats;
    assert_eq!(
        stats.credentials_seen.load(Ordering::SeqCst),
        0,
        "credentials reached the other server: {:?}",
        stats.log.lock().unwrap()
    );
    assert_eq!(
        stats.requests.load(Ordering::SeqCst),
        0,
        "nothing is sent to the other origin: {:?}",
        stats.log.lock().unwrap()
    );
    let refused = v["bmcs"][0]["refused"].as_array().unwrap();
    assert!(
        refused
            .iter()
            .any(|r| r.as_str().unwrap().contains("127.0.0.2")
                && r.as_str().unwrap().contains(words)),
        "{refused:?}"
    );
    assert_eq!(code, 3, "a refusal is a partial result: {v}");
}

#[test]
fn a_redirect_to_another_host_is_not_followed() {
    let (code, v, _bmc, sink) = hostile(|s, elsewhere| {
        s.redirect_to = Some(elsewhere.to_string());
        s.fault_path = Some("/Systems/".into());
    });
    assert_refused(code, &v, &sink, "redirect");
}

#[test]
fn an_absolute_odata_id_on_another_origin_is_refused_and_the_crawl_goes_on() {
    let (code, v, _bmc, sink) = hostile(|s, elsewhere| {
        s.patches.push((
            "/redfish/v1/Systems/System.Embedded.1".into(),
            "/Processors".into(),
            json!({"@odata.id": format!("{elsewhere}/redfish/v1/Systems/System.Embedded.1/Processors")}),
        ));
    });
    assert_refused(code, &v, &sink, "refused");
    // The rest of the crawl went on: the node is there, with its memory and disks.
    let node = &v["nodes"][0];
    assert!(node["memory_gib"].as_f64().unwrap() > 0.0, "{node}");
    assert!(!node["disks"].as_array().unwrap().is_empty());
}

#[test]
fn a_session_location_elsewhere_never_gets_the_logout() {
    let (code, v, bmc, sink) = hostile(|s, elsewhere| {
        s.session_location = Some(format!("{elsewhere}/redfish/v1/SessionService/Sessions/1"));
    });
    assert_refused(code, &v, &sink, "refused");
    assert_eq!(bmc.bmcs[0].stats.sessions_created.load(Ordering::SeqCst), 1);
}

/// With the default settings, a BMC that accepts connections and never answers costs one
/// request timeout (10 s): its first requests are not retried and nothing more is asked of
/// it, while a slow but live BMC (100 ms per answer) and the healthy ones finish whole.
#[test]
fn a_silent_bmc_costs_one_request_timeout_with_the_defaults() {
    let dell = mockup("dell-poweredge-r750-idrac9-6.00");
    let mut silent = BmcSpec::new(&dell);
    silent.fault = crate::support::replay::Fault::Hang;
    let mut slow = BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc"));
    slow.latency = std::time::Duration::from_millis(100);
    let mut specs = vec![silent, slow];
    for m in [
        "hpe-proliant-dl325-gen10plus-ilo5-2.46",
        "gigabyte-h262-z63-ami",
    ] {
        let mut s = BmcSpec::new(&mockup(m));
        s.latency = std::time::Duration::from_millis(20);
        specs.push(s);
    }
    let fleet = Fleet::start(specs);
    let dir = tempfile::tempdir().unwrap();
    let mut y = String::from("bmcs:\n");
    for b in &fleet.bmcs {
        y.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    std::fs::write(dir.path().join("bmcs.yaml"), y).unwrap();
    let started = std::time::Instant::now();
    let (code, v, stderr) = run_discovery(dir.path(), &[]);
    let took = started.elapsed();
    assert_eq!(code, 3, "{stderr}");
    let bmcs = v["bmcs"].as_array().unwrap();
    let err = bmcs[0]["error"].as_str().unwrap();
    assert!(err.contains("did not answer within 10 s"), "{err}");
    let others = bmcs[1..]
        .iter()
        .map(|b| b["seconds"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        bmcs[1..].iter().all(|b| b["ok"] == true),
        "the others finish: {v:#}"
    );
    assert!(
        took.as_secs_f64() < others + 15.0 && took.as_secs_f64() < 15.0,
        "the silent BMC ends the run within 15 s of the others ({others:.1} s): took {took:?}"
    );
    // Its two first requests (ServiceRoot and Systems, asked together), once each.
    assert_eq!(fleet.bmcs[0].stats.requests.load(Ordering::SeqCst), 2);
    assert_eq!(v["nodes"].as_array().unwrap().len(), 3);
}

/// A slow but live BMC is never taken for a silent one: one request at a time, 200 ms
/// per answer, its whole crawl (its 49 requests: about 10 s, as long as 90 requests at
/// 100 ms) finishes with the default timeouts.
#[test]
fn a_slow_but_live_bmc_finishes_with_the_defaults() {
    let mut slow = BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc"));
    slow.latency = std::time::Duration::from_millis(200);
    let fleet = Fleet::start(vec![slow]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bmcs.yaml"),
        format!("bmcs:\n  - address: \"{}\"\n", fleet.bmcs[0].url()),
    )
    .unwrap();
    let (code, v, stderr) = run_discovery(dir.path(), &["--per-bmc", "1"]);
    assert_eq!(code, 0, "{stderr} {v:#}");
    let b = &v["bmcs"][0];
    assert_eq!(b["ok"], true, "{b:#}");
    let requests = b["requests"].as_u64().unwrap();
    assert!(requests > 40, "{requests} requests");
    assert!(
        b["seconds"].as_f64().unwrap() > 9.0,
        "one at a time, longer than 90 requests at 100 ms: {b:#}"
    );
}
