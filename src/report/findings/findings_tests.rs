//! The review's wording pinned on a hand-made report: a small failing fleet with a fix, a
//! rebuild and risk, a warning and an assumption; and a fleet read from a dump whose
//! storage the dump lacks. Rendered as Markdown, as the HTML's visible text, and as
//! terminal text; and the `--drain` answer.

use super::build::findings;
use super::model::Block;
use crate::report::charts::plots;
use crate::report::review::{html_of, markdown_of};
use crate::report::simulate::{drain_text, findings_text};
use crate::simulate::Report;
use crate::simulate::failure::headroom::{
    Combined, Headroom, HeadroomVerdict, Kind, ScenarioResult, Slack,
};
use crate::simulate::failure::rebuild::SweepPoint;
use crate::simulate::failure::restart::Restart;
use crate::simulate::failure::risk::{Rate, RiskResult};
use crate::simulate::fleet::{Assumption, LiveSummary};
use crate::simulate::questions::{DrainReport, FurtherFailure, Move};
use crate::simulate::report::{
    AddNodes, ByReplicas, Correlated, Estimate, Fix, MarkovNote, MaxClusters, MaxClustersStop,
    Month, OtherRule, RackLoad, RebuildReport, Refusal, RiskFigures, RiskReport, Warning,
};
use crate::simulate::scenario::{ForceResetPolicy, RiskMethod};

fn slack(cpu: f64, memory: f64, storage: f64) -> Slack {
    Slack {
        cpu,
        memory,
        storage,
    }
}

fn failure(
    name: &str,
    kind: Kind,
    displaced: usize,
    stranded: usize,
    memory: f64,
) -> ScenarioResult {
    ScenarioResult {
        name: name.into(),
        kind,
        failed_hosts: 1,
        hosts: Vec::new(),
        displaced,
        stranded,
        displaced_replicas: displaced * 2,
        stranded_replicas: 0,
        better_packing_exists: stranded == 3,
        slack: slack(0.9, memory, 0.5),
        memory_commit_peak: 0.8,
        vm_pods_peak: 20,
    }
}

fn rate(per_year: f64, draws: u64, hits: u64) -> Rate {
    Rate {
        per_year,
        ci95: [per_year * 0.9, per_year * 1.1],
        upper_bound_only: false,
        draws,
        hits,
        strata: Vec::new(),
    }
}

