//! The reference under `docs/` is what the code generates (schemas, format and command
//! pages, completions, man pages), and every shipped input file validates against its
//! schema.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::repo;

fn schema(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join(format!("docs/schemas/{name}.schema.json")))
        .unwrap_or_else(|e| panic!("docs/schemas/{name}.schema.json: {e}"));
    let v: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

/// Schema errors of a YAML file (empty when it validates).
pub fn violations(schema_name: &str, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    schema(schema_name)
        .iter_errors(&doc)
        .map(|e| format!("{}: {e} at {}", file.display(), e.instance_path()))
        .collect()
}

#[test]
fn the_committed_reference_matches_the_code() {
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["docs", "--check", "--out"])
        .arg(repo().join("docs"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}\nrun `cargo run -- docs` and commit docs/",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_shipped_input_validates_against_its_schema() {
    let mut checked = 0;
    let mut errs = Vec::new();
    for (schema_name, file) in [
        ("site", "inventory/example/site.yaml"),
        ("bmcs", "inventory/example/bmcs.yaml"),
        ("nodes", "inventory/example/nodes.yaml"),
        ("allocations", "inventory/example/allocations.yaml"),
    ] {
        errs.extend(violations(schema_name, &repo().join(file)));
        checked += 1;
    }
    for (schema_name, dir) in [("profile", "profiles"), ("scenario", "simulations")] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                // simulations/ also ships an example dump (`kind: List`), not a scenario.
                let text = std::fs::read_to_string(&p).unwrap();
                if schema_name == "scenario" && text.contains("\nkind: List\n") {
                    assert!(!text.contains("$schema="), "{}", p.display());
                    continue;
                }
                errs.extend(violations(schema_name, &p));
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked}");
    assert_eq!(errs, Vec::<String>::new());
}

#[test]
fn the_schemas_reject_what_rackplan_rejects() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("site.yaml");
    let text = std::fs::read_to_string(repo().join("inventory/example/site.yaml")).unwrap();
    for (from, to, what) in [
        (
            "  hostname_prefix: hv",
            "  hostname_prefx: hv",
            "unknown key",
        ),
        ("      vlan: 412", "      vlan: 5000", "VLAN out of range"),
        (
            "  mtu: 9000\n  bond:\n    mode: 802.3ad\n    miimon: 100\n    xmit",
            "  mtu: 100\n  bond:\n    mode: 802.3ad\n    miimon: 100\n    xmit",
            "MTU out of range",
        ),
        ("name: example", "name: Example_Site", "not a DNS label"),
    ] {
        assert_eq!(text.matches(from).count(), 1, "{from}");
        std::fs::write(&f, text.replacen(from, to, 1)).unwrap();
        assert!(
            !violations("site", &f).is_empty(),
            "{what} passes the schema"
        );
    }
}

/// `docs --check --output json` answers in JSON like every other command: the drifted
/// files of a folder that lacks one, and none for the committed reference.
#[test]
fn docs_check_speaks_json() {
    let run = |dir: &Path| {
        crate::support::json_of(
            crate::support::rackplan_json(&["docs", "--check", "--out"]).arg(dir),
        )
    };
    let (code, v, err) = run(&repo().join("docs"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["checked"], true);
    assert_eq!(v["drifted"], serde_json::json!([]));
    assert!(v["files"].as_u64().unwrap() > 10);
    let tmp = tempfile::tempdir().unwrap();
    let (code, v, err) = run(tmp.path());
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        v["drifted"].as_array().unwrap().len() as u64,
        v["files"].as_u64().unwrap(),
        "an empty folder lacks every file"
    );
}

/// Every command's man page carries the global options, worked examples and the exit
/// status with the environment variables, and describes every option it lists.
#[test]
fn man_pages_have_global_options_examples_and_exit_status() {
    let dir = repo().join("docs/man");
    let mut pages = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "rackplan.1" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for want in [
            r"\fB\-\-output\fR",
            r"\fB\-q\fR, \fB\-\-quiet\fR",
            ".SH \"EXIT STATUS\"",
            "RACKPLAN_SITE",
        ] {
            assert!(text.contains(want), "{name}: no {want}");
        }
        if name != "rackplan-help.1" {
            assert!(text.contains(".SH \"EXAMPLES\""), "{name}: no EXAMPLES");
        }
        // Each option (a .TP line) is followed by its description, not by the next option.
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if *l == ".TP" {
                let desc = lines.get(i + 2).copied().unwrap_or("");
                assert!(
                    !desc.is_empty() && desc != ".TP" && !desc.starts_with(".SH"),
                    "{name}: {} has no description",
                    lines.get(i + 1).copied().unwrap_or("")
                );
            }
        }
        pages += 1;
    }
    assert!(pages >= 12, "{pages}");
}
