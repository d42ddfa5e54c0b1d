//! The rolling upgrade (`simulate --upgrade`) for people: the answer and its blockers
//! first, then a table per step, the VMs that do not migrate, the next-failure check; the
//! review report's section; and the timeline chart (a row per node, time across:
//! migrations, eviction, upgrade and reboot, resync or rebuild).

use std::fmt::Write as _;

use super::escape::svg as esc;
use super::table;
use crate::simulate::questions::{UpgradeReport, minutes};

/// VMs listed in the terminal before `--output json` is pointed to.
const SHOWN: usize = 20;

fn clock(s: f64) -> String {
    let m = (s.max(0.0) / 60.0).round() as u64;
    format!("{}:{:02}", m / 60, m % 60)
}

/// The step table's rows: node, role, start, migrate, upgrade, volumes, VMs, degraded.
fn step_rows(u: &UpgradeReport) -> (Vec<String>, Vec<Vec<String>>) {
    let head = [
        "#", "node", "role", "start", "moves", "upgrade", "volumes", "VMs", "degraded",
    ];
    let rows = u
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut vms = format!("{} moved", s.migrated);
            if s.stopped > 0 {
                let _ = write!(vms, ", {} stop", s.stopped);
            }
            if s.stalls > 0 {
                let _ = write!(vms, ", {} stall", s.stalls);
            }
            let mut deg = s.degraded.to_string();
            if !s.blocked.is_empty() {
                let _ = write!(deg, ", {} blocked", s.blocked.len());
            }
            if s.faulted > 0 {
                let _ = write!(deg, ", {} lost", s.faulted);
            }
            vec![
                (i + 1).to_string(),
                s.node.clone(),
                match s.role.as_str() {
                    "management" => "mgmt".into(),
                    r => r.to_string(),
                },
                clock(s.start_s),
                minutes(s.migrate_s + s.evict_s),
                minutes(s.upgrade_s),
                minutes(s.volume_s),
                vms,
                deg,
            ]
        })
        .collect();
    (head.iter().map(|h| (*h).to_string()).collect(), rows)
}

/// The terminal answer.
pub fn text(u: &UpgradeReport) -> String {
    let mut out = format!("Rolling upgrade of {}: {}\n", u.fleet, u.sentence);
    if !u.blockers.is_empty() {
        let _ = writeln!(
            out,
            "\nBlockers ({}), each with what to do:",
            u.blockers.len()
        );
        for b in u.blockers.iter().take(SHOWN) {
            let _ = writeln!(out, "  - {}\n    do: {}", b.what, b.fix);
        }
        if u.blockers.len() > SHOWN {
            let _ = writeln!(
                out,
                "  ... and {} more (--output json lists every one)",
                u.blockers.len() - SHOWN
            );
        }
    }
    let _ = writeln!(
        out,
        "\nWindow: {} ({})\nVolumes degraded for {} in all ({:.1} volume-hours)",
        minutes(u.window_s),
        u.critical_path,
        minutes(u.degraded_s),
        u.degraded_volume_hours
    );
    let _ = writeln!(out, "Order ({}): {}", u.order_from, u.order.join(", "));
    if let Some(b) = &u.better_order {
        let _ = writeln!(
            out,
            "Better order ({}): {} takes {} ({} less), volumes degraded {} ({} less)",
            b.how,
            b.order.join(", "),
            minutes(b.window_s),
            minutes(b.saves_window_s.max(0.0)),
            minutes(b.degraded_s),
            minutes(b.saves_degraded_s.max(0.0))
        );
    }
    let (head, rows) = step_rows(u);
    let refs: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = table(&refs);
    for r in rows {
        t.add_row(r);
    }
    let _ = writeln!(out, "\n{t}");
    let stops: Vec<(String, &crate::simulate::questions::VmFate)> = u
        .steps
        .iter()
        .flat_map(|s| s.vms.iter().map(move |v| (s.node.clone(), v)))
        .filter(|(_, v)| v.fate != "live migration")
        .collect();
    if !stops.is_empty() {
        let mut t = table(&["VM", "node", "fate", "why"]);
        for (node, v) in stops.iter().take(SHOWN) {
            t.add_row(vec![
                v.vm.clone(),
                node.clone(),
                v.fate.clone(),
                v.why.clone().unwrap_or_default(),
            ]);
        }
        let _ = writeln!(out, "VMs that do not live-migrate ({}):\n{t}", stops.len());
    }
    let _ = writeln!(
        out,
        "{} live migrations ({} of VMs that had moved already), {} at a time per node at {:.0} MB/s each",
        u.migrations,
        u.remigrations,
        u.migration.slots(),
        u.migration_rate / 1e6
    );
    let risky: Vec<&crate::simulate::questions::Step> = u
        .steps
        .iter()
        .filter(|s| s.next_failure.is_some())
        .collect();
    if risky.is_empty() {
        out.push_str("One more node failure during any step strands no VM and leaves every volume a healthy replica.\n");
    } else {
        let mut t = table(&["step", "worst next failure", "stranded VMs", "volumes lost"]);
        for s in &risky {
            if let Some(n) = &s.next_failure {
                t.add_row(vec![
                    s.node.clone(),
                    format!("{} ({} node(s) harm)", n.node, s.next_failure_nodes),
                    n.stranded_vms.to_string(),
                    n.volumes_without_replica.to_string(),
                ]);
            }
        }
        let _ = writeln!(
            out,
            "One more node failure during {} of {} steps:\n{t}",
            risky.len(),
            u.steps.len()
        );
    }
    for a in &u.assumptions {
        let _ = writeln!(out, "Assumed: {a}");
    }
    out
}

