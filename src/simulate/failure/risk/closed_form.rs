//! The closed forms the Monte Carlo is checked against: Cidon et al.'s copyset
//! probabilities, the Markov MTTDL of one replica group, and the Wilson interval.

use rand::RngExt;
use rand::rngs::ChaCha8Rng;
#[cfg(test)]
use {rand::SeedableRng, rayon::prelude::*};

/// A copyset as a sorted key (16 bits per node; up to 4 replicas).
pub(crate) fn key(nodes: &[usize]) -> u64 {
    let mut v: Vec<usize> = nodes.to_vec();
    v.sort_unstable();
    v.iter().fold(0u64, |acc, &n| (acc << 16) | n as u64)
}

pub(crate) fn choose(n: u64, k: u64) -> f64 {
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
pub(crate) fn p_loss_independent(n: u64, r: u64, f: u64, k: f64) -> f64 {
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
pub(crate) fn mttdl(r: u32, lambda: f64, mu: f64) -> f64 {
    match r {
        2 => (3.0 * lambda + mu) / (2.0 * lambda * lambda),
        3 => (11.0 * lambda * lambda + 4.0 * lambda * mu + mu * mu) / (6.0 * lambda.powi(3)),
        _ => f64::NAN,
    }
}

/// MTTDL of one replica group of `r` nodes as a birth-death Markov chain: `k` failed nodes
/// fail further at `(r - k) lambda` and are repaired at `mu` (one repair at a time, the
/// chain of `mttdl`) or at `k mu` (`parallel`: every failed node repaired at once, as
/// Longhorn rebuilds every lost replica concurrently). Expected time from all up to all
/// down, by the birth-death passage-time sum.
pub(crate) fn mttdl_chain(r: u32, lambda: f64, mu: f64, parallel: bool) -> f64 {
    let birth = |k: u32| f64::from(r - k) * lambda;
    let death = |k: u32| if parallel { f64::from(k) * mu } else { mu };
    let mut total = 0.0;
    for k in 0..r {
        // Expected time to go from k to k + 1 failed.
        let mut step = 0.0;
        for i in 0..=k {
            let mut prod = 1.0 / birth(i);
            for j in i + 1..=k {
                prod *= death(j) / birth(j);
            }
            step += prod;
        }
        total += step;
    }
    total
}

/// Loss starts per unit time of one replica group of `r` nodes in the fixed-window model:
/// a node fails at `lambda` while the `r - 1` others are inside their windows of length
/// `w`, each with probability `1 - exp(-lambda w)`, independently.
pub(crate) fn fixed_window_rate(r: u32, lambda: f64, w: f64) -> f64 {
    f64::from(r) * lambda * (1.0 - (-lambda * w).exp()).powf(f64::from(r) - 1.0)
}

pub(super) fn exp(rng: &mut ChaCha8Rng, rate: f64) -> f64 {
    -(1.0 - rng.random::<f64>()).ln() / rate
}

/// Monte Carlo of one replica group: mean time until all `r` replicas are down (the tests'
/// check of the closed forms).
#[cfg(test)]
pub(crate) fn mttdl_monte_carlo(
    r: u32,
    lambda: f64,
    mu: f64,
    trials: u32,
    seed: u64,
) -> (f64, f64) {
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

pub(super) fn mean_ci(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// Wilson 95 % interval for k successes in n.
pub(crate) fn wilson(k: u64, n: u64) -> [f64; 2] {
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
