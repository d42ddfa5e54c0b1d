//! The risk model simulated plainly, year by year: the cross-check of the conditional
//! estimate (`conditional`), feasible where events are not rare (2 replicas, or inflated
//! failure rates).
//!
//! The model: failure events with fixed repair windows (not the Markov chain of `mttdl`,
//! kept as a cross-check of one replica group). One trial simulates `years` of a fleet: per
//! node, transient failures (reboots, exponential durations) and permanent ones (the node's
//! replicas are missing for a fixed window: the rebuild model's time to full redundancy, or
//! the node's replacement time when the rebuild never restores it); per rack, outages that
//! take all its nodes down, a share of which do not come back; and bursts (a failure that
//! takes a second node of the same rack with it). A loss starts when a permanent failure
//! arrives on a node while every other node of one of its copysets has its replicas
//! missing; an unavailability when a failure of any kind arrives while every other node of
//! one of its copysets is down. Trials are seeded by (seed, trial index) and reduced in
//! index order, so the result is the same for any number of threads.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use super::closed_form::{exp, key, mean_ci};
use super::copysets::{Copysets, combos};
use crate::simulate::scenario::Failures;

pub const HOURS_PER_YEAR: f64 = 8766.0;

#[derive(Debug, Clone)]
pub struct FleetRisk {
    pub rack_of: Vec<usize>,
    pub racks: usize,
    pub copysets: Copysets,
    /// Per node: VMs that restart elsewhere when it fails, and VMs that cannot (headroom
    /// strands them) and stay down until it is back or replaced.
    pub vms_restartable: Vec<f64>,
    pub vms_stranded: Vec<f64>,
    pub failures: Failures,
    /// Hours a permanently failed node's replicas stay missing (rebuild model, or the
    /// replacement time when redundancy is never restored).
    pub window_h: f64,
    /// Host failure to VM running elsewhere; `None`: VMs wait for their host.
    pub vm_restart_s: Option<f64>,
}

/// What the plain simulation saw.
#[derive(Debug, Clone)]
pub struct Plain {
    pub(crate) trials: u32,
    pub(crate) years: u32,
    /// Loss and unavailability starts seen, and the trial-years with at least one.
    pub loss_events: u64,
    pub(crate) loss_years: u64,
    pub(crate) unavailable_events: u64,
    pub(crate) unavailable_years: u64,
    pub(crate) trial_years: u64,
    /// Starts per year: mean and 95 % interval over trials.
    pub loss_per_year: (f64, f64),
    /// VM-hours down per year: mean and 95 % half-width.
    pub vm_downtime: (f64, f64),
}

struct Event {
    start: f64,
    end: f64,
    node: usize,
    permanent: bool,
    /// Hours the node itself is gone (its VMs' outage when they cannot restart elsewhere).
    host_down_h: f64,
}

#[derive(Default)]
struct TrialOut {
    loss: (u32, u32),
    unavailable: (u32, u32),
    downtime_h: f64,
}

/// Loss (or unavailability) starts in a sorted event list: (starts, years with one).
fn sweep(events: &[&Event], sets: &Copysets, years: u32) -> (u32, u32) {
    // (node, end) of the windows open; one per node, the later end kept.
    let mut active: Vec<(usize, f64)> = Vec::new();
    let mut hit = vec![false; years as usize];
    let mut starts = 0u32;
    let r = sets.r;
    for e in events {
        let mut end = e.end;
        active.retain(|&(node, until)| {
            if node == e.node {
                end = end.max(until);
            }
            until > e.start && node != e.node
        });
        if active.len() + 1 >= r {
            let others: Vec<usize> = active.iter().map(|a| a.0).collect();
            let found = if r == 1 {
                sets.contains(key(&[e.node]))
            } else {
                let mut idx = vec![0usize; r - 1];
                combos(others.len(), r - 1, &mut idx, 0, 0, &mut |c| {
                    let mut nodes: Vec<usize> = c.iter().map(|&i| others[i]).collect();
                    nodes.push(e.node);
                    sets.contains(key(&nodes))
                })
            };
            if found {
                starts += 1;
                let y = ((e.start / HOURS_PER_YEAR) as usize).min(years as usize - 1);
                hit[y] = true;
            }
        }
        active.push((e.node, end));
    }
    (starts, hit.iter().filter(|h| **h).count() as u32)
}

