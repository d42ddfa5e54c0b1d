//! The rebuild after losing a node, as the review reports it: the model at the scenario's
//! limit, the limit sweep with its recommendation and the rule behind it, the receiving
//! nodes per rack, and the same rebuild under the other Longhorn disk rule; and the
//! placement assumptions (zones, Longhorn version, anti-affinity) every report states.

use crate::simulate::failure::rebuild::{self, RebuildResult, rebuild_input};
use crate::simulate::fleet::Assumption;
use crate::simulate::place::{DiskChoice, Placement};
use crate::simulate::report::{OtherRule, RackLoad, RebuildReport};
use crate::simulate::scenario::longhorn_of;
use crate::simulate::study::Study;

use crate::units::TIB;

/// The Longhorn version modelled and how a new replica's place is chosen, in words.
fn rule_words(choice: DiskChoice, p: &crate::simulate::scenario::Platform) -> String {
    let zone = if p.replica_zone_soft_anti_affinity {
        "a node in a zone without a replica of the volume first, else any node without one"
    } else {
        "only a node in a zone without a replica of the volume (zone anti-affinity hard)"
    };
    let node = if p.replica_soft_anti_affinity {
        ", else a node that holds one (node anti-affinity soft)"
    } else {
        ""
    };
    format!(
        "each new replica's node and disk are chosen when it is created: {zone}{node}; among those, {}; it then waits on that node for a rebuild slot",
        choice.describe()
    )
}

fn other(choice: DiskChoice) -> (DiskChoice, &'static str) {
    match choice {
        DiskChoice::MostAvailable => (
            DiskChoice::BalanceScore,
            "Longhorn v1.11 and later (Harvester v1.8 and later)",
        ),
        DiskChoice::BalanceScore => (
            DiskChoice::MostAvailable,
            "Longhorn v1.10 and earlier (Harvester v1.7 and earlier)",
        ),
    }
}

/// The rebuild after losing `failed`, at the scenario's limit, with the limit sweep.
pub(crate) fn rebuild_report(
    l: &Study,
    pl: &Placement,
    failed: usize,
    what_if_tib: Option<f64>,
) -> (RebuildReport, RebuildResult) {
    let s = &l.scenario;
    let p = &s.platform;
    let (input, detached) = rebuild_input(s, pl, failed, p.rebuild_limit);
    let r: RebuildResult = rebuild::simulate(&input);
    let (sweep, rec) = rebuild::sweep(&input, s.analysis.warn.rebuild_share);
    let mut hours: Vec<f64> = r
        .windows
        .iter()
        .map(|w| w.hours.unwrap_or(f64::INFINITY))
        .collect();
    hours.sort_by(f64::total_cmp);
    let finite = |h: Option<&f64>| h.copied().filter(|x| x.is_finite());
    // Per rack: its nodes that may receive (up, schedulable), those that do, and when the
    // last of them is done.
    let topo = &pl.topo();
    let mut by_rack: Vec<RackLoad> = Vec::new();
    for (ri, rack) in topo.racks.iter().enumerate() {
        let nodes = (0..topo.hosts.len())
            .filter(|&n| n != failed && topo.rack_of[n] == ri && !topo.no_replicas[n])
            .count();
        let recv: Vec<_> = r.receivers.iter().filter(|x| &x.rack == rack).collect();
        if recv.is_empty() {
            continue;
        }
        by_rack.push(RackLoad {
            rack: rack.clone(),
            receiving_nodes: recv.len(),
            nodes,
            replicas: recv.iter().map(|x| x.replicas).sum(),
            tib: recv.iter().map(|x| x.bytes).sum::<f64>() / TIB,
            transfer_hours: recv
                .iter()
                .map(|x| x.done_s)
                .try_fold(0.0f64, |a, d| d.map(|d| a.max(d / 3600.0))),
        });
    }
    let choice = pl.rules().choice;
    let (alt, alt_name) = other(choice);
    let mut alt_pl = pl.clone();
    alt_pl.set_disk_choice(alt);
    let (alt_input, _) = rebuild_input(s, &alt_pl, failed, p.rebuild_limit);
    let alt_r = rebuild::simulate(&alt_input);
    let report = RebuildReport {
        failed_node: topo
            .hosts
            .get(failed)
            .map_or_else(String::new, |h| h.name.clone()),
        what_if_tib,
        limit: p.rebuild_limit,
        replicas_to_rebuild: input.jobs.len(),
        detached_not_rebuilt: detached,
        tib_to_rebuild: (r.bytes / TIB).max(0.0),
        hours_to_full_redundancy: r.hours_to_full_redundancy,
        never: r.never.clone(),
        bottleneck: r.bottleneck.clone(),
        aborted_rebuilds: r.aborted,
        abort_restarts: r.abort_restarts,
        stranded_rebuilds: r.stranded,
        blocked_rebuilds: r.blocked,
        exposure_hours_max: if hours.is_empty() {
            Some(0.0)
        } else {
            finite(hours.last())
        },
        exposure_hours_median: if hours.is_empty() {
            Some(0.0)
        } else {
            finite(hours.get(hours.len() / 2))
        },
        peak_link_share: r.peak_link_share,
        peak_disk_share: r.peak_disk_share,
        peak_source_share: r.peak_source_share,
        peak_source_streams: r.peak_source_streams,
        sweep,
        recommended_limit: rec.limit,
        recommendation_fell_back: rec.fell_back,
        recommendation_rule: rec.rule,
        longhorn: longhorn_of(p).1,
        placement_rule: rule_words(choice, p),
        receivers: r.receivers.clone(),
        by_rack,
        other_rule: (!input.jobs.is_empty()).then(|| OtherRule {
            longhorn: alt_name.to_string(),
            placement_rule: rule_words(alt, p),
            hours_to_full_redundancy: alt_r.hours_to_full_redundancy,
            bottleneck: alt_r.bottleneck.clone(),
        }),
        windows: r.windows.clone(),
    };
    (report, r)
}

