//! One run of the rolling upgrade: the nodes in a given order, one at a time, each step
//! moving the node's VMs (or stopping them, and why), taking the node away for its upgrade
//! and reboot, and waiting until its volumes are healthy again before the next node.
//! `upgrade.rs` holds the rules' sources and the order search, `upgrade_fleet.rs` what a
//! run reads, `upgrade_answer.rs` the answer's types.

use super::upgrade_answer::{Blocker, Segment, Step, VmFate};
use super::upgrade_fleet::{Fleet, Run, Stop, next_failure, no_migration};
use crate::simulate::failure::rebuild::{self, Job, NodeCaps, rebuild_input};
use crate::simulate::place::{Outcome, Placement, evacuate, pick_disk, pick_node};

#[allow(clippy::too_many_lines, clippy::too_many_arguments)] // one node's step, in Harvester's order
fn host_step(
    f: &Fleet<'_>,
    pl: &mut Placement,
    d: usize,
    start: f64,
    moved: &mut [bool],
    caps: &[NodeCaps],
    detail: bool,
    run: &mut Run,
) -> Step {
    let n = pl.topo().hosts.len();
    let hosts: Vec<String> = pl.topo().hosts.iter().map(|h| h.name.clone()).collect();
    let name = |h: usize| hosts[h].clone();
    let node = name(d);
    let alive: Vec<bool> = (0..n).map(|h| h != d && !f.cordoned[h]).collect();
    let mut fates = Vec::new();
    let mut to_copy: Vec<(usize, usize)> = Vec::new();
    // In the order the VMs were listed (the evacuation's order is not defined).
    let mut running: Vec<usize> = pl.vms_on()[d]
        .iter()
        .copied()
        .filter(|&v| pl.vms()[v].running)
        .collect();
    running.sort_unstable();
    for v in running {
        let pins = f.pins.get(v).cloned().unwrap_or_default();
        let fitting: Vec<bool>;
        let mask: &[bool] = if pins.node_affinity.is_empty() {
            &alive
        } else {
            fitting = (0..n)
                .map(|h| alive[h] && f.labels.get(h).is_some_and(|l| pins.fits(l)))
                .collect();
            &fitting
        };
        let others_fit = pins.node_affinity.is_empty() || mask.iter().any(|&a| a);
        if let Some((fate, why, fix)) = no_migration(f, v, others_fit) {
            let strategy = f.strategy.get(v).cloned().flatten().unwrap_or_default();
            let mut to = None;
            if strategy == "ShutdownAndRestartAfterEnable" {
                // Restarted on another node once the node is drained: no copy.
                let vm = pl.vms()[v].clone();
                if let Some(t) = pick_node(&vm, pl.free(), pl.topo(), pl.groups(), &[], mask) {
                    take(pl, t, v);
                    release(pl, d, v);
                    relocate(pl, v, d, Some(t));
                    to = Some(name(t));
                }
            } else if strategy == "Shutdown" {
                release(pl, d, v);
                relocate(pl, v, d, None);
                pl.stop_vm(v);
            }
            if let Some(fix) = &fix {
                run.blockers.push(Blocker {
                    node: Some(node.clone()),
                    subject: f.vm_name(v),
                    what: format!("{} on {node}: {why}", f.vm_name(v)),
                    fix: fix.clone(),
                });
            }
            fates.push(VmFate {
                vm: f.vm_name(v),
                to,
                fate: fate.into(),
                why: Some(why),
                seconds: None,
                again: false,
            });
            continue;
        }
        let vm = pl.vms()[v].clone();
        // Both nodes hold the VM while it migrates: the target takes the full requests.
        if let Some(t) = pick_node(&vm, pl.free(), pl.topo(), pl.groups(), &[], mask) {
            take(pl, t, v);
            to_copy.push((v, t));
        } else {
            run.blockers.push(Blocker {
                node: Some(node.clone()),
                subject: f.vm_name(v),
                what: format!("{} on {node}: no other node has room for its requests under its anti-affinity; its migration fails after 300 s Pending and Harvester stops it", f.vm_name(v)),
                fix: "add capacity, or stop or shrink VMs before the upgrade".into(),
            });
            fates.push(VmFate {
                vm: f.vm_name(v),
                to: None,
                fate: "stopped".into(),
                why: Some("no node has room for it under its anti-affinity".into()),
                seconds: None,
                again: false,
            });
        }
    }
    let bytes: Vec<f64> = to_copy
        .iter()
        .map(|&(v, _)| pl.vms()[v].mem_gib.max(0.0) * 1024f64.powi(3))
        .collect();
    let (outcomes, migrate_s) = evacuate(&f.cfg, &f.link, &bytes);
    for (&(v, t), &(_, o)) in to_copy.iter().zip(&outcomes) {
        match o {
            Outcome::Done(s) => {
                release(pl, d, v);
                relocate(pl, v, d, Some(t));
                let again = moved[v];
                moved[v] = true;
                run.migrations += 1;
                if again {
                    run.remigrations += 1;
                }
                fates.push(VmFate {
                    vm: f.vm_name(v),
                    to: Some(name(t)),
                    fate: "live migration".into(),
                    why: None,
                    seconds: Some(s),
                    again,
                });
            }
            Outcome::Aborted(s) => {
                unwind(pl, t, v);
                let why = format!(
                    "its migration cannot finish within KubeVirt's completion timeout ({:.0} s): aborted, and Harvester stops it",
                    f.cfg
                        .completion_timeout_s(pl.vms()[v].mem_gib * 1024f64.powi(3))
                );
                run.blockers.push(Blocker {
                    node: Some(node.clone()),
                    subject: f.vm_name(v),
                    what: format!("{} on {node}: {why}", f.vm_name(v)),
                    fix: "raise kubevirt-migration completionTimeoutPerGiB or the migration bandwidth, or stop it for the window".into(),
                });
                fates.push(VmFate {
                    vm: f.vm_name(v),
                    to: None,
                    fate: "stopped".into(),
                    why: Some(why),
                    seconds: Some(s),
                    again: false,
                });
            }
        }
    }
    // The node's anti-affinity groups are those of the VMs left on it (none came to it).
    let mut groups = Vec::new();
    for &v in &pl.vms_on()[d] {
        if pl.vm_node()[v] == Some(d)
            && let Some(g) = pl.vms()[v].group
            && !groups.contains(&g)
        {
            groups.push(g);
        }
    }
    pl.set_groups(d, groups);
    // Volumes: last replicas first (the drain blocks on them or they are evicted).
    let evict_all = f.policy == "block-for-eviction";
    let evict_last = f.policy == "block-for-eviction-if-contains-last-replica";
    let (mut degraded, mut blocked, mut faulted, mut evicted) = (Vec::new(), Vec::new(), 0, 0);
    let mut evict_jobs = Vec::new();
    let mut host_alive = alive.clone();
    host_alive[d] = false;
    for i in pl.vols_on()[d].clone() {
        let vol = &pl.volumes()[i];
        let others: Vec<usize> = vol
            .replicas
            .iter()
            .map(|r| r.0)
            .filter(|&h| h != d)
            .collect();
        let last = others.is_empty();
        if evict_all || (evict_last && last) {
            let draw = (i as u64) << 8 | 0xe;
            let pick = pick_disk(vol, pl.free(), pl.topo(), pl.rules(), &host_alive, draw);
            if let Some((t, k)) = pick {
                let holders = if last { vec![d] } else { others.clone() };
                evict_jobs.push(Job {
                    volume: i,
                    bytes: vol.data,
                    holders,
                    target: Some(t),
                    disk: None,
                });
                pl.move_replica(i, d, t, k);
                evicted += 1;
                continue;
            }
        }
        if last {
            let what = if !vol.attached && f.policy != "block-if-contains-last-replica" {
                continue;
            } else if f.policy == "always-allow" {
                faulted += 1;
                "loses its only healthy replica while the node is away (node-drain-policy always-allow): faulted"
            } else {
                blocked.push(f.volume_name(i));
                "has its only healthy replica there: Longhorn's node-drain-policy blocks the drain"
            };
            run.blockers.push(Blocker {
                node: Some(node.clone()),
                subject: f.volume_name(i),
                what: format!("volume {} on {node} {what}", f.volume_name(i)),
                fix: format!(
                    "volume {} has one healthy replica: wait for its rebuild (or raise its replica count) before {node}'s turn",
                    f.volume_name(i)
                ),
            });
            continue;
        }
        degraded.push(i);
    }
    let evict_s = f.transfer_s(caps, evict_jobs).unwrap_or(f64::INFINITY);
    if !evict_s.is_finite() {
        run.blockers.push(Blocker {
            node: Some(node.clone()),
            subject: node.clone(),
            what: format!("{node}: node-drain-policy {} evicts its replicas first and some copy never completes", f.policy),
            fix: "free disk space on other nodes, or change node-drain-policy".into(),
        });
    }
    let evict_s = if evict_s.is_finite() { evict_s } else { 0.0 };
    let away = f.node_upgrade_s;
    let attached: Vec<usize> = degraded
        .iter()
        .copied()
        .filter(|&i| pl.volumes()[i].attached)
        .collect();
    let p = &f.scenario.platform;
    let (volume_s, volume_how) = if attached.is_empty() {
        (0.0, "none degraded".to_string())
    } else if away <= f.wait_s {
        let w = p.write_mbps_per_volume * 1e6;
        let jobs = attached
            .iter()
            .map(|&i| {
                let vol = &pl.volumes()[i];
                Job {
                    volume: i,
                    bytes: (w * away).min(vol.data),
                    holders: vol
                        .replicas
                        .iter()
                        .map(|r| r.0)
                        .filter(|&h| h != d)
                        .collect(),
                    target: Some(d),
                    disk: None,
                }
            })
            .collect();
        (
            f.transfer_s(caps, jobs).unwrap_or(0.0),
            format!("{} resynced when the node is back", attached.len()),
        )
    } else {
        let (mut input, _) = rebuild_input(f.scenario, pl, d, p.rebuild_limit);
        input.detect_s = 0.0;
        input.wait_s = f.wait_s;
        if let Some(h) = rebuild::simulate(&input).hours_to_full_redundancy {
            (
                (h * 3600.0 - away).max(0.0),
                format!(
                    "{} rebuilt elsewhere: the node is away past the {:.0} s replenishment wait",
                    attached.len(),
                    f.wait_s
                ),
            )
        } else {
            run.blockers.push(Blocker {
                node: Some(node.clone()),
                subject: node.clone(),
                what: format!("{node} is away past the replenishment wait and Longhorn cannot rebuild all its replicas elsewhere"),
                fix: "shorten the node's upgrade, or free disk space for the rebuilds".into(),
            });
            (0.0, "never all rebuilt elsewhere".into())
        }
    };
    let degraded_for = if attached.is_empty() {
        0.0
    } else {
        away + volume_s
    };
    run.degraded_s += degraded_for;
    run.degraded_volume_h += attached.len() as f64 * degraded_for / 3600.0;
    let next = if detail {
        next_failure(f, pl, d)
    } else {
        (None, 0)
    };
    let mut segments = Vec::new();
    let mut at = start;
    for (kind, dur) in [
        ("migrate", migrate_s),
        ("evict", evict_s),
        ("upgrade", away),
        (if away > f.wait_s { "rebuild" } else { "resync" }, volume_s),
    ] {
        if dur > 0.0 {
            segments.push(Segment {
                kind: kind.into(),
                start_s: at,
                seconds: dur,
            });
            at += dur;
        }
    }
    let count = |k: &str| fates.iter().filter(|x| x.fate == k).count();
    Step {
        node,
        role: if f.management[d] {
            "management"
        } else {
            "worker"
        }
        .into(),
        start_s: start,
        migrate_s,
        evict_s,
        upgrade_s: away,
        volume_s,
        end_s: at.max(start + away),
        migrated: count("live migration"),
        stopped: count("stopped") + count("stopped as asked"),
        stalls: count("stalls"),
        vms: if detail { fates } else { Vec::new() },
        degraded: degraded.len(),
        evicted,
        blocked,
        faulted,
        volumes: volume_how,
        next_failure: next.0,
        next_failure_nodes: next.1,
        segments,
    }
}

