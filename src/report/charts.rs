//! The SVG charts of a review: worst-case slack against more clusters, the timeline, the
//! rebuild's limit sweep, and data-loss rate by replica count.

use super::svg::{self, Series};
use crate::simulate::scenario::RiskMethod;
use crate::simulate::{self, Report};
use crate::words::group;

/// The SVG charts of a run, as (file name, SVG text).
#[allow(clippy::too_many_lines)] // four charts
pub(crate) fn plots(r: &Report) -> Vec<(&'static str, String)> {
    let mut files: Vec<(&'static str, String)> = Vec::new();
    if let Some(u) = &r.upgrade {
        files.push(("upgrade-timeline.svg", super::upgrade::timeline_svg(u)));
    }
    if let Some(m) = &r.max_clusters {
        let title = format!(
            "Worst-case slack after any failure vs additional {} clusters",
            m.shape
        );
        let mut c = svg::Chart::new(&title, "additional clusters", "free after re-placement (%)");
        let series = |name: &str, f: fn(&simulate::failure::headroom::Slack) -> f64| {
            Series::line(
                name,
                m.curve
                    .iter()
                    .map(|(n, s, _)| (f64::from(*n), f(s) * 100.0))
                    .collect(),
            )
        };
        c.series = vec![
            series("cpu", |s| s.cpu),
            series("memory", |s| s.memory),
            series("storage", |s| s.storage),
        ];
        c.x_integer = true;
        c.fixed_rules = vec![(0.0, "nothing left".into())];
        match m.additional {
            Some(n) => c.markers.push((f64::from(n), format!("max {n} more"))),
            None => c.note = Some("the fleet fails as it is: no more clusters fit".into()),
        }
        if let Some(f) = m.first_failure
            && m.additional != Some(f.saturating_sub(1))
        {
            c.markers.push((f64::from(f), format!("fails at {f}")));
        }
        files.push(("headroom-slack.svg", svg::render(&c)));
    }
    if !r.timeline.is_empty() {
        let mut c = svg::Chart::new(
            "Tenant clusters per month, and whether every failure is survived",
            "month",
            "clusters running",
        );
        let mut pass = Series::line("passes", Vec::new());
        let mut fail = Series::line("fails", Vec::new());
        pass.style = svg::Style::Points;
        fail.style = svg::Style::Points;
        for (i, m) in r.timeline.iter().enumerate() {
            let p = (i as f64, m.clusters as f64);
            if m.verdict.passes() {
                pass.points.push(p);
            } else {
                fail.points.push(p);
            }
            c.x_names.push((i as f64, m.month.clone()));
        }
        c.series = vec![pass, fail];
        c.y_integer = true;
        if !r.refused.is_empty() {
            c.note = Some(format!(
                "{} request(s) refused by quota are not counted",
                r.refused.len()
            ));
        }
        files.push(("timeline.svg", svg::render(&c)));
    }
    if r.no_volumes.is_some() {
        return files;
    }
    let title = format!(
        "Rebuild after losing {}: hours to full redundancy",
        r.rebuild.failed_node
    );
    let mut c = svg::Chart::new(&title, "concurrent-replica-rebuild-per-node-limit", "hours");
    c.series = vec![Series::line(
        "hours",
        r.rebuild
            .sweep
            .iter()
            .filter_map(|p| p.hours.map(|h| (f64::from(p.limit), h)))
            .collect(),
    )];
    c.x_integer = true;
    c.y_from_zero = true;
    c.rules = vec![(24.0, "24 h rebuild abort".into())];
    if let Some(k) = r.rebuild.recommended_limit {
        c.markers.push((f64::from(k), format!("recommended {k}")));
        c.caption = Some(format!("recommended: {}", r.rebuild.recommendation_rule));
    }
    let never: Vec<String> = r
        .rebuild
        .sweep
        .iter()
        .filter(|p| p.hours.is_none())
        .map(|p| p.limit.to_string())
        .collect();
    if !never.is_empty() {
        c.note = Some(format!(
            "limit {} never restores full redundancy (not plotted)",
            never.join(", ")
        ));
    }
    files.push(("rebuild-limit.svg", svg::render(&c)));
    if let Some(k) = &r.risk.figures {
        files.push(("risk-replicas.svg", risk_chart(k)));
    }
    files
}

/// Data-loss rate by replica count: every estimate with its 95 % interval; a bound (the
/// plain Monte Carlo seeing none) only as an open marker, and named.
fn risk_chart(k: &simulate::report::RiskFigures) -> String {
    let mut c = svg::Chart::new(
        "Data-loss events per year by Longhorn replica count",
        "replicas",
        "data-loss events per year",
    );
    let mut se = Series::line("95 % interval", Vec::new());
    se.style = svg::Style::Points;
    let (mut bounds, mut zero) = (Vec::new(), Vec::new());
    for b in &k.by_replicas {
        let x = f64::from(b.replicas);
        let d = &b.data_loss;
        if d.is_zero() {
            zero.push(b.replicas.to_string());
        } else if d.upper_bound_only {
            let hi = d.ci95[1].max(1e-300);
            se.points.push((x, hi));
            se.intervals.push((hi, hi));
            se.upper_bound.push(true);
            bounds.push(format!(
                "{}: none in {} trial-years",
                b.replicas,
                group(d.draws)
            ));
        } else {
            se.points.push((x, d.per_year.max(1e-300)));
            se.intervals
                .push((d.ci95[0].max(d.per_year * 1e-3).max(1e-300), d.ci95[1]));
            se.upper_bound.push(false);
        }
    }
    c.series = vec![se];
    c.log_y = true;
    c.x_integer = true;
    let mut note = vec![match k.estimate.method {
        RiskMethod::Conditional => "conditional Monte Carlo; bars are 95 % intervals".to_string(),
        RiskMethod::MonteCarlo => "plain Monte Carlo; bars are 95 % intervals".to_string(),
    }];
    if !bounds.is_empty() {
        note.push(format!(
            "open circles are 95 % upper bounds, not estimates ({})",
            bounds.join("; ")
        ));
    }
    if !zero.is_empty() {
        note.push(format!(
            "{} replica(s): no copyset can be lost (not plotted)",
            zero.join(", ")
        ));
    }
    c.note = Some(note.join("; "));
    svg::render(&c)
}
