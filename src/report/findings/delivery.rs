//! The review's delivery section: per catalogue shape, the predicted time to a Ready
//! cluster alone and in the burst against its target, when each milestone comes, the
//! inputs the prediction stands on and the pre-flight of the burst.

use std::collections::BTreeMap;

use super::model::Section;
use crate::report::delivery::{duration, preflight_lines, range, verdict};
use crate::simulate::delivery::{DeliveryReview, Milestone, Prediction};

/// `infrastructure 2:40, init node 4:08, control plane 6:24, Ready 6:44`.
fn milestones(p: &Prediction) -> String {
    let pick = [
        (
            Milestone::InfrastructureReady,
            "every machine's infrastructure",
        ),
        (Milestone::InitNodeReady, "init node"),
        (Milestone::ControlPlaneReady, "control plane"),
        (Milestone::WorkersReady, "workers"),
        (Milestone::ClusterReady, "Ready"),
    ];
    pick.iter()
        .filter_map(|(m, words)| {
            let at = p.milestones.iter().find(|x| x.milestone == *m)?;
            Some(format!("{words} {}", duration(at.at_s)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn delivery_section(d: &DeliveryReview) -> Section {
    let mut sec = Section::new("delivery", "Delivery time");
    if d.shapes.is_empty() {
        sec.text("No shape to deliver: the scenario has none, or the catalogue offers none of its shapes.");
        return sec;
    }
    let burst = format!("{} together", d.burst);
    sec.text(format!(
        "From admission to a Ready cluster, per shape: alone, and with {} request(s) of the shape arriving together ({}). The model follows Rancher's provisioning order; every duration is a published figure or a named assumption (--output json lists them with their sources and ranges).",
        d.burst, d.burst_from
    ));
    let rows = d
        .shapes
        .iter()
        .map(|s| {
            vec![
                s.shape.clone(),
                duration(s.idle.target_s),
                verdict(&s.idle),
                verdict(&s.burst),
                range(&s.idle),
            ]
        })
        .collect();
    sec.table(&["shape", "target", "alone", &burst, "range alone"], rows);
    for s in &d.shapes {
        match &s.idle.never {
            Some(why) => sec.text(format!("{}: never ready: {why}.", s.shape)),
            None => sec.text(format!("{} alone: {}.", s.shape, milestones(&s.idle))),
        };
    }
    if let Some(first) = d.shapes.first() {
        let inputs: Vec<String> = first
            .idle
            .inputs
            .iter()
            .filter(|i| i.input != "requests together")
            .map(|i| format!("{}: {} [{}]", i.input, i.value, i.from))
            .collect();
        sec.text(format!("Inputs: {}.", inputs.join("; ")));
    }
    // A stall every shape shares is said once.
    let mut seen: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for s in &d.shapes {
        for l in preflight_lines(&s.preflight) {
            seen.entry(l).or_default().push(&s.shape);
        }
    }
    let n = d.shapes.len();
    for (line, shapes) in &seen {
        let who = if shapes.len() == n && n > 1 {
            "every shape".to_string()
        } else {
            shapes.join(", ")
        };
        sec.text(format!("Pre-flight ({who}, {burst}), {line}"));
    }
    let mut not_checked: Vec<&String> = d
        .shapes
        .iter()
        .flat_map(|s| &s.preflight.not_checked)
        .collect();
    not_checked.sort();
    not_checked.dedup();
    for n in not_checked {
        sec.text(format!("Not checked: {n}."));
    }
    sec
}
