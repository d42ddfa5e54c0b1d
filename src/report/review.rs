//! The capacity review report (`simulate --report`): HTML, one self-contained file with
//! the charts inline as SVG and no external asset, or Markdown with the charts beside it.
//! The verdict comes first in one sentence, then what would fix it, headroom per failure,
//! capacity and the timeline, rebuild, risk, warnings, and every assumption with its source
//! so that a reviewer can challenge it.

use super::escape::html as html_escape;
use super::escape::markdown as md_cell;
use std::fmt::Write as _;

use super::simulate::{group, plots, rate_text, share};
use crate::simulate::failure::risk::EXACT_EXPECTATION;
use crate::simulate::{self, Report, failure::headroom::Kind};

/// One part of the report.
struct Section {
    id: &'static str,
    title: String,
    text: Vec<String>,
    tables: Vec<(Vec<String>, Vec<Vec<String>>)>,
    /// File names of `plots` shown here.
    charts: Vec<&'static str>,
}

impl Section {
    fn new(id: &'static str, title: &str) -> Section {
        Section {
            id,
            title: title.to_string(),
            text: Vec::new(),
            tables: Vec::new(),
            charts: Vec::new(),
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

/// The verdict in one sentence.
pub fn verdict_sentence(r: &Report) -> String {
    let rb = &r.rebuild;
    if r.verdict.passes() {
        let rebuild = match rb.hours_to_full_redundancy {
            Some(h) if rb.replicas_to_rebuild > 0 => format!(
                "; after losing {}, the busiest node, full redundancy returns in {h:.2} h",
                rb.failed_node
            ),
            _ => String::new(),
        };
        format!(
            "PASS: {} survives every single node and rack failure: each lost VM restarts elsewhere and each lost replica is re-homed{rebuild}.",
            r.scenario
        )
    } else {
        format!(
            "FAIL: {}: {}.",
            r.scenario,
            r.verdict_reasons
                .first()
                .map_or("a failure strands VMs or replicas", String::as_str)
        )
    }
}

#[allow(clippy::too_many_lines)] // the sections, in the order they are read
fn sections(r: &Report) -> Vec<Section> {
    let mut out = Vec::new();
    let mut v = Section::new("verdict", "Verdict");
    v.text.push(verdict_sentence(r));
    for why in r.verdict_reasons.iter().skip(1) {
        v.text.push(why.clone());
    }
    if let Some(l) = &r.live {
        v.text.push(format!(
            "Fleet as it runs, read from {}: {} nodes in {} racks ({} witness), {} tenant clusters, {} VMs running, {} Longhorn volumes with {} replicas.",
            l.source, r.nodes, r.racks, l.witness_nodes, l.tenant_clusters, l.vmis_running, l.volumes, l.replicas
        ));
        if let Some(why) = &l.vms_skipped {
            v.text.push(format!(
                "No VMs were seen ({why}): no failure can strand one, so the headroom verdict says nothing about VMs."
            ));
        }
    } else {
        v.text.push(format!(
            "{} nodes in {} racks, {} clusters, {} VMs, {} volumes.",
            r.nodes, r.racks, r.clusters, r.vms, r.volumes
        ));
    }
    out.push(v);

    let mut f = Section::new("fix", "What would fix it");
    match &r.fix {
        None => f
            .text
            .push("Nothing needs fixing: the verdict passes.".into()),
        Some(x) => {
            match &x.add_nodes {
                Some(a) => f.text.push(format!(
                    "Add {} node(s) like {}, in rack(s) {} (found by placing and checking again).",
                    a.count,
                    a.like,
                    a.racks.join(", ")
                )),
                None => f.text.push(format!(
                    "Adding up to {} nodes does not pass.",
                    x.searched_nodes
                )),
            }
            if let Some(rc) = &x.remove_clusters {
                f.text
                    .push(format!("Or remove {} {} cluster(s).", rc.count, rc.shape));
            }
        }
    }
    out.push(f);

    if let Some(l) = &r.live {
        let mut d = Section::new("dump", "What the dump held");
        if !l.cordoned.is_empty() {
            d.text.push(format!(
                "Taking no new VM (cordoned, in maintenance, not Ready, or not VM-schedulable): {}.",
                l.cordoned.join(", ")
            ));
        }
        for s in &l.skipped_analyses {
            d.text.push(format!("Skipped: {s}."));
        }
        for s in &l.scenario_overridden {
            d.text.push(format!("The dump wins: {s}."));
        }
        if l.findings.is_empty() {
            d.text.push("Findings: none.".into());
        } else {
            d.tables.push((
                strings(&["finding"]),
                l.findings.iter().map(|x| vec![x.clone()]).collect(),
            ));
        }
        if !l.skipped_objects.is_empty() {
            d.tables.push((
                strings(&["not read"]),
                l.skipped_objects.iter().map(|x| vec![x.clone()]).collect(),
            ));
        }
        if !l.notes.is_empty() {
            d.tables.push((
                strings(&["note"]),
                l.notes.iter().map(|x| vec![x.clone()]).collect(),
            ));
        }
        out.push(d);
    }

    let h = &r.headroom;
    let mut s = Section::new("headroom", "Headroom by re-placement");
    s.text.push(format!(
        "Headroom {}: every failure below was simulated by re-placing what the failed hosts ran. Used now: cpu {}, memory {}, storage {}. The \"25 % free\" rule would say {}.",
        h.verdict.to_string().to_uppercase(),
        pct(h.utilisation.cpu),
        pct(h.utilisation.memory),
        pct(h.utilisation.storage),
        h.rule_25pct
    ));
    let nodes = h.scenarios.iter().filter(|x| x.kind == Kind::Node).count();
    let failing = h
        .scenarios
        .iter()
        .filter(|x| x.kind == Kind::Node && x.fails())
        .count();
    s.text.push(format!(
        "{nodes} single-node failures checked, {failing} fail; every rack checked. VM restart after a host failure: {}.",
        r.vm_restart.derivation
    ));
    let mut rows = Vec::new();
    let mut shown: Vec<&crate::simulate::failure::headroom::ScenarioResult> = h
        .scenarios
        .iter()
        .filter(|x| x.kind != Kind::Node || x.fails())
        .collect();
    if let Some(t) = h
        .scenarios
        .iter()
        .filter(|x| x.kind == Kind::Node)
        .min_by(|a, b| a.slack.memory.total_cmp(&b.slack.memory))
        && !shown.iter().any(|x| x.name == t.name)
    {
        shown.push(t);
    }
    for c in &h.combined {
        shown.extend(c.worst.iter().take(3));
    }
    for x in shown.iter().take(40) {
        rows.push(vec![
            x.name.clone(),
            format!("{:?}", x.kind).to_lowercase(),
            x.displaced.to_string(),
            x.stranded.to_string(),
            x.displaced_replicas.to_string(),
            x.stranded_replicas.to_string(),
            pct(x.slack.cpu),
            pct(x.slack.memory),
            pct(x.slack.storage),
        ]);
    }
    s.tables.push((
        strings(&[
            "failure",
            "kind",
            "VMs displaced",
            "VMs stranded",
            "replicas to re-home",
            "replicas stranded",
            "slack cpu",
            "slack memory",
            "slack storage",
        ]),
        rows,
    ));
    out.push(s);

    let mut c = Section::new("capacity", "Capacity: more clusters, and the months ahead");
    match &r.max_clusters {
        Some(m) => {
            c.text.push(match m.additional {
                Some(n) => format!(
                    "Max clusters: {n} more {} cluster(s) fit with every failure survived (every count from 0 to {n} placed and checked).",
                    m.shape
                ),
                None => format!(
                    "Max clusters: no more {} clusters: the fleet fails as it is.",
                    m.shape
                ),
            });
            if m.lower_bound {
                c.text.push(
                    "At least: the time budget ran out before any count failed, so more may fit."
                        .into(),
                );
            }
            if !m.passes_again.is_empty() {
                c.text.push(format!(
                    "Passes again at {} more, which is not safe: {} more already fails.",
                    m.passes_again
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    m.first_failure.unwrap_or(0)
                ));
            }
            c.charts.push("headroom-slack.svg");
        }
        None => c.text.push(
            "Max clusters: not asked (set analysis.max_clusters_shape in a scenario).".into(),
        ),
    }
    if r.timeline.is_empty() {
        c.text
            .push("Timeline: no team requests in the scenario.".into());
    } else {
        c.tables.push((
            strings(&["month", "clusters", "verdict", "min slack memory"]),
            r.timeline
                .iter()
                .map(|m| {
                    vec![
                        m.month.clone(),
                        m.clusters.to_string(),
                        m.verdict.to_string(),
                        pct(m.min_slack.memory),
                    ]
                })
                .collect(),
        ));
        c.charts.push("timeline.svg");
    }
    if !r.refused.is_empty() {
        c.tables.push((
            strings(&["refused by quota", "shape", "month", "why"]),
            r.refused
                .iter()
                .map(|f| {
                    vec![
                        f.team.clone(),
                        f.shape.clone(),
                        f.month.clone(),
                        f.reason.clone(),
                    ]
                })
                .collect(),
        ));
    }
    out.push(c);

    let rb = &r.rebuild;
    let mut b = Section::new("rebuild", "Rebuild after losing the busiest node");
    if let Some(why) = r.live.as_ref().and_then(|l| l.storage_skipped.as_deref()) {
        b.text.push(format!("Skipped: {why}."));
        out.push(b);
    } else if let Some(why) = &r.no_volumes {
        b.text.push(format!("{why}."));
        out.push(b);
    } else {
        b.text.push(match rb.hours_to_full_redundancy {
            Some(hrs) => format!(
                "After losing {} ({} replicas, {:.2} TiB), full redundancy returns in {hrs:.2} h at concurrent-replica-rebuild-per-node-limit {}; bottleneck: {}.",
                rb.failed_node, rb.replicas_to_rebuild, rb.tib_to_rebuild, rb.limit, rb.bottleneck
            ),
            None => format!(
                "After losing {} ({} replicas, {:.2} TiB), full redundancy is never restored at limit {}: {}.",
                rb.failed_node,
                rb.replicas_to_rebuild,
                rb.tib_to_rebuild,
                rb.limit,
                rb.never.as_deref().unwrap_or("")
            ),
        });
        if rb.replicas_to_rebuild > 0 {
            b.text.push(format!(
                "Placement ({}): {}.",
                rb.longhorn, rb.placement_rule
            ));
            b.tables.push((
                strings(&[
                    "rack",
                    "receiving nodes",
                    "replicas",
                    "TiB",
                    "transfer hours",
                ]),
                rb.by_rack
                    .iter()
                    .map(|x| {
                        vec![
                            x.rack.clone(),
                            format!("{} of {}", x.receiving_nodes, x.nodes),
                            x.replicas.to_string(),
                            format!("{:.2}", x.tib),
                            x.transfer_hours
                                .map_or_else(|| "never".into(), |h| format!("{h:.2}")),
                        ]
                    })
                    .collect(),
            ));
        }
        if let Some(o) = &rb.other_rule {
            b.text.push(format!(
                "With the disk rule of {}, it would be {} ({}).",
                o.longhorn,
                o.hours_to_full_redundancy
                    .map_or_else(|| "never complete".into(), |h| format!("{h:.2} h")),
                o.bottleneck
            ));
        }
        b.text.push(match rb.recommended_limit {
            Some(k) => format!(
                "Recommendation: set concurrent-replica-rebuild-per-node-limit to {k}{}. Rule: {}.",
                if rb.recommendation_fell_back {
                    " (no limit near the fastest keeps rebuild traffic under the share; the smallest near it)"
                } else {
                    ""
                },
                rb.recommendation_rule
            ),
            None => "No limit from 1 to 8 restores full redundancy.".into(),
        });
        b.tables.push((
            strings(&[
                "limit",
                "hours",
                "peak link share",
                "peak disk share",
                "bottleneck",
            ]),
            rb.sweep
                .iter()
                .map(|p| {
                    vec![
                        p.limit.to_string(),
                        p.hours
                            .map_or_else(|| "never".into(), |h| format!("{h:.2}")),
                        pct(p.peak_link_share),
                        pct(p.peak_disk_share),
                        p.bottleneck.clone(),
                    ]
                })
                .collect(),
        ));
        b.charts.push("rebuild-limit.svg");
        out.push(b);

        if let Some(k) = &r.risk.figures {
            out.push(risk_section(k));
        }
    }

    let mut w = Section::new("warnings", "Warnings");
    if r.warnings.is_empty() {
        w.text.push("None.".into());
    } else {
        w.tables.push((
            strings(&["kind", "warning"]),
            r.warnings
                .iter()
                .map(|x| vec![x.kind.to_string(), x.message.clone()])
                .collect(),
        ));
    }
    out.push(w);

    let mut a = Section::new("assumptions", "Assumptions");
    if r.assumptions.is_empty() {
        a.text
            .push("Every input is the scenario's (or its default); see the scenario file.".into());
    } else {
        a.text.push(
            if r.live.is_some() {
                "Every input the analyses used, its value and where it came from: the dump, the scenario, or rackplan's default."
            } else {
                "The inputs replica placement rests on, their values and where they came from (the scenario, the site, or rackplan's default); every other input is the scenario's or its default."
            }
            .into(),
        );
        a.tables.push((
            strings(&["input", "value", "from", "note"]),
            r.assumptions
                .iter()
                .map(|x| {
                    vec![
                        x.input.clone(),
                        x.value.clone(),
                        x.source.to_string(),
                        x.note.clone().unwrap_or_default(),
                    ]
                })
                .collect(),
        ));
    }
    out.push(a);
    out
}

/// The risk section: every figure a rate with its interval, the method named.
fn risk_section(k: &simulate::report::RiskFigures) -> Section {
    let e = &k.estimate;
    let mut rk = Section::new("risk", "Risk of data loss");
    rk.text.push(format!("Model: {}.", e.model));
    rk.text.push(format!(
        "Estimated by {}{}.",
        e.method_name,
        match (e.trials, e.years) {
            (Some(t), Some(y)) => format!(", {} trials x {y} years", group(u64::from(t))),
            _ => String::new(),
        }
    ));
    rk.text
        .push(format!("Data loss: {}.", rate_text(&e.data_loss)));
    rk.text.push(format!(
        "A volume unavailable: {}.",
        rate_text(&e.unavailable)
    ));
    rk.text.push(if e.vm_downtime_method == EXACT_EXPECTATION {
        format!(
            "VM downtime: {:.1} VM-hours per year ({}).",
            e.expected_vm_downtime_hours_per_year, e.vm_downtime_method
        )
    } else {
        format!(
            "VM downtime: {:.1} VM-hours per year (95 % CI {:.1} to {:.1}).",
            e.expected_vm_downtime_hours_per_year, e.ci95_vm_downtime[0], e.ci95_vm_downtime[1]
        )
    });
    rk.tables.push((
        strings(&[
            "replicas",
            "data-loss events per year (95 % CI)",
            "draws",
            "found",
        ]),
        k.by_replicas
            .iter()
            .map(|x| {
                vec![
                    x.replicas.to_string(),
                    rate_text(&x.data_loss),
                    group(x.data_loss.draws),
                    group(x.data_loss.hits),
                ]
            })
            .collect(),
    ));
    rk.text.push(format!(
        "One replica group against the Markov chain: {}.",
        k.markov.explanation
    ));
    let c = &k.correlated;
    rk.text.push(format!(
        "{} nodes failing at once: Longhorn's placement loses a volume with probability {} ({}; Monte Carlo {}, 95 % CI {} to {}, {} trials).",
        c.failed_nodes,
        share(c.longhorn.value),
        c.longhorn.method,
        share(c.longhorn_monte_carlo),
        share(c.longhorn_ci95[0]),
        share(c.longhorn_ci95[1]),
        group(u64::from(c.trials))
    ));
    rk.charts.push("risk-replicas.svg");
    rk
}

const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#111;line-height:1.45}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}\
#verdict p:first-of-type{font-size:1.25em;font-weight:600;padding:.6em .8em;border-radius:6px}\
.pass #verdict p:first-of-type{background:#e6f4ea;border-left:6px solid #1e8e3e}\
.fail #verdict p:first-of-type{background:#fce8e6;border-left:6px solid #d93025}\
table{border-collapse:collapse;margin:.8em 0;font-size:.92em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td:nth-child(n+2){font-variant-numeric:tabular-nums}figure{margin:1em 0}svg{max-width:100%;height:auto}";

/// The report as one self-contained HTML file.
pub fn html(r: &Report) -> String {
    let charts: Vec<(&'static str, String)> = plots(r);
    let mut s = String::new();
    let class = if r.verdict.passes() { "pass" } else { "fail" };
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Capacity review: {}</title>\n<style>{CSS}</style>\n</head>\n<body class=\"{class}\">\n<h1>Capacity review: {}</h1>\n",
        html_escape(&r.scenario),
        html_escape(&r.scenario)
    );
    if let Some(p) = provenance_text(r) {
        let _ = writeln!(s, "<p class=\"provenance\">{}</p>", html_escape(&p));
    }
    for sec in sections(r) {
        let _ = writeln!(
            s,
            "<section id=\"{}\">\n<h2>{}</h2>",
            sec.id,
            html_escape(&sec.title)
        );
        for t in &sec.text {
            let _ = writeln!(s, "<p>{}</p>", html_escape(t));
        }
        for (head, rows) in &sec.tables {
            s.push_str("<table>\n<thead><tr>");
            for h in head {
                let _ = write!(s, "<th>{}</th>", html_escape(h));
            }
            s.push_str("</tr></thead>\n<tbody>\n");
            for row in rows {
                s.push_str("<tr>");
                for c in row {
                    let _ = write!(s, "<td>{}</td>", html_escape(c));
                }
                s.push_str("</tr>\n");
            }
            s.push_str("</tbody>\n</table>\n");
        }
        for name in &sec.charts {
            if let Some((_, svg)) = charts.iter().find(|(n, _)| n == name) {
                let _ = writeln!(
                    s,
                    "<figure id=\"chart-{}\">\n{}</figure>",
                    name.trim_end_matches(".svg"),
                    svg
                );
            }
        }
        s.push_str("</section>\n");
    }
    s.push_str("<footer><p>Written by rackplan simulate. Every figure is a simulation of the model named beside it.</p></footer>\n</body>\n</html>\n");
    s
}

/// The report as Markdown, and the charts it links to as (file name, SVG), each named
/// `<stem>-<chart>.svg` to sit beside it.
pub fn markdown(r: &Report, stem: &str) -> (String, Vec<(String, String)>) {
    let charts = plots(r);
    let mut files = Vec::new();
    let mut s = format!("# Capacity review: {}\n\n", md_cell(&r.scenario));
    if let Some(p) = provenance_text(r) {
        let _ = writeln!(s, "_{}_\n", md_cell(&p));
    }
    for sec in sections(r) {
        let _ = writeln!(s, "## {}\n", md_cell(&sec.title));
        for t in &sec.text {
            let _ = writeln!(s, "{}\n", md_cell(t));
        }
        for (head, rows) in &sec.tables {
            let _ = writeln!(
                s,
                "| {} |",
                head.iter()
                    .map(|h| md_cell(h))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
            let _ = writeln!(s, "|{}", " --- |".repeat(head.len()));
            for row in rows {
                let _ = writeln!(
                    s,
                    "| {} |",
                    row.iter()
                        .map(|c| md_cell(c))
                        .collect::<Vec<_>>()
                        .join(" | ")
                );
            }
            s.push('\n');
        }
        for name in &sec.charts {
            if let Some((_, svg)) = charts.iter().find(|(n, _)| n == name) {
                let file = format!("{stem}-{name}");
                let _ = writeln!(s, "![{}]({file})\n", name.trim_end_matches(".svg"));
                files.push((file, svg.clone()));
            }
        }
    }
    (s, files)
}

/// "Generated 2026-12-01T10:00:00Z by rackplan 0.1.0 from scenario s.yaml (modified …,
/// sha256 …)": which state the report describes.
fn provenance_text(r: &Report) -> Option<String> {
    let p = r.provenance.as_ref()?;
    let inputs: Vec<String> = p
        .inputs
        .iter()
        .map(|i| {
            let mut facts = Vec::new();
            if let Some(m) = &i.modified {
                facts.push(format!("modified {m}"));
            }
            if let Some(h) = &i.sha256 {
                facts.push(format!("sha256 {h}"));
            }
            if facts.is_empty() {
                format!("{} {}", i.role, i.path)
            } else {
                format!("{} {} ({})", i.role, i.path, facts.join(", "))
            }
        })
        .collect();
    Some(format!(
        "Generated {} by rackplan {}{}.",
        p.generated_at,
        p.rackplan,
        if inputs.is_empty() {
            String::new()
        } else {
            format!(" from {}", inputs.join("; "))
        }
    ))
}
