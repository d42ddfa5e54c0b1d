//! "Can the whole fleet be upgraded node by node, in what order, how long, and what
//! breaks?" (`simulate --upgrade`, on a dump's running fleet or a scenario's planned one).
//!
//! The rules follow Harvester's upgrade (harvester/harvester v1.8.2) and KubeVirt (v1.7.4):
//! - **Order.** Rancher's planner takes the init node, the other etcd nodes (management
//!   nodes and the witness), control-plane nodes, then workers, each tier by machine name
//!   (rancher/rancher `pkg/capr/planner/planner.go` `fullReconcile`); Harvester sets
//!   `controlPlaneConcurrency` and `workerConcurrency` to "1"
//!   (`pkg/controller/master/upgrade/upgrade_controller.go` `upgradeKubernetes`). Here:
//!   management nodes and witnesses by name, then workers by name; `--order` replaces it.
//! - **Per node** (`package/upgrade/upgrade_node.sh` `command_pre_drain`,
//!   `wait_longhorn_engines`, `wait_vms_out_or_shutdown`, `command_post_drain`): wait until
//!   every attached volume is healthy; stop the VMs Harvester counts as not live-migratable
//!   (host devices or GPUs, any nodeSelector, required node affinity no other node meets:
//!   `pkg/util/virtualmachineinstance/virtualmachineinstance.go`
//!   `GetAllNonLiveMigratableVMINames`, run by `pkg/upgradehelper/vmlivemigratedetector`);
//!   taint the node so KubeVirt evacuates the rest, which it does only for evictionStrategy
//!   `LiveMigrate` or `LiveMigrateIfPossible` with LiveMigratable True (kubevirt
//!   `pkg/util/migrations/migrations.go` `VMIMigratableOnEviction`); wait for every VM to
//!   leave (a VM never evacuated stalls the upgrade: the pre-drain job has no deadline);
//!   upgrade RKE2 and the OS and reboot (`node_upgrade_s`).
//! - **Migrations** run under KubeVirt's limits and timeouts (`place::migration`); the
//!   target holds the full requests while both hold the VM, under the scheduler's rules.
//! - **Volumes.** While the upgrade runs Harvester raises Longhorn's
//!   `replica-replenishment-wait-interval` to at least 1800 s (`upgrade_controller.go`
//!   `OnChanged`, restored in `cleanup`): a node back within it gets
//!   its replicas resynced (what was written meanwhile; longhorn/longhorn-manager
//!   `controller/volume_controller.go` `CheckAndReuseFailedReplica`), a node away longer has
//!   them rebuilt elsewhere (the rebuild model). A volume whose only healthy replica is on
//!   the node blocks the drain under `node-drain-policy` `block-if-contains-last-replica`
//!   and `allow-if-replica-is-stopped` while attached, is evicted first under the
//!   `block-for-eviction` policies, and is lost for the window under `always-allow`
//!   (longhorn-manager `controller/instance_manager_controller.go`
//!   `canDeleteInstanceManagerPDB`).
//! - **Before it starts**, Harvester's webhook refuses an upgrade with a Degraded volume, a
//!   single-replica volume or a cordoned node (`pkg/webhook/resources/upgrade/validator.go`
//!   `checkResources`).
//! - **Maintain-mode strategies** (`harvesterhci.io/maintain-mode-strategy`) are what the
//!   VM's owner asked for a node's maintenance (`pkg/controller/master/nodedrain`): a VM
//!   labelled to shut down is stopped as asked, not counted against the plan.

use super::upgrade_answer::{BetterOrder, Blocker, UpgradeError, UpgradeReport, minutes};
use super::upgrade_fleet::{Fleet, Run, Stop};
use super::upgrade_step::run;
use crate::simulate::fleet::{VmPins, is_management};
use crate::simulate::place::{MigrationConfig, MigrationLink};
use crate::simulate::scenario::BondMode;
use crate::simulate::study::Study;

/// Harvester's replenishment wait while an upgrade runs, seconds.
pub const UPGRADE_REPLENISHMENT_WAIT_S: f64 = 1800.0;

