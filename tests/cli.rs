//! The command line as a user meets it: help, exit codes, JSON output, closed pipes.

use crate::support::Site;

#[test]
fn check_on_the_example_is_clean() {
    let site = Site::example();
    let r = site.run(&["check", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("0 error(s), 0 warning(s)"),
        "{}",
        r.stdout
    );
}

#[test]
fn usage_errors_exit_2() {
    let site = Site::example();
    let r = site.run(&["check"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--site"), "{}", r.stderr);
    let r = site.run(&["frobnicate"]);
    assert_eq!(r.code, 2);
}

#[test]
fn json_output_is_machine_readable() {
    let site = Site::example();
    let r = site.run(&["--output", "json", "check", "--site", "{site}"]);
    assert_eq!(r.code, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["roles"].as_object().unwrap().len(), 15);

    let r = site.run(&["--output", "json", "plan", "--site", "{site}", "--dry-run"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 15);
    assert_eq!(v["storage_network"]["needed"], 132);

    let r = site.run(&["--output", "json", "render", "--site", "{site}"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    // 15 nodes x (config, iPXE), 8 manifests, 5 kustomizations, 4 fleet.yaml, 2 shapes,
    // SUMMARY, and the operator's CRD, two RBAC files, the team namespaces, its ConfigMap,
    // its Deployment file, their kustomization, the monitoring component (three files), the
    // bundle with it and the systemd unit.
    assert_eq!(v["files"].as_array().unwrap().len(), 62);
}

/// Every JSON document opens with its `schema_version`, whatever the command.
#[test]
fn every_json_document_opens_with_its_schema_version() {
    let site = Site::example();
    let scenario = crate::support::repo().join("simulations/reference-factory.yaml");
    let scenario = scenario.to_str().unwrap();
    let request = site.tmp.path().join("request.yaml");
    std::fs::write(&request, "team: paiement\nshape: standard\ncount: 1\n").unwrap();
    let request = request.to_str().unwrap();
    let new_site = site.tmp.path().join("fresh");
    let new_site = new_site.to_str().unwrap();
    let docs = site.tmp.path().join("docs");
    let docs = docs.to_str().unwrap();
    let runs: [&[&str]; 8] = [
        &["check", "--site", "{site}"],
        &["plan", "--site", "{site}", "--dry-run"],
        &["render", "--site", "{site}"],
        &["status", "--site", "{site}"],
        &["simulate", scenario],
        &["admit", request, scenario, "--at", "2027-03-01"],
        &["init", new_site],
        &["docs", "--out", docs],
    ];
    for args in runs {
        let mut a = vec!["--output", "json"];
        a.extend_from_slice(args);
        let r = site.run(&a);
        assert!(r.code == 0 || r.code == 1, "{args:?}: {}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", r.stdout));
        let first = v.as_object().and_then(|o| o.iter().next());
        assert_eq!(
            first.map(|(k, v)| (k.as_str(), v.clone())),
            Some(("schema_version", serde_json::json!(1))),
            "{args:?}"
        );
    }
}

#[test]
fn missing_inventory_says_what_to_run() {
    let site = Site::example();
    std::fs::remove_file(site.file("nodes.yaml")).unwrap();
    let r = site.run(&["check", "--site", "{site}"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("rackplan discover redfish"),
        "{}",
        r.stderr
    );
}

/// `rackplan ... | head -1`: a reader that closes the pipe early ends the run quietly with
/// exit 0 (Rust ignores SIGPIPE, so an unguarded `println!` panics with exit 101).
#[test]
fn a_closed_stdout_pipe_is_a_quiet_exit_0() {
    let site = Site::example();
    for args in [
        vec!["check", "--site", "{site}"],
        vec!["--output", "json", "plan", "--site", "{site}", "--dry-run"],
        vec!["--output", "json", "render", "--site", "{site}"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"));
        for a in &args {
            cmd.arg(a.replace("{site}", &site.dir().display().to_string()));
        }
        let out = cmd
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
