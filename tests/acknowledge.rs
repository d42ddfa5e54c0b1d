//! A rack whose cables are not in yet, from discovery to rendered configs: three captured
//! BMCs (two Dell R750s with links down, an HPE XL675d whose RAID volume Redfish cannot
//! name for sure) served by the replay BMC, discovered, `init --from`, then `check`, `plan`
//! and `render` in an 80-column terminal. The links down stop everything until people
//! acknowledge them in nodes.yaml; then check passes showing them as acknowledged, plan
//! and render go on, and SUMMARY.md lists them. A disk the installer cannot find cannot be
//! acknowledged; an acknowledgement past its last day counts for nothing.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::mockup;
use crate::terminal_widths::{assert_fits, in_terminal};

const CAPTURES: [&str; 3] = [
    "dell-poweredge-r750-idrac9-6.00",
    "dell-poweredge-r750-idrac9-7.10-bluefield3",
    "hpe-proliant-xl675d-gen10plus-ilo5-2.70",
];
const DELLS: [&str; 2] = ["CNIVC0014M0388", "MXFC40025U031S"];
const HPE: &str = "JS05NP0896";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn rackplan(cwd: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("RACKPLAN_SITE")
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Edit nodes.yaml as JSON: `f` gets each node's record.
fn edit_nodes(site: &Path, f: impl Fn(&mut Value)) {
    let path = site.join("nodes.yaml");
    let (inv, _) = rackplan::inventory::store::load(&path).unwrap();
    let mut v = serde_json::to_value(&inv).unwrap();
    for n in v["nodes"].as_array_mut().unwrap() {
        f(n);
    }
    rackplan::inventory::store::save(&path, &serde_json::from_value(v).unwrap()).unwrap();
}

fn check_json(cwd: &Path) -> (i32, Value) {
    let r = rackplan(cwd, &["--output", "json", "check", "--site", "lab"]);
    (r.code, serde_json::from_str(&r.stdout).unwrap())
}

#[test]
fn links_down_acknowledged_go_through_check_plan_and_render() {
    let fleet = Fleet::start(CAPTURES.iter().map(|m| BmcSpec::new(&mockup(m))).collect());
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path();
    let site = cwd.join("lab");
    assert_eq!(rackplan(cwd, &["init", "lab"]).code, 0);
    let mut bmcs = String::from("bmcs:\n");
    for b in &fleet.bmcs {
        bmcs.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    std::fs::write(site.join("bmcs.yaml"), bmcs).unwrap();
    let r = rackplan(cwd, &["discover", "redfish", "--site", "lab"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // Links down are the day's cabling: they do not keep a node from being management.
    let r = rackplan(cwd, &["init", "lab", "--from", "lab/nodes.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("roles: 3 management\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("can be acknowledged per node in nodes.yaml"),
        "{}",
        r.stdout
    );

    // 1. check stops on the links down: one row for the kind, with its nodes.
    let (code, screen) = in_terminal(cwd, 80, &["check", "--site", "lab"]);
    assert_eq!(code, 1, "{screen}");
    assert_fits("check", 80, &screen);
    assert_eq!(
        screen
            .matches("link down on a port a bond needs (5 on 2 nodes)")
            .count(),
        1,
        "{screen}"
    );
    assert!(screen.contains("`-v` shows each"), "{screen}");
    let r = rackplan(cwd, &["check", "--site", "lab", "-v"]);
    let rows = r
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("link"))
        .count();
    assert_eq!(rows, 5, "each finding on its own row: {}", r.stdout);
    let r = rackplan(cwd, &["plan", "--site", "lab"]);
    assert_eq!(
        r.code, 0,
        "plan assigns; render is what refuses: {}",
        r.stderr
    );
    let r = rackplan(cwd, &["render", "--site", "lab"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);

    // The name check offers for the RAID volume, which people confirm at the console.
    let (_, v) = check_json(cwd);
    let fix = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["node"] == HPE && f["code"] == "disk-path-ambiguous")
        .map(|f| f["fix"].as_str().unwrap().to_string())
        .unwrap();
    let candidate = fix
        .split("install_device: ")
        .nth(1)
        .and_then(|s| s.split('`').next())
        .unwrap()
        .to_string();

    // 2. A disk the installer cannot find cannot be acknowledged: refused at its line,
    //    by every command that reads the site.
    edit_nodes(&site, |n| {
        if n["id"] == HPE {
            n["annotations"]["acknowledged"] =
                json!([{"finding": "disk-path-ambiguous", "reason": "we will see at install"}]);
        }
    });
    for cmd in ["check", "plan", "render"] {
        let r = rackplan(cwd, &[cmd, "--site", "lab"]);
        assert_eq!(r.code, 2, "{cmd}: {}", r.stdout);
        let e = crate::support::flat(&r.stderr);
        assert!(
            e.contains("lab/nodes.yaml:")
                && e.contains(
                    "acknowledged[0].finding: `disk-path-ambiguous` cannot be acknowledged"
                )
                && e.contains("the installer needs this disk's path"),
            "{cmd}: {e}"
        );
    }
    // What people do instead: confirm that name, and acknowledge the cables that come on
    // Tuesday.
    let until = "2099-01-20";
    edit_nodes(&site, |n| {
        if n["id"] == HPE {
            n["annotations"]
                .as_object_mut()
                .unwrap()
                .remove("acknowledged");
            n["annotations"]["install_device"] = json!(candidate);
        }
        if DELLS.contains(&n["id"].as_str().unwrap()) {
            n["annotations"]["acknowledged"] = json!([{"finding": "link-down", "reason": "cables come on Tuesday", "until": until}]);
        }
    });

    // 3. check passes, showing what was acknowledged and why.
    let (code, screen) = in_terminal(cwd, 80, &["check", "--site", "lab"]);
    assert_eq!(code, 0, "{screen}");
    assert_fits("check", 80, &screen);
    assert!(
        screen.contains("acknowledged in nodes.yaml (shown, not counted):"),
        "{screen}"
    );
    assert!(
        screen.contains("0 error(s)") && screen.contains("5 acknowledged"),
        "{screen}"
    );
    let (code, v) = check_json(cwd);
    assert_eq!(
        (code, v["errors"].clone(), v["acknowledged"].clone()),
        (0, json!(0), json!(5))
    );
    crate::output_schemas::assert_valid("check", &v);
    for f in v["findings"].as_array().unwrap() {
        if f["code"] == "link-down" {
            assert!(DELLS.contains(&f["node"].as_str().unwrap()), "{f}");
            assert_eq!(
                f["acknowledged"],
                json!({"reason": "cables come on Tuesday", "until": until})
            );
        } else {
            assert!(f["acknowledged"].is_null(), "{f}");
        }
    }

    // 4. plan and render go on; SUMMARY.md carries the acknowledgements.
    let r = rackplan(cwd, &["plan", "--site", "lab"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, screen) = in_terminal(cwd, 80, &["render", "--site", "lab"]);
    assert_eq!(code, 0, "{screen}");
    assert_fits("render", 80, &screen);
    assert!(screen.contains('┆'), "a table, not records: {screen}");
    insta::assert_snapshot!("render_at_80", screen);
    crate::render::assert_summary_matches_configs(&site.join("iso-config"));
    let summary = std::fs::read_to_string(site.join("iso-config/SUMMARY.md")).unwrap();
    let acked = summary.split("## Acknowledged findings").nth(1).unwrap();
    assert_eq!(
        acked
            .matches("| cables come on Tuesday | 2099-01-20 |")
            .count(),
        5,
        "{acked}"
    );

    // 5. Past its last day an acknowledgement counts for nothing, and check says so.
    edit_nodes(&site, |n| {
        if DELLS.contains(&n["id"].as_str().unwrap()) {
            n["annotations"]["acknowledged"][0]["until"] = json!("2020-01-31");
        }
    });
    let (code, v) = check_json(cwd);
    assert_eq!(code, 1);
    let findings = v["findings"].as_array().unwrap();
    let expired: Vec<&Value> = findings
        .iter()
        .filter(|f| f["code"] == "acknowledgement-expired")
        .collect();
    assert_eq!(expired.len(), 2, "{findings:#?}");
    assert!(
        expired[0]["what"]
            .as_str()
            .unwrap()
            .contains("ended on 2020-01-31 (cables come on Tuesday)"),
        "{expired:#?}"
    );
    assert!(
        findings
            .iter()
            .filter(|f| f["code"] == "link-down")
            .all(|f| f["acknowledged"].is_null() && f["severity"] == "error")
    );
    assert_eq!(rackplan(cwd, &["render", "--site", "lab"]).code, 1);
}