/// Four nodes in two racks; losing rack r02 strands three VMs.
#[allow(clippy::too_many_lines)] // one report, every field by hand
pub(super) fn report() -> Report {
    Report {
        scenario: "hand-made".into(),
        verdict: HeadroomVerdict::Fail,
        verdict_reasons: vec![
            "rack r02 strands 3 VM(s)".into(),
            "node n3 strands 1 VM(s)".into(),
        ],
        nodes: 4,
        racks: 2,
        clusters: 3,
        vms: 18,
        volumes: 18,
        vm_restart: Restart {
            seconds: Some(315.0),
            policy: ForceResetPolicy {
                enable: true,
                period: 15,
                vm_migration_timeout: Some(180),
            },
            derivation: "315 s by hand".into(),
        },
        headroom: Headroom {
            verdict: HeadroomVerdict::Fail,
            rule_25pct: HeadroomVerdict::Pass,
            utilisation: slack(0.1, 0.6, 0.3),
            scenarios: vec![
                failure("node n1", Kind::Node, 4, 0, 0.2),
                failure("node n2", Kind::Node, 4, 0, 0.15),
                failure("node n3", Kind::Node, 5, 1, 0.1),
                failure("rack r01", Kind::Rack, 8, 0, 0.1),
                failure("rack r02", Kind::Rack, 9, 3, 0.0),
                failure("power feed-a", Kind::Power, 17, 9, 0.0),
            ],
            combined: vec![Combined {
                kind: Kind::Pair,
                checked: 6,
                failing: 2,
                worst: vec![failure("nodes n3+n4", Kind::Pair, 9, 4, 0.0)],
            }],
            disagreement: Some(
                "25 % is free, yet rack r02 strands 3 VM(s) and 0 replica(s)".into(),
            ),
            unplaced_vms: 0,
            unplaced_replicas: 0,
        },
        max_clusters: Some(MaxClusters {
            shape: "small".into(),
            additional: None,
            first_failure: Some(0),
            passes_again: Vec::new(),
            checked_up_to: 4,
            curve: vec![(0, slack(0.9, 0.0, 0.5), HeadroomVerdict::Fail)],
            lower_bound: false,
            stopped_by: None,
            control_plane: None,
            stops: Some(MaxClustersStop {
                count: 0,
                failure: Some("rack r02".into()),
                failing: 2,
                stranded_vms: 3,
                stranded_replicas: 0,
                resource: "memory".into(),
                free_share: 0.0,
            }),
        }),
        timeline_stopped: None,
        timeline: vec![Month {
            month: "2027-01".into(),
            clusters: 3,
            verdict: HeadroomVerdict::Fail,
            min_slack: slack(0.9, 0.0, 0.5),
        }],
        refused: vec![Refusal {
            team: "paiement".into(),
            shape: "large".into(),
            month: "2027-01".into(),
            reason: "needs 120 vCPU; 100 of the team's 200 vCPU quota are in use".into(),
        }],
        scheduled_expiries: Vec::new(),
        rebuild: rebuild(),
        risk: RiskReport {
            not_applicable: None,
            figures: Some(risk()),
        },
        no_volumes: None,
        warnings: vec![Warning {
            kind: "memory-overcommit",
            message: "memory is overcommitted 1.5 x".into(),
        }],
        fix: Some(Fix {
            add_nodes: Some(AddNodes {
                like: "compute".into(),
                count: 2,
                racks: vec!["r01".into(), "r02".into()],
            }),
            searched_nodes: 8,
            remove_clusters: None,
            searched_clusters: 3,
        }),
        live: None,
        assumptions: vec![Assumption {
            input: "Longhorn zones".into(),
            value: "the racks: r01, r02".into(),
            source: "default",
            note: Some("each rack a zone".into()),
        }],
        provenance: None,
        upgrade: None,
        delivery: None,
        control_plane: None,
    }
}

fn rebuild() -> RebuildReport {
    let point = |limit: u32, hours: Option<f64>| SweepPoint {
        limit,
        hours,
        bottleneck: "per-node rebuild limit x per-stream rate".into(),
        peak_link_share: 0.05 * f64::from(limit),
        peak_disk_share: 0.04 * f64::from(limit),
    };
    RebuildReport {
        failed_node: "n3".into(),
        what_if_tib: Some(2.0),
        limit: 2,
        replicas_to_rebuild: 12,
        detached_not_rebuilt: 1,
        tib_to_rebuild: 2.0,
        hours_to_full_redundancy: Some(3.5),
        never: None,
        bottleneck: "2 receiving nodes x limit 2 x 100 MB/s".into(),
        aborted_rebuilds: 0,
        abort_restarts: 0,
        stranded_rebuilds: 0,
        blocked_rebuilds: 0,
        exposure_hours_max: None,
        exposure_hours_median: Some(1.25),
        peak_link_share: 0.1,
        peak_disk_share: 0.08,
        peak_source_share: 0.05,
        peak_source_streams: 2,
        sweep: vec![point(1, Some(6.9)), point(2, Some(3.5)), point(3, None)],
        recommended_limit: Some(2),
        recommendation_fell_back: true,
        recommendation_rule: "the smallest limit near the fastest".into(),
        longhorn: "Longhorn v1.10".into(),
        placement_rule: "the disk with the most available space".into(),
        receivers: Vec::new(),
        by_rack: vec![RackLoad {
            rack: "r01".into(),
            receiving_nodes: 2,
            nodes: 2,
            replicas: 12,
            tib: 2.0,
            transfer_hours: Some(3.2),
        }],
        receiving_disks: Vec::new(),
        overfilled_disks: 0,
        overfill_fix: None,
        ties: None,
        scheduled_refresh_every: 1,
        other_rule: Some(OtherRule {
            rule: crate::simulate::place::DiskChoice::BalanceScore,
            longhorn: "Longhorn v1.11".into(),
            placement_rule: "the balance score".into(),
            hours_to_full_redundancy: None,
            bottleneck: "no disk takes the replicas".into(),
            receiving_nodes: 0,
            receiving_disks: 0,
            overfilled_disks: 0,
        }),
        windows: Vec::new(),
    }
}

