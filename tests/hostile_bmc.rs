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
