//! Copysets: the distinct sets of nodes that hold all of some volume's replicas, as
//! Longhorn's placement makes them or as copyset replication would (Cidon et al.), and the
//! chance that F failed nodes cover one of them, exact where the subsets can be counted.

use std::collections::HashSet;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use super::closed_form::{choose, key, wilson};

/// Copysets of explicit placements, for the what-if Monte Carlo.
#[derive(Clone)]
pub struct Copysets {
    pub(crate) r: usize,
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
    pub(crate) fn members(&self) -> impl Iterator<Item = Vec<usize>> + '_ {
        self.sorted.iter().map(|&k| {
            (0..self.r)
                .map(|i| ((k >> (16 * i)) & 0xFFFF) as usize)
                .collect()
        })
    }

    /// Mean number of other nodes a node shares a copyset with, over nodes in any.
    pub(crate) fn mean_scatter_width(&self, n: usize) -> f64 {
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

    /// P(some copyset lies inside F nodes failing at once), exactly. F < R: none can;
    /// F = R: the distinct copysets over C(N, R), at any N; otherwise by enumerating every
    /// F-subset of the N nodes (nodes added in increasing order, a subtree whose chosen
    /// nodes already hold a copyset counted whole), in parallel over the first node.
    /// `None` when there are more than `budget` subsets.
    pub(crate) fn exact_p_loss(&self, n: usize, f: usize, budget: f64) -> Option<f64> {
        if f > n || f < self.r || n == 0 {
            return Some(0.0);
        }
        let inside: Vec<Vec<usize>> = self
            .members()
            .filter(|m| m.iter().all(|&x| x < n))
            .collect();
        if f == self.r {
            return Some(inside.len() as f64 / choose(n as u64, f as u64));
        }
        if choose(n as u64, f as u64) > budget {
            return None;
        }
        Some(enumerate_hits(&inside, n, f) as f64 / choose(n as u64, f as u64))
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    pub(crate) fn contains(&self, k: u64) -> bool {
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
    pub(crate) fn any_inside(&self, failed: &[usize]) -> bool {
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

/// Failure sets enumerated at most by `exact_p_loss` in the report: a few tens of
/// millions, about a second on 2 cores.
pub const EXACT_BUDGET: f64 = 3e7;

/// How many F-subsets of 0..n hold one of `sets` (each a list of nodes below n).
fn enumerate_hits(sets: &[Vec<usize>], n: usize, f: usize) -> u64 {
    // Copysets by their largest node: adding nodes in increasing order, only those whose
    // largest node is `i` can be completed by adding `i`.
    let mut by_max: Vec<Vec<&[usize]>> = vec![Vec::new(); n];
    for m in sets {
        if let Some(&top) = m.iter().max() {
            by_max[top].push(m);
        }
    }
    fn walk(
        by_max: &[Vec<&[usize]>],
        chosen: &mut [bool],
        n: usize,
        f: usize,
        start: usize,
        depth: usize,
    ) -> u64 {
        let mut hits = 0;
        for i in start..=n - (f - depth) {
            chosen[i] = true;
            if by_max[i].iter().any(|c| c.iter().all(|&x| chosen[x])) {
                hits += choose((n - i - 1) as u64, (f - depth - 1) as u64) as u64;
            } else if depth + 1 < f {
                hits += walk(by_max, chosen, n, f, i + 1, depth + 1);
            }
            chosen[i] = false;
        }
        hits
    }
    if f == 0 || f > n {
        return 0;
    }
    (0..=n - f)
        .into_par_iter()
        .map(|first| {
            let mut chosen = vec![false; n];
            chosen[first] = true;
            if by_max[first].iter().any(|c| c.iter().all(|&x| chosen[x])) {
                choose((n - first - 1) as u64, (f - 1) as u64) as u64
            } else if f > 1 {
                walk(&by_max, &mut chosen, n, f, first + 1, 1)
            } else {
                0
            }
        })
        .sum()
}

/// Calls `f` on every `k`-combination of 0..n until it returns true.
pub(super) fn combos(
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

impl std::fmt::Debug for Copysets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Copysets({} sets of {})", self.sorted.len(), self.r)
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
mod exact_tests {
    use super::*;
    use crate::simulate::failure::risk::{
        FleetRisk, monte_carlo, p_loss_copyset, p_loss_independent,
    };
    use crate::simulate::scenario::Failures;

    const HOURS_PER_YEAR: f64 = 8766.0;

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
    fn exact_counts_at_any_node_count() {
        // 300 nodes, 200 copysets, 3 failing: exactly 200 / C(300, 3), not the
        // independence approximation (4.489137e-5).
        let sets = Copysets::random(300, 3, 200, 8);
        assert_eq!(sets.len(), 200);
        let exact = sets.exact_p_loss(300, 3, EXACT_BUDGET).unwrap();
        assert!((exact - 200.0 / 4_455_100.0).abs() < 1e-15, "{exact:e}");
        assert!((exact - 4.489237e-5).abs() < 1e-11, "{exact:e}");
        let approx = p_loss_independent(300, 3, 3, 200.0);
        assert!((approx - 4.489137e-5).abs() < 1e-10, "{approx:e}");
        // Past 64 nodes the enumeration itself: 80 nodes, 4 failing (1.6 million sets),
        // against the distinct 4-sets that hold a copyset, listed one by one.
        let sets = Copysets::random(80, 3, 150, 9);
        let mut holding = HashSet::new();
        for m in sets.members() {
            for x in (0..80).filter(|x| !m.contains(x)) {
                let mut four = m.clone();
                four.push(x);
                four.sort_unstable();
                holding.insert(four);
            }
        }
        let exact = sets.exact_p_loss(80, 4, EXACT_BUDGET).unwrap();
        let want = holding.len() as f64 / choose(80, 4);
        assert!((exact - want).abs() < 1e-15, "{exact} vs {want}");
        // Over the budget: no figure rather than a slow one.
        assert_eq!(sets.exact_p_loss(80, 4, 1e6), None);
        // Fewer failing nodes than replicas: nothing can be lost.
        assert_eq!(sets.exact_p_loss(80, 2, EXACT_BUDGET), Some(0.0));
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
        let years = wilson(r.loss_years, r.trial_years);
        assert!(
            years[0] <= want && want <= years[1],
            "closed form {want} outside {years:?}"
        );
        // Loss starts per year: the rate itself, no clustering.
        let (mean, half) = r.loss_per_year;
        let starts = rate * HOURS_PER_YEAR;
        assert!(
            (mean - starts).abs() <= half,
            "{starts} outside {mean} ± {half}"
        );
    }
}
