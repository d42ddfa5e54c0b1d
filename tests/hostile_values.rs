//! Values that would need unbounded work, or that a reader must not act on: every one is
//! refused with its key named, or shown harmlessly, and the run ends quickly.
//!
//! - counts and spans in a scenario and in an admit request beyond the stated bounds;
//! - quantities in a dump past any real machine (`cpu: 1e308`);
//! - names from a dump that carry HTML, Markdown links, comments or terminal escape
//!   sequences, through the text table, the Markdown report and the HTML report;
//! - `--drain` asked for a report it does not write.

use std::path::{Path, PathBuf};

use rackplan::live::synth;
use serde_json::Value;

use crate::support::{plain as run, repo};

fn factory() -> String {
    std::fs::read_to_string(repo().join("simulations/reference-factory.yaml")).unwrap()
}

/// The reference scenario with one textual change, written to `dir`.
fn scenario_with(dir: &Path, from: &str, to: &str) -> PathBuf {
    let text = factory();
    assert!(
        text.contains(from),
        "the reference scenario has no `{from}`"
    );
    let p = dir.join("s.yaml");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    p
}

#[test]
fn scenario_values_past_their_bounds_are_errors_at_their_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "- {shape: standard, count: 60}",
            "- {shape: standard, count: 1000000}",
            "clusters[0].count",
        ),
        (
            "- {shape: standard, count: 60}",
            "- {shape: standard, count: 4294967295}",
            "clusters[0].count",
        ),
        (
            "- {shape: standard, count: 60}",
            "- {shape: standard, count: 90000}",
            "clusters",
        ),
        (
            "{shape: standard, count: 2, from: 2027-01}",
            "{shape: standard, count: 2, from: 9999-01}",
            "from",
        ),
        ("vcpu_quota: 300", "vcpu_quota: -5", "teams[0].vcpu_quota"),
        ("vcpu_quota: 300", "vcpu_quota: .nan", "teams[0].vcpu_quota"),
        (
            "{name: workers, count: 3, vcpu: 8, memory_gib: 32, disks_gib: [200]}",
            "{name: workers, count: 1000000000, vcpu: 8, memory_gib: 32, disks_gib: [200]}",
            "shapes.standard.pools[1].count",
        ),
    ];
    for (from, to, key) in cases {
        let p = scenario_with(tmp.path(), from, to);
        let (code, out, err) = run(&["simulate", p.to_str().unwrap()]);
        assert_eq!(code, 2, "{to}: {out}{err}");
        assert!(err.contains(key), "{to}: the error names {key}: {err}");
    }
}

#[test]
fn admit_requests_past_their_bounds_are_errors_never_admissions() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = repo().join("simulations/reference-factory.yaml");
    let cases: &[(&str, &str)] = &[
        (
            "team: paiement\nshape: standard\ncount: 1000000000\n",
            "count",
        ),
        (
            "team: paiement\npools:\n  - {name: w, count: 1000000000, vcpu: 1, memory_gib: 1, disks_gib: [1]}\n",
            "pools[0].count",
        ),
        (
            "team: paiement\npools:\n  - {name: w, count: 3, vcpu: -200, memory_gib: 1, disks_gib: [1]}\n",
            "pools[0].vcpu",
        ),
        (
            "team: paiement\npools:\n  - {name: w, count: 3, vcpu: 2, memory_gib: .nan, disks_gib: [1]}\n",
            "pools[0].memory_gib",
        ),
        (
            "team: paiement\nshape: standard\nduration: 100000000000w\n",
            "at most 10 years",
        ),
    ];
    for (i, (text, key)) in cases.iter().enumerate() {
        let req = tmp.path().join(format!("r{i}.yaml"));
        std::fs::write(&req, text).unwrap();
        let (code, out, err) = run(&["admit", req.to_str().unwrap(), scenario.to_str().unwrap()]);
        assert_eq!(code, 2, "{text}: {out}{err}");
        assert!(!out.contains("ADMITTED"), "{text}: {out}");
        assert!(err.contains(key), "{text}: the error names {key}: {err}");
    }
}