fn trial(fr: &FleetRisk, years: u32, rng: &mut ChaCha8Rng) -> TrialOut {
    let f = &fr.failures;
    let horizon = f64::from(years) * HOURS_PER_YEAR;
    let n = fr.rack_of.len();
    let by_rack: Vec<Vec<usize>> = (0..fr.racks)
        .map(|r| (0..n).filter(|&i| fr.rack_of[i] == r).collect())
        .collect();
    let mut events: Vec<Event> = Vec::new();
    let add = |events: &mut Vec<Event>,
               rng: &mut ChaCha8Rng,
               node: usize,
               t: f64,
               permanent: bool,
               dur: f64| {
        let host_down_h = if permanent {
            f.node_replacement_hours.max(dur)
        } else {
            dur
        };
        events.push(Event {
            start: t,
            end: t + dur,
            node,
            permanent,
            host_down_h,
        });
        if f.burst_fraction > 0.0 && rng.random::<f64>() < f.burst_fraction {
            let mates = &by_rack[fr.rack_of[node]];
            if mates.len() > 1 {
                let mut m = mates[rng.random_range(0..mates.len())];
                while m == node {
                    m = mates[rng.random_range(0..mates.len())];
                }
                let shift = rng.random::<f64>() * 120.0 / 3600.0;
                events.push(Event {
                    start: t + shift,
                    end: t + shift + dur,
                    node: m,
                    permanent,
                    host_down_h,
                });
            }
        }
    };
    for node in 0..n {
        if f.node_transient_per_year > 0.0 {
            let rate = f.node_transient_per_year / HOURS_PER_YEAR;
            let mut t = exp(rng, rate);
            while t < horizon {
                let dur = exp(rng, 60.0 / f.transient_minutes.max(1e-6));
                add(&mut events, rng, node, t, false, dur);
                t += exp(rng, rate);
            }
        }
        if f.node_permanent_per_year > 0.0 {
            let rate = f.node_permanent_per_year / HOURS_PER_YEAR;
            let mut t = exp(rng, rate);
            while t < horizon {
                add(&mut events, rng, node, t, true, fr.window_h);
                t += exp(rng, rate);
            }
        }
    }
    if f.rack_events_per_year > 0.0 {
        let rate = f.rack_events_per_year / HOURS_PER_YEAR;
        for members in &by_rack {
            let mut t = exp(rng, rate);
            while t < horizon {
                for &m in members {
                    let permanent = rng.random::<f64>() < f.rack_event_permanent_share;
                    let dur = if permanent {
                        fr.window_h
                    } else {
                        f.rack_outage_hours
                    };
                    events.push(Event {
                        start: t,
                        end: t + dur,
                        node: m,
                        permanent,
                        host_down_h: if permanent {
                            f.node_replacement_hours.max(dur)
                        } else {
                            dur
                        },
                    });
                }
                t += exp(rng, rate);
            }
        }
    }
    events.sort_by(|a, b| a.start.total_cmp(&b.start));
    let perm: Vec<&Event> = events.iter().filter(|e| e.permanent).collect();
    let all: Vec<&Event> = events.iter().collect();
    let restart_h = fr.vm_restart_s.map_or(f64::INFINITY, |s| s / 3600.0);
    let downtime_h = events
        .iter()
        .map(|e| {
            fr.vms_restartable[e.node] * e.host_down_h.min(restart_h)
                + fr.vms_stranded[e.node] * e.host_down_h
        })
        .sum();
    TrialOut {
        loss: sweep(&perm, &fr.copysets, years),
        unavailable: sweep(&all, &fr.copysets, years),
        downtime_h,
    }
}

