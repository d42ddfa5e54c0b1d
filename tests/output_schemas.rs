//! Every command's `--output json` document validates against its shipped JSON Schema
//! (`docs/schemas/output/<command>.schema.json`, generated from the type that prints it),
//! and each schema can refuse: a document without `schema_version` fails.

use serde_json::Value;

use crate::support::sushy::{Sushy, mockup, write_bmcs};
use crate::support::{Site, repo};

fn validator(name: &str) -> jsonschema::Validator {
    let path = repo().join(format!("docs/schemas/output/{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

/// `doc` validates against its command's schema, and would not without `schema_version`.
pub(crate) fn assert_valid(name: &str, doc: &Value) {
    let v = validator(name);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .take(10)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
    let mut bare = doc.clone();
    bare.as_object_mut().unwrap().remove("schema_version");
    assert!(
        !v.is_valid(&bare),
        "{name}: a document without schema_version passes"
    );
}

fn json(site: &Site, args: &[&str]) -> Value {
    let mut a = vec!["--output", "json"];
    a.extend_from_slice(args);
    let r = site.run(&a);
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}{}", r.stdout, r.stderr))
}

#[test]
fn every_command_output_validates_against_its_schema() {
    let site = Site::example();
    let scenario = repo().join("simulations/reference-factory.yaml");
    let scenario = scenario.to_str().unwrap();
    let dump = repo().join("simulations/live-fleet.yaml");
    let dump = dump.to_str().unwrap();
    let request = site.tmp.path().join("request.yaml");
    std::fs::write(&request, "team: paiement\nshape: standard\ncount: 1\n").unwrap();
    let request = request.to_str().unwrap();
    let fresh = site.tmp.path().join("fresh");
    let docs = site.tmp.path().join("docs");
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("check", vec!["check", "--site", "{site}"]),
        (
            "check-catalogue",
            vec!["check", "--catalogue", "--site", "{site}"],
        ),
        ("plan", vec!["plan", "--site", "{site}", "--dry-run"]),
        ("render", vec!["render", "--site", "{site}"]),
        ("status", vec!["status", "--site", "{site}"]),
        ("simulate", vec!["simulate", scenario]),
        ("simulate", vec!["simulate", "--from-cluster", dump]),
        (
            "simulate-drain",
            vec!["simulate", "--from-cluster", dump, "--drain", "hv-004"],
        ),
        (
            "simulate-upgrade",
            vec!["simulate", "--from-cluster", dump, "--upgrade"],
        ),
        (
            "admit",
            vec!["admit", request, scenario, "--at", "2027-03-01"],
        ),
        ("init", vec!["init", fresh.to_str().unwrap()]),
        ("docs", vec!["docs", "--out", docs.to_str().unwrap()]),
        ("error", vec!["check", "--site", "/nonexistent-site"]),
    ];
    for (name, args) in runs {
        assert_valid(name, &json(&site, &args));
    }
}

#[test]
fn discovery_output_validates_against_its_schema() {
    let dell = Sushy::start(&mockup("dell-poweredge-r750-idrac9-6.00"), None);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &[dell.url()]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["--output", "json", "discover", "redfish", "--site"])
        .arg(dir.path())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid("discover-redfish", &doc);
}
