//! The review of a fleet: every analysis the scenario asks for, assembled into one
//! `Report` in the order it is read.

use super::fix::fix;
use super::growth::{Flow, max_clusters_from};
use super::rebuild::{placement_assumptions, rebuild_report};
use super::stops::what_stops_at;
use super::timeline::timeline_from;
use super::warnings;
use crate::simulate::control_plane;
use crate::simulate::failure::headroom::stranded_by_node;
use crate::simulate::failure::headroom::{self, Headroom, HeadroomVerdict};
use crate::simulate::failure::rebuild::{load_node, rebuild_target, what_if_node};
use crate::simulate::failure::restart;
use crate::simulate::failure::risk::{self, Copysets, fleet_risk};
use crate::simulate::place::Placement;
use crate::simulate::report::{
    ByReplicas, Correlated, Estimate, MarkovNote, NO_VOLUMES, Report, RiskFigures, RiskReport,
    Stopped, Warning,
};
use crate::simulate::scenario::{Pool, RiskMethod, Scenario};
use crate::simulate::study::Study;

/// What a long review tells its caller, and when its growth questions stop.
pub struct Watch<'a> {
    /// Told what runs: each analysis as it starts, and the counts max clusters checked.
    pub note: &'a (dyn Fn(&str) + Sync),
    /// Past this moment (`--budget`), or once `interrupted` is set (Ctrl-C), max clusters
    /// stops after the counts in hand and answers "at least"
    /// (`MaxClusters::lower_bound`), and the timeline after the months in hand; the other
    /// analyses run whole.
    pub deadline: Option<std::time::Instant>,
    pub interrupted: Option<&'a std::sync::atomic::AtomicBool>,
}

impl Watch<'_> {
    /// Nothing told, no deadline.
    pub fn quiet() -> Watch<'static> {
        Watch {
            note: &|_| {},
            deadline: None,
            interrupted: None,
        }
    }

    /// Whether the growth questions go on.
    fn flow(&self) -> Flow {
        if self
            .interrupted
            .is_some_and(|i| i.load(std::sync::atomic::Ordering::Relaxed))
        {
            Flow::Stop(Stopped::Interrupt)
        } else if self
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            Flow::Stop(Stopped::Budget)
        } else {
            Flow::Go
        }
    }
}

pub fn review(l: &Study) -> Report {
    review_with(l, &Watch::quiet())
}

/// `review`, telling `watch` what runs and stopping max clusters at its deadline.
#[allow(clippy::too_many_lines)] // the report, assembled in the order it is read
pub fn review_with(l: &Study, watch: &Watch<'_>) -> Report {
    let s = &l.scenario;
    let clusters = l.current();
    (watch.note)("placing the fleet and re-placing every failure");
    let pl = l.place(&clusters);
    let topo = pl.topo().clone();
    let headroom = headroom::analyse_with(&pl, &l.headroom_spec(&topo));
    let mut max_clusters = s.analysis.max_clusters_shape.as_deref().map(|sh| {
        (watch.note)(&format!(
            "max clusters of {sh}: placing and checking each count"
        ));
        let (mut m, at_failure) = max_clusters_from(l, pl.clone(), sh, &mut |n| {
            (watch.note)(&format!(
                "max clusters of {sh}: 0 to {} more checked, all pass",
                n.saturating_sub(1)
            ));
            watch.flow()
        });
        if let (Some(f), Some(at)) = (m.first_failure, &at_failure) {
            (watch.note)(&format!("max clusters of {sh}: what stops it at {f} more"));
            m.stops = what_stops_at(l, at, f);
        }
        m
    });
    (watch.note)("the timeline of the teams' requests");
    let (timeline, refused, timeline_stopped) = timeline_from(l, &pl, &mut |done| {
        (watch.note)(&format!("the timeline: {done} distinct month(s) checked"));
        watch.flow()
    });
    (watch.note)("rebuild, risk and warnings");

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
    let n = topo.hosts.len();
    let mut warnings = Vec::new();
    let no_volumes = pl.volumes().is_empty().then(|| NO_VOLUMES.to_string());
    let risk = if no_volumes.is_some() {
        RiskReport {
            not_applicable: no_volumes.clone(),
            figures: None,
        }
    } else {
        RiskReport {
            not_applicable: None,
            figures: Some(risk_section(
                l,
                &pl,
                &clusters,
                window_h,
                window_from,
                &stranded_on,
                &mut warnings,
            )),
        }
    };
    let vm_restart = restart::derive(&s.platform);
    warnings.extend(warnings::warnings(l, &pl, &headroom, &rebuild_report));
    // The control plane as a limit: beside the hosts' answer, and in it when it binds first.
    let control_plane = control_plane::answer(l, &pl, max_clusters.as_ref());
    if let Some(m) = max_clusters.as_mut() {
        control_plane::cap(m, &control_plane);
    }
    warnings.extend(control_plane::warnings(&control_plane));
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
    (watch.note)("the delivery time of each shape");
    let delivery = Some(crate::simulate::delivery::review_on(
        l,
        &crate::simulate::delivery::FleetNow::placed(&pl),
    ));
    Report {
        scenario: s.name.clone(),
        verdict,
        verdict_reasons,
        nodes: n,
        racks: topo.racks.len(),
        clusters: clusters.len(),
        vms: pl.vms().len(),
        volumes: pl.volumes().len(),
        vm_restart,
        headroom,
        max_clusters,
        timeline,
        timeline_stopped,
        refused,
        scheduled_expiries: l.expiries.clone(),
        rebuild: rebuild_report,
        risk,
        no_volumes,
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
        provenance: None,
        upgrade: None,
        delivery,
        control_plane: Some(control_plane),
    }
}

