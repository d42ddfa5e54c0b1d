//! The control-plane section as the reports read it, from the review of a small planned
//! fleet of many small VMs (where the control plane stops growth first).

use super::build::findings;
use crate::report::review::markdown_of;
use crate::report::simulate::findings_text;
use crate::simulate::{ScenarioInput, Study, StudyInput, questions};

const TINY: &str = "name: many small VMs
fleet:
  classes:
    - {name: mgmt, count: 3, threads: 8, memory_gib: 32, disks: 1, disk_tb: 2, racks: [r1, r2, r3]}
    - {name: compute, count: 6, threads: 64, memory_gib: 512, disks: 2, disk_tb: 8, racks: [r1, r2, r3]}
shapes:
  tiny:
    pools:
      - {name: vms, count: 50, vcpu: 1, memory_gib: 1, disks_gib: [10]}
clusters:
  - {shape: tiny, count: 4}
analysis: {max_clusters_shape: tiny, risk_trials: 50}
";

fn report() -> crate::simulate::Report {
    let l = Study::open(&StudyInput {
        scenario: ScenarioInput::Text {
            name: std::path::Path::new("tiny.yaml"),
            text: TINY,
        },
        site: None,
        dump: None,
        rebuild_what_if: None,
    })
    .unwrap();
    questions::review(&l)
}

#[test]
fn the_control_plane_section_reads_as_pinned() {
    let r = report();
    let f = findings(&r, None);
    let ids: Vec<&str> = f.sections.iter().map(|s| s.id).collect();
    let at = ids.iter().position(|i| *i == "control-plane").unwrap();
    assert_eq!(ids[at - 1], "capacity");
    let only = super::model::Findings {
        sections: vec![f.sections[at].clone()],
        ..f.clone()
    };
    let (md, _) = markdown_of(&only, &[], "r");
    insta::assert_snapshot!("control_plane_markdown", md);
    // The screen shows the same sentences, and names where the constants are.
    crate::report::set_width(100);
    let text = findings_text(&only);
    assert!(
        text.contains(
            "rows of constant, value, unit, origin, source: --report and --output json list them"
        ),
        "{text}"
    );
    let capacity = &f.sections[at - 1];
    let max = capacity
        .blocks
        .iter()
        .find_map(|b| match b {
            super::model::Block::Text(t) if t.starts_with("Max clusters") => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert!(max.contains("the control plane stops it"), "{max}");
}

#[test]
fn a_fleet_with_no_shape_to_add_is_not_compared_with_the_hosts() {
    let text = TINY.split("shapes:").next().unwrap();
    let l = Study::open(&StudyInput {
        scenario: ScenarioInput::Text {
            name: std::path::Path::new("bare.yaml"),
            text,
        },
        site: None,
        dump: None,
        rebuild_what_if: None,
    })
    .unwrap();
    let r = questions::review(&l);
    let f = findings(&r, None);
    let cp = f.sections.iter().find(|s| s.id == "control-plane").unwrap();
    let only = super::model::Findings {
        sections: vec![cp.clone()],
        ..f.clone()
    };
    crate::report::set_width(100);
    let text = findings_text(&only);
    assert!(
        text.contains("the fleet as it is stays within every control-plane limit"),
        "{text}"
    );
    assert!(!text.contains("before the hosts'"), "{text}");
}
