//! The rebuild after losing a node, as the review reports it: the model at the scenario's
//! limit, the limit sweep with its recommendation and the rule behind it, the receiving
//! nodes per rack and the receiving disks with the data each takes against its free space,
//! the same rebuild under the other Longhorn disk rule, the spread of other draws where
//! exactly tied disks were drawn from, and, when the burst overfills a disk, what would
//! stop it (a lower over-provisioning percentage, the other rule), each computed; and the
//! placement assumptions (zones, Longhorn version, anti-affinity, the refresh of
//! `storageScheduled`) every report states.

use rayon::prelude::*;

use crate::simulate::failure::rebuild::{self, RebuildResult, rebuild_input, rebuild_input_with};
use crate::simulate::fleet::Assumption;
use crate::simulate::place::{DiskChoice, Placement};
use crate::simulate::report::{
    OtherRule, OverfillFix, RackLoad, RebuildReport, TieSpread, refresh_words,
};
use crate::simulate::scenario::{Scenario, longhorn_of};
use crate::simulate::study::Study;

use crate::units::TIB;

/// Draws among exactly tied disks run besides the answer's own, for its spread.
const TIE_DRAWS: u32 = 16;

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
    let refresh = if choice == DiskChoice::BalanceScore && p.scheduled_refresh_every == 1 {
        "; this assumes each node's Longhorn manager counts a new replica in its disk's storageScheduled before the next one is placed (platform.scheduled_refresh_every)".to_string()
    } else if p.scheduled_refresh_every == 1 {
        String::new()
    } else {
        format!(
            "; the scheduler sees storageScheduled refreshed {} (platform.scheduled_refresh_every)",
            refresh_words(p.scheduled_refresh_every)
        )
    };
    format!(
        "each new replica's node and disk are chosen when it is created: {zone}{node}; among those, {}{refresh}; it then waits on that node for a rebuild slot",
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
    alt_pl.rules_mut().choice = alt;
    let (alt_input, _) = rebuild_input(s, &alt_pl, failed, p.rebuild_limit);
    let alt_r = rebuild::simulate(&alt_input);
    let ties = (input.tied_replicas > 0).then(|| tie_spread(s, pl, failed, (&input, &r)));
    let overfill_fix = (r.overfilled > 0).then(|| OverfillFix {
        other_rule: alt_name.to_string(),
        other_rule_hours: alt_r.hours_to_full_redundancy,
        other_rule_overfilled: alt_r.overfilled,
        ..lower_over_provisioning(s, pl, failed)
    });
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
        receiving_disks: r.disks.clone(),
        overfilled_disks: r.overfilled,
        overfill_fix,
        ties,
        scheduled_refresh_every: p.scheduled_refresh_every,
        other_rule: (!input.jobs.is_empty()).then(|| OtherRule {
            rule: alt,
            longhorn: alt_name.to_string(),
            placement_rule: rule_words(alt, p),
            hours_to_full_redundancy: alt_r.hours_to_full_redundancy,
            bottleneck: alt_r.bottleneck.clone(),
            receiving_nodes: alt_r.receivers.len(),
            receiving_disks: alt_r.disks.len(),
            overfilled_disks: alt_r.overfilled,
        }),
        windows: r.windows.clone(),
    };
    (report, r)
}

/// The same burst drawn again among its exactly tied disks, `TIE_DRAWS` times: the spread
/// of hours and receiving nodes Go's map order allows, the answer's own draw (`own`)
/// included.
fn tie_spread(
    s: &Scenario,
    pl: &Placement,
    failed: usize,
    (input, own): (&rebuild::RebuildInput, &RebuildResult),
) -> TieSpread {
    let limit = s.platform.rebuild_limit;
    let runs: Vec<RebuildResult> = (1..=u64::from(TIE_DRAWS))
        .into_par_iter()
        .map(|i| {
            let salt = crate::simulate::place::mix(i);
            rebuild::simulate(&rebuild_input_with(s, pl, failed, limit, salt).0)
        })
        .collect();
    let hours: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.hours_to_full_redundancy)
        .chain(own.hours_to_full_redundancy)
        .collect();
    let nodes = runs
        .iter()
        .map(|r| r.receivers.len())
        .chain([own.receivers.len()]);
    TieSpread {
        tied_replicas: input.tied_replicas,
        widest_tie: input.widest_tie,
        draws: TIE_DRAWS + 1,
        hours_min: hours.iter().copied().reduce(f64::min),
        hours_max: hours.iter().copied().reduce(f64::max),
        draws_never: TIE_DRAWS + 1 - u32::try_from(hours.len()).unwrap_or(TIE_DRAWS + 1),
        receiving_nodes_min: nodes.clone().min().unwrap_or(0),
        receiving_nodes_max: nodes.max().unwrap_or(0),
    }
}

/// The highest over-provisioning percentage below the scenario's at which the burst
/// overfills no disk and the rebuild completes, found by creating the burst again at each
/// whole percent from the scenario's down; what is placed stays where it is, as it would on
/// a running fleet whose setting is lowered.
fn lower_over_provisioning(s: &Scenario, pl: &Placement, failed: usize) -> OverfillFix {
    let from = s.platform.overcommit_storage_pct.ceil() as u32;
    let mut low = pl.clone();
    let found = (1..from).rev().find_map(|pct| {
        low.rules_mut().overprovision = f64::from(pct) / 100.0;
        let (input, _) = rebuild_input(s, &low, failed, s.platform.rebuild_limit);
        let r = rebuild::simulate(&input);
        r.hours_to_full_redundancy.map(|h| (pct, h, r.disks.len()))
    });
    OverfillFix {
        over_provisioning_pct: found.map(|f| f.0),
        from_pct: from,
        hours_at_that: found.map(|f| f.1),
        disks_at_that: found.map_or(0, |f| f.2),
        other_rule: String::new(),
        other_rule_hours: None,
        other_rule_overfilled: 0,
    }
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
    out.push(Assumption {
        input: "storageScheduled refresh".into(),
        value: refresh_words(p.scheduled_refresh_every),
        source: scenario_or_default(&["platform", "scheduled_refresh_every"]),
        note: Some(
            "when the scheduler sees a burst's replicas in storageScheduled: the balance score and over-provisioning read it"
                .into(),
        ),
    });
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