fn risk() -> RiskFigures {
    let estimate = |value| Estimate {
        value,
        method: "exact",
    };
    RiskFigures {
        estimate: RiskResult {
            model: "failure events with fixed repair windows".into(),
            method: RiskMethod::MonteCarlo,
            method_name: "plain Monte Carlo".into(),
            trials: Some(20_000),
            years: Some(10),
            data_loss: rate(2.43e-7, 200_000, 12),
            unavailable: Rate {
                per_year: 0.0,
                ci95: [0.0, 1.5e-5],
                upper_bound_only: true,
                draws: 200_000,
                hits: 0,
                strata: Vec::new(),
            },
            expected_vm_downtime_hours_per_year: 104.5,
            ci95_vm_downtime: [100.0, 109.0],
            vm_downtime_method: "monte carlo",
        },
        exposure_window_h: 3.5,
        exposure_window_from: "the rebuild model".into(),
        markov: MarkovNote {
            fixed_window_per_year: 1e-7,
            markov_one_repair_per_year: 2e-7,
            markov_parallel_repair_per_year: 1e-7,
            explanation: "2.00x the fixed-window rate".into(),
        },
        by_replicas: vec![
            ByReplicas {
                replicas: 1,
                data_loss: Rate {
                    per_year: 0.0,
                    ci95: [0.0, 0.0],
                    upper_bound_only: false,
                    draws: 0,
                    hits: 0,
                    strata: Vec::new(),
                },
            },
            ByReplicas {
                replicas: 3,
                data_loss: rate(2.43e-7, 200_000, 12),
            },
        ],
        correlated: Correlated {
            failed_nodes: 3,
            trials: 20_000,
            longhorn_copysets: 4,
            longhorn: estimate(0.25),
            longhorn_monte_carlo: 0.2512,
            longhorn_ci95: [0.245, 0.257],
            longhorn_hits: 5024,
            scatter_width_requested: 4,
            scatter_width: 3,
            scatter_width_measured: 3.0,
            copyset_copysets: 2,
            copyset: estimate(0.0),
            copyset_monte_carlo: 0.0,
            copyset_ci95: [0.0, 0.0],
            copyset_hits: 0,
            not_compared: Some("4 nodes are too few to compare copyset placement".into()),
        },
    }
}

/// The same fleet read from a dump that has no Longhorn objects and no VMIs.
fn live_report() -> Report {
    let mut r = report();
    r.scenario = "the fleet in dump.yaml".into();
    r.verdict = HeadroomVerdict::Pass;
    r.verdict_reasons.clear();
    r.fix = None;
    r.max_clusters = None;
    r.timeline.clear();
    r.refused.clear();
    r.warnings.clear();
    r.live = Some(LiveSummary {
        source: "dump.yaml".into(),
        nodes: 4,
        witness_nodes: 1,
        vmis_running: 0,
        volumes: 0,
        replicas: 0,
        cordoned: vec!["n2".into()],
        skipped_analyses: vec!["rebuild, risk: the dump has no Volume (longhorn.io)".into()],
        skipped_objects: (1..=12)
            .map(|i| format!("Widget/w{i} (example.com/v9)"))
            .collect(),
        findings: vec!["n2 is cordoned".into()],
        notes: Vec::new(),
        scenario_overridden: vec!["fleet.classes".into()],
        storage_skipped: Some("the dump has no Volume (longhorn.io)".into()),
        vms_skipped: Some("the dump has no VirtualMachineInstance".into()),
        tenant_clusters: 0,
        newest_object: Some("2026-11-30T09:15:00Z".into()),
    });
    r
}

