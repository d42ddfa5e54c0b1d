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
            "; {} runs short: the tightest resource, ",
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

/// On a fleet of three nodes with room to spare, what strands on losing one is the
/// placement's rules, not a shortage, and the review says so; with more than the hosts
/// can hold, it says what does not fit with every host up.
#[test]
fn what_stops_says_rules_rather_than_a_shortage_and_what_never_fits() {
    let original =
        std::fs::read_to_string(repo().join("simulations/reference-factory.yaml")).unwrap();
    let three = original.replace("count: 24", "count: 0");
    assert_ne!(three, original);
    let dir = tempfile::tempdir().unwrap();
    let text_of = |clusters: u32| {
        let text = three.replace(
            "- {shape: standard, count: 60}",
            &format!("- {{shape: standard, count: {clusters}}}"),
        );
        let p = dir.path().join(format!("three-{clusters}.yaml"));
        std::fs::write(&p, text).unwrap();
        crate::support::flat(&simulate_text(&p))
    };
    let one = text_of(1);
    assert!(
        one.contains("Max clusters: no more standard clusters: the fleet fails as it is.")
            && one.contains("What stops it: as the fleet is, losing node mgmt-0")
            && one.contains("no resource runs short in total (memory, the tightest, has")
            && one.contains("placement's rules strand them"),
        "{one}"
    );
    let sixty = text_of(60);
    assert!(
        sixty.contains("What stops it: as the fleet is, 330 VM(s) and 1050 replica(s) do not fit even with every host up; memory runs short"),
        "{sixty}"
    );
}
