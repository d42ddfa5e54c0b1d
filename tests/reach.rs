//! Every client says why it could not reach its peer, in words with the fix: an `https://`
//! BMC answered in plain HTTP, a plain `http://` address on a BMC that speaks only TLS, a
//! port nothing listens on, a BMC that never answers (discovery and boot through the replay
//! BMC and sushy-static), a host's SSH port that refuses, `status --url` toward no server,
//! and the operator toward the real kube-apiserver spoken to in plain HTTP or on a closed
//! port: each in a sentence naming the address and where to change it.

use std::path::Path;
use std::process::Command;

use rcgen::{CertificateParams, KeyPair};

use crate::redfish_mockups::run_discovery;
use crate::support::kube::kubeconfig;
use crate::support::replay::{BmcSpec, Fault, Fleet};
use crate::support::sushy::{Sushy, free_port, mockup};
use crate::support::{Site, flat, id_of, repo};

fn bmcs(dir: &Path, addresses: &[String]) {
    let mut y = String::from("bmcs:\n");
    for a in addresses {
        y.push_str(&format!("  - address: \"{a}\"\n"));
    }
    std::fs::write(dir.join("bmcs.yaml"), y).unwrap();
}

/// Discovery of these addresses: each BMC's error, in order.
fn discovery_errors(addresses: &[String]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    bmcs(dir.path(), addresses);
    let (code, v, _) = run_discovery(
        dir.path(),
        &[
            "--request-timeout",
            "1",
            "--bmc-timeout",
            "8",
            "--retries",
            "0",
        ],
    );
    assert_eq!(code, 3, "{v:#}");
    v["bmcs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["error"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_https_bmc_answered_in_plain_http_and_the_other_bmc_faults_are_said_in_words() {
    let mut hang = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    hang.fault = Fault::Hang;
    let fleet = Fleet::start(vec![hang]);
    // A real HTTP server (it answers a TLS hello in plain HTTP, as BMC web servers do).
    let http = Sushy::start(&mockup("dell-poweredge-r750-idrac9-6.00"), None);
    let plain = format!("127.0.0.1:{}", http.port);
    let closed = format!("127.0.0.1:{}", free_port());
    let e = discovery_errors(&[
        format!("https://{plain}"),
        format!("http://{closed}"),
        fleet.bmcs[0].url(),
    ]);
    assert!(
        e[0].contains(&format!(
            "the BMC at https://{plain} answered in plain HTTP, not TLS: if it has no HTTPS on this port, write `http://{plain}` in bmcs.yaml"
        )) && e[0].contains("(detail: received corrupt message of type InvalidContentType)"),
        "{}",
        e[0]
    );
    assert!(
        e[1].contains(&format!(
            "nothing accepts connections at {closed} (connection refused): check the address and port in bmcs.yaml"
        )),
        "{}",
        e[1]
    );
    assert!(
        e[2].contains(&format!(
            "the BMC at {} did not answer within 1 s: it may be down or overloaded, or a firewall drops the packets",
            fleet.bmcs[0].url()
        )) && e[2].contains("give it longer with --request-timeout"),
        "{}",
        e[2]
    );

    // boot says the same toward the same BMC.
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    let id = id_of(&site, "hv-c01");
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        n.bmc.as_mut().unwrap().address = format!("https://{plain}");
    });
    let r = site.run(&["boot", "--site", "{site}", "--node", "hv-c01"]);
    assert_eq!(r.code, 3, "{}", r.stdout);
    assert!(
        flat(&r.stdout).contains(&format!("answered in plain HTTP, not TLS: if it has no HTTPS on this port, write `http://{plain}` in bmcs.yaml")),
        "{}",
        r.stdout
    );
}

#[test]
fn a_plain_http_address_on_a_bmc_that_speaks_only_tls() {
    let dir = tempfile::tempdir().unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    std::fs::write(dir.path().join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).unwrap();
    let tls = Sushy::start(
        &mockup("dmtf-public-rackmount1"),
        Some((&dir.path().join("cert.pem"), &dir.path().join("key.pem"))),
    );
    let e = discovery_errors(&[format!("http://127.0.0.1:{}", tls.port)]);
    assert!(
        e[0].contains(&format!(
            "if it speaks only HTTPS on this port, write `https://127.0.0.1:{}` in bmcs.yaml",
            tls.port
        )),
        "{}",
        e[0]
    );
}

#[test]
fn a_closed_ssh_port_and_a_missing_serve_are_said_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("id_ed25519");
    crate::support::sshd::keygen(&key);
    let closed = free_port();
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["--output", "json", "discover", "ssh", "--site"])
        .arg(dir.path())
        .args([
            "--hosts",
            &format!("root@127.0.0.1:{closed}"),
            "--identity",
            key.to_str().unwrap(),
            "--no-agent",
            "--timeout",
            "5",
            "--retries",
            "0",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = v["hosts"][0]["error"].as_str().unwrap();
    assert!(
        e.contains(&format!(
            "nothing accepts connections at 127.0.0.1:{closed} (connection refused): check the address and port in the host list"
        )),
        "{e}"
    );

    let site = Site::example();
    let closed = free_port();
    let r = site.run(&[
        "status",
        "--site",
        "{site}",
        "--url",
        &format!("http://127.0.0.1:{closed}"),
    ]);
    assert_eq!(r.code, 2);
    assert!(
        flat(&r.stderr).contains(&format!(
            "nothing accepts connections at 127.0.0.1:{closed} (connection refused): check the address and port in --url"
        )),
        "{}",
        r.stderr
    );
}

/// The test API server's kubeconfig with its server URL changed.
fn kubeconfig_with(dir: &Path, f: impl Fn(&str) -> String) -> std::path::PathBuf {
    let text = std::fs::read_to_string(kubeconfig()).unwrap();
    let out: String = text
        .lines()
        .map(|l| match l.trim_start().strip_prefix("server: ") {
            Some(url) => format!(
                "{}server: {}\n",
                &l[..l.len() - l.trim_start().len()],
                f(url)
            ),
            None => format!("{l}\n"),
        })
        .collect();
    let p = dir.join("kubeconfig");
    std::fs::write(&p, out).unwrap();
    p
}

fn operator_error(kc: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["operator", "--no-leader-election", "--catalogue"])
        .arg(repo().join("iso-config/example/catalogue"))
        .arg("--scenario")
        .arg(repo().join("simulations/reference-factory.yaml"))
        .arg("--kubeconfig")
        .arg(kc)
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        flat(&String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn the_operator_says_why_it_cannot_reach_the_api_server() {
    let dir = tempfile::tempdir().unwrap();
    // Plain HTTP toward the API server, which speaks only HTTPS.
    let kc = kubeconfig_with(dir.path(), |url| url.replacen("https://", "http://", 1));
    let (code, e) = operator_error(&kc);
    assert_eq!(code, 2, "{e}");
    assert!(
        e.contains("the API server at http://127.0.0.1:")
            && e.contains("it likely speaks only HTTPS on this port: write `https://127.0.0.1:"),
        "{e}"
    );
    // A port nothing listens on.
    let closed = free_port();
    let kc = kubeconfig_with(dir.path(), |_| format!("https://127.0.0.1:{closed}"));
    let (code, e) = operator_error(&kc);
    assert_eq!(code, 2, "{e}");
    assert!(
        e.contains(&format!(
            "nothing accepts connections at 127.0.0.1:{closed} (connection refused)"
        )) && e.contains("(--kubeconfig)"),
        "{e}"
    );
}