/// The HTML as a reader sees it: the text of every element, one per line, without the
/// style sheet and the charts (pinned by their own snapshots).
pub(super) fn visible(html: &str) -> String {
    let mut s = html.to_string();
    for (open, close) in [("<style>", "</style>"), ("<figure", "</figure>")] {
        while let Some(a) = s.find(open) {
            let b = s[a..].find(close).map_or(s.len(), |b| a + b + close.len());
            s.replace_range(a..b, "");
        }
    }
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => {
                in_tag = true;
                out.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

const PROVENANCE: &str = "Generated 2027-01-01T00:00:00Z by rackplan 0.0.0 from scenario s.yaml.";

#[test]
fn the_review_markdown_is_pinned() {
    let r = report();
    let f = findings(&r, Some(PROVENANCE.into()));
    let (md, files) = markdown_of(&f, &plots(&r), "review");
    insta::assert_snapshot!("review_markdown", md);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "review-headroom-slack.svg",
            "review-timeline.svg",
            "review-rebuild-limit.svg",
            "review-risk-replicas.svg"
        ]
    );
}

#[test]
fn the_review_html_reads_as_pinned() {
    let r = report();
    let html = html_of(&findings(&r, Some(PROVENANCE.into())), &plots(&r));
    assert!(html.contains("<body class=\"fail\">"));
    assert_eq!(html.matches("<figure id=\"chart-").count(), 4);
    insta::assert_snapshot!("review_html_visible", visible(&html));
}

#[test]
fn a_dump_without_storage_reads_as_pinned() {
    let r = live_report();
    let f = findings(&r, None);
    let ids: Vec<&str> = f.sections.iter().map(|s| s.id).collect();
    assert_eq!(
        ids,
        [
            "verdict",
            "fix",
            "dump",
            "headroom",
            "capacity",
            "rebuild",
            "warnings",
            "assumptions"
        ]
    );
    insta::assert_snapshot!(
        "review_dump_html_visible",
        visible(&html_of(&f, &plots(&r)))
    );
}

#[test]
fn the_terminal_renders_the_same_findings() {
    crate::report::set_width(100);
    let r = live_report();
    let text = findings_text(&findings(&r, None));
    // Screens cut the dump's long lists; the reports keep every row.
    assert!(
        text.contains("... and 2 more (--output json lists them)"),
        "{text}"
    );
    assert!(text.contains("Widget/w10") && !text.contains("Widget/w11"));
    let (md, _) = markdown_of(&findings(&r, None), &[], "r");
    assert!(md.contains("Widget/w12"));
    // Every sentence of the findings is on the screen, unchanged.
    for s in findings(&report(), None).sections {
        for b in &s.blocks {
            if let Block::Text(t) = b {
                let full = findings_text(&findings(&report(), None));
                assert!(full.contains(t.as_str()), "{t}");
            }
        }
    }
    insta::assert_snapshot!("review_terminal", findings_text(&findings(&report(), None)));
}

fn drain() -> DrainReport {
    let mv = |vm: &str, to: Option<&str>, how: &str| Move {
        vm: vm.into(),
        from: "n1".into(),
        to: to.map(Into::into),
        how: how.into(),
    };
    let mut moves = vec![
        mv("default/web-0", Some("n2"), "live migration"),
        mv(
            "default/db-0",
            None,
            "shut down and left off (strategy Shutdown)",
        ),
        mv("default/gpu-0", None, "no node can take it"),
    ];
    moves.extend((1..=20).map(|i| mv(&format!("default/app-{i}"), Some("n3"), "live migration")));
    DrainReport {
        nodes: vec!["n1".into()],
        can_start: false,
        survives_next_failure: false,
        sentence: "NO: default/gpu-0 has no migration target, so the drain would hang".into(),
        moves,
        no_target: 1,
        stopped: 1,
        degraded: vec![(3, 2, 14), (2, 1, 1)],
        last_replica: vec!["pvc-a".into()],
        degraded_for: "until n1 is back (0.50 h of rebuild should it stay away)".into(),
        rebuild_hours_if_away: Some(0.5),
        further: vec![
            FurtherFailure {
                node: "n2".into(),
                stranded_vms: 2,
                stranded_replicas: 0,
                volumes_without_replica: 1,
            },
            FurtherFailure {
                node: "n3".into(),
                stranded_vms: 0,
                stranded_replicas: 0,
                volumes_without_replica: 0,
            },
        ],
        node_drain_policy: "block-if-contains-last-replica".into(),
    }
}

#[test]
fn the_drain_text_is_pinned() {
    crate::report::set_width(100);
    insta::assert_snapshot!("drain_text", drain_text(&drain()));
}