/// `trials` independent trials of `years` years each.
pub fn monte_carlo(fr: &FleetRisk, years: u32, trials: u32, seed: u64) -> Plain {
    let years = years.max(1);
    let trials = trials.max(1);
    let outs: Vec<TrialOut> = (0..trials)
        .into_par_iter()
        .map(|t| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(u64::from(t));
            trial(fr, years, &mut rng)
        })
        .collect();
    let y = f64::from(years);
    let per_year = |f: &dyn Fn(&TrialOut) -> f64| -> (f64, f64) {
        let v: Vec<f64> = outs.iter().map(|o| f(o) / y).collect();
        mean_ci(&v)
    };
    let sum = |f: &dyn Fn(&TrialOut) -> u32| -> u64 { outs.iter().map(|o| u64::from(f(o))).sum() };
    Plain {
        trials,
        years,
        loss_events: sum(&|o| o.loss.0),
        loss_years: sum(&|o| o.loss.1),
        unavailable_events: sum(&|o| o.unavailable.0),
        unavailable_years: sum(&|o| o.unavailable.1),
        trial_years: u64::from(trials) * u64::from(years),
        loss_per_year: per_year(&|o| f64::from(o.loss.0)),
        vm_downtime: per_year(&|o| o.downtime_h),
    }
}

#[cfg(test)]
mod tests {
    use super::super::closed_form::{
        choose, mttdl, mttdl_monte_carlo, p_loss_copyset, p_loss_random,
    };
    use super::*;

    #[test]
    fn copysets_paper_closed_forms() {
        // Cidon et al., ATC 2013: N = 5000, R = 3, 1 % of nodes (50) fail at once.
        let ramcloud = p_loss_random(5000, 3, 50, 5000.0 * 8000.0 / 3.0);
        assert!(ramcloud > 0.9999, "{ramcloud}");
        let minimal = p_loss_copyset(5000, 3, 2, 50);
        assert!((minimal - 0.0015).abs() < 0.0002, "{minimal}");
        let fb_random = p_loss_random(5000, 3, 50, 5000.0 * choose(11, 2));
        assert!((fb_random - 0.228).abs() < 0.002, "{fb_random}");
        let fb_copyset = p_loss_copyset(5000, 3, 10, 50);
        assert!((fb_copyset - 0.0078).abs() < 0.0002, "{fb_copyset}");
    }

    #[test]
    fn markov_formulas_agree_with_their_limits() {
        let (l, m) = (0.001, 1.0);
        assert!((mttdl(3, l, m) / (m * m / (6.0 * l.powi(3))) - 1.0).abs() < 0.01);
        assert!((mttdl(2, l, m) / (m / (2.0 * l * l)) - 1.0).abs() < 0.01);
    }

    #[test]
    fn monte_carlo_of_one_group_converges_to_markov_mttdl() {
        for (r, l, m) in [(3, 1.0, 10.0), (3, 0.5, 3.0), (2, 1.0, 5.0)] {
            let (mean, half) = mttdl_monte_carlo(r, l, m, 20_000, 7);
            let want = mttdl(r, l, m);
            assert!(
                (mean - want).abs() <= half.max(want * 0.01),
                "R={r}: MC {mean} ± {half}, Markov {want}"
            );
        }
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let fr = FleetRisk {
            rack_of: (0..12).map(|i| i % 3).collect(),
            racks: 3,
            copysets: Copysets::random(12, 3, 200, 3),
            vms_restartable: vec![10.0; 12],
            vms_stranded: vec![0.0; 12],
            failures: Failures {
                node_permanent_per_year: 0.5,
                ..Failures::default()
            },
            window_h: 24.0,
            vm_restart_s: Some(150.0),
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| monte_carlo(&fr, 5, 300, 9));
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
            .install(|| monte_carlo(&fr, 5, 300, 9));
        assert_eq!(one.loss_events, three.loss_events);
        assert_eq!(
            one.loss_per_year.0.to_bits(),
            three.loss_per_year.0.to_bits()
        );
        assert_eq!(one.vm_downtime.0.to_bits(), three.vm_downtime.0.to_bits());
        assert!(one.unavailable_events > 0);
    }
}