/// The fleet to upgrade, from the dump (what runs) or the scenario (placed as planned).
fn fleet(study: &Study) -> (Fleet<'_>, Vec<String>, String) {
    let s = &study.scenario;
    let p = &s.platform;
    let mut notes = Vec::new();
    let (cfg, base) = if let Some(live) = &study.live {
        let cfg = live
            .pins
            .kubevirt_migration
            .as_deref()
            .map_or_else(MigrationConfig::default, |j| {
                MigrationConfig::from_setting(j, &mut notes)
            });
        let pl = live.placement.clone();
        let n = pl.topo().hosts.len();
        let mut cordoned = vec![false; n];
        for &c in &live.cordoned {
            cordoned[c] = true;
        }
        let labels = live.pins.labels.clone();
        let management = labels.iter().map(is_management).collect();
        (
            cfg,
            Fleet {
                scenario: s,
                vm_names: live.vm_names.clone(),
                pins: live.pins.vms.clone(),
                strategy: live.strategy.clone(),
                migratable: live.migratable.clone(),
                labels,
                cordoned,
                management,
                witnesses: live.pins.witnesses.clone(),
                volume_names: live.pins.volume_names.clone(),
                policy: live.node_drain_policy.clone(),
                cfg: MigrationConfig::default(),
                link: link(study),
                node_upgrade_s: p.node_upgrade_s,
                wait_s: p.replenishment_wait_s.max(UPGRADE_REPLENISHMENT_WAIT_S),
                pl,
            },
        )
    } else {
        let pl = study.place(&study.current());
        let n = pl.topo().hosts.len();
        let mut seen = std::collections::BTreeMap::new();
        let vm_names = pl
            .vms()
            .iter()
            .map(|v| {
                let k = seen.entry((v.cluster, v.pool.clone())).or_insert(0);
                *k += 1;
                format!("cluster-{}/{}-{}", v.cluster + 1, v.pool, k)
            })
            .collect();
        let volume_names = pl
            .volumes()
            .iter()
            .enumerate()
            .map(|(i, _)| format!("volume-{}", i + 1))
            .collect();
        notes.push("a planned fleet: every VM is taken as the Harvester UI makes it (evictionStrategy LiveMigrateIfPossible, no host device, no node selector) and the first three nodes as the management nodes".into());
        notes.push("a planned fleet: node-drain-policy allow-if-replica-is-stopped, what Harvester v1.4+ installs with".into());
        let pins = vec![
            VmPins {
                eviction: Some("LiveMigrateIfPossible".into()),
                ..VmPins::default()
            };
            pl.vms().len()
        ];
        (
            MigrationConfig::default(),
            Fleet {
                scenario: s,
                vm_names,
                strategy: vec![None; pl.vms().len()],
                migratable: vec![Some(true); pl.vms().len()],
                pins,
                labels: vec![Default::default(); n],
                cordoned: vec![false; n],
                management: (0..n).map(|h| h < 3).collect(),
                witnesses: Vec::new(),
                volume_names,
                policy: "allow-if-replica-is-stopped".into(),
                cfg: MigrationConfig::default(),
                link: link(study),
                node_upgrade_s: p.node_upgrade_s,
                wait_s: p.replenishment_wait_s.max(UPGRADE_REPLENISHMENT_WAIT_S),
                pl,
            },
        )
    };
    let mut f = base;
    f.cfg = cfg;
    (f, notes, s.name.clone())
}

/// The network migrations leave a node over: the scenario's links (every bond member for
/// the node, one for a flow).
pub(crate) fn link(study: &Study) -> MigrationLink {
    let s = &study.scenario;
    let eff = crate::simulate::failure::rebuild::wire_efficiency(s.network.mtu);
    let flow = s.network.speed_gbps * 1e9 / 8.0 * eff;
    let members = match s.network.bond {
        BondMode::Lacp => f64::from(s.network.links.max(1)),
        BondMode::ActiveBackup => 1.0,
    };
    MigrationLink {
        egress: flow * members,
        flow_cap: flow,
        dirty: s.platform.migration_dirty_mbps * 1e6,
        pod_start_s: s.platform.pod_start_s,
    }
}

/// Harvester's order: management nodes and witnesses by name, then workers by name.
fn default_order(f: &Fleet<'_>) -> Vec<Stop> {
    let mut first: Vec<(String, Stop)> = Vec::new();
    let mut rest: Vec<(String, Stop)> = Vec::new();
    for h in 0..f.pl.topo().hosts.len() {
        let e = (f.pl.topo().hosts[h].name.clone(), Stop::Host(h));
        if f.management[h] {
            first.push(e);
        } else {
            rest.push(e);
        }
    }
    for (w, name) in f.witnesses.iter().enumerate() {
        first.push((name.clone(), Stop::Witness(w)));
    }
    first.sort_by(|a, b| a.0.cmp(&b.0));
    rest.sort_by(|a, b| a.0.cmp(&b.0));
    first.into_iter().chain(rest).map(|e| e.1).collect()
}

