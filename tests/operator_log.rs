//! The operator's log in a terminal of 80 columns: `rackplan operator` run in a real
//! pseudo-terminal (util-linux `script`) against the test kube-apiserver judges a pending
//! request, and every line it prints (the banner and each transition) wraps between words
//! at the terminal's width, the continuations under the request, the times a column of
//! their own.

use std::io::Read as _;
use std::process::{Command, Stdio};

use crate::support::kube::{cluster, kubeconfig, wait_for};
use crate::support::repo;
use crate::support::sushy::free_port;
use crate::terminal_widths::{assert_fits, quote, screen};

/// Every `YYYY-MM-DDTHH:MM:SSZ` in `s` as that pattern, so a snapshot does not depend on
/// the clock.
fn mask_times(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let shape = "dddd-dd-ddTdd:dd:ddZ";
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        let is_time = c.len() - i >= shape.len()
            && shape.chars().zip(&c[i..]).all(|(p, ch)| {
                if p == 'd' {
                    ch.is_ascii_digit()
                } else {
                    p == *ch
                }
            });
        if is_time {
            out.push_str("YYYY-MM-DDTHH:MM:SSZ");
            i += shape.len();
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The `script` process and the operator's pid file: both are stopped when dropped, so a
/// failing assertion leaves no operator running.
struct Running {
    child: std::process::Child,
    pid_file: std::path::PathBuf,
}

impl Running {
    fn term(&self) {
        if let Ok(pid) = std::fs::read_to_string(&self.pid_file) {
            let _ = Command::new("kill").args(["-TERM", pid.trim()]).status();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.term();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_operators_log_wraps_between_words_at_80_columns() {
    let k = cluster();
    let ns = format!("op-log-{:08x}", std::process::id());
    // The request's namespace is paiement's (and holds the Rancher objects too).
    k.rt.block_on(k.put(&serde_json::json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": ns, "labels": {"rackplan.io/team": "paiement", "rackplan-log-test": ns}},
    })));
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("catalogue");
    std::fs::create_dir(&cat).unwrap();
    std::fs::copy(
        repo().join("iso-config/example/catalogue/standard.yaml"),
        cat.join("standard.yaml"),
    )
    .unwrap();
    let scenario = tmp.path().join("quotas.yaml");
    std::fs::write(
        &scenario,
        "name: operator quotas\nteams:\n  - {name: paiement, vcpu_quota: 80}\n",
    )
    .unwrap();
    k.create_yaml(
        &ns,
        "apiVersion: rackplan.io/v1alpha1\nkind: ClusterRequest\nmetadata: {name: ci-log}\nspec: {team: paiement, shape: standard, duration: \"72h\", requester: alice, reason: ci}\n",
    );
    let pid_file = tmp.path().join("operator.pid");
    let port = free_port();
    let mut cmd = format!(
        "stty cols 80 rows 50 && echo $$ > {} && exec {} operator",
        quote(&pid_file.display().to_string()),
        quote(env!("CARGO_BIN_EXE_rackplan"))
    );
    let selector = format!("rackplan-log-test={ns}");
    for a in [
        "--namespace",
        &ns,
        "--team-namespaces",
        &selector,
        "--resync-seconds",
        "1",
        "--no-leader-election",
        "--kubeconfig",
        &kubeconfig().display().to_string(),
        "--catalogue",
        &cat.display().to_string(),
        "--scenario",
        &scenario.display().to_string(),
        "--listen",
        &format!("127.0.0.1:{port}"),
    ] {
        cmd.push(' ');
        cmd.push_str(&quote(a));
    }
    let child = Command::new("script")
        .current_dir(tmp.path())
        .env("COLUMNS", "80")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("RUST_LOG", "error")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("util-linux `script` runs");
    let mut running = Running {
        child,
        pid_file: pid_file.clone(),
    };
    wait_for(60, "the request provisioning", || {
        k.get("rackplan.io/v1alpha1", "ClusterRequest", &ns, "ci-log")
            .filter(|r| r["status"]["phase"] == "Provisioning")
    });
    // SIGTERM: the operator stops cleanly, and `script` with it.
    running.term();
    let status = wait_for(30, "the operator to stop", || {
        running.child.try_wait().unwrap()
    });
    assert!(status.success(), "{status:?}");
    let mut raw = String::new();
    running
        .child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut raw)
        .unwrap();
    let text = screen(&raw, 80);
    assert_fits("operator", 80, &text);
    let text = mask_times(&text)
        .replace(&ns, "<ns>")
        .replace(&tmp.path().display().to_string(), "<tmp>")
        .replace(&port.to_string(), "<port>");
    assert!(
        text.starts_with("rackplan operator: requests in namespace <ns>, shapes standard"),
        "{text}"
    );
    // The transitions, from the first that starts with its time.
    let log: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("YYYY-"))
        .collect();
    assert!(
        log.iter()
            .skip(1)
            .all(|l| l.starts_with("YYYY-") || l.starts_with(&" ".repeat(22))),
        "{text}"
    );
    assert!(
        log.iter()
            .any(|l| l.contains("<ns>/ci-log  Provisioning  ")),
        "{text}"
    );
    // The first transition, as a reader sees it (the fleet's cluster count aside: other
    // tests share the API server).
    let first: Vec<&str> = log
        .iter()
        .take(1)
        .chain(log.iter().skip(1).take_while(|l| !l.starts_with("YYYY-")))
        .copied()
        .collect();
    let first = first.join("\n");
    let counted = first
        .split_once("pass with the request (")
        .and_then(|(_, rest)| rest.split_once(" clusters)"))
        .map(|(n, _)| n.to_string())
        .unwrap_or_default();
    insta::assert_snapshot!(
        "operator_log_at_80",
        first.replace(&format!("({counted} clusters)"), "(N clusters)")
    );
}
