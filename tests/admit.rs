//! `rackplan admit`: within quota and fits; over quota; within quota but a failure would
//! strand VMs; a request with a duration; a Rancher Cluster export as the request.

use std::path::Path;

use crate::support::{Site, json_of, rackplan_json, repo};

fn admit(dir: &Path, req: &str, scenario: &Path, at: &str) -> (i32, serde_json::Value) {
    let f = dir.join("request.yaml");
    std::fs::write(&f, req).unwrap();
    let (code, v, err) = json_of(
        rackplan_json(&["admit"])
            .arg(&f)
            .arg(scenario)
            .args(["--at", at]),
    );
    assert!(code == 0 || code == 1, "{code}: {err}");
    (code, v)
}

fn reference() -> std::path::PathBuf {
    repo().join("simulations/reference-factory.yaml")
}

#[test]
fn within_quota_and_fits_is_admitted_with_its_expiry() {
    let tmp = tempfile::tempdir().unwrap();
    // In 2027-02 paiement runs its two standard clusters (72 vCPU) of 300.
    let (code, v) = admit(
        tmp.path(),
        "team: paiement\nshape: standard\ncount: 1\nduration: 72h\n",
        &reference(),
        "2027-02-27",
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["admitted"], true);
    assert_eq!(v["quota"]["used"], 72.0);
    assert_eq!(v["quota"]["requested"], 36.0);
    assert_eq!(v["quota"]["allowed"], 300.0);
    assert_eq!(v["headroom_after"], "pass");
    // 72 hours after 27 February 2027 (not a leap year) is 2 March.
    assert_eq!(v["expires"], "2027-03-02T00:00:00Z");
    assert_eq!(v["reasons"].as_array().unwrap().len(), 0);
}

#[test]
fn over_quota_is_refused_with_used_requested_and_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    // From 2027-03 paiement also runs a large cluster: 72 + 120 = 192 used.
    let (code, v) = admit(
        tmp.path(),
        "team: paiement\nshape: large\n",
        &reference(),
        "2027-05-01",
    );
    assert_eq!(code, 1);
    assert_eq!(v["admitted"], false);
    assert_eq!(v["quota"]["used"], 192.0);
    assert_eq!(v["quota"]["within"], false);
    let reason = v["reasons"][0].as_str().unwrap();
    assert_eq!(
        reason,
        "quota: team paiement uses 192 vCPU and asks for 120; its quota allows 300 (12 over)"
    );
    // A request the timeline refused earlier does not count as used: logistique's two
    // large clusters of 2027-02 (240 vCPU) never fit its 200.
    let (code, v) = admit(
        tmp.path(),
        "team: logistique\nshape: large\n",
        &reference(),
        "2027-03-01",
    );
    assert_eq!((code, v["quota"]["used"].as_f64()), (0, Some(0.0)), "{v:#}");
}

/// A small fleet (three racks of two nodes) with a generous quota: the largest count that
/// passes is admitted, the first that fails is refused for headroom, naming the failure.
#[test]
fn within_quota_but_a_failure_would_strand_vms_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("small.yaml");
    let text = std::fs::read_to_string(reference())
        .unwrap()
        .replace("      count: 24\n", "      count: 6\n")
        .replace(
            "  - {shape: standard, count: 60}\n",
            "  - {shape: standard, count: 4}\n",
        );
    let text = text[..text.find("teams:").unwrap()].to_string()
        + "teams:\n  - name: big\n    vcpu_quota: 100000\n\nanalysis:\n  max_clusters_shape: standard\n  risk_trials: 100\n  risk_years: 1\n";
    std::fs::write(&scenario, text).unwrap();
    let (_, sim, err) = json_of(rackplan_json(&["simulate"]).arg(&scenario));
    let m = &sim["max_clusters"];
    let fits = m["additional"]
        .as_u64()
        .unwrap_or_else(|| panic!("{m}: {err}"));
    let fails = m["first_failure"].as_u64().unwrap();
    assert_eq!(fails, fits + 1);
    let (code, v) = admit(
        tmp.path(),
        &format!("team: big\nshape: standard\ncount: {fits}\n"),
        &scenario,
        "2027-01-15",
    );
    assert_eq!(
        (code, v["headroom_after"].as_str()),
        (0, Some("pass")),
        "{v:#}"
    );
    let (code, v) = admit(
        tmp.path(),
        &format!("team: big\nshape: standard\ncount: {fails}\n"),
        &scenario,
        "2027-01-15",
    );
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["quota"]["within"], true);
    assert_eq!(v["headroom_before"], "pass");
    assert_eq!(v["headroom_after"], "fail");
    let strands = v["strands"].as_array().unwrap();
    assert!(!strands.is_empty());
    let worst = &strands[0];
    let reason = v["reasons"][0].as_str().unwrap();
    assert!(
        reason.starts_with("headroom: the fleet fails with this request: if ")
            && reason.contains(worst["failure"].as_str().unwrap())
            && reason.contains("cannot"),
        "{reason}"
    );
}