/// `--order`: the nodes named first, in that order, then the rest in Harvester's order.
fn given_order(f: &Fleet<'_>, names: &[String]) -> Result<Vec<Stop>, UpgradeError> {
    let all = default_order(f);
    let mut out: Vec<Stop> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let Some(&s) = all.iter().find(|&&s| f.stop_name(s) == n) else {
            let names: Vec<String> = all.iter().map(|&s| f.stop_name(s)).collect();
            return Err(UpgradeError::NoNode {
                name: n.to_string(),
                hint: crate::words::closest(n, names.iter().map(String::as_str))
                    .map_or_else(String::new, |s| format!(" (did you mean `{s}`?)")),
                all: names.join(", "),
            });
        };
        if out.contains(&s) {
            return Err(UpgradeError::Twice(n.to_string()));
        }
        out.push(s);
    }
    out.extend(
        all.into_iter()
            .filter(|s| !out.contains(s))
            .collect::<Vec<_>>(),
    );
    Ok(out)
}

/// Memory requests of the running VMs on a stop before the upgrade: what it must move.
fn load(f: &Fleet<'_>, s: Stop) -> f64 {
    match s {
        Stop::Host(h) => f.pl.vms_on()[h]
            .iter()
            .filter(|&&v| f.pl.vms()[v].running)
            .map(|&v| f.pl.vms()[v].mem_req)
            .sum(),
        Stop::Witness(_) => 0.0,
    }
}

fn tier(f: &Fleet<'_>, s: Stop) -> u8 {
    match s {
        Stop::Host(h) if !f.management[h] => 1,
        _ => 0,
    }
}

