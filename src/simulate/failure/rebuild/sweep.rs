//! The rebuild at every `concurrent-replica-rebuild-per-node-limit` from 1 to 8, and the
//! limit recommended from them.

use serde::Serialize;

use super::model::{RebuildInput, simulate};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SweepPoint {
    pub(crate) limit: u32,
    /// `None`: full redundancy is never restored at this limit.
    pub(crate) hours: Option<f64>,
    pub(crate) bottleneck: String,
    pub(crate) peak_link_share: f64,
    pub(crate) peak_disk_share: f64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Recommendation {
    /// `None` when no limit from 1 to 8 restores full redundancy.
    pub(crate) limit: Option<u32>,
    /// No limit within 10 % of the fastest kept rebuild traffic under the share: the
    /// smallest within 10 % is given instead.
    pub(crate) fell_back: bool,
    /// The rule, in words, with its numbers.
    pub(crate) rule: String,
}

/// Within this share of the fastest limit's time, a limit counts as as fast.
pub(crate) const NEAR_FASTEST: f64 = 0.10;

/// Rebuild time for limits 1..=8 and the recommended limit: the smallest within 10 % of the
/// fastest whose rebuild leaves at least `1 - share` of every link and disk to foreground
/// I/O (or, falling back, simply the smallest within 10 %).
pub(crate) fn sweep(input: &RebuildInput, share: f64) -> (Vec<SweepPoint>, Recommendation) {
    let points: Vec<SweepPoint> = (1..=8)
        .map(|k| {
            let mut i = input.clone();
            i.limit = k;
            let r = simulate(&i);
            SweepPoint {
                limit: k,
                hours: r.hours_to_full_redundancy,
                bottleneck: r.limited_by,
                peak_link_share: r.peak_link_share,
                peak_disk_share: r.peak_disk_share,
            }
        })
        .collect();
    let best = points
        .iter()
        .filter_map(|p| p.hours)
        .fold(f64::INFINITY, f64::min);
    let pct = |x: f64| crate::words::percent(x, 0);
    if !best.is_finite() {
        return (
            points,
            Recommendation {
                limit: None,
                fell_back: false,
                rule: "the smallest limit from 1 to 8 within 10 % of the fastest; none restores full redundancy".into(),
            },
        );
    }
    let near: Vec<&SweepPoint> = points
        .iter()
        .filter(|p| p.hours.is_some_and(|h| h <= best * (1.0 + NEAR_FASTEST)))
        .collect();
    let cut = best * (1.0 + NEAR_FASTEST);
    let rule = format!(
        "the smallest limit at most {} slower than the fastest (so at most {cut:.2} h) whose rebuild takes at most {} of any node's link and disk (analysis.warn.rebuild_share); else the smallest at most {cut:.2} h",
        pct(NEAR_FASTEST),
        pct(share),
    );
    let within = near
        .iter()
        .find(|p| p.peak_link_share <= share && p.peak_disk_share <= share);
    let rec = match within {
        Some(p) => Recommendation {
            limit: Some(p.limit),
            fell_back: false,
            rule,
        },
        None => Recommendation {
            limit: near.first().map(|p| p.limit),
            fell_back: true,
            rule,
        },
    };
    (points, rec)
}
