//! `simulate`: the verdict, headroom per scenario, max clusters and the timeline, rebuild
//! and its limit sweep, risk; and the SVG charts.

use super::svg::{self, Series};
use super::table;
use crate::simulate::failure::risk::EXACT_EXPECTATION;
use crate::simulate::scenario::RiskMethod;
use crate::simulate::{self, Report};

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// A count rounded to two significant figures, with thousands separators: 26,000.
pub fn round_count(x: f64) -> String {
    if !x.is_finite() {
        return "infinity".into();
    }
    let x = x.max(0.0);
    let rounded = if x >= 100.0 {
        let mag = 10f64.powi(x.log10().floor() as i32 - 1);
        (x / mag).round() * mag
    } else {
        x.round()
    };
    group(rounded as u64)
}

/// 10000 -> 10,000.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A share with two significant figures: 0.0012 -> "0.12 %".
pub fn share(p: f64) -> String {
    if p <= 0.0 {
        return "0 %".into();
    }
    let v = p * 100.0;
    let decimals = (1 - v.log10().floor() as i32).clamp(0, 8) as usize;
    format!("{v:.decimals$} %")
}

fn hours(h: Option<f64>) -> String {
    h.map_or_else(|| "never".into(), |h| format!("{h:.2}"))
}

fn scenario_row(s: &simulate::failure::headroom::ScenarioResult, label: &str) -> Vec<String> {
    vec![
        format!("{}{label}", s.name),
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
    ]
}

