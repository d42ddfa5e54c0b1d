//! Risk by Monte Carlo, and the closed forms it is checked against.
//!
//! One trial simulates `years` of a fleet: per node, transient failures (reboots) and
//! permanent ones (the node's replicas are missing until rebuilt, a window the rebuild
//! model gives); per rack, outages that take all its nodes down, a share of which do not
//! come back; and bursts (a failure that takes a second node of the same rack with it).
//! A volume is lost when every node of its copyset loses its replica inside overlapping
//! windows; it is unavailable when every node of its copyset is down at once. Trials are
//! seeded by (seed, trial index) and reduced in index order, so the result is the same for
//! any number of threads.

use std::collections::HashSet;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;
use serde::Serialize;

use super::scenario::Failures;

const HOURS_PER_YEAR: f64 = 8766.0;

/// A copyset as a sorted key (16 bits per node; up to 4 replicas).
pub fn key(nodes: &[usize]) -> u64 {
    let mut v: Vec<usize> = nodes.to_vec();
    v.sort_unstable();
    v.iter().fold(0u64, |acc, &n| (acc << 16) | n as u64)
}

pub fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// P(some copyset lies inside F failed nodes) when `copysets` distinct random copysets exist.
pub fn p_loss_random(n: u64, r: u64, f: u64, copysets: f64) -> f64 {
    let p = choose(f, r) / choose(n, r);
    1.0 - (1.0 - p).powf(copysets)
}

/// The same for copyset replication with scatter width `s` (S/(R-1) permutations).
pub fn p_loss_copyset(n: u64, r: u64, s: u64, f: u64) -> f64 {
    let sets = (s as f64 * n as f64) / (r as f64 * (r as f64 - 1.0));
    1.0 - (1.0 - sets / choose(n, r)).powf(choose(f, r))
}

/// Markov MTTDL of one replica group (R = 2 or 3), one repair at a time.
pub fn mttdl(r: u32, lambda: f64, mu: f64) -> f64 {
    match r {
        2 => (3.0 * lambda + mu) / (2.0 * lambda * lambda),
        3 => (11.0 * lambda * lambda + 4.0 * lambda * mu + mu * mu) / (6.0 * lambda.powi(3)),
        _ => f64::NAN,
    }
}

fn exp(rng: &mut ChaCha8Rng, rate: f64) -> f64 {
    -(1.0 - rng.random::<f64>()).ln() / rate
}

/// Monte Carlo of one replica group: mean time until all `r` replicas are down.
pub fn mttdl_monte_carlo(r: u32, lambda: f64, mu: f64, trials: u32, seed: u64) -> (f64, f64) {
    let times: Vec<f64> = (0..trials)
        .into_par_iter()
        .map(|t| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(u64::from(t));
            let (mut down, mut now) = (0u32, 0.0);
            while down < r {
                let fail = f64::from(r - down) * lambda;
                let repair = if down > 0 { mu } else { 0.0 };
                now += exp(&mut rng, fail + repair);
                if rng.random::<f64>() < fail / (fail + repair) {
                    down += 1;
                } else {
                    down -= 1;
                }
            }
            now
        })
        .collect();
    mean_ci(&times)
}