/// The inputs every replica placement rests on, with their sources: the zones, the
/// Longhorn version and its disk rule, and the anti-affinity settings.
pub(crate) fn placement_assumptions(l: &Study, pl: &Placement) -> Vec<Assumption> {
    let p = &l.scenario.platform;
    let topo = &pl.topo();
    let scenario_or_default = |path: &[&str]| {
        let segs: Vec<crate::files::yaml::Seg> = path
            .iter()
            .map(|k| crate::files::yaml::Seg::Key((*k).to_string()))
            .collect();
        if l.source.has(&segs) {
            "scenario"
        } else {
            "default"
        }
    };
    let names = |v: &[String]| {
        let shown: Vec<&str> = v.iter().take(6).map(String::as_str).collect();
        let more = v.len().saturating_sub(6);
        if more > 0 {
            format!("{}, and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    };
    let single = topo.zones.len() == 1;
    // Short words: the table fits 80 columns.
    let (value, source, note) = if l.live.is_some() {
        (
            if single {
                "one zone".into()
            } else {
                names(&topo.zones)
            },
            "dump",
            "the Nodes' topology.kubernetes.io/zone labels",
        )
    } else if l.site_topology.is_some() {
        (
            if single {
                "one zone".into()
            } else {
                names(&topo.zones)
            },
            "site",
            "each node's zone annotation (topology.kubernetes.io/zone)",
        )
    } else if l.scenario.fleet.racks_are_zones {
        (
            format!("the racks: {}", names(&topo.racks)),
            scenario_or_default(&["fleet", "racks_are_zones"]),
            "each rack labelled topology.kubernetes.io/zone; set fleet.racks_are_zones: false if not",
        )
    } else {
        (
            "one zone".into(),
            "scenario",
            "fleet.racks_are_zones: false, the nodes carry no zone label",
        )
    };
    let mut out = vec![Assumption {
        input: "Longhorn zones".into(),
        value,
        source,
        note: Some(note.into()),
    }];
    if l.live.is_none() {
        out.push(Assumption {
            input: "Harvester version".into(),
            value: p.harvester_version.clone(),
            source: l.harvester_version_from,
            note: l.harvester_version_note.clone(),
        });
    }
    let (v, _) = longhorn_of(p);
    let version_from = if l.longhorn_version_from_dump {
        "dump"
    } else if p.longhorn_version.is_some() {
        "scenario"
    } else {
        l.harvester_version_from
    };
    out.push(Assumption {
        input: "Longhorn version".into(),
        value: if p.longhorn_version.is_some() {
            format!("v{}.{}", v.0, v.1)
        } else {
            format!(
                "v{}.{}, bundled with Harvester {}",
                v.0, v.1, p.harvester_version
            )
        },
        source: version_from,
        note: Some(match pl.rules().choice {
            DiskChoice::MostAvailable => {
                "a new replica goes to the disk with the most available space".into()
            }
            DiskChoice::BalanceScore => {
                "a new replica goes where usable space stays most even (balance score)".into()
            }
        }),
    });
    if let Some(rule) = p.replica_disk_choice {
        out.push(Assumption {
            input: "Longhorn disk choice".into(),
            value: match rule {
                crate::simulate::scenario::DiskRule::MostAvailable => "most-available".into(),
                crate::simulate::scenario::DiskRule::BalanceScore => "balance-score".into(),
            },
            source: "scenario",
            note: Some("platform.replica_disk_choice, over the Longhorn version's own rule".into()),
        });
    }
    for (input, key, value) in [
        (
            "Longhorn zone soft anti-affinity",
            "replica_zone_soft_anti_affinity",
            p.replica_zone_soft_anti_affinity,
        ),
        (
            "Longhorn node soft anti-affinity",
            "replica_soft_anti_affinity",
            p.replica_soft_anti_affinity,
        ),
        (
            "Longhorn disk soft anti-affinity",
            "replica_disk_soft_anti_affinity",
            p.replica_disk_soft_anti_affinity,
        ),
    ] {
        // A dump's assumptions list these settings already.
        if l.live.is_some() {
            continue;
        }
        out.push(Assumption {
            input: input.into(),
            value: value.to_string(),
            source: scenario_or_default(&["platform", key]),
            note: None,
        });
    }
    out
}
