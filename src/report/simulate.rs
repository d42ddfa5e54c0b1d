//! `simulate`: the verdict, headroom per scenario, max clusters and the timeline, rebuild
//! and its limit sweep, risk; and the SVG charts.

use super::svg::{self, Chart, Series};
use super::table;
use crate::simulate::{self, Report};

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

pub fn simulate_text(r: &Report) -> String {
    let h = &r.headroom;
    let mut out = format!(
        "{}: {} nodes in {} racks, {} clusters, {} VMs, {} volumes\n\n",
        r.scenario, r.nodes, r.racks, r.clusters, r.vms, r.volumes
    );
    out.push_str(&format!(
        "Headroom by re-placement: {}   (the \"25 % free\" rule says: {}; used cpu {} / memory {} / storage {})\n",
        h.verdict.to_string().to_uppercase(),
        h.rule_25pct,
        pct(h.utilisation.cpu),
        pct(h.utilisation.memory),
        pct(h.utilisation.storage)
    ));
    if let Some(d) = &h.disagreement {
        out.push_str(&format!("  they disagree: {d}\n"));
    }
    let mut t = table(&[
        "scenario",
        "displaced",
        "stranded",
        "replicas to re-home",
        "stranded replicas",
        "slack cpu",
        "slack memory",
        "slack storage",
    ]);
    let mut rows: Vec<&simulate::headroom::ScenarioResult> =
        h.scenarios.iter().filter(|s| s.failed_hosts > 1).collect();
    let worst_node = h
        .scenarios
        .iter()
        .filter(|s| s.failed_hosts == 1)
        .min_by(|a, b| a.slack.memory.total_cmp(&b.slack.memory));
    rows.extend(worst_node);
    rows.extend(
        h.scenarios
            .iter()
            .filter(|s| s.stranded > 0 && s.failed_hosts == 1)
            .take(5),
    );
    for s in rows {
        t.add_row(vec![
            s.name.clone()
                + if s.failed_hosts == 1 {
                    " (tightest node)"
                } else {
                    ""
                },
            s.displaced.to_string(),
            format!(
                "{}{}",
                s.stranded,
                if s.better_packing_exists {
                    " (a better packing exists)"
                } else {
                    ""
                }
            ),
            s.displaced_replicas.to_string(),
            s.stranded_replicas.to_string(),
            pct(s.slack.cpu),
            pct(s.slack.memory),
            pct(s.slack.storage),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    let single = h.scenarios.iter().filter(|s| s.failed_hosts == 1).count();
    out.push_str(&format!(
        "  {} single-node scenarios checked ({} fail) and every rack; shared power feeds are shown as what-ifs, outside the verdict\n\n",
        single,
        h.scenarios.iter().filter(|s| s.failed_hosts == 1 && (s.stranded > 0 || s.stranded_replicas > 0)).count()
    ));
    if let Some(m) = &r.max_clusters {
        out.push_str(&format!(
            "Max clusters: {} more `{}` cluster(s) fit with every failure survived\n",
            m.additional, m.shape
        ));
    }
    if !r.timeline.is_empty() {
        let mut t = table(&["month", "clusters", "verdict", "min slack memory"]);
        for m in &r.timeline {
            t.add_row(vec![
                m.month.clone(),
                m.clusters.to_string(),
                m.verdict.to_string(),
                pct(m.min_slack.memory),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    for f in &r.refused {
        out.push_str(&format!(
            "  refused by quota: {} {} in {} ({})\n",
            f.team, f.shape, f.month, f.reason
        ));
    }
    let rb = &r.rebuild;
    out.push_str(&format!(
        "\nRebuild after losing {} ({} replicas, {:.2} TiB): {:.2} h to full redundancy at limit {}; bottleneck: {}\n",
        rb.failed_node,
        rb.replicas_to_rebuild,
        rb.tib_to_rebuild,
        rb.hours_to_full_redundancy,
        rb.limit,
        rb.bottleneck
    ));
    out.push_str(&format!(
        "  exposure per volume: median {:.2} h, max {:.2} h",
        rb.exposure_hours_median, rb.exposure_hours_max
    ));
    if rb.aborted_rebuilds > 0 {
        out.push_str(&format!(
            "; {} replica rebuild(s) exceed Longhorn's 24 h timeout and would restart forever",
            rb.aborted_rebuilds
        ));
    }
    out.push('\n');
    let mut t = table(&["limit", "hours", "peak link share", "bottleneck"]);
    for p in &rb.sweep {
        t.add_row(vec![
            p.limit.to_string(),
            format!("{:.2}", p.hours),
            pct(p.peak_link_share),
            p.bottleneck.clone(),
        ]);
    }
    out.push_str(&format!(
        "{t}\n  recommended concurrent-replica-rebuild-per-node-limit: {}\n\n",
        rb.recommended_limit
    ));
    let k = &r.risk;
    let mc = &k.monte_carlo;
    out.push_str(&format!(
        "Risk ({} trials x {} years): P(data loss) per year {:.2e} (95 % CI {:.2e} to {:.2e}); P(a volume unavailable) per year {:.3} (95 % CI {:.3} to {:.3}); VM downtime {:.1} VM-hours per year\n",
        mc.trials, mc.years, mc.p_data_loss_per_year, mc.ci95[0], mc.ci95[1], mc.p_unavailable_per_year, mc.ci95_unavailable[0], mc.ci95_unavailable[1], mc.expected_vm_downtime_hours_per_year
    ));
    let c = &k.correlated;
    out.push_str(&format!(
        "  {} nodes failing at once: P(some volume loses all replicas) = {:.1} % with Longhorn's placement ({} copysets; closed form {:.1} %), {:.2} % with copyset placement of scatter width {} (closed form {:.2} %)\n",
        c.failed_nodes,
        c.longhorn_monte_carlo * 100.0,
        c.longhorn_copysets,
        c.longhorn_closed_form * 100.0,
        c.copyset_monte_carlo * 100.0,
        c.scatter_width,
        c.copyset_closed_form * 100.0
    ));
    out
}

/// The SVG charts of a run, as (file name, SVG text).
pub fn plots(r: &Report) -> Vec<(&'static str, String)> {
    let mut files: Vec<(&'static str, String)> = Vec::new();
    if let Some(m) = &r.max_clusters {
        let series = |name: &str, f: fn(&simulate::headroom::Slack) -> f64| Series {
            name: name.to_string(),
            points: m
                .curve
                .iter()
                .map(|(n, s, _)| (f64::from(*n), f(s) * 100.0))
                .collect(),
        };
        files.push((
            "headroom-slack.svg",
            svg::render(&Chart {
                title: &format!(
                    "Worst-case slack after any failure vs additional `{}` clusters",
                    m.shape
                ),
                x_label: "additional clusters",
                y_label: "free after re-placement (%)",
                series: vec![
                    series("cpu", |s| s.cpu),
                    series("memory", |s| s.memory),
                    series("storage", |s| s.storage),
                ],
                log_y: false,
                rule: Some((0.0, "nothing left")),
            }),
        ));
    }
    files.push((
        "rebuild-limit.svg",
        svg::render(&Chart {
            title: &format!(
                "Rebuild after losing {}: hours to full redundancy",
                r.rebuild.failed_node
            ),
            x_label: "concurrent-replica-rebuild-per-node-limit",
            y_label: "hours",
            series: vec![Series {
                name: "hours".into(),
                points: r
                    .rebuild
                    .sweep
                    .iter()
                    .map(|p| (f64::from(p.limit), p.hours))
                    .collect(),
            }],
            log_y: false,
            rule: Some((24.0, "24 h abort")),
        }),
    ));
    files.push((
        "risk-replicas.svg",
        svg::render(&Chart {
            title: "P(data loss) per year vs Longhorn replica count",
            x_label: "replicas",
            y_label: "P(loss) per year (upper 95 % bound)",
            series: vec![Series {
                name: "upper 95 %".into(),
                points: r
                    .risk
                    .by_replicas
                    .iter()
                    .map(|(n, _, ci)| (f64::from(*n), ci[1].max(1e-9)))
                    .collect(),
            }],
            log_y: true,
            rule: None,
        }),
    ));
    files
}