fn mean_ci(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// Copysets of explicit placements, for the what-if Monte Carlo.
#[derive(Clone)]
pub struct Copysets {
    pub r: usize,
    sorted: Vec<u64>,
}

impl Copysets {
    pub fn new(r: usize, sets: impl IntoIterator<Item = u64>) -> Copysets {
        let keys: Vec<u64> = sets.into_iter().collect();
        // Bucket by the smallest node (the highest 16 bits in use), then sort each small
        // bucket: linear in the number of chunks, which matters at millions of them.
        let shift = 16 * (r.max(1) as u32 - 1);
        let top = |k: u64| (k >> shift) as usize;
        let buckets = keys.iter().map(|&k| top(k) + 1).max().unwrap_or(0);
        let mut start = vec![0usize; buckets + 1];
        for &k in &keys {
            start[top(k) + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut sorted = vec![0u64; keys.len()];
        for &k in &keys {
            sorted[fill[top(k)]] = k;
            fill[top(k)] += 1;
        }
        for w in start.windows(2) {
            sorted[w[0]..w[1]].sort_unstable();
        }
        sorted.dedup();
        Copysets { r, sorted }
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    pub fn contains(&self, k: u64) -> bool {
        self.sorted.binary_search(&k).is_ok()
    }

    /// Random replication: `chunks` chunks each on R distinct random nodes.
    pub fn random(n: usize, r: usize, chunks: usize, seed: u64) -> Copysets {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sets = (0..chunks).map(|_| {
            let mut pick = Vec::with_capacity(r);
            while pick.len() < r {
                let x = rng.random_range(0..n);
                if !pick.contains(&x) {
                    pick.push(x);
                }
            }
            key(&pick)
        });
        Copysets::new(r, sets.collect::<Vec<_>>())
    }

    /// Copyset replication (Cidon et al.): S/(R-1) random permutations, each cut into
    /// groups of R consecutive nodes.
    pub fn copyset_replication(n: usize, r: usize, scatter: usize, seed: u64) -> Copysets {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        if r <= 1 || n < r {
            // One replica: every node is its own copyset.
            let sets: Vec<_> = (0..n).map(|i| key(&[i])).collect();
            return Copysets::new(r.max(1), sets);
        }
        let perms = scatter.div_ceil(r - 1).max(1);
        let mut sets = Vec::new();
        for _ in 0..perms {
            let mut p: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                let j = rng.random_range(0..=i);
                p.swap(i, j);
            }
            for g in p.chunks_exact(r) {
                sets.push(key(g));
            }
        }
        Copysets::new(r, sets)
    }

    /// Whether some copyset lies inside `failed`. Keys sort by their smallest node (it sits
    /// in the highest bits), so each failed node's own copysets form one contiguous range:
    /// only those are checked, against a bitset of the failed nodes.
    pub fn any_inside(&self, failed: &[usize]) -> bool {
        let Some(&max) = failed.iter().max() else {
            return false;
        };
        let mut down = vec![false; max + 1];
        for &f in failed {
            down[f] = true;
        }
        let shift = 16 * (self.r as u32 - 1);
        failed.iter().any(|&u| {
            let lo = (u as u64) << shift;
            let hi = ((u as u64) + 1) << shift;
            let a = self.sorted.partition_point(|&k| k < lo);
            let b = self.sorted.partition_point(|&k| k < hi);
            self.sorted[a..b].iter().any(|&k| {
                (0..self.r - 1).all(|i| {
                    let node = ((k >> (16 * i)) & 0xFFFF) as usize;
                    node <= max && down[node]
                })
            })
        })
    }
}

/// Calls `f` on every `k`-combination of 0..n until it returns true.
fn combos(
    n: usize,
    k: usize,
    idx: &mut Vec<usize>,
    start: usize,
    depth: usize,
    f: &mut dyn FnMut(&[usize]) -> bool,
) -> bool {
    if depth == k {
        return f(idx);
    }
    for i in start..n {
        idx[depth] = i;
        if combos(n, k, idx, i + 1, depth + 1, f) {
            return true;
        }
    }
    false
}

/// P(some copyset inside `f` nodes failing at once), by Monte Carlo: (estimate, ci95 half).
pub fn what_if_monte_carlo(
    sets: &Copysets,
    n: usize,
    f: usize,
    trials: u32,
    seed: u64,
) -> (f64, [f64; 2]) {
    let hits: Vec<bool> = (0..trials)
        .into_par_iter()
        .map(|t| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(u64::from(t));
            let mut failed = Vec::with_capacity(f);
            while failed.len() < f {
                let x = rng.random_range(0..n);
                if !failed.contains(&x) {
                    failed.push(x);
                }
            }
            sets.any_inside(&failed)
        })
        .collect();
    let k = hits.iter().filter(|h| **h).count() as u64;
    let p = k as f64 / f64::from(trials);
    (p, wilson(k, u64::from(trials)))
}

/// Wilson 95 % interval for k successes in n.
pub fn wilson(k: u64, n: u64) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (k, n) = (k as f64, n as f64);
    let z = 1.96f64;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / d;
    [(c - h).max(0.0), (c + h).min(1.0)]
}

#[derive(Debug, Clone)]
pub struct FleetRisk {
    pub rack_of: Vec<usize>,
    pub racks: usize,
    pub copysets: Copysets,
    pub vms_per_node: Vec<f64>,
    pub failures: Failures,
    /// Hours a permanently failed node's replicas stay missing (rebuild model).
    pub window_h: f64,
    pub vm_restart_s: f64,
}

impl std::fmt::Debug for Copysets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Copysets({} sets of {})", self.sorted.len(), self.r)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RiskResult {
    pub trials: u32,
    pub years: u32,
    pub p_data_loss_per_year: f64,
    pub ci95: [f64; 2],
    pub p_unavailable_per_year: f64,
    pub ci95_unavailable: [f64; 2],
    pub expected_vm_downtime_hours_per_year: f64,
    pub ci95_vm_downtime: [f64; 2],
}

