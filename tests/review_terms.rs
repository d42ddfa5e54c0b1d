//! The review explains itself: each term defined where it first appears, what the risk
//! model leaves out said beside its figure, and what stops max clusters named (the failure,
//! what it strands, the tightest resource), checked against the scenario with that many
//! more clusters placed.

use crate::support::{json_of, rackplan_json, repo};

fn simulate_text(scenario: &std::path::Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .arg("simulate")
        .arg(scenario)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn each_term_is_defined_where_it_first_appears_and_the_risk_says_what_it_leaves_out() {
    let text = simulate_text(&repo().join("simulations/reference-factory.yaml"));
    let lines: Vec<&str> = text.lines().collect();
    let first = |needle: &str| {
        lines
            .iter()
            .position(|l| l.to_lowercase().contains(needle))
            .unwrap_or_else(|| panic!("{needle} not in\n{text}"))
    };
    for (term, definition) in [
        ("25 % free", "The \"25 % free\" rule: the rule of thumb"),
        ("slack", "Slack: what is still free after a failure"),
        (
            "copyset",
            "Copyset: a set of nodes that together hold every replica",
        ),
        (
            "scatter width",
            "Scatter width: how many other nodes each node shares",
        ),
    ] {
        let defined = first(&definition.to_lowercase());
        assert!(
            defined <= first(term) + 1,
            "{term} is used on line {} and defined on line {defined}:\n{text}",
            first(term)
        );
    }
    let loss = first("data loss: ");
    assert!(
        lines[loss + 1].contains("What the model leaves out: failures correlated beyond the racks")
            && lines[loss + 1].contains("software faults")
            && lines[loss + 1].contains("operator error"),
        "{text}"
    );
    assert!(text.contains("(a what-if: how often that happens is not part of it)"));
}

#[test]
fn what_stops_max_clusters_is_what_that_many_more_clusters_strand() {
    let scen = repo().join("simulations/reference-factory.yaml");
    let (_, v, err) = json_of(&mut rackplan_json(&["simulate", scen.to_str().unwrap()]));
    let m = &v["max_clusters"];
    let stops = &m["stops"];
    let more = m["additional"].as_u64().unwrap_or_else(|| panic!("{err}"));
    assert_eq!(stops["count"].as_u64(), Some(more + 1), "{m:#}");
    let failure = stops["failure"].as_str().unwrap();
    let text = simulate_text(&scen);
    assert!(
        text.contains(&format!(
            "What stops it: at {} more, losing {failure} strands {} VM(s) and {} replica(s)",
            more + 1,
            stops["stranded_vms"],
            stops["stranded_replicas"]
        )) && text.contains(&format!(
            "the tightest resource then is {}",
            stops["resource"].as_str().unwrap()
        )),
        "{text}"
    );

    // The scenario with that many more standard clusters placed fails on that failure,
    // stranding what the answer says; with one fewer it passes.
    let original = std::fs::read_to_string(&scen).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let with = |extra: u64| {
        let text = original.replace(
            "- {shape: standard, count: 60}",
            &format!("- {{shape: standard, count: {}}}", 60 + extra),
        );
        assert_ne!(text, original);
        let p = dir.path().join(format!("plus-{extra}.yaml"));
        std::fs::write(&p, text).unwrap();
        let (_, v, err) = json_of(&mut rackplan_json(&["simulate", p.to_str().unwrap()]));
        assert!(v["headroom"].is_object(), "{err}");
        v
    };
    let failing = with(more + 1);
    assert_eq!(failing["headroom"]["verdict"], "fail");
    let named = failing["headroom"]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == failure)
        .unwrap();
    assert_eq!(named["stranded"], stops["stranded_vms"]);
    assert_eq!(named["stranded_replicas"], stops["stranded_replicas"]);
    let resource = stops["resource"].as_str().unwrap();
    assert_eq!(named["slack"][resource], stops["free_share"]);
    assert_eq!(with(more)["headroom"]["verdict"], "pass");
}
