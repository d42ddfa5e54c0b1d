//! The rebuild's wording when Longhorn's burst piles onto disks that it overfills, pinned on
//! a hand-made report: the receiving disks, the overfill and what Longhorn then does, the
//! ties, the other rule, and the computed fixes; in terminal text, Markdown and HTML.

use super::build::findings;
use super::findings_tests::{report, visible};
use super::model::Findings;
use crate::report::review::{html_of, markdown_of};
use crate::report::simulate::findings_text;
use crate::simulate::Report;
use crate::simulate::failure::rebuild::DiskLoad;
use crate::simulate::place::DiskChoice;
use crate::simulate::report::{OverfillFix, TieSpread};
use crate::units::TIB;

fn disk(
    node: &str,
    disk: &str,
    replicas: usize,
    tib: f64,
    free: f64,
    full: Option<f64>,
) -> DiskLoad {
    DiskLoad {
        node: node.into(),
        disk: disk.into(),
        replicas,
        bytes: tib * TIB,
        free_bytes: free * TIB,
        overfill_bytes: ((tib - free) * TIB).max(0.0),
        full_after_h: full,
    }
}

/// Two disks of one node take the burst; the first overfills.
fn overfilled() -> Report {
    let mut r = report();
    let rb = &mut r.rebuild;
    rb.hours_to_full_redundancy = None;
    rb.never = Some("n1/disk-4 receives 7.50 TiB of rebuilt data with 6.00 TiB free (1.50 TiB over, full 9.00 h after the failure); on a full disk Longhorn fails the replicas that write to it, rebuilding or healthy, and creates new ones, so the rebuild has no finite end here".into());
    rb.receiving_disks = vec![
        disk("n1", "disk-4", 100, 7.5, 6.0, Some(9.0)),
        disk("n1", "disk-2", 98, 5.5, 5.9, None),
    ];
    rb.overfilled_disks = 1;
    rb.ties = Some(TieSpread {
        tied_replicas: 98,
        widest_tie: 2,
        draws: 17,
        hours_min: Some(11.5),
        hours_max: Some(23.1),
        draws_never: 4,
        receiving_nodes_min: 1,
        receiving_nodes_max: 2,
    });
    rb.overfill_fix = Some(OverfillFix {
        over_provisioning_pct: Some(166),
        from_pct: 200,
        hours_at_that: Some(14.07),
        disks_at_that: 4,
        other_rule: "Longhorn v1.11".into(),
        other_rule_hours: Some(4.72),
        other_rule_overfilled: 0,
    });
    if let Some(o) = rb.other_rule.as_mut() {
        o.rule = DiskChoice::BalanceScore;
        o.hours_to_full_redundancy = Some(4.72);
        o.receiving_nodes = 7;
        o.receiving_disks = 28;
    }
    r.verdict_reasons = vec![format!(
        "after losing n3, full redundancy is never restored: {}",
        rb.never.clone().unwrap_or_default()
    )];
    r
}

/// The verdict, the fix and the rebuild sections alone.
fn rebuild_findings(r: &Report) -> Findings {
    let mut f = findings(r, None);
    f.sections
        .retain(|s| matches!(s.id, "verdict" | "fix" | "rebuild"));
    f
}

#[test]
fn an_overfilled_pile_reads_as_pinned() {
    crate::report::set_width(100);
    let r = overfilled();
    let f = rebuild_findings(&r);
    let text = findings_text(&f);
    // The disk, by how much, when it fills, and no finite time.
    assert!(text.contains("n1/disk-4 receives 7.50 TiB"), "{text}");
    assert!(text.contains("no finite end"), "{text}");
    assert!(!text.contains("returns in"), "{text}");
    // The computed fixes come first in their section.
    assert!(
        text.find("Lowering storage-over-provisioning-percentage to 166 %")
            < text.find("Add 2 node(s)"),
        "{text}"
    );
    insta::assert_snapshot!("rebuild_overfill_terminal", text);
    let (md, _) = markdown_of(&f, &[], "r");
    assert!(
        md.contains("| n1 | disk-4 | 100 | 7.50 | 6.00 | 1.50 | 9.00 |"),
        "{md}"
    );
    let html = visible(&html_of(&f, &[]));
    assert!(html.contains("disk-4") && html.contains("1.50"), "{html}");
}

#[test]
fn a_lagging_refresh_is_said_and_no_best_case_claimed() {
    let mut r = overfilled();
    r.rebuild.scheduled_refresh_every = 20;
    let text = findings_text(&rebuild_findings(&r));
    assert!(
        text.contains("storageScheduled seen refreshed after every 20 new replicas"),
        "{text}"
    );
    assert!(!text.contains("a best case"), "{text}");
}