struct Event {
    start: f64,
    end: f64,
    node: usize,
    permanent: bool,
}

#[derive(Default)]
struct TrialOut {
    loss_years: u32,
    unavailable_years: u32,
    downtime_h: f64,
}

fn sweep(events: &[&Event], sets: &Copysets, years: u32) -> u32 {
    let mut active: Vec<&Event> = Vec::new();
    let mut hit = vec![false; years as usize];
    let r = sets.r;
    for e in events {
        active.retain(|a| a.end > e.start && a.node != e.node);
        if active.len() + 1 >= r {
            let others: Vec<usize> = active.iter().map(|a| a.node).collect();
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
                let y = ((e.start / HOURS_PER_YEAR) as usize).min(years as usize - 1);
                hit[y] = true;
            }
        }
        active.push(e);
    }
    hit.iter().filter(|h| **h).count() as u32
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
        events.push(Event {
            start: t,
            end: t + dur,
            node,
            permanent,
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
                    });
                }
                t += exp(rng, rate);
            }
        }
    }
    events.sort_by(|a, b| a.start.total_cmp(&b.start));
    let perm: Vec<&Event> = events.iter().filter(|e| e.permanent).collect();
    let all: Vec<&Event> = events.iter().collect();
    let restart_h = fr.vm_restart_s / 3600.0;
    let downtime_h = events
        .iter()
        .map(|e| fr.vms_per_node[e.node] * (e.end - e.start).min(restart_h))
        .sum();
    TrialOut {
        loss_years: sweep(&perm, &fr.copysets, years),
        unavailable_years: sweep(&all, &fr.copysets, years),
        downtime_h,
    }
}

pub fn monte_carlo(fr: &FleetRisk, years: u32, trials: u32, seed: u64) -> RiskResult {
    let outs: Vec<TrialOut> = (0..trials)
        .into_par_iter()
        .map(|t| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(u64::from(t));
            trial(fr, years, &mut rng)
        })
        .collect();
    let total_years = u64::from(trials) * u64::from(years);
    let loss: u64 = outs.iter().map(|o| u64::from(o.loss_years)).sum();
    let unav: u64 = outs.iter().map(|o| u64::from(o.unavailable_years)).sum();
    let per_year: Vec<f64> = outs
        .iter()
        .map(|o| o.downtime_h / f64::from(years))
        .collect();
    let (mean, half) = mean_ci(&per_year);
    RiskResult {
        trials,
        years,
        p_data_loss_per_year: loss as f64 / total_years as f64,
        ci95: wilson(loss, total_years),
        p_unavailable_per_year: unav as f64 / total_years as f64,
        ci95_unavailable: wilson(unav, total_years),
        expected_vm_downtime_hours_per_year: mean,
        ci95_vm_downtime: [(mean - half).max(0.0), mean + half],
    }
}

/// Distinct copysets of a placement.
pub fn copysets_of(replicas: impl IntoIterator<Item = Vec<usize>>, r: usize) -> Copysets {
    let set: HashSet<u64> = replicas
        .into_iter()
        .filter(|v| v.len() == r)
        .map(|v| key(&v))
        .collect();
    Copysets::new(r, set)
}

#[cfg(test)]
mod tests {
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
            vms_per_node: vec![10.0; 12],
            failures: Failures {
                node_permanent_per_year: 0.5,
                ..Failures::default()
            },
            window_h: 24.0,
            vm_restart_s: 150.0,
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
        assert_eq!(
            one.p_data_loss_per_year.to_bits(),
            three.p_data_loss_per_year.to_bits()
        );
        assert_eq!(
            one.expected_vm_downtime_hours_per_year.to_bits(),
            three.expected_vm_downtime_hours_per_year.to_bits()
        );
        assert!(one.p_unavailable_per_year > 0.0);
    }
}
