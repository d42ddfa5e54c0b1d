//! The conditional Monte Carlo's estimator (`conditional`'s module docs give the model):
//! the strata of failures in progress, each drawn in batches of independent streams until
//! enough draws find a loss, then more where the variance is until the interval is
//! narrow enough to read.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rayon::prelude::*;

use super::conditional::{BATCH, Counted, HITS_WANTED, Model, RareEstimate, Stratum};
use super::monte_carlo::{FleetRisk, HOURS_PER_YEAR};

fn poisson(j: u32, m: f64) -> f64 {
    let mut p = (-m).exp();
    for i in 1..=j {
        p *= m / f64::from(i);
    }
    p
}

/// Σ weight, Σ weight², hits over draws `from..to` (multiples of `BATCH`) of stratum `j`,
/// in batches of independent streams reduced in order.
fn run(model: &Model, j: u32, from: u32, to: u32, seed: u64) -> (f64, f64, u64) {
    let n = model.fr.rack_of.len();
    let batches: Vec<u32> = (from / BATCH..to / BATCH).collect();
    let parts: Vec<(f64, f64, u64)> = batches
        .par_iter()
        .map(|&b| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream((u64::from(j) << 32) | u64::from(b));
            let mut marks = vec![0u32; n];
            let mut stamp = 0u32;
            let (mut s1, mut s2, mut hits) = (0.0, 0.0, 0u64);
            for _ in 0..BATCH {
                let x = model.draw(j, &mut rng, &mut marks, &mut stamp);
                s1 += x;
                s2 += x * x;
                hits += u64::from(x > 0.0);
            }
            (s1, s2, hits)
        })
        .collect();
    parts
        .iter()
        .fold((0.0, 0.0, 0), |a, p| (a.0 + p.0, a.1 + p.1, a.2 + p.2))
}

/// The rate of loss starts (`Counted::Permanent`) or unavailability starts
/// (`Counted::All`) per year, with its 95 % interval; `samples` draws per stratum to start
/// with (more, up to 16 times, while fewer than 200 hit).
pub(crate) fn conditional(
    fr: &FleetRisk,
    counted: Counted,
    samples: u32,
    seed: u64,
) -> RareEstimate {
    let model = Model::new(fr, counted);
    let rho = Model::total(&model.arrival_cum);
    let mass = Model::total(&model.present_cum);
    let zero = RareEstimate {
        per_year: 0.0,
        ci95: [0.0, 0.0],
        draws: 0,
        hits: 0,
        strata: Vec::new(),
        tail_bound_per_year: 0.0,
    };
    if model.sets.is_empty() || rho <= 0.0 {
        return zero;
    }
    let first = model.min_racks().max(1) as u32 - 1;
    let members_max = model.members_max() as f64;
    // Enough strata that the rest hold less than 1e-4 of the first one's probability.
    let p_first = poisson(first, mass);
    let mut last = first + 2;
    let tail = |last: u32| -> f64 {
        (last + 1..last + 80)
            .map(|j| poisson(j, mass))
            .take_while(|&p| p > 0.0)
            .sum()
    };
    while last < first + 64 && tail(last) > 1e-4 * p_first {
        last += 1;
    }
    let samples = samples.clamp(BATCH, u32::MAX / 32).div_ceil(BATCH) * BATCH;
    // Per stratum: (j, P(J = j), Σw, Σw², hits, draws).
    let mut acc: Vec<(u32, f64, f64, f64, u64, u32)> = Vec::new();
    for j in first..=last {
        let pj = poisson(j, mass);
        if pj <= 0.0 {
            continue;
        }
        let (mut s1, mut s2, mut h) = run(&model, j, 0, samples, seed);
        let mut done = samples;
        while h < HITS_WANTED && done < samples.saturating_mul(16) {
            let more = run(&model, j, done, done.saturating_mul(2), seed);
            s1 += more.0;
            s2 += more.1;
            h += more.2;
            done = done.saturating_mul(2);
        }
        acc.push((j, pj, s1, s2, h, done));
    }
    let scale_of = |pj: f64| rho * pj * HOURS_PER_YEAR;
    // (estimate, variance, rule-of-three bound of strata without a hit, each stratum's
    // share of the variance).
    let totals = |acc: &[(u32, f64, f64, f64, u64, u32)]| {
        let (mut est, mut var, mut extra) = (0.0, 0.0, 0.0);
        let mut shares = Vec::with_capacity(acc.len());
        for &(j, pj, s1, s2, h, done) in acc {
            let n = f64::from(done);
            let mean = s1 / n;
            let sd2 = ((s2 / n - mean * mean) * n / (n - 1.0)).max(0.0);
            let scale = scale_of(pj);
            est += scale * mean;
            let v = scale * scale * sd2 / n;
            var += v;
            shares.push(v);
            if h == 0 {
                // Nothing seen: the rule of three on draws bounded by members x 2^j.
                extra += scale * 3.0 / n * members_max * 2f64.powf(f64::from(j));
            }
        }
        (est, var, extra, shares)
    };
    let tail_bound = rho * members_max * tail(last) * HOURS_PER_YEAR;
    // Heavy-tailed weights can leave the loss interval wide on a large fleet: draw more in
    // the stratum that holds most of the variance until the upper end is at most twice the
    // lower one (or 64 times the first budget is spent there). Unavailability, which no
    // verdict rests on, keeps its first budget.
    loop {
        let (est, var, extra, shares) = totals(&acc);
        let half = 1.96 * var.sqrt();
        let (lo, hi) = ((est - half).max(0.0), est + half + extra + tail_bound);
        if counted == Counted::All || est <= 0.0 || (lo > 0.0 && hi <= 2.0 * lo) {
            break;
        }
        let Some(k) = (0..acc.len())
            .filter(|&k| acc[k].5 < samples.saturating_mul(64) && acc[k].4 > 0)
            .max_by(|&a, &b| shares[a].total_cmp(&shares[b]))
        else {
            break;
        };
        let (j, _, _, _, _, done) = acc[k];
        let more = run(&model, j, done, done.saturating_mul(2), seed);
        acc[k].2 += more.0;
        acc[k].3 += more.1;
        acc[k].4 += more.2;
        acc[k].5 = done.saturating_mul(2);
    }
    let (est, var, upper_extra, _) = totals(&acc);
    let (mut draws, mut hits) = (0u64, 0u64);
    let mut strata = Vec::new();
    for &(j, pj, s1, _, h, done) in &acc {
        draws += u64::from(done);
        hits += h;
        strata.push(Stratum {
            in_progress: j,
            probability: pj,
            draws: u64::from(done),
            hits: h,
            per_year: scale_of(pj) * s1 / f64::from(done),
        });
    }
    let half = 1.96 * var.sqrt();
    RareEstimate {
        per_year: est,
        ci95: [(est - half).max(0.0), est + half + upper_extra + tail_bound],
        draws,
        hits,
        strata,
        tail_bound_per_year: tail_bound,
    }
}
