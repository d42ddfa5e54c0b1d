//! Every human table and the shape of every JSON document, pinned by snapshots: the example
//! site (check, plan, render), the reference scenario (simulate), a discovery of two mockups
//! through sushy-static. A change to what users read shows up here for review.

use std::process::Command;

use serde_json::Value;

use crate::support::sushy::{Sushy, mockup, write_bmcs};
use crate::support::{Site, repo};

/// The JSON document's shape: every key with the type of its value, arrays by their first
/// element. Values that vary (numbers, strings) do not enter it; the shape is the contract.
fn shape(v: &Value) -> Value {
    match v {
        Value::Null => Value::from("null"),
        Value::Bool(_) => Value::from("bool"),
        Value::Number(_) => Value::from("number"),
        Value::String(_) => Value::from("string"),
        Value::Array(a) => Value::Array(a.first().map(shape).into_iter().collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
    }
}

fn text(site: &Site, args: &[&str]) -> String {
    let r = site.run(args);
    assert!(
        r.code == 0 || r.code == 1,
        "{args:?}: {}{}",
        r.stdout,
        r.stderr
    );
    r.stdout
        .replace(&site.tmp.path().display().to_string(), "<tmp>")
}

fn json(site: &Site, args: &[&str]) -> Value {
    let mut a = vec!["--output", "json"];
    a.extend_from_slice(args);
    let r = site.run(&a);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

#[test]
fn example_site_tables() {
    let site = Site::example();
    insta::assert_snapshot!("check_table", text(&site, &["check", "--site", "{site}"]));
    insta::assert_snapshot!(
        "plan_table",
        text(&site, &["plan", "--site", "{site}", "--dry-run"])
    );
    insta::assert_snapshot!("render_table", text(&site, &["render", "--site", "{site}"]));
}

#[test]
fn example_site_json_shapes() {
    let site = Site::example();
    insta::assert_json_snapshot!(
        "check_json",
        shape(&json(&site, &["check", "--site", "{site}"]))
    );
    insta::assert_json_snapshot!(
        "plan_json",
        shape(&json(&site, &["plan", "--site", "{site}", "--dry-run"]))
    );
    insta::assert_json_snapshot!(
        "render_json",
        shape(&json(&site, &["render", "--site", "{site}"]))
    );
}

#[test]
fn reference_scenario_table_and_json_shape() {
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rackplan"));
        if json {
            cmd.args(["--output", "json"]);
        }
        let out = cmd
            .arg("simulate")
            .arg(repo().join("simulations/reference-factory.yaml"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    insta::assert_snapshot!("simulate_table", run(false));
    let v: Value = serde_json::from_str(&run(true)).unwrap();
    insta::assert_json_snapshot!("simulate_json", shape(&v));
}

#[test]
fn discovery_of_two_mockups_table_and_json_shape() {
    let dell = Sushy::start(&mockup("dell-poweredge-r750-idrac9-6.00"), None);
    let lenovo = Sushy::start(&mockup("lenovo-thinksystem-sr670v2-xcc"), None);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &[dell.url(), lenovo.url()]);
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rackplan"));
        if json {
            cmd.args(["--output", "json"]);
        }
        let out = cmd
            .args(["discover", "redfish", "--site"])
            .arg(dir.path())
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .replace(&dell.url(), "<dell>")
            .replace(&lenovo.url(), "<lenovo>")
    };
    // The first run adds both nodes; the second updates them: that table is stable.
    run(false);
    insta::assert_snapshot!("discover_table", run(false));
    let v: Value = serde_json::from_str(&run(true)).unwrap();
    insta::assert_json_snapshot!("discover_json", shape(&v));
}

/// Every word of the unwrapped (plain) rendering, which is what `--output json` users and
/// pipes see; a boxed rendering must contain each of them whole.
fn words(text: &str) -> std::collections::BTreeSet<String> {
    text.split(|c: char| c.is_whitespace() || "│┆║|".contains(c))
        .map(|w| w.trim_matches(|c: char| "─═┌┐└┘├┤┬┴┼╞╡╪╭╮╰╯".contains(c)))
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(str::to_string)
        .collect()
}

fn at_widths(render: &dyn Fn() -> String) -> (String, String, String) {
    rackplan::report::set_plain();
    let plain = render();
    rackplan::report::set_width(80);
    let w80 = render();
    rackplan::report::set_width(120);
    let w120 = render();
    for (w, text) in [(80, &w80), (120, &w120)] {
        let text = rackplan::report::wrap_prose_at(text, w);
        let missing: Vec<String> = words(&plain).difference(&words(&text)).cloned().collect();
        assert!(
            missing.is_empty(),
            "split at {w} columns: {missing:?}\n{text}"
        );
    }
    (plain, w80, w120)
}

/// The check table of lab hardware (findings with long prose) and the simulate report, at
/// 80 and 120 columns: words wrap, identifiers and numbers never split.
#[test]
fn main_tables_at_80_and_120_columns_split_no_word() {
    let site = Site::example();
    site.edit_inventory(|inv| {
        for n in inv.nodes.iter_mut().take(4) {
            n.memory_gib = Some(256.0);
        }
    });
    let inputs = rackplan::plan::load_inputs(&site.dir()).unwrap();
    let report = rackplan::plan::check::check(&inputs);
    assert!(!report.findings.is_empty());
    let (_, w80, w120) = at_widths(&|| rackplan::report::check::findings_table(&report.findings));
    insta::assert_snapshot!("check_table_80", w80);
    insta::assert_snapshot!("check_table_120", w120);
    assert!(w80.lines().all(|l| l.chars().count() <= 80), "{w80}");

    let l =
        rackplan::simulate::Study::from_file(&repo().join("simulations/reference-factory.yaml"))
            .unwrap();
    let r = rackplan::simulate::questions::review(&l);
    let (_, w80, w120) = at_widths(&|| rackplan::report::simulate::simulate_text(&r));
    let w80 = rackplan::report::wrap_prose_at(&w80, 80);
    assert!(w80.lines().all(|l| l.chars().count() <= 80), "{w80}");
    insta::assert_snapshot!("simulate_table_80", w80);
    insta::assert_snapshot!(
        "simulate_table_120",
        rackplan::report::wrap_prose_at(&w120, 120)
    );
}
