//! The review of a fleet: every analysis the scenario asks for, assembled into one
//! `Report` in the order it is read.

use super::fix::fix;
use super::growth::{max_clusters, timeline};
use super::rebuild::{placement_assumptions, rebuild_report};
use super::warnings;
use crate::simulate::failure::headroom::stranded_by_node;
use crate::simulate::failure::headroom::{self, Headroom, HeadroomVerdict};
use crate::simulate::failure::rebuild::{load_node, rebuild_target, what_if_node};
use crate::simulate::failure::restart;
use crate::simulate::failure::risk::{self, Copysets, fleet_risk};
use crate::simulate::report::{ByReplicas, Correlated, Estimate, Report, RiskReport, Warning};
use crate::simulate::study::Study;

#[allow(clippy::too_many_lines)] // the report, assembled in the order it is read
pub fn review(l: &Study) -> Report {
    let s = &l.scenario;
    let clusters = l.current();
    let pl = l.place(&clusters);
    let topo = pl.topo.clone();
    let headroom = headroom::analyse_with(&pl, &l.headroom_spec(&topo));
    let max_clusters = s
        .analysis
        .max_clusters_shape
        .as_deref()
        .map(|sh| max_clusters(l, sh));
    let (timeline, refused) = timeline(l);

    // Rebuild: the what-if's node loaded with its data, or the placement's fullest node.
    let (rebuild_report, r) = match &s.rebuild {
        Some(w) => {
            let node = what_if_node(&topo, w, l.fleet_classes());
            match load_node(&l.scenario.platform, &l.shapes, &pl, node, w.data_tib) {
                Ok(loaded) => rebuild_report(l, &loaded, node, Some(w.data_tib)),
                // The loader refuses what does not fit; should it get here, the placed
                // fleet is used.
                Err(_) => rebuild_report(l, &pl, rebuild_target(&l.scenario, &pl), None),
            }
        }
        None => rebuild_report(l, &pl, rebuild_target(&l.scenario, &pl), None),
    };

    // Risk, with the rebuild window as the time a failed node's replicas stay missing, or
    // the node's replacement when the rebuild never restores redundancy.
    let (window_h, window_from) = match r.hours_to_full_redundancy {
        Some(h) => (
            h.max(0.01),
            format!(
                "the rebuild model's time to full redundancy after losing {}",
                rebuild_report.failed_node
            ),
        ),
        None => (
            s.failures.node_replacement_hours,
            "failures.node_replacement_hours: the rebuild never restores full redundancy"
                .to_string(),
        ),
    };
    let stranded_on = stranded_by_node(&headroom, topo.hosts.len());
    let fr = fleet_risk(&l.scenario, &pl, window_h, &stranded_on);
    let mc = risk::monte_carlo(
        &fr,
        s.analysis.risk_years,
        s.analysis.risk_trials,
        s.analysis.seed,
    );
    let mut by_replicas = Vec::new();
    for rep in 2..=3u32 {
        let mut l2 = l.clone();
        l2.scenario.platform.replicas = rep;
        let pl2 = if l.live.is_some() {
            // Every running volume at `rep` replicas.
            pl.with_replicas(rep as usize)
        } else {
            l2.place(&clusters)
        };
        let fr2 = fleet_risk(&l2.scenario, &pl2, window_h, &stranded_on);
        let res = risk::monte_carlo(
            &fr2,
            s.analysis.risk_years,
            (s.analysis.risk_trials / 4).max(100),
            s.analysis.seed,
        );
        by_replicas.push(ByReplicas {
            replicas: rep,
            p_data_loss_per_year: res.p_data_loss_per_year,
            ci95: res.ci95,
            loss_years: res.loss_years,
            trial_years: res.trial_years,
        });
    }
    let n = topo.hosts.len();
    let f = s.analysis.correlated_failed_nodes.min(n as u32);
    let rr = s.platform.replicas as usize;
    let mut warnings = Vec::new();
    // Scatter width: a multiple of R-1 (one permutation adds R-1 peers), at most N-1.
    let step = (rr.max(2) - 1) as u32;
    let requested = s.analysis.copyset_scatter_width;
    let most = ((n.saturating_sub(1)) as u32 / step * step).max(step);
    let scatter = (requested.div_ceil(step) * step).clamp(step, most);
    if scatter != requested {
        warnings.push(Warning {
            kind: "scatter-width",
            message: format!(
                "copyset scatter width {requested} is not a multiple of replicas - 1 = {step} between {step} and {most} (N - 1 = {}); {scatter} is used",
                n.saturating_sub(1)
            ),
        });
    }
    let cs = Copysets::copyset_replication(n, rr, scatter as usize, s.analysis.seed);
    let what_if_trials = 20_000;
    let (lh_mc, lh_ci) =
        risk::what_if_monte_carlo(&fr.copysets, n, f as usize, what_if_trials, s.analysis.seed);
    let (cs_mc, cs_ci) =
        risk::what_if_monte_carlo(&cs, n, f as usize, what_if_trials, s.analysis.seed);
    let estimate = |sets: &Copysets| match sets.exact_p_loss(n, f as usize, 2e7) {
        Some(v) => Estimate {
            value: v,
            method: "exact",
        },
        None => Estimate {
            value: risk::p_loss_independent(n as u64, rr as u64, u64::from(f), sets.len() as f64),
            method: "independence approximation",
        },
    };
    let hits = |p: f64| (p * f64::from(what_if_trials)).round() as u64;
    let correlated = Correlated {
        failed_nodes: f,
        trials: what_if_trials,
        longhorn_copysets: fr.copysets.len(),
        longhorn: estimate(&fr.copysets),
        longhorn_monte_carlo: lh_mc,
        longhorn_ci95: lh_ci,
        longhorn_hits: hits(lh_mc),
        scatter_width_requested: requested,
        scatter_width: scatter,
        scatter_width_measured: cs.mean_scatter_width(n),
        copyset_copysets: cs.len(),
        copyset: estimate(&cs),
        copyset_monte_carlo: cs_mc,
        copyset_ci95: cs_ci,
        copyset_hits: hits(cs_mc),
        not_compared: (n < rr).then(|| {
            format!(
                "the fleet has fewer nodes ({n}) than replicas ({rr}): no placement can keep a volume's replicas apart, so the copyset comparison is not made"
            )
        }),
    };
    let vm_restart = restart::derive(&s.platform);
    warnings.extend(warnings::warnings(l, &pl, &headroom, &rebuild_report));
    warnings.sort_by_key(|w| w.kind == "scatter-width");

    let mut verdict_reasons = Vec::new();
    if !headroom.verdict.passes() {
        verdict_reasons.push(headroom_reason(&headroom));
    }
    if let Some(why) = &rebuild_report.never {
        verdict_reasons.push(format!(
            "after losing {}, full redundancy is never restored: {why}",
            rebuild_report.failed_node
        ));
    }
    let verdict = HeadroomVerdict::from_pass(verdict_reasons.is_empty());
    let fix = (!verdict.passes()).then(|| fix(l, &topo, &clusters));
    Report {
        scenario: s.name.clone(),
        verdict,
        verdict_reasons,
        nodes: n,
        racks: topo.racks.len(),
        clusters: clusters.len(),
        vms: pl.vms.len(),
        volumes: pl.volumes.len(),
        vm_restart,
        headroom,
        max_clusters,
        timeline,
        refused,
        rebuild: rebuild_report,
        risk: RiskReport {
            monte_carlo: mc,
            exposure_window_h: window_h,
            exposure_window_from: window_from,
            by_replicas,
            correlated,
        },
        warnings,
        fix,
        live: l.live_summary.as_ref().map(|(s, _)| s.clone()),
        assumptions: l
            .live_summary
            .as_ref()
            .map_or_else(Vec::new, |(_, a)| a.clone())
            .into_iter()
            .chain(placement_assumptions(l, &pl))
            .collect(),
    }
}

