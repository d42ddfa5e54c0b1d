//! The risk figures as the report gives them: each a rate with its 95 % interval and the
//! method that produced it named; VM downtime as the model's exact expectation.

use serde::Serialize;

use super::conditional::{Counted, Stratum};
use super::monte_carlo::{FleetRisk, Plain, monte_carlo};
use super::strata::conditional;
use crate::simulate::scenario::RiskMethod;

/// The name of the rare-event method, as printed.
pub(crate) const CONDITIONAL: &str = "conditional Monte Carlo (each failure drawn at its rate, the failures in progress drawn from their exact stationary law, stratified by their number and importance-sampled towards nodes sharing a copyset)";
pub(crate) const PLAIN: &str = "plain Monte Carlo (trials of simulated years)";
/// `RiskResult::vm_downtime_method` when the downtime is computed, not sampled.
pub(crate) const EXACT_EXPECTATION: &str = "exact expectation";

/// Expected starts per year of a loss (or an unavailability), with its 95 % interval.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Rate {
    pub per_year: f64,
    pub ci95: [f64; 2],
    /// Only the upper end is known: the plain Monte Carlo saw none (`per_year` is 0).
    pub upper_bound_only: bool,
    /// Draws (conditional: arrivals drawn; plain: trial-years) and those that found one.
    pub(crate) draws: u64,
    pub hits: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub strata: Vec<Stratum>,
}

impl Rate {
    /// Exactly zero: no copyset, or no failure that counts.
    pub(crate) fn is_zero(&self) -> bool {
        self.per_year == 0.0 && self.ci95[1] == 0.0
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RiskResult {
    /// The stochastic model.
    pub(crate) model: String,
    /// How it was estimated: `conditional` or `monte-carlo`, and in words.
    pub(crate) method: RiskMethod,
    pub(crate) method_name: String,
    /// Plain Monte Carlo only: trials and years per trial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) trials: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) years: Option<u32>,
    /// Data-loss starts per year: a permanent failure while every other node of one of
    /// its copysets has its replicas missing.
    pub data_loss: Rate,
    /// Unavailability starts per year: every node of a copyset down at once.
    pub unavailable: Rate,
    pub(crate) expected_vm_downtime_hours_per_year: f64,
    pub(crate) ci95_vm_downtime: [f64; 2],
    /// `exact expectation` (computed from the rates) or `monte carlo`.
    pub(crate) vm_downtime_method: &'static str,
}

/// Poisson interval on `k` counted starts (Byar's approximation), as a rate over `t`.
fn poisson_ci(k: u64, t: f64) -> [f64; 2] {
    if k == 0 {
        return [0.0, 3.0 / t];
    }
    let z = 1.96;
    let k = k as f64;
    let lo = k * (1.0 - 1.0 / (9.0 * k) - z / (3.0 * k.sqrt())).powi(3);
    let k1 = k + 1.0;
    let hi = k1 * (1.0 - 1.0 / (9.0 * k1) + z / (3.0 * k1.sqrt())).powi(3);
    [lo.max(0.0) / t, hi / t]
}

fn plain_rate(events: u64, years_hit: u64, p: &Plain) -> Rate {
    let t = p.trial_years as f64;
    Rate {
        per_year: events as f64 / t,
        ci95: poisson_ci(events, t),
        upper_bound_only: events == 0,
        draws: p.trial_years,
        hits: years_hit,
        strata: Vec::new(),
    }
}

fn rare_rate(fr: &FleetRisk, counted: Counted, samples: u32, seed: u64) -> Rate {
    let e = conditional(fr, counted, samples, seed);
    Rate {
        per_year: e.per_year,
        ci95: e.ci95,
        upper_bound_only: false,
        draws: e.draws,
        hits: e.hits,
        strata: e.strata,
    }
}

/// The model's expected VM-hours down per year, exactly: per node, the rate of each kind
/// of failure event (its own, the bursts its rack-mates take it into, its rack's events)
/// times the VM-hours one costs (restartable VMs down until restarted elsewhere or the
/// host is back, stranded ones for the whole outage).
pub fn expected_vm_downtime(fr: &FleetRisk) -> f64 {
    let f = &fr.failures;
    let n = fr.rack_of.len();
    let mut size = vec![0usize; fr.racks];
    for &r in &fr.rack_of {
        size[r] += 1;
    }
    let restart = fr.vm_restart_s.map_or(f64::INFINITY, |s| s / 3600.0);
    let d = f.transient_minutes.max(1e-6) / 60.0;
    let permanent_down = f.node_replacement_hours.max(fr.window_h);
    let h = f.rack_outage_hours;
    let q = f.rack_event_permanent_share;
    (0..n)
        .map(|u| {
            let (res, st) = (fr.vms_restartable[u], fr.vms_stranded[u]);
            let g = |x: f64| res * x.min(restart) + st * x;
            // E[min(D, r)] for D exponential of mean d.
            let transient =
                res * if restart.is_finite() {
                    d * (1.0 - (-restart / d).exp())
                } else {
                    d
                } + st * d;
            let mates = if size[fr.rack_of[u]] > 1 {
                f.burst_fraction
            } else {
                0.0
            };
            (1.0 + mates)
                * (f.node_transient_per_year * transient
                    + f.node_permanent_per_year * g(permanent_down))
                + f.rack_events_per_year * (q * g(permanent_down) + (1.0 - q) * g(h))
        })
        .sum()
}

/// The data-loss rate alone (the by-replica comparison).
pub(crate) fn data_loss(
    fr: &FleetRisk,
    method: RiskMethod,
    years: u32,
    trials: u32,
    seed: u64,
) -> Rate {
    match method {
        RiskMethod::Conditional => rare_rate(fr, Counted::Permanent, trials, seed),
        RiskMethod::MonteCarlo => {
            let p = monte_carlo(fr, years, trials, seed);
            plain_rate(p.loss_events, p.loss_years, &p)
        }
    }
}

/// Every risk figure of the model, by `method`.
pub fn estimate(
    fr: &FleetRisk,
    method: RiskMethod,
    years: u32,
    trials: u32,
    seed: u64,
) -> RiskResult {
    let model = format!(
        "failure events with fixed repair windows: permanent node failures keep their replicas missing {:.2} h, transient ones for exponential times of mean {} min, rack events {} h; bursts take a second node of the rack with probability {}",
        fr.window_h,
        fr.failures.transient_minutes,
        fr.failures.rack_outage_hours,
        fr.failures.burst_fraction
    );
    match method {
        RiskMethod::Conditional => {
            let v = expected_vm_downtime(fr);
            RiskResult {
                model,
                method,
                method_name: CONDITIONAL.into(),
                trials: None,
                years: None,
                data_loss: rare_rate(fr, Counted::Permanent, trials, seed),
                unavailable: rare_rate(fr, Counted::All, trials, seed),
                expected_vm_downtime_hours_per_year: v,
                ci95_vm_downtime: [v, v],
                vm_downtime_method: EXACT_EXPECTATION,
            }
        }
        RiskMethod::MonteCarlo => {
            let p = monte_carlo(fr, years, trials, seed);
            let (mean, half) = p.vm_downtime;
            RiskResult {
                model,
                method,
                method_name: PLAIN.into(),
                trials: Some(p.trials),
                years: Some(p.years),
                data_loss: plain_rate(p.loss_events, p.loss_years, &p),
                unavailable: plain_rate(p.unavailable_events, p.unavailable_years, &p),
                expected_vm_downtime_hours_per_year: mean,
                ci95_vm_downtime: [(mean - half).max(0.0), mean + half],
                vm_downtime_method: "monte carlo",
            }
        }
    }
}
