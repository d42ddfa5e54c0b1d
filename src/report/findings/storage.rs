//! The storage sections of the review: the rebuild after losing a node (where its replicas
//! go, node by node and disk by disk, the disks the pile overfills and what Longhorn then
//! does, how long, the limit sweep and the recommended limit with the rule behind it), and
//! the risk of data loss with every figure's interval and method.

use super::glossary::{COPYSET, RISK_LEAVES_OUT, SCATTER_WIDTH, defined};
use super::model::Section;
use crate::simulate::failure::risk::{EXACT_EXPECTATION, Rate};
use crate::simulate::place::DiskChoice;
use crate::simulate::report::{
    Estimate, OtherRule, OverfillFix, RebuildReport, RiskFigures, TieSpread, refresh_words,
};
use crate::units::TIB;
use crate::words::{group, hours, pct, round_count, sentence, share};

/// A rate of events per year with its 95 % interval, read aloud: "2.43e-7 per year (95 %
/// CI 2.11e-7 to 2.80e-7), about one every 4,100,000 years".
pub(crate) fn rate_text(d: &Rate) -> String {
    if d.is_zero() {
        return "none (no copyset, or no failure of that kind, in the model)".into();
    }
    if d.upper_bound_only {
        return format!(
            "none in {} trial-years: fewer than one every {} years (95 % upper bound, not an estimate)",
            group(d.draws),
            round_count(1.0 / d.ci95[1].max(1e-300))
        );
    }
    let wide = if d.strata.is_empty() || d.ci95[1] <= 2.0 * d.ci95[0] {
        String::new()
    } else {
        let factor = if d.ci95[0] > 0.0 {
            format!("{:.1} times", d.ci95[1] / d.ci95[0])
        } else {
            "unboundedly more than".into()
        };
        format!(
            "; the interval is wide (its upper end {factor} its lower): the few draws that find a loss carry most of the weight, so the figure is known to that factor only; a larger `analysis.risk_trials` narrows it"
        )
    };
    format!(
        "{:.2e} per year (95 % CI {:.2e} to {:.2e}), about one every {} years{wide}",
        d.per_year,
        d.ci95[0],
        d.ci95[1],
        round_count(1.0 / d.per_year)
    )
}