/// Why headroom fails, in one sentence.
fn headroom_reason(h: &Headroom) -> String {
    if h.unplaced_vms > 0 || h.unplaced_replicas > 0 {
        return format!(
            "{} VM(s) and {} replica(s) do not fit even with every host up",
            h.unplaced_vms, h.unplaced_replicas
        );
    }
    let failing: Vec<&headroom::ScenarioResult> = h
        .scenarios
        .iter()
        .filter(|s| s.kind.decides() && s.fails())
        .chain(
            h.combined
                .iter()
                .flat_map(|c| c.worst.iter().filter(|s| s.fails())),
        )
        .collect();
    let worst = failing.iter().max_by_key(|s| {
        (
            s.stranded + s.stranded_replicas,
            std::cmp::Reverse(s.name.clone()),
        )
    });
    match worst {
        Some(w) => format!(
            "{} failure scenario(s) strand VMs or replicas; the worst, {}, strands {} VM(s) and {} replica(s)",
            failing.len()
                + h.combined
                    .iter()
                    .map(|c| c
                        .failing
                        .saturating_sub(c.worst.iter().filter(|s| s.fails()).count()))
                    .sum::<usize>(),
            w.name,
            w.stranded,
            w.stranded_replicas
        ),
        None => "a failure scenario strands VMs or replicas".into(),
    }
}