#[test]
fn a_rancher_cluster_from_the_catalogue_is_a_request() {
    let site = Site::example();
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(site.out().join("catalogue/standard.yaml"))
        .unwrap()
        .replacen(
            "    rackplan.io/shape: standard\n",
            "    rackplan.io/shape: standard\n    rackplan.io/team: paiement\n  annotations:\n    rackplan.io/duration: 2w\n",
            1,
        )
        .replacen("  annotations:\n    rackplan.io/scenario: reference-factory\n", "", 1);
    let (code, v) = admit(site.tmp.path(), &text, &reference(), "2027-02-01T06:00:00Z");
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        v["quota"]["requested"], 36.0,
        "the shape's vCPU, read from the export"
    );
    assert_eq!(v["shape"], "standard");
    assert_eq!(v["request"], "standard");
    assert_eq!(v["expires"], "2027-02-15T06:00:00Z");
    // Without the team label the request cannot be judged.
    let unlabelled = text.replace("    rackplan.io/team: paiement\n", "");
    let f = site.tmp.path().join("request.yaml");
    std::fs::write(&f, unlabelled).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .arg("admit")
        .arg(&f)
        .arg(reference())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rackplan.io/team"));
}

#[test]
fn bad_requests_name_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |req: &str| {
        let f = tmp.path().join("r.yaml");
        std::fs::write(&f, req).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
            .env("NO_COLOR", "1")
            .arg("admit")
            .arg(&f)
            .arg(reference())
            .args(["--at", "2027-01-01"])
            .output()
            .unwrap();
        (
            out.status.code(),
            crate::support::flat(&String::from_utf8_lossy(&out.stderr)),
        )
    };
    let (code, e) = run("team: paiement\nshape: huge\n");
    assert_eq!(code, Some(2));
    assert!(
        e.contains("shape") && e.contains("one of: large, standard"),
        "{e}"
    );
    let (_, e) = run("team: paiement\nshape: standard\nduration: 3y\n");
    assert!(
        e.contains("duration") && e.contains("use m, h, d or w"),
        "{e}"
    );
    let (_, e) = run("team: nobody\nshape: standard\n");
    assert!(
        e.contains("no team `nobody`") && e.contains("paiement, logistique"),
        "{e}"
    );
    let (_, e) = run("team: paiement\nshape: standard\ncuont: 2\n");
    assert!(e.contains("cuont") && e.contains("count"), "{e}");
}

/// A Rancher export edited to look smaller or to drop its anti-affinity is an error naming
/// the pool or config, never an admission (issue: admit could be talked into a yes).
#[test]
fn hostile_rancher_requests_are_errors_never_admissions() {
    let text = std::fs::read_to_string(repo().join("iso-config/example/catalogue/large.yaml"))
        .unwrap()
        .replacen(
            "  labels:\n",
            "  labels:\n    rackplan.io/team: paiement\n",
            1,
        );
    assert!(
        text.contains("rackplan.io/team: paiement"),
        "the fixture changed"
    );
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 12] = [
        ("cpuCount:", "cpuCount: \"-200\"", "cpuCount"),
        ("cpuCount:", "cpuCount: \"0\"", "cpuCount"),
        ("cpuCount:", "cpuCount: \"3.5\"", "cpuCount"),
        ("memorySize:", "memorySize: \"-8\"", "memorySize"),
        ("memorySize:", "memorySize: \"NaN\"", "memorySize"),
        ("quantity:", "quantity: -3", "quantity"),
        ("quantity:", "quantity: 4294967296", "quantity"),
        ("quantity:", "quantity: \"3.5\"", "quantity"),
        ("quantity:", "quantity: 1e300", "quantity"),
        ("quantity:", "quantity: null", "quantity"),
        ("vmAffinity:", "vmAffinity: \"\"", "vmAffinity"),
        ("vmAffinity:", "vmAffinity: 7", "vmAffinity"),
    ];
    for (key, line, names) in cases {
        // The first line setting `key` gets the hostile value, indentation kept.
        let mut done = false;
        let edited: Vec<String> = text
            .lines()
            .map(|l| {
                let t = l.trim_start();
                if !done && t.starts_with(key) {
                    done = true;
                    format!("{}{line}", &l[..l.len() - t.len()])
                } else {
                    l.to_string()
                }
            })
            .collect();
        assert!(done, "the fixture changed: {key}");
        let to = line;
        let f = tmp.path().join("request.yaml");
        std::fs::write(&f, edited.join("\n")).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
            .arg("admit")
            .arg(&f)
            .arg(reference())
            .args(["--at", "2027-02-01"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        assert!(err.contains(names), "{to}: {err}");
    }
}
