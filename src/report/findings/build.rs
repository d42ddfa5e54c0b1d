//! The findings of a review, built once from the simulator's [`Report`]: the verdict in one
//! sentence, what would fix it, what the dump held, headroom per failure, capacity and the
//! months ahead, then (in `storage.rs`) rebuild and risk, and last warnings and every
//! assumption with its source, so that a reviewer can challenge it.

use super::glossary::{RULE_25, SLACK, defined};
use super::model::{Findings, Section};
use super::storage::{rebuild_section, risk_section};
use crate::simulate::failure::headroom::{Kind, ScenarioResult};
use crate::simulate::report::MaxClustersStop;
use crate::simulate::{Report, Stopped};
use crate::words::{group, pct, sentence};

/// Failing single nodes shown in the headroom table beside the racks, power feeds, sets and
/// the tightest node.
const FAILING_NODES_SHOWN: usize = 5;
/// Combined failures (pairs, rack plus node) shown per family: the worst.
const COMBINED_SHOWN: usize = 3;
/// Rows of the dump's long lists a screen shows.
const SCREEN_ROWS: usize = 10;

/// Every section of the review, in the order it is read.
pub fn findings(r: &Report, provenance: Option<String>) -> Findings {
    let mut sections = vec![verdict(r)];
    if let Some(u) = &r.upgrade {
        sections.push(upgrade(u));
    }
    sections.push(fix(r));
    if r.live.is_some() {
        sections.push(dump(r));
    }
    sections.push(headroom(r));
    sections.push(capacity(r));
    if let Some(cp) = &r.control_plane {
        sections.push(super::control_plane::section(cp));
    }
    let skipped = r
        .live
        .as_ref()
        .and_then(|l| l.storage_skipped.as_deref())
        .map(|why| format!("Skipped: {why}."))
        .or_else(|| r.no_volumes.as_deref().map(sentence));
    if let Some(why) = skipped {
        let mut b = Section::new("rebuild", "Rebuild and risk");
        b.text(why);
        sections.push(b);
    } else {
        sections.push(rebuild_section(&r.rebuild));
        if let Some(k) = &r.risk.figures {
            sections.push(risk_section(k));
        }
    }
    if let Some(d) = &r.delivery {
        sections.push(super::delivery::delivery_section(d));
    }
    sections.push(warnings(r));
    sections.push(assumptions(r));
    Findings {
        scenario: r.scenario.clone(),
        passes: r.verdict.passes(),
        provenance,
        sections,
    }
}