#[allow(clippy::too_many_lines)] // the rebuild, top to bottom
pub(crate) fn rebuild_section(rb: &RebuildReport) -> Section {
    let mut b = Section::new(
        "rebuild",
        format!("Rebuild after losing {}", rb.failed_node),
    );
    let what_if = rb
        .what_if_tib
        .map_or_else(String::new, |t| format!(", what-if: it holds {t} TiB"));
    b.text(match rb.hours_to_full_redundancy {
        Some(hrs) => format!(
            "After losing {}{what_if} ({} replicas, {:.2} TiB), full redundancy returns in {hrs:.2} h at concurrent-replica-rebuild-per-node-limit {}; bottleneck: {}.",
            rb.failed_node,
            rb.replicas_to_rebuild,
            rb.tib_to_rebuild.max(0.0),
            rb.limit,
            rb.bottleneck
        ),
        None => format!(
            "After losing {}{what_if} ({} replicas, {:.2} TiB), full redundancy is never restored at limit {}: {}.",
            rb.failed_node,
            rb.replicas_to_rebuild,
            rb.tib_to_rebuild.max(0.0),
            rb.limit,
            rb.never.as_deref().unwrap_or("")
        ),
    });
    if rb.replicas_to_rebuild > 0 {
        b.text(format!(
            "Placement ({}): {}.",
            rb.longhorn, rb.placement_rule
        ));
        b.table(
            &[
                "rack",
                "receiving nodes",
                "replicas",
                "TiB",
                "transfer hours",
            ],
            rb.by_rack
                .iter()
                .map(|x| {
                    vec![
                        x.rack.clone(),
                        format!("{} of {}", x.receiving_nodes, x.nodes),
                        x.replicas.to_string(),
                        format!("{:.2}", x.tib),
                        hours(x.transfer_hours),
                    ]
                })
                .collect(),
        );
    }
    if !rb.receiving_disks.is_empty() {
        receiving_disks(&mut b, rb);
    }
    if let Some(t) = &rb.ties {
        b.text(ties_text(t));
    }
    if let Some(o) = &rb.other_rule {
        b.text(other_rule_text(o, rb.scheduled_refresh_every));
    }
    b.text(match (rb.exposure_hours_median, rb.exposure_hours_max) {
        (Some(m), Some(x)) => format!(
            "Exposure per volume (hours without full redundancy): median {m:.2} h, max {x:.2} h."
        ),
        (m, _) => format!(
            "Exposure per volume (hours without full redundancy): median {}, max never (some volumes stay without full redundancy until the node is replaced).",
            m.map_or_else(|| "never".into(), |m| format!("{m:.2} h"))
        ),
    });
    if rb.detached_not_rebuilt > 0 {
        b.text(format!(
            "{} replica(s) of detached volumes are not rebuilt until their VM starts (offline replica rebuilding is off).",
            rb.detached_not_rebuilt
        ));
    }
    b.table(
        &[
            "limit",
            "hours",
            "peak link share",
            "peak disk share",
            "bottleneck",
        ],
        rb.sweep
            .iter()
            .map(|p| {
                vec![
                    p.limit.to_string(),
                    hours(p.hours),
                    pct(p.peak_link_share),
                    pct(p.peak_disk_share),
                    p.bottleneck.clone(),
                ]
            })
            .collect(),
    );
    b.text(match rb.recommended_limit {
        Some(k) => format!(
            "Recommendation: set concurrent-replica-rebuild-per-node-limit to {k}{}. Rule: {}.",
            if rb.recommendation_fell_back {
                " (no limit near the fastest keeps rebuild traffic under the share; the smallest near it)"
            } else {
                ""
            },
            rb.recommendation_rule
        ),
        None => {
            "No concurrent-replica-rebuild-per-node-limit from 1 to 8 restores full redundancy."
                .into()
        }
    });
    b.chart("rebuild-limit.svg");
    b
}

/// Rows of the receiving disks a screen shows.
const DISK_ROWS: usize = 8;