fn fleet_json() -> Value {
    synth::list(&synth::Spec {
        nodes: 6,
        zones: 3,
        clusters: 2,
        ..synth::Spec::default()
    })
}

#[test]
fn a_cpu_past_any_machine_is_named_and_never_a_nan() {
    let tmp = tempfile::tempdir().unwrap();
    let mut v = fleet_json();
    let node = v["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["kind"] == "Node")
        .unwrap();
    let name = node["metadata"]["name"].as_str().unwrap().to_string();
    node["status"]["allocatable"]["cpu"] = serde_json::json!(1e308);
    let p = tmp.path().join("dump.json");
    std::fs::write(&p, v.to_string()).unwrap();
    let (code, out, err) = run(&["simulate", "--from-cluster", p.to_str().unwrap()]);
    assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    // An error naming the node, the field and its value, never a verdict.
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&name) && err.contains("unreadable"), "{err}");
}

/// Node names carrying markup, a link, a comment and terminal sequences: hv-006 is the
/// busiest node (named in the verdict and the rebuild), hv-004 the worst single failure.
const HOSTILE: &[(&str, &str)] = &[
    ("hv-006", "<script>alert(1)</script>"),
    ("hv-001", "[x](javascript:alert(1))"),
    ("hv-002", "<!-- n"),
    ("hv-004", "\u{1b}]0;owned\u{7}\u{1b}[2J"),
];

fn hostile_dump(dir: &Path) -> PathBuf {
    let mut text = fleet_json().to_string();
    for (node, h) in HOSTILE {
        let escaped = serde_json::to_string(h).unwrap();
        let inner = &escaped[1..escaped.len() - 1];
        text = text.replace(&format!("\"{node}\""), &format!("\"{inner}\""));
    }
    assert!(text.contains("<script>"), "the names were replaced");
    let p = dir.join("dump.json");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn hostile_names_are_escaped_for_each_sink() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = hostile_dump(tmp.path());
    let md = tmp.path().join("review.md");
    let html = tmp.path().join("review.html");
    for report in [&md, &html] {
        let (code, out, err) = run(&[
            "simulate",
            "--from-cluster",
            dump.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ]);
        assert!(code == 0 || code == 1, "{out}{err}");
        // The terminal gets marks, never the sequences.
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
        assert!(!err.contains('\u{1b}'), "{err:?}");
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("&lt;script&gt;"),
        "the name is in the report: {md}"
    );
    assert!(
        md.contains("␛\\]0;owned␇"),
        "the sequence is shown visibly: {md}"
    );
    for bad in ["<script", "<!--", "\u{1b}"] {
        assert!(!md.contains(bad), "Markdown carries {bad:?}");
    }
    // A link cannot form: every bracket of a name is escaped.
    assert!(
        md.match_indices("](javascript")
            .all(|(i, _)| md[..i].ends_with('\\')),
        "Markdown carries a link: {md}"
    );
    // Provenance: which state the report describes.
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(std::fs::read(&dump).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        md.contains(&format!("sha256 {digest}")) && md.contains("by rackplan"),
        "the report names its dump with its digest: {md}"
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("class=\"provenance\"") && html.contains(&digest));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<script>alert") && !html.contains('\u{1b}'));
    for svg in std::fs::read_dir(tmp.path()).unwrap() {
        let svg = svg.unwrap().path();
        if svg.extension().is_some_and(|e| e == "svg") {
            let s = std::fs::read_to_string(&svg).unwrap();
            assert!(!s.contains("<script") && !s.chars().any(|c| c.is_control() && c != '\n'));
        }
    }
}

#[test]
fn drain_refuses_a_report_it_would_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("dump.json");
    std::fs::write(&p, fleet_json().to_string()).unwrap();
    let report = tmp.path().join("x.html");
    let (code, out, err) = run(&[
        "simulate",
        "--from-cluster",
        p.to_str().unwrap(),
        "--drain",
        "hv-001",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--report"), "{err}");
    assert!(!report.exists());
}