/// The verdict in one sentence.
pub(crate) fn verdict_sentence(r: &Report) -> String {
    let rb = &r.rebuild;
    if r.verdict.passes() {
        let rebuild = match rb.hours_to_full_redundancy {
            Some(h) if rb.replicas_to_rebuild > 0 && r.no_volumes.is_none() => format!(
                "; after losing {}, full redundancy returns in {h:.2} h",
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

/// The rolling upgrade asked with `--upgrade`: its answer, steps and timeline.
fn upgrade(u: &crate::simulate::questions::UpgradeReport) -> Section {
    let (title, text, tables) = crate::report::upgrade::section(u);
    let mut sec = Section::new("upgrade", title);
    for t in text {
        sec.text(t);
    }
    for (head, rows) in tables {
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        sec.table(&head, rows);
    }
    sec.chart("upgrade-timeline.svg");
    sec
}

fn verdict(r: &Report) -> Section {
    let mut v = Section::new("verdict", "Verdict");
    v.text(verdict_sentence(r));
    for why in r.verdict_reasons.iter().skip(1) {
        v.text(sentence(why));
    }
    match &r.live {
        Some(l) => {
            v.text(format!(
                "Fleet as it runs, read from {}: {} nodes in {} racks ({} witness), {} tenant clusters, {} VMs running, {} Longhorn volumes with {} replicas.",
                l.source, r.nodes, r.racks, l.witness_nodes, l.tenant_clusters, l.vmis_running, l.volumes, l.replicas
            ));
            if let Some(why) = &l.vms_skipped {
                v.text(format!(
                    "No VMs were seen ({why}): no failure can strand one, so the headroom verdict says nothing about VMs."
                ));
            }
        }
        None => {
            v.text(format!(
                "{} nodes in {} racks, {} clusters, {} VMs, {} volumes.",
                r.nodes, r.racks, r.clusters, r.vms, r.volumes
            ));
        }
    }
    v
}

fn fix(r: &Report) -> Section {
    let mut f = Section::new("fix", "What would fix it");
    if let Some(o) = &r.rebuild.overfill_fix {
        super::storage::overfill_fix(&mut f, o, r.rebuild.overfilled_disks);
    }
    let Some(x) = &r.fix else {
        f.text(if r.verdict.passes() {
            "Nothing needs fixing: the verdict passes."
        } else {
            "No fix was searched."
        });
        return f;
    };
    match &x.add_nodes {
        Some(a) => f.text(format!(
            "Add {} node(s) like {}, in rack(s) {} (found by placing and checking again).",
            a.count,
            a.like,
            a.racks.join(", ")
        )),
        None => f.text(format!(
            "Adding up to {} nodes does not pass.",
            x.searched_nodes
        )),
    };
    match &x.remove_clusters {
        Some(rc) => {
            f.text(format!(
                "Or remove {} {} cluster(s) (found by placing and checking again).",
                rc.count, rc.shape
            ));
        }
        None if x.searched_clusters > 0 => {
            f.text(format!(
                "Removing up to {} clusters of the most common shape does not pass.",
                x.searched_clusters
            ));
        }
        None => {}
    }
    f
}

fn dump(r: &Report) -> Section {
    let mut d = Section::new("dump", "What the dump held");
    let Some(l) = &r.live else {
        return d;
    };
    if !l.cordoned.is_empty() {
        d.text(format!(
            "Taking no new VM (cordoned, in maintenance, not Ready, or not VM-schedulable): {}.",
            l.cordoned.join(", ")
        ));
    }
    for s in &l.skipped_analyses {
        d.text(format!("Skipped: {s}."));
    }
    for s in &l.scenario_overridden {
        d.text(format!("The dump wins: {s}."));
    }
    let column = |v: &[String]| v.iter().map(|x| vec![x.clone()]).collect::<Vec<_>>();
    if l.findings.is_empty() {
        d.text("Findings: none.");
    } else {
        d.table(&["finding"], column(&l.findings));
    }
    if !l.skipped_objects.is_empty() {
        d.long_table(&["not read"], column(&l.skipped_objects), SCREEN_ROWS);
    }
    if !l.notes.is_empty() {
        d.long_table(&["note"], column(&l.notes), SCREEN_ROWS);
    }
    d
}

/// One failure's row; `label` says why it is shown when its name does not.
fn failure_row(s: &ScenarioResult, label: &str) -> Vec<String> {
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

fn headroom(r: &Report) -> Section {
    let h = &r.headroom;
    let mut s = Section::new("headroom", "Headroom by re-placement");
    s.text(format!(
        "Headroom {}: every failure below was simulated by re-placing what the failed hosts ran. Used now: cpu {}, memory {}, storage {}. The \"25 % free\" rule would say {}.",
        h.verdict.to_string().to_uppercase(),
        pct(h.utilisation.cpu),
        pct(h.utilisation.memory),
        pct(h.utilisation.storage),
        h.rule_25pct
    ));
    s.text(format!("{} {}", defined(&SLACK), defined(&RULE_25)));
    if let Some(d) = &h.disagreement {
        s.text(format!("They disagree: {}", sentence(d)));
    }
    if h.unplaced_vms > 0 || h.unplaced_replicas > 0 {
        s.text(format!(
            "Not placed even with every host up: {} VM(s), {} replica(s).",
            h.unplaced_vms, h.unplaced_replicas
        ));
    }
    let nodes = || h.scenarios.iter().filter(|x| x.kind == Kind::Node);
    // The least memory slack; among nodes that leave the same, the one displacing most.
    let tightest = nodes().min_by(|a, b| {
        (a.slack.memory_rank().total_cmp(&b.slack.memory_rank()))
            .then(b.displaced.cmp(&a.displaced))
    });
    let mut rows = Vec::new();
    for x in h.scenarios.iter().filter(|x| x.kind != Kind::Node) {
        let label = match x.kind {
            Kind::Power => " (what-if)",
            Kind::Set => " (named set)",
            _ => "",
        };
        rows.push(failure_row(x, label));
    }
    if let Some(t) = tightest {
        rows.push(failure_row(t, " (tightest node)"));
    }
    for x in nodes()
        .filter(|x| x.fails() && tightest.is_none_or(|t| t.name != x.name))
        .take(FAILING_NODES_SHOWN)
    {
        rows.push(failure_row(x, ""));
    }
    for c in &h.combined {
        for x in c.worst.iter().take(COMBINED_SHOWN) {
            rows.push(failure_row(x, ""));
        }
    }
    s.table(
        &[
            "failure",
            "VMs displaced",
            "VMs stranded",
            "replicas to re-home",
            "replicas stranded",
            "slack cpu",
            "slack memory",
            "slack storage",
        ],
        rows,
    );
    s.text(format!(
        "{} single-node failures checked, {} fail, and every rack; shared power feeds are shown as what-ifs, outside the verdict.",
        nodes().count(),
        nodes().filter(|x| x.fails()).count()
    ));
    for c in &h.combined {
        let what = match c.kind {
            Kind::Pair => "pairs of nodes",
            _ => "racks with one more node",
        };
        s.text(format!(
            "{} {what} checked, {} fail (the worst are in the table).",
            group(c.checked as u64),
            c.failing
        ));
    }
    s.text(format!(
        "VM restart after a host failure: {}",
        sentence(&r.vm_restart.derivation)
    ));
    s
}

/// Below this free share a resource is said to run short; above it, what strands is the
/// placement's rules rather than a shortage in total.
const SHORT: f64 = 0.10;

/// What stops max clusters, in a sentence: the failure, what it strands, the resource.
fn stop_text(st: &MaxClustersStop) -> String {
    let at = if st.count == 0 {
        "as the fleet is".to_string()
    } else {
        format!("at {} more", st.count)
    };
    let what = format!(
        "{} VM(s) and {} replica(s)",
        st.stranded_vms, st.stranded_replicas
    );
    let who = match &st.failure {
        Some(f) => {
            let others = st.failing.saturating_sub(1);
            format!(
                "losing {f} strands {what}{}",
                if others > 0 {
                    format!(" ({others} other failure(s) strand something too)")
                } else {
                    String::new()
                }
            )
        }
        None => format!("{what} do not fit even with every host up"),
    };
    let hosts = if st.failure.is_some() {
        "surviving"
    } else {
        "fleet's"
    };
    let (resource, free) = (&st.resource, pct(st.free_share));
    if st.free_share < SHORT {
        format!(
            "What stops it: {at}, {who}; {resource} runs short: the tightest resource, {free} free on the {hosts} hosts."
        )
    } else {
        format!(
            "What stops it: {at}, {who}; no resource runs short in total ({resource}, the tightest, has {free} free on the {hosts} hosts): placement's rules strand them (replicas on distinct nodes and zones, VM anti-affinity, room on a single host)."
        )
    }
}

fn capacity(r: &Report) -> Section {
    let mut c = Section::new("capacity", "Capacity: more clusters, and the months ahead");
    match &r.max_clusters {
        Some(m) => {
            c.text(match (&m.control_plane, m.additional) {
                (Some(cp), Some(n)) => format!(
                    "Max clusters: {n} more {} cluster(s): the control plane stops it ({}); the hosts alone take {} (every count placed and checked).",
                    m.shape,
                    cp.limit,
                    cp.hosts_additional.map_or("none".into(), |h| format!("{h} more"))
                ),
                (Some(cp), None) => format!(
                    "Max clusters: no more {} clusters: the control plane is past its limit already ({}); the hosts alone take {}.",
                    m.shape,
                    cp.limit,
                    cp.hosts_additional.map_or("none".into(), |h| format!("{h} more"))
                ),
                (None, Some(n)) => format!(
                    "Max clusters: {n} more {} cluster(s) fit with every failure survived (every count from 0 to {n} placed and checked).",
                    m.shape
                ),
                (None, None) => format!(
                    "Max clusters: no more {} clusters: the fleet fails as it is.",
                    m.shape
                ),
            });
            if let Some(st) = &m.stops {
                c.text(stop_text(st));
            }
            if m.lower_bound {
                c.text(format!(
                    "At least: {} before any count failed, so more may fit.",
                    m.stopped_by.unwrap_or(Stopped::Budget).words()
                ));
            }
            if !m.passes_again.is_empty() {
                c.text(format!(
                    "Passes again at {} more, which is not safe: {} more already fails.",
                    m.passes_again
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    m.first_failure.unwrap_or(0)
                ));
            }
            c.chart("headroom-slack.svg");
        }
        None => {
            c.text("Max clusters: not asked (set analysis.max_clusters_shape in a scenario).");
        }
    }
    if r.timeline.is_empty() {
        c.text("Timeline: no team requests in the scenario.");
    } else {
        c.table(
            &["month", "clusters", "verdict", "min slack memory"],
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
        );
        c.chart("timeline.svg");
    }
    if !r.scheduled_expiries.is_empty() {
        c.text(
            "Expiries already scheduled (ClusterRequests in the dump, deleted by rackplan operator at their expiry): the timeline above still counts these clusters as running, so a month after one is judged on the safe side.",
        );
        c.table(
            &["request", "team", "shape", "cluster", "expires", "month"],
            r.scheduled_expiries
                .iter()
                .map(|e| {
                    vec![
                        e.request.clone(),
                        e.team.clone(),
                        e.shape.clone(),
                        e.cluster.clone(),
                        e.expires_at.clone(),
                        e.month.clone(),
                    ]
                })
                .collect(),
        );
    }
    if let Some(t) = &r.timeline_stopped {
        c.text(format!(
            "Timeline stopped: {}; {} and the months after it were not checked.",
            t.by.words(),
            t.from_month
        ));
    }
    if !r.refused.is_empty() {
        c.table(
            &["refused by quota", "shape", "month", "why"],
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
        );
    }
    c
}

fn warnings(r: &Report) -> Section {
    let mut w = Section::new("warnings", "Warnings");
    if r.warnings.is_empty() {
        w.text("None.");
    } else {
        w.table(
            &["kind", "warning"],
            r.warnings
                .iter()
                .map(|x| vec![x.kind.to_string(), x.message.clone()])
                .collect(),
        );
    }
    w
}

fn assumptions(r: &Report) -> Section {
    let mut a = Section::new("assumptions", "Assumptions");
    if r.assumptions.is_empty() {
        a.text("Every input is the scenario's (or its default); see the scenario file.");
        return a;
    }
    a.text(if r.live.is_some() {
        "Every input the analyses used, its value and where it came from: the dump, the scenario, or rackplan's default."
    } else {
        "The inputs replica placement rests on, their values and where they came from (the scenario, the site, or rackplan's default); every other input is the scenario's or its default."
    });
    a.table(
        &["input", "value", "from", "note"],
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
    );
    a
}