/// The receiving disks, each with its data against its free space before the failure; when
/// some overfill, what Longhorn then does.
fn receiving_disks(b: &mut super::model::Section, rb: &RebuildReport) {
    let tib = |x: f64| format!("{:.2}", x / TIB);
    let mut nodes: Vec<&str> = rb.receiving_disks.iter().map(|d| d.node.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    b.text(format!(
        "Receiving disks ({} on {} node(s)): the data each receives against its free space before the failure, which the scheduler reads for the whole burst.",
        rb.receiving_disks.len(),
        nodes.len()
    ));
    b.long_table(
        &[
            "node",
            "disk",
            "replicas",
            "TiB",
            "free TiB",
            "over TiB",
            "full at h",
        ],
        rb.receiving_disks
            .iter()
            .map(|d| {
                vec![
                    d.node.clone(),
                    d.disk.clone(),
                    d.replicas.to_string(),
                    tib(d.bytes),
                    tib(d.free_bytes),
                    if d.overfill_bytes > 0.0 {
                        tib(d.overfill_bytes)
                    } else {
                        "-".into()
                    },
                    d.full_after_h
                        .map_or_else(|| "-".into(), |h| format!("{h:.2}")),
                ]
            })
            .collect(),
        DISK_ROWS,
    );
    if rb.overfilled_disks > 0 {
        b.text(format!(
            "{} disk(s) overfill: Longhorn checks no free space when a rebuild starts. On a full disk the engine sets each replica whose write fails to ERR, rebuilding or healthy (longhorn-engine handleDiskNoSpaceErrorForReplicas); longhorn-manager marks it failed, deletes a failed new replica (created never to be reused) and creates another by the same rule, which avoids the disk only once its next statfs (every 30 s) makes it unschedulable; the volumes whose healthy replicas failed there are degraded in turn. No finite time is given; \"full at h\" is when the disk fills, hours after the failure.",
            rb.overfilled_disks
        ));
    }
}

/// What would stop the burst overfilling its disks, each computed: a lower
/// over-provisioning percentage, the other disk rule (for the "What would fix it" section).
pub(crate) fn overfill_fix(f: &mut super::model::Section, o: &OverfillFix, overfilled: usize) {
    f.text(match (o.over_provisioning_pct, o.hours_at_that) {
        (Some(pct), Some(h)) => format!(
            "The rebuild overfills {overfilled} disk(s). Lowering storage-over-provisioning-percentage to {pct} % (from {} %) stops it: full redundancy in {h:.2} h over {} receiving disk(s) (found by creating the burst again at each whole percent; what is placed stays where it is).",
            o.from_pct, o.disks_at_that
        ),
        _ => format!(
            "The rebuild overfills {overfilled} disk(s), and no storage-over-provisioning-percentage below {} % stops it (each whole percent tried).",
            o.from_pct
        ),
    });
    f.text(format!(
        "Or the disk rule of {}: {} on the same fleet, {}.",
        o.other_rule,
        o.other_rule_hours.map_or_else(
            || "full redundancy never returns".into(),
            |h| format!("{h:.2} h")
        ),
        match o.other_rule_overfilled {
            0 => "no disk overfilled".to_string(),
            k => format!("{k} disk(s) overfilled"),
        }
    ));
}

/// Exactly tied disks: one draw of Go's map order, and what other draws give.
fn ties_text(t: &TieSpread) -> String {
    let spread = match (t.hours_min, t.hours_max) {
        (Some(lo), Some(hi)) if t.draws_never == 0 => format!("{lo:.2} h to {hi:.2} h"),
        (Some(lo), Some(hi)) => format!(
            "{lo:.2} h to {hi:.2} h, and never in {} of them",
            t.draws_never
        ),
        _ => format!("never in all {}", t.draws),
    };
    let nodes = if t.receiving_nodes_min == t.receiving_nodes_max {
        format!("{} receiving node(s)", t.receiving_nodes_min)
    } else {
        format!(
            "{} to {} receiving nodes",
            t.receiving_nodes_min, t.receiving_nodes_max
        )
    };
    format!(
        "Ties: {} replica(s) went to one of up to {} disks that Longhorn ranks exactly equal; it takes the last of Go's map order, a new order each time, so this answer is one draw: it and {} others give {spread} ({nodes}).",
        t.tied_replicas,
        t.widest_tie,
        t.draws.saturating_sub(1)
    )
}

/// The same rebuild under the other disk rule, with the refresh the balance score assumes.
fn other_rule_text(o: &OtherRule, refresh_every: u32) -> String {
    let spread = match (o.receiving_disks, o.overfilled_disks) {
        (0, _) => String::new(),
        (d, 0) => format!(
            "; {} node(s), {d} disk(s), none overfilled",
            o.receiving_nodes
        ),
        (d, k) => format!(
            "; {} node(s), {d} disk(s), {k} overfilled",
            o.receiving_nodes
        ),
    };
    let assumes = match (o.rule, refresh_every) {
        (DiskChoice::BalanceScore, 1) => "; a best case: its spread assumes the scheduler sees each new replica in storageScheduled before it places the next (platform.scheduled_refresh_every: 1); a lagging refresh piles the burst up".to_string(),
        (DiskChoice::BalanceScore, n) => format!(
            "; with storageScheduled seen refreshed {} (platform.scheduled_refresh_every)",
            refresh_words(n)
        ),
        (DiskChoice::MostAvailable, _) => String::new(),
    };
    format!(
        "With the disk rule of {}, it would be {} ({}{spread}){assumes}.",
        o.longhorn,
        o.hours_to_full_redundancy
            .map_or_else(|| "never complete".into(), |h| format!("{h:.2} h")),
        o.bottleneck,
    )
}

/// The risk section: every figure a rate with its interval, the method named.
pub(crate) fn risk_section(k: &RiskFigures) -> Section {
    let e = &k.estimate;
    let mut rk = Section::new("risk", "Risk of data loss");
    rk.text(format!("Model: {}.", e.model));
    rk.text(format!(
        "Estimated by {}{}.",
        e.method_name,
        match (e.trials, e.years) {
            (Some(t), Some(y)) => format!(", {} trials x {y} years", group(u64::from(t))),
            _ => String::new(),
        }
    ));
    rk.text(defined(&COPYSET));
    rk.text(format!(
        "Exposure window of a permanently failed node: {:.2} h ({}).",
        k.exposure_window_h, k.exposure_window_from
    ));
    rk.text(format!("Data loss: {}.", rate_text(&e.data_loss)));
    rk.text(format!("{RISK_LEAVES_OUT}."));
    rk.text(format!(
        "A volume unavailable: {}.",
        rate_text(&e.unavailable)
    ));
    rk.text(if e.vm_downtime_method == EXACT_EXPECTATION {
        format!(
            "VM downtime: {:.1} VM-hours per year ({}).",
            e.expected_vm_downtime_hours_per_year, e.vm_downtime_method
        )
    } else {
        format!(
            "VM downtime: {:.1} VM-hours per year (95 % CI {:.1} to {:.1}).",
            e.expected_vm_downtime_hours_per_year, e.ci95_vm_downtime[0], e.ci95_vm_downtime[1]
        )
    });
    rk.table(
        &[
            "replicas",
            "data-loss events per year (95 % CI)",
            "draws",
            "found",
        ],
        k.by_replicas
            .iter()
            .map(|x| {
                vec![
                    x.replicas.to_string(),
                    rate_text(&x.data_loss),
                    group(x.data_loss.draws),
                    group(x.data_loss.hits),
                ]
            })
            .collect(),
    );
    rk.text(format!(
        "One replica group against the Markov chain: {}.",
        k.markov.explanation.trim_end_matches('.')
    ));
    let c = &k.correlated;
    let figure = |e: &Estimate, mc: f64, ci: [f64; 2], hits: u64| {
        format!(
            "{} {} (Monte Carlo {}, 95 % CI {} to {}, {} of {} trials)",
            e.method,
            share(e.value),
            share(mc),
            share(ci[0]),
            share(ci[1]),
            group(hits),
            group(u64::from(c.trials))
        )
    };
    rk.text(format!(
        "{} nodes failing at once (a what-if: how often that happens is not part of it), the chance that some volume loses all its replicas: with Longhorn's placement ({} copysets), {}.",
        c.failed_nodes,
        group(c.longhorn_copysets as u64),
        figure(
            &c.longhorn,
            c.longhorn_monte_carlo,
            c.longhorn_ci95,
            c.longhorn_hits
        )
    ));
    rk.text(match &c.not_compared {
        Some(why) => format!("Copyset placement: {}", sentence(why)),
        None => format!(
            "{} With copyset placement, scatter width {} (measured {:.1}, {} copysets): {}.",
            defined(&SCATTER_WIDTH),
            c.scatter_width,
            c.scatter_width_measured,
            group(c.copyset_copysets as u64),
            figure(
                &c.copyset,
                c.copyset_monte_carlo,
                c.copyset_ci95,
                c.copyset_hits
            )
        ),
    });
    rk.chart("risk-replicas.svg");
    rk
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(ci95: [f64; 2]) -> Rate {
        Rate {
            per_year: 4e-6,
            ci95,
            upper_bound_only: false,
            draws: 71_680,
            hits: 806,
            strata: vec![crate::simulate::failure::risk::Stratum {
                in_progress: 2,
                probability: 0.2,
                draws: 71_680,
                hits: 806,
                per_year: 4e-6,
            }],
        }
    }

    #[test]
    fn a_wide_interval_says_so_and_why() {
        let narrow = rate_text(&rate([3e-6, 5.5e-6]));
        assert!(!narrow.contains("wide"), "{narrow}");
        let wide = rate_text(&rate([2.4e-6, 1.1e-5]));
        assert!(
            wide.contains("the interval is wide (its upper end 4.6 times its lower)"),
            "{wide}"
        );
        assert!(wide.contains("analysis.risk_trials"), "{wide}");
        let open = rate_text(&rate([0.0, 1.1e-5]));
        assert!(open.contains("unboundedly more than its lower"), "{open}");
    }
}