/// The risk section: the model by the scenario's method, 2 and 3 replicas compared, the
/// Markov chain of one group beside the fixed window, and the correlated-outage what-if.
/// `pl` is the fleet as placed; `window_h` how long a permanently failed node's replicas
/// stay missing; `stranded_on` per node the VMs headroom says cannot restart elsewhere.
pub fn risk_section(
    l: &Study,
    pl: &Placement,
    clusters: &[&[Pool]],
    window_h: f64,
    window_from: String,
    stranded_on: &[usize],
    warnings: &mut Vec<Warning>,
) -> RiskFigures {
    let s = &l.scenario;
    let a = &s.analysis;
    let fr = fleet_risk(s, pl, window_h, stranded_on);
    let estimate = risk::estimate(&fr, a.risk_method, a.risk_years, a.risk_trials, a.seed);
    let mut by_replicas = Vec::new();
    for rep in 2..=3u32 {
        if rep == s.platform.replicas
            && l.live.is_none()
            && a.risk_method == RiskMethod::Conditional
        {
            // The same fleet, estimator, draws and seed as the estimate's: its figure.
            by_replicas.push(ByReplicas {
                replicas: rep,
                data_loss: estimate.data_loss.clone(),
            });
            continue;
        }
        let mut l2 = l.clone();
        l2.scenario.platform.replicas = rep;
        let fr2 = if rep == s.platform.replicas && l.live.is_none() {
            // The scenario's fleet as placed: placing it again would give the same.
            fr.clone()
        } else {
            let pl2 = if l.live.is_some() {
                // Every running volume at `rep` replicas.
                pl.with_replicas(rep as usize)
            } else {
                l2.place(clusters)
            };
            fleet_risk(&l2.scenario, &pl2, window_h, stranded_on)
        };
        // The plain Monte Carlo compares at a quarter of its trials, as it always has.
        let trials = match a.risk_method {
            RiskMethod::Conditional => a.risk_trials,
            RiskMethod::MonteCarlo => (a.risk_trials / 4).max(100),
        };
        by_replicas.push(ByReplicas {
            replicas: rep,
            data_loss: risk::data_loss(&fr2, a.risk_method, a.risk_years, trials, a.seed),
        });
    }
    RiskFigures {
        estimate,
        exposure_window_h: window_h,
        exposure_window_from: window_from,
        markov: markov_note(s, window_h),
        by_replicas,
        correlated: correlated(s, pl, &fr.copysets, warnings),
    }
}

/// One group of 3 nodes at this window: fixed windows (the model) against the Markov
/// chains, and why the model keeps fixed windows.
fn markov_note(s: &Scenario, window_h: f64) -> MarkovNote {
    let lambda = s.failures.node_permanent_per_year;
    let w = window_h / risk::HOURS_PER_YEAR;
    let fixed = risk::fixed_window_rate(3, lambda, w);
    let inv = |t: f64| {
        if t.is_finite() && t > 0.0 {
            1.0 / t
        } else {
            0.0
        }
    };
    let one = inv(risk::mttdl(3, lambda, 1.0 / w));
    let parallel = inv(risk::mttdl_chain(3, lambda, 1.0 / w, true));
    let ratio = |x: f64| if fixed > 0.0 { x / fixed } else { f64::NAN };
    MarkovNote {
        fixed_window_per_year: fixed,
        markov_one_repair_per_year: one,
        markov_parallel_repair_per_year: parallel,
        explanation: format!(
            "the model keeps fixed repair windows (the rebuild model gives a time, and Longhorn rebuilds every failed node's replicas at once); at this {window_h:.2} h window the textbook Markov MTTDL of one 3-node group (one repair at a time) gives {:.2}x the fixed-window rate, (R-1)! to first order, as a second failed node waits for the first one's repair; a chain repairing every failed node at once gives {:.2}x; risk does not enter the verdict",
            ratio(one),
            ratio(parallel)
        ),
    }
}

/// The correlated-outage what-if: F nodes failing at once, Longhorn's placement against
/// copyset placement, exact where the failure sets can be counted.
fn correlated(
    s: &Scenario,
    pl: &Placement,
    longhorn: &Copysets,
    warnings: &mut Vec<Warning>,
) -> Correlated {
    let n = pl.topo().hosts.len();
    let f = s.analysis.correlated_failed_nodes.min(n as u32);
    let rr = s.platform.replicas as usize;
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
        risk::what_if_monte_carlo(longhorn, n, f as usize, what_if_trials, s.analysis.seed);
    let (cs_mc, cs_ci) =
        risk::what_if_monte_carlo(&cs, n, f as usize, what_if_trials, s.analysis.seed);
    let estimate = |sets: &Copysets| match sets.exact_p_loss(n, f as usize, risk::EXACT_BUDGET) {
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
    Correlated {
        failed_nodes: f,
        trials: what_if_trials,
        longhorn_copysets: longhorn.len(),
        longhorn: estimate(longhorn),
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