fn take(pl: &mut Placement, t: usize, v: usize) {
    pl.hold_for_migration(t, v);
}

/// A target gives back what `take` took (its group stays only if another VM holds it).
fn unwind(pl: &mut Placement, t: usize, v: usize) {
    pl.release_hold(t, v);
}

/// A VM leaves `from` for `to` (`None`: it is off): the per-node lists follow, so no step
/// re-indexes the whole placement.
fn relocate(pl: &mut Placement, v: usize, from: usize, to: Option<usize>) {
    pl.relocate_vm(v, from, to);
}

fn release(pl: &mut Placement, d: usize, v: usize) {
    pl.release_requests(d, v);
}

/// Take the fleet through `order`; `detail` keeps every VM's fate and checks the next
/// failure (the order search runs without).
pub fn run(f: &Fleet<'_>, order: &[Stop], detail: bool) -> Run {
    let mut pl = f.pl.clone();
    let mut run = Run::default();
    let mut moved = vec![false; pl.vms().len()];
    let caps = f.caps();
    let mut t = 0.0;
    for &stop in order {
        let step = match stop {
            Stop::Host(d) => host_step(f, &mut pl, d, t, &mut moved, &caps, detail, &mut run),
            Stop::Witness(_) => Step {
                node: f.stop_name(stop),
                role: "witness".into(),
                start_s: t,
                upgrade_s: f.node_upgrade_s,
                end_s: t + f.node_upgrade_s,
                volumes: "none: a witness holds no replica".into(),
                segments: vec![Segment {
                    kind: "upgrade".into(),
                    start_s: t,
                    seconds: f.node_upgrade_s,
                }],
                ..Step::default()
            },
        };
        t = step.end_s;
        run.steps.push(step);
    }
    run.window_s = t;
    run
}