/// The review report's section: (title, paragraphs, tables).
#[allow(clippy::type_complexity)] // the parts `review` lays out
pub fn section(u: &UpgradeReport) -> (String, Vec<String>, Vec<(Vec<String>, Vec<Vec<String>>)>) {
    let mut text = vec![
        format!("{}.", capital(&u.sentence)),
        format!(
            "Window {}: {}. Volumes degraded for {} ({:.1} volume-hours). Order ({}): {}.",
            minutes(u.window_s),
            u.critical_path,
            minutes(u.degraded_s),
            u.degraded_volume_hours,
            u.order_from,
            u.order.join(", ")
        ),
    ];
    if let Some(b) = &u.better_order {
        text.push(format!(
            "A better order ({}): {}, {} ({} less).",
            b.how,
            b.order.join(", "),
            minutes(b.window_s),
            minutes(b.saves_window_s.max(0.0))
        ));
    }
    text.extend(u.assumptions.iter().map(|a| format!("Assumed: {a}.")));
    let mut tables = Vec::new();
    if !u.blockers.is_empty() {
        tables.push((
            vec!["blocker".to_string(), "what to do".to_string()],
            u.blockers
                .iter()
                .map(|b| vec![b.what.clone(), b.fix.clone()])
                .collect(),
        ));
    }
    tables.push(step_rows(u));
    ("Rolling upgrade".into(), text, tables)
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// The timeline: a row per node, time across, a bar per stretch of its step.
pub fn timeline_svg(u: &UpgradeReport) -> String {
    let colors = [
        ("migrate", "#1a73e8", "live migrations"),
        ("evict", "#9334e6", "replica eviction"),
        ("upgrade", "#f29900", "upgrade and reboot"),
        ("resync", "#188038", "resync"),
        ("rebuild", "#d93025", "rebuild elsewhere"),
    ];
    let rows = u.steps.len().max(1);
    let (left, top, row_h, width) = (110.0, 40.0, 18.0, 720.0);
    let plot_w = width - left - 20.0;
    let height = top + row_h * rows as f64 + 46.0;
    let end = u.window_s.max(1.0);
    let x = |s: f64| left + s / end * plot_w;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height:.0}\" width=\"{width}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\" aria-label=\"Rolling upgrade timeline\">\n<title>Rolling upgrade timeline: {}</title>\n<text x=\"{left}\" y=\"18\" font-size=\"13\">Rolling upgrade: {} in all</text>\n",
        esc(&minutes(u.window_s)),
        esc(&minutes(u.window_s))
    );
    // Ticks every 5, 10, 15 or 30 minutes, or whole hours: at most six.
    let tick = [
        300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 14_400.0, 28_800.0, 86_400.0,
    ]
    .into_iter()
    .find(|t| end / t <= 6.0)
    .unwrap_or(end / 4.0);
    let mut t = 0.0;
    while t <= end + 1e-9 {
        let _ = writeln!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{1:.1}\" stroke=\"#ddd\"/><text x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3}</text>",
            x(t),
            top + row_h * rows as f64,
            top + row_h * rows as f64 + 14.0,
            esc(&clock(t))
        );
        t += tick;
    }
    for (i, st) in u.steps.iter().enumerate() {
        let y = top + row_h * i as f64;
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + row_h * 0.7,
            esc(&st.node)
        );
        for seg in &st.segments {
            let fill = colors
                .iter()
                .find(|c| c.0 == seg.kind)
                .map_or("#888", |c| c.1);
            let w = (x(seg.start_s + seg.seconds) - x(seg.start_s)).max(0.8);
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{} {}: {}</title></rect>",
                x(seg.start_s),
                y + 3.0,
                row_h - 6.0,
                esc(&st.node),
                esc(&seg.kind),
                esc(&minutes(seg.seconds))
            );
        }
    }
    let ly = top + row_h * rows as f64 + 34.0;
    let mut lx = left;
    for (_, fill, label) in colors {
        let _ = writeln!(
            s,
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{fill}\"/><text x=\"{:.1}\" y=\"{ly:.1}\">{}</text>",
            ly - 9.0,
            lx + 14.0,
            esc(label)
        );
        lx += 24.0 + 6.2 * label.len() as f64;
    }
    s.push_str("</svg>\n");
    s
}