#[allow(clippy::too_many_lines)] // the report, top to bottom
pub fn simulate_text(r: &Report) -> String {
    use simulate::failure::headroom::Kind;
    let h = &r.headroom;
    let mut out = match &r.live {
        Some(l) => format!(
            "{}: {} nodes in {} racks, {} tenant clusters, {} VMs running, {} volumes\n\n",
            r.scenario, r.nodes, r.racks, l.tenant_clusters, l.vmis_running, l.volumes
        ),
        None => format!(
            "{}: {} nodes in {} racks, {} clusters, {} VMs, {} volumes\n\n",
            r.scenario, r.nodes, r.racks, r.clusters, r.vms, r.volumes
        ),
    };
    if let Some(l) = &r.live {
        out.push_str(&live_text(l));
    }
    out.push_str(&format!(
        "Verdict: {}\n",
        r.verdict.to_string().to_uppercase()
    ));
    for why in &r.verdict_reasons {
        out.push_str(&format!("  {why}\n"));
    }
    if let Some(why) = r.live.as_ref().and_then(|l| l.vms_skipped.as_deref()) {
        out.push_str(&format!(
            "  with no VMs seen: {why}, so no failure can strand one\n"
        ));
    }
    out.push_str(&format!(
        "\nHeadroom by re-placement: {}   (the \"25 % free\" rule says: {}; used cpu {} / memory {} / storage {})\n",
        h.verdict.to_string().to_uppercase(),
        h.rule_25pct,
        pct(h.utilisation.cpu),
        pct(h.utilisation.memory),
        pct(h.utilisation.storage)
    ));
    if let Some(d) = &h.disagreement {
        out.push_str(&format!("  they disagree: {d}\n"));
    }
    if h.unplaced_vms > 0 || h.unplaced_replicas > 0 {
        out.push_str(&format!(
            "  not placed even with every host up: {} VM(s), {} replica(s)\n",
            h.unplaced_vms, h.unplaced_replicas
        ));
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
    let nodes = || h.scenarios.iter().filter(|s| s.kind == Kind::Node);
    let tightest = nodes().min_by(|a, b| a.slack.memory.total_cmp(&b.slack.memory));
    for s in h.scenarios.iter().filter(|s| s.kind != Kind::Node) {
        let label = match s.kind {
            Kind::Power => " (what-if)",
            Kind::Set => " (named set)",
            _ => "",
        };
        t.add_row(scenario_row(s, label));
    }
    if let Some(s) = tightest {
        t.add_row(scenario_row(s, " (tightest node)"));
    }
    for s in nodes()
        .filter(|s| s.fails() && tightest.is_none_or(|t| t.name != s.name))
        .take(5)
    {
        t.add_row(scenario_row(s, ""));
    }
    for c in &h.combined {
        for s in c.worst.iter().take(3) {
            t.add_row(scenario_row(s, ""));
        }
    }
    out.push_str(&format!("{t}\n"));
    let single = nodes().count();
    out.push_str(&format!(
        "  {} single-node scenarios checked ({} fail) and every rack; shared power feeds are shown as what-ifs, outside the verdict\n",
        single,
        nodes().filter(|s| s.fails()).count()
    ));
    for c in &h.combined {
        let what = match c.kind {
            Kind::Pair => "pairs of nodes",
            _ => "racks with one more node",
        };
        out.push_str(&format!(
            "  {} {what} checked, {} fail (the worst are in the table)\n",
            group(c.checked as u64),
            c.failing
        ));
    }
    out.push_str(&format!(
        "  VM restart after a host failure: {}\n\n",
        r.vm_restart.derivation
    ));
    if let Some(m) = &r.max_clusters {
        match m.additional {
            Some(n) => out.push_str(&format!(
                "Max clusters: {n} more `{}` cluster(s) fit with every failure survived (every count from 0 to {n} placed and checked)\n",
                m.shape
            )),
            None => out.push_str(&format!(
                "Max clusters: no more `{}` clusters: the fleet fails as it is\n",
                m.shape
            )),
        }
        if m.lower_bound {
            out.push_str("  at least: --budget ran out before any count failed, so more may fit\n");
        }
        if !m.passes_again.is_empty() {
            let list: Vec<String> = m.passes_again.iter().map(u32::to_string).collect();
            out.push_str(&format!(
                "  passes again at {}, not safe: {} more already fails\n",
                list.join(", "),
                m.first_failure.unwrap_or(0)
            ));
        }
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
    if let Some(why) = r.live.as_ref().and_then(|l| l.storage_skipped.as_deref()) {
        out.push_str(&format!("\nRebuild and risk: skipped, {why}\n"));
    }
    if r.live.as_ref().is_none_or(|l| l.storage_skipped.is_none()) {
        match &r.no_volumes {
            Some(why) => out.push_str(&format!("\nRebuild and risk: {why}\n")),
            None => storage_text(&mut out, r),
        }
    }
    if r.warnings.is_empty() {
        out.push_str("\nWarnings: none\n");
    } else {
        out.push_str("\nWarnings:\n");
        for w in &r.warnings {
            out.push_str(&format!("  [{}] {}\n", w.kind, w.message));
        }
    }
    if !r.assumptions.is_empty() {
        out.push_str(&format!(
            "\nAssumptions:\n{}\n",
            assumptions_table(&r.assumptions)
        ));
    }
    if let Some(f) = &r.fix {
        out.push_str("\nWhat would fix it (each found by placing and checking again):\n");
        match &f.add_nodes {
            Some(a) => out.push_str(&format!(
                "  add {} node(s) like `{}`, in rack(s) {}\n",
                a.count,
                a.like,
                a.racks.join(", ")
            )),
            None => out.push_str(&format!(
                "  adding up to {} nodes does not pass\n",
                f.searched_nodes
            )),
        }
        match &f.remove_clusters {
            Some(rc) => out.push_str(&format!(
                "  or remove {} `{}` cluster(s)\n",
                rc.count, rc.shape
            )),
            None if f.searched_clusters > 0 => out.push_str(&format!(
                "  removing up to {} clusters of the most common shape does not pass\n",
                f.searched_clusters
            )),
            None => {}
        }
    }
    out
}

/// The SVG charts of a run, as (file name, SVG text).
#[allow(clippy::too_many_lines)] // four charts
pub fn plots(r: &Report) -> Vec<(&'static str, String)> {
    let mut files: Vec<(&'static str, String)> = Vec::new();
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

/// A rate of events per year with its 95 % interval, read aloud: "2.43e-7 per year (95 %
/// CI 2.11e-7 to 2.80e-7), about one every 4,100,000 years".
pub fn rate_text(d: &simulate::failure::risk::Rate) -> String {
    if d.is_zero() {
        return "none (no copyset, or no failure of that kind, in the model)".into();
    }
    if d.upper_bound_only {
        return format!(
            "none in {} trial-years: fewer than one every {} years (95 % upper bound, not an estimate)",
            group(d.draws),
            round_count(1.0 / d.ci95[1].max(1e-300))
        );
    }
    format!(
        "{:.2e} per year (95 % CI {:.2e} to {:.2e}), about one every {} years",
        d.per_year,
        d.ci95[0],
        d.ci95[1],
        round_count(1.0 / d.per_year)
    )
}

const MOVES_SHOWN: usize = 20;

/// `simulate --from-cluster --drain`: the answer first, then the moves, the volumes and
/// the next failure.
pub fn drain_text(d: &simulate::questions::DrainReport) -> String {
    let mut out = format!("Drain: {}\n\n", d.sentence);
    let mut t = table(&["VM", "from", "to", "how"]);
    // Those that do not migrate first: they are the answer.
    let mut moves: Vec<&simulate::questions::Move> = d.moves.iter().collect();
    moves.sort_by_key(|m| m.to.is_some());
    for m in moves.iter().take(MOVES_SHOWN) {
        t.add_row(vec![
            m.vm.clone(),
            m.from.clone(),
            m.to.clone().unwrap_or_else(|| "-".into()),
            m.how.clone(),
        ]);
    }
    if d.moves.is_empty() {
        out.push_str("No VM runs on these nodes.\n");
    } else {
        out.push_str(&format!("{t}\n"));
        if d.moves.len() > MOVES_SHOWN {
            out.push_str(&format!(
                "  ... and {} more live migrations (--output json lists every one)\n",
                d.moves.len() - MOVES_SHOWN
            ));
        }
        out.push_str(&format!(
            "  {} VM(s): {} live-migrate, {} stop, {} without a target\n",
            d.moves.len(),
            d.moves.len() - d.stopped - d.no_target,
            d.stopped,
            d.no_target
        ));
    }
    let degraded: usize = d.degraded.iter().map(|x| x.2).sum();
    out.push_str(&format!("\nVolumes: {degraded} lose healthy replicas\n"));
    for (before, during, count) in &d.degraded {
        out.push_str(&format!(
            "  {count} from {before} to {during} healthy replica(s)\n"
        ));
    }
    out.push_str(&format!("  degraded {}\n", d.degraded_for));
    if !d.last_replica.is_empty() {
        out.push_str(&format!(
            "  {} hold their last healthy replica on these nodes (node-drain-policy {}): {}\n",
            d.last_replica.len(),
            d.node_drain_policy,
            d.last_replica
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let bad: Vec<&simulate::questions::FurtherFailure> = d
        .further
        .iter()
        .filter(|f| f.stranded_vms + f.stranded_replicas + f.volumes_without_replica > 0)
        .collect();
    out.push_str(&format!(
        "\nA further node failure during the maintenance: {} of {} nodes would strand something\n",
        bad.len(),
        d.further.len()
    ));
    if !bad.is_empty() {
        let mut t = table(&[
            "node",
            "stranded VMs",
            "stranded replicas",
            "volumes without a replica",
        ]);
        for f in bad.iter().take(10) {
            t.add_row(vec![
                f.node.clone(),
                f.stranded_vms.to_string(),
                f.stranded_replicas.to_string(),
                f.volumes_without_replica.to_string(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    out
}

/// What the dump held, what it lacked and what of the scenario it replaced.
pub fn live_text(l: &simulate::fleet::LiveSummary) -> String {
    let mut out = format!(
        "From the dump: {} Nodes ({} witness), {} VMIs running, {} Longhorn volumes, {} replicas\n",
        l.nodes, l.witness_nodes, l.vmis_running, l.volumes, l.replicas
    );
    if !l.cordoned.is_empty() {
        out.push_str(&format!(
            "  take no new VM (cordoned, in maintenance, not Ready, or not VM-schedulable): {}\n",
            l.cordoned.join(", ")
        ));
    }
    for s in &l.skipped_analyses {
        out.push_str(&format!("  skipped: {s}\n"));
    }
    for s in &l.scenario_overridden {
        out.push_str(&format!("  the dump wins: {s}\n"));
    }
    for f in &l.findings {
        out.push_str(&format!("  finding: {f}\n"));
    }
    for s in l.skipped_objects.iter().take(10) {
        out.push_str(&format!("  not read: {s}\n"));
    }
    if l.skipped_objects.len() > 10 {
        out.push_str(&format!(
            "  not read: {} more objects of unknown API versions (--output json lists them)\n",
            l.skipped_objects.len() - 10
        ));
    }
    for s in l.notes.iter().take(10) {
        out.push_str(&format!("  note: {s}\n"));
    }
    if l.notes.len() > 10 {
        out.push_str(&format!(
            "  {} more notes (--output json lists them)\n",
            l.notes.len() - 10
        ));
    }
    out.push('\n');
    out
}

/// Every input with its value and source.
pub fn assumptions_table(a: &[simulate::fleet::Assumption]) -> String {
    let mut t = table(&["input", "value", "from", "note"]);
    for x in a {
        t.add_row(vec![
            x.input.clone(),
            x.value.clone(),
            x.source.to_string(),
            x.note.clone().unwrap_or_default(),
        ]);
    }
    t.to_string()
}

/// Rebuild with its limit sweep, and risk.
#[allow(clippy::too_many_lines)] // the two storage sections, top to bottom
fn storage_text(out: &mut String, r: &Report) {
    let rb = &r.rebuild;
    let what_if = rb
        .what_if_tib
        .map_or_else(String::new, |t| format!(", what-if: it holds {t} TiB"));
    match rb.hours_to_full_redundancy {
        Some(hrs) => out.push_str(&format!(
            "\nRebuild after losing {}{what_if} ({} replicas, {:.2} TiB): {hrs:.2} h to full redundancy at limit {}; bottleneck: {}\n",
            rb.failed_node, rb.replicas_to_rebuild, rb.tib_to_rebuild.max(0.0), rb.limit, rb.bottleneck
        )),
        None => out.push_str(&format!(
            "\nRebuild after losing {}{what_if} ({} replicas, {:.2} TiB): full redundancy is NEVER restored at limit {}: {}\n",
            rb.failed_node,
            rb.replicas_to_rebuild,
            rb.tib_to_rebuild,
            rb.limit,
            rb.never.as_deref().unwrap_or("")
        )),
    }
    if rb.replicas_to_rebuild > 0 {
        out.push_str(&format!(
            "  placement ({}): {}\n",
            rb.longhorn, rb.placement_rule
        ));
        let mut t = table(&[
            "rack",
            "receiving nodes",
            "replicas",
            "TiB",
            "transfer hours",
        ]);
        for x in &rb.by_rack {
            t.add_row(vec![
                x.rack.clone(),
                format!("{} of {}", x.receiving_nodes, x.nodes),
                x.replicas.to_string(),
                format!("{:.2}", x.tib),
                hours(x.transfer_hours),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if let Some(o) = &rb.other_rule {
        out.push_str(&format!(
            "  with the disk rule of {}: {} ({})\n",
            o.longhorn,
            o.hours_to_full_redundancy
                .map_or_else(|| "never complete".into(), |h| format!("{h:.2} h")),
            o.bottleneck
        ));
    }
    match (rb.exposure_hours_median, rb.exposure_hours_max) {
        (Some(m), Some(x)) => out.push_str(&format!(
            "  exposure per volume: median {m:.2} h, max {x:.2} h\n"
        )),
        (m, _) => out.push_str(&format!(
            "  exposure per volume: median {}, max never (some volumes stay without full redundancy until the node is replaced)\n",
            m.map_or_else(|| "never".into(), |m| format!("{m:.2} h"))
        )),
    }
    if rb.detached_not_rebuilt > 0 {
        out.push_str(&format!(
            "  {} replica(s) of detached volumes are not rebuilt until their VM starts (offline replica rebuilding is off)\n",
            rb.detached_not_rebuilt
        ));
    }
    let mut t = table(&[
        "limit",
        "hours",
        "peak link share",
        "peak disk share",
        "bottleneck",
    ]);
    for p in &rb.sweep {
        t.add_row(vec![
            p.limit.to_string(),
            hours(p.hours),
            pct(p.peak_link_share),
            pct(p.peak_disk_share),
            p.bottleneck.clone(),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    match rb.recommended_limit {
        Some(k) => out.push_str(&format!(
            "  recommended concurrent-replica-rebuild-per-node-limit: {k}{}\n  rule: {}\n\n",
            if rb.recommendation_fell_back {
                " (no limit near the fastest keeps rebuild traffic under the share; the smallest near it)"
            } else {
                ""
            },
            rb.recommendation_rule
        )),
        None => out.push_str(
            "  no concurrent-replica-rebuild-per-node-limit from 1 to 8 restores full redundancy\n\n",
        ),
    }
    let Some(k) = &r.risk.figures else {
        return;
    };
    let e = &k.estimate;
    out.push_str(&format!("Risk: {}\n", e.model));
    out.push_str(&format!(
        "  estimated by {}{}\n",
        e.method_name,
        match (e.trials, e.years) {
            (Some(t), Some(y)) => format!(", {} trials x {y} years", group(u64::from(t))),
            _ => String::new(),
        }
    ));
    out.push_str(&format!(
        "  exposure window of a permanently failed node: {:.2} h ({})\n",
        k.exposure_window_h, k.exposure_window_from
    ));
    out.push_str(&format!("  data loss: {}\n", rate_text(&e.data_loss)));
    out.push_str(&format!(
        "  a volume unavailable: {}\n",
        rate_text(&e.unavailable)
    ));
    if e.vm_downtime_method == EXACT_EXPECTATION {
        out.push_str(&format!(
            "  VM downtime: {:.1} VM-hours per year ({})\n",
            e.expected_vm_downtime_hours_per_year, e.vm_downtime_method
        ));
    } else {
        out.push_str(&format!(
            "  VM downtime: {:.1} VM-hours per year (95 % CI {:.1} to {:.1})\n",
            e.expected_vm_downtime_hours_per_year, e.ci95_vm_downtime[0], e.ci95_vm_downtime[1]
        ));
    }
    for b in &k.by_replicas {
        out.push_str(&format!(
            "  with {} replicas: data loss {}\n",
            b.replicas,
            rate_text(&b.data_loss)
        ));
    }
    out.push_str(&format!(
        "  one replica group against the Markov chain: {}\n",
        k.markov.explanation
    ));
    let c = &k.correlated;
    out.push_str(&format!(
        "  {} nodes failing at once, P(some volume loses all replicas):\n",
        c.failed_nodes
    ));
    let figure = |e: &simulate::report::Estimate, mc: f64, ci: [f64; 2], hits: u64| {
        format!(
            "{} {} (Monte Carlo {}, 95 % CI {} to {}, {} of {} trials)",
            e.method,
            share(e.value),
            share(mc),
            share(ci[0]),
            share(ci[1]),
            group(hits),
            group(u64::from(c.trials))
        )
    };
    out.push_str(&format!(
        "    Longhorn's placement ({} copysets): {}\n",
        group(c.longhorn_copysets as u64),
        figure(
            &c.longhorn,
            c.longhorn_monte_carlo,
            c.longhorn_ci95,
            c.longhorn_hits
        )
    ));
    match &c.not_compared {
        Some(why) => out.push_str(&format!("    copyset placement: {why}\n")),
        None => out.push_str(&format!(
            "    copyset placement, scatter width {} (measured {:.1}, {} copysets): {}\n",
            c.scatter_width,
            c.scatter_width_measured,
            group(c.copyset_copysets as u64),
            figure(
                &c.copyset,
                c.copyset_monte_carlo,
                c.copyset_ci95,
                c.copyset_hits
            )
        )),
    }
}