/// The orders worth trying besides `order`: Harvester's, and the lightest nodes first
/// (within Harvester's tiers, and across them): an empty node upgraded early takes the
/// next node's VMs for good instead of passing them on again.
fn candidates(f: &Fleet<'_>, order: &[Stop]) -> Vec<(Vec<Stop>, &'static str, bool)> {
    let mut out = Vec::new();
    let def = default_order(f);
    if def != order {
        out.push((def.clone(), "Harvester's order", true));
    }
    let mut light = def.clone();
    light.sort_by(|&a, &b| {
        (tier(f, a), load(f, a))
            .partial_cmp(&(tier(f, b), load(f, b)))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    out.push((light, "lightest nodes first within Harvester's tiers", true));
    let mut any = def;
    any.sort_by(|&a, &b| load(f, a).total_cmp(&load(f, b)));
    out.push((any, "lightest nodes first (a maintenance round; Harvester's upgrade keeps management nodes first)", false));
    out.retain(|(o, _, _)| o != order);
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// What Harvester refuses before the first node (dump fleets: the webhook's checks).
fn admission(f: &Fleet<'_>, study: &Study) -> Vec<Blocker> {
    let mut out = Vec::new();
    let Some(live) = &study.live else {
        return out;
    };
    for (h, &c) in f.cordoned.iter().enumerate() {
        if c {
            let node = f.pl.topo().hosts[h].name.clone();
            out.push(Blocker {
                node: None,
                subject: node.clone(),
                what: format!("node {node} is cordoned, in maintenance or not Ready: Harvester refuses to start the upgrade"),
                fix: format!("take {node} out of maintenance (uncordon it) or bring it back Ready"),
            });
        }
    }
    let nodes = f.pl.topo().hosts.len();
    for (i, vol) in f.pl.volumes().iter().enumerate() {
        let wanted = live.pins.wanted_replicas.get(i).copied().unwrap_or(0) as usize;
        let name = f.volume_names.get(i).cloned().unwrap_or_default();
        if wanted == 1 {
            out.push(Blocker {
                node: None,
                subject: name.clone(),
                what: format!(
                    "volume {name} has numberOfReplicas 1: Harvester refuses the upgrade"
                ),
                fix: format!("raise volume {name}'s numberOfReplicas to 2 or more"),
            });
        } else if vol.attached && nodes >= 3 && wanted > vol.replicas.len() {
            out.push(Blocker {
                node: None,
                subject: name.clone(),
                what: format!(
                    "volume {name} is Degraded ({} of {wanted} replicas healthy): Harvester refuses to start the upgrade",
                    vol.replicas.len()
                ),
                fix: format!("volume {name} has {} healthy replica(s): wait for its rebuild, then plan again", vol.replicas.len()),
            });
        }
    }
    out
}

/// The rolling upgrade of the study's fleet, in `order` (node names; empty: Harvester's).
pub fn upgrade(study: &Study, order: &[String]) -> Result<UpgradeReport, UpgradeError> {
    let (f, mut assumptions, fleet_name) = fleet(study);
    if f.pl.topo().hosts.is_empty() {
        return Err(UpgradeError::NoHosts);
    }
    let given = !order.iter().all(|o| o.trim().is_empty());
    let stops = if given {
        given_order(&f, order)?
    } else {
        default_order(&f)
    };
    let mut r: Run = run(&f, &stops, true);
    let mut blockers = admission(&f, study);
    blockers.append(&mut r.blockers);
    // The best other order by window, then by degraded time.
    let mut better: Option<BetterOrder> = None;
    for (o, how, keeps) in candidates(&f, &stops) {
        let alt = run(&f, &o, false);
        let saves_w = r.window_s - alt.window_s;
        let saves_d = r.degraded_s - alt.degraded_s;
        let worth = saves_w > (r.window_s * 0.01).max(1.0)
            || (saves_w > -1.0 && saves_d > (r.degraded_s * 0.01).max(1.0));
        if worth
            && better
                .as_ref()
                .is_none_or(|b| saves_w > b.saves_window_s + 1e-6)
        {
            better = Some(BetterOrder {
                order: o.iter().map(|&s| f.stop_name(s)).collect(),
                how: how.into(),
                keeps_tiers: keeps,
                window_s: alt.window_s,
                degraded_s: alt.degraded_s,
                saves_window_s: saves_w,
                saves_degraded_s: saves_d,
            });
        }
    }
    let (mig, upg, vol): (f64, f64, f64) = r.steps.iter().fold((0.0, 0.0, 0.0), |a, s| {
        (
            a.0 + s.migrate_s + s.evict_s,
            a.1 + s.upgrade_s,
            a.2 + s.volume_s,
        )
    });
    let longest = r
        .steps
        .iter()
        .max_by(|a, b| (a.end_s - a.start_s).total_cmp(&(b.end_s - b.start_s)));
    let critical_path = format!(
        "{} nodes in series, one at a time: migrations {}, node upgrades {}, volume waits {}{}",
        r.steps.len(),
        minutes(mig),
        minutes(upg),
        minutes(vol),
        longest.map_or_else(String::new, |s| format!(
            "; longest step {} ({})",
            s.node,
            minutes(s.end_s - s.start_s)
        ))
    );
    let clean = blockers.is_empty();
    let risky = r.steps.iter().filter(|s| s.next_failure.is_some()).count();
    let mut sentence = if clean {
        format!(
            "the rolling upgrade completes cleanly in {}: every VM live-migrates and no volume loses its last healthy replica",
            minutes(r.window_s)
        )
    } else {
        format!(
            "the rolling upgrade does not complete cleanly: {} blocker(s), first {}; the window would be {} once they are dealt with",
            blockers.len(),
            blockers[0].what,
            minutes(r.window_s)
        )
    };
    if risky > 0 {
        sentence.push_str(&format!(
            "; during {risky} of {} steps one more node failure would strand VMs or leave a volume with no healthy replica",
            r.steps.len()
        ));
    }
    if let Some(b) = &better {
        sentence.push_str(&format!(
            "; {} would take {} less",
            b.how,
            minutes(b.saves_window_s.max(0.0))
        ));
    }
    assumptions.push(format!(
        "each node takes {} to upgrade and reboot once its VMs are gone (platform.node_upgrade_s)",
        minutes(f.node_upgrade_s)
    ));
    assumptions.push(format!(
        "a guest dirties {:.0} MB/s of memory while it migrates (platform.migration_dirty_mbps); VMs not migrated (stopped or stalled) start again on their node once it is back",
        study.scenario.platform.migration_dirty_mbps
    ));
    let slots = f.cfg.slots();
    Ok(UpgradeReport {
        fleet: fleet_name,
        order: stops.iter().map(|&s| f.stop_name(s)).collect(),
        order_from: if given {
            "--order, then the nodes it leaves out in Harvester's order".into()
        } else {
            "Harvester's: management nodes and witnesses by name, then workers by name".into()
        },
        clean,
        sentence,
        window_s: r.window_s,
        critical_path,
        degraded_s: r.degraded_s,
        degraded_volume_hours: r.degraded_volume_h,
        migrations: r.migrations,
        remigrations: r.remigrations,
        blockers,
        steps: r.steps,
        better_order: better,
        node_upgrade_s: f.node_upgrade_s,
        replenishment_wait_s: f.wait_s,
        node_drain_policy: f.policy.clone(),
        migration: f.cfg,
        migration_rate: crate::simulate::place::copy_rate(&f.cfg, &f.link, slots),
        assumptions,
    })
}
