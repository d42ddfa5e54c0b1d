//! TLS against a real self-signed loopback server (sushy-static with a generated
//! certificate): verified by default, pinned certificate accepted, wrong pin refused, CA
//! bundle trusted, trust on first use records the pin.

use std::path::Path;

use rackplan::redfish::tls::fingerprint;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use crate::redfish_mockups::run_discovery;
use crate::support::sushy::{Sushy, mockup};

struct Pki {
    dir: tempfile::TempDir,
    pin: String,
}

fn pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "rackplan test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "bmc.test");
    let leaf = params.signed_by(&key, &ca).unwrap();
    std::fs::write(dir.path().join("cert.pem"), leaf.pem()).unwrap();
    std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).unwrap();
    std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
    let pin = fingerprint(leaf.der());
    Pki { dir, pin }
}

fn server(p: &Pki) -> Sushy {
    Sushy::start(
        &mockup("dmtf-public-rackmount1"),
        Some((
            &p.dir.path().join("cert.pem"),
            &p.dir.path().join("key.pem"),
        )),
    )
}

fn site(bmcs: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("bmcs.yaml"), bmcs).unwrap();
    d
}

fn error_of(dir: &Path, extra: &[&str]) -> String {
    let (code, v, _) = run_discovery(dir, extra);
    assert_eq!(code, 3, "{v:#}");
    v["bmcs"][0]["error"].as_str().unwrap().to_string()
}

#[test]
fn an_unknown_self_signed_certificate_is_refused_with_a_way_out() {
    let p = pki();
    let s = server(&p);
    let d = site(&format!("bmcs:\n  - address: \"{}\"\n", s.url()));
    let e = error_of(d.path(), &["--retries", "0"]);
    assert!(
        e.contains("--trust-on-first-use") && e.contains("pin_sha256"),
        "{e}"
    );
    // Words first, the library's error text last.
    assert!(
        e.trim_start_matches("ServiceRoot: ").starts_with(
            "TLS refused: its certificate is signed by an authority this machine does not trust"
        ),
        "{e}"
    );
    assert!(e.contains("(detail: "), "{e}");
}

#[test]
fn the_pinned_certificate_is_accepted_and_a_wrong_pin_refused() {
    let p = pki();
    let s = server(&p);
    let d = site(&format!(
        "bmcs:\n  - address: \"{}\"\n    tls: {{pin_sha256: \"{}\"}}\n",
        s.url(),
        p.pin.to_uppercase()
    ));
    let (code, v, _) = run_discovery(d.path(), &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["nodes"][0]["id"], "437XR1138R2");

    let wrong = "00".repeat(32);
    let d = site(&format!(
        "bmcs:\n  - address: \"{}\"\n    tls: {{pin_sha256: \"{wrong}\"}}\n",
        s.url()
    ));
    let e = error_of(d.path(), &["--retries", "0"]);
    assert!(
        e.contains("pin mismatch") || e.contains("certificate"),
        "{e}"
    );
}

#[test]
fn a_ca_bundle_is_trusted() {
    let p = pki();
    let s = server(&p);
    let d = site(&format!(
        "bmcs:\n  - address: \"{}\"\n    tls: {{ca_bundle: ca.pem}}\n",
        s.url()
    ));
    std::fs::copy(p.dir.path().join("ca.pem"), d.path().join("ca.pem")).unwrap();
    let (code, v, _) = run_discovery(d.path(), &[]);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn trust_on_first_use_records_the_pin_then_pins() {
    let p = pki();
    let s = server(&p);
    let text = format!(
        "# our BMCs\nbmcs:\n  - address: \"{}\"   # rack 1\n    rack: r01\n",
        s.url()
    );
    let d = site(&text);
    let (code, v, _) = run_discovery(d.path(), &["--trust-on-first-use"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["bmcs"][0]["recorded_pin"], p.pin);
    let after = std::fs::read_to_string(d.path().join("bmcs.yaml")).unwrap();
    assert!(after.starts_with("# our BMCs\n"), "comments kept: {after}");
    assert!(
        after.contains(&format!("pin_sha256: \"{}\"", p.pin)),
        "{after}"
    );
    // Next run: no flag, the recorded pin is enough.
    let (code, v, _) = run_discovery(d.path(), &[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(v["bmcs"][0]["recorded_pin"].is_null());

    // The per-BMC form is replaced in place.
    let d = site(&format!(
        "bmcs:\n  - address: \"{}\"\n    tls:\n      trust_on_first_use: true\n",
        s.url()
    ));
    let (code, _, _) = run_discovery(d.path(), &[]);
    assert_eq!(code, 0);
    let after = std::fs::read_to_string(d.path().join("bmcs.yaml")).unwrap();
    assert!(
        after.contains(&format!("    tls:\n      pin_sha256: \"{}\"", p.pin)),
        "{after}"
    );
    assert!(!after.contains("trust_on_first_use"), "{after}");
}
