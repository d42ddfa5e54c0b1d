//! Risk by Monte Carlo, and the closed forms it is checked against.
//!
//! The model is a Monte Carlo of failure events with fixed repair windows (not the Markov
//! chain of `mttdl`, which is kept as a cross-check of one replica group). One trial
//! simulates `years` of a fleet: per node, transient failures (reboots, exponential
//! durations) and permanent ones (the node's replicas are missing for a fixed window: the
//! rebuild model's time to full redundancy, or the node's replacement time when the
//! rebuild never restores it); per rack, outages that take all its nodes down, a share of which do not
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

/// The independence approximation for `k` distinct copysets of R among N nodes: each of
/// them lies inside the F failed nodes with probability C(F,R)/C(N,R).
pub fn p_loss_independent(n: u64, r: u64, f: u64, k: f64) -> f64 {
    if f < r || n < r {
        return 0.0;
    }
    let p = (choose(f, r) / choose(n, r)).clamp(0.0, 1.0);
    (1.0 - (1.0 - p).powf(k)).clamp(0.0, 1.0)
}

/// The same for copyset replication with scatter width `s` (S/(R-1) permutations).
pub fn p_loss_copyset(n: u64, r: u64, s: u64, f: u64) -> f64 {
    let sets = (s as f64 * n as f64) / (r as f64 * (r as f64 - 1.0));
    let p = (sets / choose(n, r)).clamp(0.0, 1.0);
    (1.0 - (1.0 - p).powf(choose(f, r))).clamp(0.0, 1.0)
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

    /// The nodes of each copyset.
    pub fn members(&self) -> impl Iterator<Item = Vec<usize>> + '_ {
        self.sorted.iter().map(|&k| {
            (0..self.r)
                .map(|i| ((k >> (16 * i)) & 0xFFFF) as usize)
                .collect()
        })
    }

    /// Mean number of other nodes a node shares a copyset with, over nodes in any.
    pub fn mean_scatter_width(&self, n: usize) -> f64 {
        let mut peers: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); n];
        for m in self.members() {
            for &a in &m {
                for &b in &m {
                    if a != b && a < n {
                        peers[a].insert(b);
                    }
                }
            }
        }
        let used: Vec<usize> = peers
            .iter()
            .map(std::collections::BTreeSet::len)
            .filter(|&l| l > 0)
            .collect();
        if used.is_empty() {
            0.0
        } else {
            used.iter().sum::<usize>() as f64 / used.len() as f64
        }
    }

    /// P(some copyset lies inside F nodes failing at once), exactly, by enumerating every
    /// F-subset of the N nodes (a subtree whose chosen nodes already hold a copyset is
    /// counted whole). `None` when N > 64 or there are more than `budget` subsets.
    pub fn exact_p_loss(&self, n: usize, f: usize, budget: f64) -> Option<f64> {
        if n > 64 || choose(n as u64, f as u64) > budget {
            return None;
        }
        if f > n {
            return Some(0.0);
        }
        let mut by_max: Vec<Vec<u64>> = vec![Vec::new(); n];
        for m in self.members() {
            if m.iter().any(|&x| x >= n) {
                continue;
            }
            let mask = m.iter().fold(0u64, |acc, &x| acc | 1 << x);
            let top = *m.iter().max().expect("r >= 1");
            by_max[top].push(mask);
        }
        fn walk(
            by_max: &[Vec<u64>],
            n: usize,
            f: usize,
            start: usize,
            depth: usize,
            mask: u64,
        ) -> u64 {
            if depth == f {
                return 0;
            }
            let mut hits = 0;
            for i in start..=n - (f - depth) {
                let m = mask | 1 << i;
                // Nodes are added in increasing order: only copysets whose largest node is
                // `i` can be completed by adding it.
                if by_max[i].iter().copied().any(|c| c & !m == 0) {
                    hits += choose((n - i - 1) as u64, (f - depth - 1) as u64) as u64;
                } else {
                    hits += walk(by_max, n, f, i + 1, depth + 1, m);
                }
            }
            hits
        }
        let hits = if f == 0 {
            0
        } else {
            walk(&by_max, n, f, 0, 0, 0)
        };
        Some(hits as f64 / choose(n as u64, f as u64))
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

    /// Copyset replication (Cidon et al.): S/(R-1) random permutations (S a multiple of
    /// R-1; the caller rounds), each cut into floor(N/R) groups of R consecutive nodes, the
    /// N mod R nodes left at its end in no group of that permutation. That is the layout
    /// `p_loss_copyset` describes: S*N/(R(R-1)) copysets when R divides N.
    pub fn copyset_replication(n: usize, r: usize, scatter: usize, seed: u64) -> Copysets {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        if r <= 1 || n < r {
            // One replica: every node is its own copyset.
            let sets: Vec<_> = (0..n).map(|i| key(&[i])).collect();
            return Copysets::new(r.max(1), sets);
        }
        let perms = (scatter / (r - 1)).max(1);
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
    let lo = if k <= 0.0 { 0.0 } else { (c - h).max(0.0) };
    let hi = if k >= n { 1.0 } else { (c + h).min(1.0) };
    [lo, hi]
}

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

impl std::fmt::Debug for Copysets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Copysets({} sets of {})", self.sorted.len(), self.r)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RiskResult {
    /// Which model produced these figures.
    pub model: String,
    pub trials: u32,
    pub years: u32,
    /// Trial-years with a loss, and with a volume unavailable, out of `trial_years`.
    pub loss_years: u64,
    pub unavailable_years: u64,
    pub trial_years: u64,
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
    /// Hours the node itself is gone (its VMs' outage when they cannot restart elsewhere).
    host_down_h: f64,
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
        model: format!(
            "Monte Carlo of failure events with fixed repair windows: permanent node failures keep their replicas missing {:.2} h, transient ones for exponential times of mean {} min, rack events {} h; bursts take a second node of the rack with probability {}",
            fr.window_h,
            fr.failures.transient_minutes,
            fr.failures.rack_outage_hours,
            fr.failures.burst_fraction
        ),
        trials,
        years,
        loss_years: loss,
        unavailable_years: unav,
        trial_years: total_years,
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

#[cfg(test)]
mod exact_tests {
    use super::*;

    /// Every F-subset of N, checked against every copyset: the plainest possible count.
    fn brute(sets: &Copysets, n: usize, f: usize) -> f64 {
        let members: Vec<Vec<usize>> = sets.members().collect();
        let (mut hit, mut all) = (0u64, 0u64);
        let mut idx = vec![0usize; f];
        combos(n, f, &mut idx, 0, 0, &mut |c| {
            all += 1;
            if members.iter().any(|m| m.iter().all(|x| c.contains(x))) {
                hit += 1;
            }
            false
        });
        hit as f64 / all as f64
    }

    #[test]
    fn exact_enumeration_matches_brute_force_and_the_monte_carlo() {
        for (n, r, chunks, f, seed) in [
            (12, 3, 30, 4, 1),
            (10, 2, 12, 3, 2),
            (20, 3, 60, 5, 3),
            (6, 3, 40, 5, 4),
        ] {
            let sets = Copysets::random(n, r, chunks, seed);
            let exact = sets.exact_p_loss(n, f, 1e7).unwrap();
            let b = brute(&sets, n, f);
            assert!(
                (exact - b).abs() < 1e-12,
                "N={n}: {exact} vs brute force {b}"
            );
            let (mc, ci) = what_if_monte_carlo(&sets, n, f, 40_000, 9);
            assert!(
                ci[0] <= exact && exact <= ci[1],
                "N={n}: exact {exact} outside MC {mc} {ci:?}"
            );
        }
    }

    #[test]
    fn the_independence_approximation_is_far_off_on_small_fleets() {
        // Six nodes, every triple a copyset: any five failing nodes hold one.
        let sets = Copysets::random(6, 3, 400, 5);
        assert_eq!(sets.len(), 20);
        assert_eq!(sets.exact_p_loss(6, 5, 1e7), Some(1.0));
        let approx = p_loss_independent(6, 3, 5, sets.len() as f64);
        assert!(
            approx < 1.0,
            "the approximation never reaches certainty: {approx}"
        );
    }

    #[test]
    fn the_copyset_layout_is_the_one_the_formula_describes() {
        // N = 30, R = 3, S = 4: two permutations of ten groups, 20 copysets (distinct unless
        // two permutations share a triple), scatter width at most 4.
        let cs = Copysets::copyset_replication(30, 3, 4, 7);
        assert!(cs.len() <= 20 && cs.len() >= 19, "{}", cs.len());
        let w = cs.mean_scatter_width(30);
        assert!(w <= 4.0 && w > 3.5, "{w}");
        let closed = p_loss_copyset(30, 3, 4, 6);
        let exact = cs.exact_p_loss(30, 6, 1e7).unwrap();
        let (_, ci) = what_if_monte_carlo(&cs, 30, 6, 40_000, 3);
        assert!(ci[0] <= exact && exact <= ci[1]);
        assert!(
            closed <= 1.0 && (closed - exact).abs() < 0.05,
            "closed {closed} exact {exact}"
        );
    }

    #[test]
    fn fixed_window_monte_carlo_matches_its_closed_form() {
        // Two nodes, one copyset of both, permanent failures only at 1 per year each, a
        // fixed 100 h window: a loss starts when one node fails while the other is down,
        // at rate 2 * lambda * (1 - exp(-lambda * w)). Losses come in clusters of about
        // 1 + 2 * lambda * w (a third failure inside the same windows), and a year has one
        // with probability 1 - exp(-rate * year / cluster).
        let lambda_y = 1.0;
        let w = 100.0;
        let fr = FleetRisk {
            rack_of: vec![0, 1],
            racks: 2,
            copysets: Copysets::new(2, [key(&[0, 1])]),
            vms_restartable: vec![0.0; 2],
            vms_stranded: vec![0.0; 2],
            failures: Failures {
                node_permanent_per_year: lambda_y,
                node_transient_per_year: 0.0,
                rack_events_per_year: 0.0,
                burst_fraction: 0.0,
                ..Failures::default()
            },
            window_h: w,
            vm_restart_s: Some(150.0),
        };
        let r = monte_carlo(&fr, 5, 20_000, 11);
        let lambda = lambda_y / HOURS_PER_YEAR;
        let rate = 2.0 * lambda * (1.0 - (-lambda * w).exp());
        let want = 1.0 - (-rate * HOURS_PER_YEAR / (1.0 + 2.0 * lambda * w)).exp();
        assert!(
            r.ci95[0] <= want && want <= r.ci95[1],
            "closed form {want} outside {:?} (MC {})",
            r.ci95,
            r.p_data_loss_per_year
        );
        assert!(r.model.contains("fixed repair windows"));
    }
}
