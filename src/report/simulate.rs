//! `simulate` on a terminal: the review's findings laid out as text (headings, indented
//! sentences, boxed tables), and the `--drain` answer.

use super::findings::{self, Block, Findings};
use super::grid::table;
use crate::simulate::{self, Report};

/// The review as terminal text.
pub fn simulate_text(r: &Report) -> String {
    findings_text(&findings::findings(r, None))
}

/// Findings as terminal text: each section under its heading, its sentences indented, its
/// tables boxed; long tables cut to their screen rows; charts left to `--plot`.
pub(crate) fn findings_text(f: &Findings) -> String {
    let mut out = format!("Capacity review: {}\n", f.scenario);
    for sec in &f.sections {
        out.push_str(&format!("\n{}\n", sec.heading));
        for b in &sec.blocks {
            match b {
                Block::Text(t) => out.push_str(&format!("  {t}\n")),
                Block::Table(t) => {
                    let shown = t.screen_rows.unwrap_or(usize::MAX);
                    if shown == 0 {
                        // A reference table (the constants and their sources): only
                        // the kept reports and JSON show it.
                        out.push_str(&format!(
                            "  {} rows of {}: --report and --output json list them\n",
                            t.rows.len(),
                            t.head.join(", ")
                        ));
                        continue;
                    }
                    let head: Vec<&str> = t.head.iter().map(String::as_str).collect();
                    let mut g = table(&head);
                    for row in t.rows.iter().take(shown) {
                        g.add_row(row);
                    }
                    out.push_str(&format!("{g}\n"));
                    if t.rows.len() > shown {
                        out.push_str(&format!(
                            "  ... and {} more (--output json lists them)\n",
                            t.rows.len() - shown
                        ));
                    }
                }
                Block::Chart(_) => {}
            }
        }
    }
    out
}

const MOVES_SHOWN: usize = 20;

/// `simulate --from-cluster --drain`: the answer first, then the moves, the volumes and
/// the next failure.
pub(crate) fn drain_text(d: &simulate::questions::DrainReport) -> String {
    let mut out = format!("Drain: {}\n\n", d.sentence);
    let mut t = table(&["VM", "from", "to", "how"]);
    // Those that do not migrate first: they are the answer.
    let mut moves: Vec<&simulate::questions::Move> = d.moves.iter().collect();
    moves.sort_by_key(|m| m.to.is_some());
    for m in moves.iter().take(MOVES_SHOWN) {
        t.add_row(vec![
            m.vm.clone(),
            m.from.clone(),
            m.to.clone().unwrap_or_else(|| "-".into()),
            m.how.clone(),
        ]);
    }
    if d.moves.is_empty() {
        out.push_str("No VM runs on these nodes.\n");
    } else {
        out.push_str(&format!("{t}\n"));
        if d.moves.len() > MOVES_SHOWN {
            out.push_str(&format!(
                "  ... and {} more live migrations (--output json lists every one)\n",
                d.moves.len() - MOVES_SHOWN
            ));
        }
        out.push_str(&format!(
            "  {} VM(s): {} live-migrate, {} stop, {} without a target\n",
            d.moves.len(),
            d.moves.len() - d.stopped - d.no_target,
            d.stopped,
            d.no_target
        ));
    }
    let degraded: usize = d.degraded.iter().map(|x| x.2).sum();
    out.push_str(&format!("\nVolumes: {degraded} lose healthy replicas\n"));
    for (before, during, count) in &d.degraded {
        out.push_str(&format!(
            "  {count} from {before} to {during} healthy replica(s)\n"
        ));
    }
    out.push_str(&format!("  degraded {}\n", d.degraded_for));
    if !d.last_replica.is_empty() {
        out.push_str(&format!(
            "  {} hold their last healthy replica on these nodes (node-drain-policy {}): {}\n",
            d.last_replica.len(),
            d.node_drain_policy,
            d.last_replica
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let bad: Vec<&simulate::questions::FurtherFailure> = d
        .further
        .iter()
        .filter(|f| f.stranded_vms + f.stranded_replicas + f.volumes_without_replica > 0)
        .collect();
    out.push_str(&format!(
        "\nA further node failure during the maintenance: {} of {} nodes would strand something\n",
        bad.len(),
        d.further.len()
    ));
    if !bad.is_empty() {
        let mut t = table(&[
            "node",
            "stranded VMs",
            "stranded replicas",
            "volumes without a replica",
        ]);
        for f in bad.iter().take(10) {
            t.add_row(vec![
                f.node.clone(),
                f.stranded_vms.to_string(),
                f.stranded_replicas.to_string(),
                f.volumes_without_replica.to_string(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    out
}
