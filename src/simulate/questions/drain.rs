//! "Can these nodes go into maintenance now?" on a running fleet (`--from-cluster` with
//! `--drain`): a live-migration target for every VM on them under the scheduler's rules
//! (room for the requests, required anti-affinity, not on a cordoned node), the VMs that
//! cannot migrate and stop instead, the volumes that drop to fewer healthy replicas, and
//! whether one more node failure during the maintenance would strand anything.

use serde::Serialize;

use crate::simulate::failure::headroom::{self, Kind};
use crate::simulate::failure::rebuild::{self, rebuild_input};
use crate::simulate::fleet::LiveFleet;
use crate::simulate::place::{Placement, pick_node};
use crate::simulate::study::Study;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Move {
    pub(crate) vm: String,
    pub(crate) from: String,
    /// The target; `None` when the VM stops instead or no node can take it.
    pub(crate) to: Option<String>,
    /// `live migration`, or why it does not migrate.
    pub(crate) how: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct FurtherFailure {
    pub(crate) node: String,
    pub(crate) stranded_vms: usize,
    pub(crate) stranded_replicas: usize,
    /// Volumes left with no healthy replica by this failure during the maintenance.
    pub(crate) volumes_without_replica: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct DrainReport {
    pub(crate) nodes: Vec<String>,
    /// Every VM that must move has a target and no volume loses its last healthy replica.
    pub(crate) can_start: bool,
    /// And no further single node failure during the maintenance strands a VM, a replica
    /// or a volume's last replica.
    pub(crate) survives_next_failure: bool,
    pub(crate) sentence: String,
    pub(crate) moves: Vec<Move>,
    /// VMs with no migration target: the drain would hang on them.
    pub(crate) no_target: usize,
    /// VMs that stop (their maintain-mode strategy, or they cannot live-migrate).
    pub(crate) stopped: usize,
    /// (healthy replicas before, during, volumes) for volumes that lose replicas.
    pub(crate) degraded: Vec<(usize, usize, usize)>,
    /// Volumes whose every healthy replica is on the drained nodes.
    pub(crate) last_replica: Vec<String>,
    /// How long the degraded volumes stay so.
    pub(crate) degraded_for: String,
    /// The rebuild model's hours to restore them should the nodes stay away past the
    /// replenishment wait (the slowest drained node, each taken alone).
    pub(crate) rebuild_hours_if_away: Option<f64>,
    pub(crate) further: Vec<FurtherFailure>,
    pub(crate) node_drain_policy: String,
}

fn describe_strategy(s: &str) -> Option<String> {
    match s {
        "Migrate" | "" => None,
        "ShutdownAndRestartAfterEnable" => Some(
            "shut down, restarted once maintenance is on (strategy ShutdownAndRestartAfterEnable)"
                .into(),
        ),
        "ShutdownAndRestartAfterDisable" => Some(
            "shut down, restarted after maintenance (strategy ShutdownAndRestartAfterDisable)"
                .into(),
        ),
        "Shutdown" => Some("shut down and left off (strategy Shutdown)".into()),
        other => Some(format!(
            "strategy {other}: not one Harvester knows; taken as a shutdown"
        )),
    }
}

/// The drain answer. `drained` are host indexes of the live fleet.
#[allow(clippy::too_many_lines)] // the steps of one drain, in the order Harvester takes them
/// Why a drain cannot be worked out as asked.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum DrainError {
    #[error("--drain needs --from-cluster")]
    NoDump,
    #[error("--drain: no node `{name}` in the dump{hint}; nodes that can host VMs: {all}")]
    NoNode {
        name: String,
        hint: String,
        all: String,
    },
    #[error("--drain: name at least one node")]
    NoneNamed,
    #[error("--drain: that is every node that can host VMs; nothing would be left to migrate to")]
    EveryNode,
}

/// Can the nodes named go into maintenance now, on the study's running fleet.
pub(crate) fn drain_named(l: &Study, names: &[String]) -> Result<DrainReport, DrainError> {
    let live = l.live.as_deref().ok_or(DrainError::NoDump)?;
    let topo = &live.placement.topo();
    let mut drained = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let Some(h) = topo.host_index(n) else {
            let all: Vec<&str> = topo.hosts.iter().map(|h| h.name.as_str()).collect();
            return Err(DrainError::NoNode {
                name: n.to_string(),
                hint: crate::words::closest(n, all.iter().copied())
                    .map_or_else(String::new, |s| format!(" (did you mean `{s}`?)")),
                all: all.join(", "),
            });
        };
        if !drained.contains(&h) {
            drained.push(h);
        }
    }
    if drained.is_empty() {
        return Err(DrainError::NoneNamed);
    }
    if drained.len() >= topo.hosts.len() {
        return Err(DrainError::EveryNode);
    }
    Ok(drain(l, live, &drained, &live.node_drain_policy))
}

pub(crate) fn drain(l: &Study, live: &LiveFleet, drained: &[usize], policy: &str) -> DrainReport {
    let pl = &live.placement;
    let n = pl.topo().hosts.len();
    let name = |h: usize| pl.topo().hosts[h].name.clone();
    let mut alive = vec![true; n];
    for &d in drained {
        alive[d] = false;
    }
    let mut post: Placement = pl.clone();
    for &d in drained {
        post.cordon(d);
    }
    let mut moves = Vec::new();
    let (mut no_target, mut stopped) = (0, 0);
    for &d in drained {
        for &v in &pl.vms_on()[d] {
            let vm = &pl.vms()[v];
            if !vm.running {
                continue;
            }
            let vm_name = live.vm_names.get(v).cloned().unwrap_or_default();
            let stop = live
                .strategy
                .get(v)
                .and_then(|s| s.as_deref().and_then(describe_strategy))
                .or_else(|| {
                    (live.migratable.get(v).copied().flatten() == Some(false)).then(|| {
                        "cannot live-migrate (LiveMigratable is False): Harvester stops it only when maintenance is forced".to_string()
                    })
                });
            if let Some(why) = stop {
                stopped += 1;
                post.unplace_vm(v);
                moves.push(Move {
                    vm: vm_name,
                    from: name(d),
                    to: None,
                    how: why,
                });
                continue;
            }
            // Both nodes hold the VM while it migrates: the target needs the full request.
            if let Some(t) = pick_node(vm, post.free(), post.topo(), post.groups(), &[], &alive) {
                post.migrate_vm(v, t);
                moves.push(Move {
                    vm: vm_name,
                    from: name(d),
                    to: Some(name(t)),
                    how: "live migration".into(),
                });
            } else {
                no_target += 1;
                post.unplace_vm(v);
                moves.push(Move {
                        vm: vm_name,
                        from: name(d),
                        to: None,
                        how: "no node has room for its requests under its anti-affinity: the drain hangs here".into(),
                    });
            }
        }
    }
    // Replicas on the drained nodes stop being healthy while the nodes are away.
    let mut degraded: Vec<(usize, usize, usize)> = Vec::new();
    let mut last_replica = Vec::new();
    let mut volumes = post.volumes().to_vec();
    for (i, vol) in volumes.iter_mut().enumerate() {
        let before = vol.replicas.len();
        vol.replicas.retain(|&(h, _)| alive[h]);
        let during = vol.replicas.len();
        if during < before {
            match degraded.iter_mut().find(|x| x.0 == before && x.1 == during) {
                Some(x) => x.2 += 1,
                None => degraded.push((before, during, 1)),
            }
            if during == 0 {
                last_replica.push(
                    live.vm_names
                        .get(vol.vm)
                        .map_or_else(|| format!("volume {i}"), |v| format!("a volume of {v}")),
                );
            }
        }
    }
    degraded.sort_unstable();
    post.set_volumes(volumes);
    // One more node failure during the maintenance: the drained nodes count as down.
    let mut further: Vec<FurtherFailure> = (0..n)
        .filter(|&h| alive[h])
        .map(|h| {
            let mut failed = drained.to_vec();
            failed.push(h);
            let s = headroom::scenario(&post, &name(h), Kind::Node, &failed);
            let without = post
                .volumes()
                .iter()
                .filter(|v| !v.replicas.is_empty() && v.replicas.iter().all(|&(r, _)| r == h))
                .count();
            FurtherFailure {
                node: name(h),
                stranded_vms: s.stranded,
                stranded_replicas: s.stranded_replicas,
                volumes_without_replica: without,
            }
        })
        .collect();
    further.sort_by(|a, b| {
        (
            b.stranded_vms + b.volumes_without_replica,
            b.stranded_replicas,
        )
            .cmp(&(
                a.stranded_vms + a.volumes_without_replica,
                a.stranded_replicas,
            ))
            .then(a.node.cmp(&b.node))
    });
    let blocks_last = policy != "always-allow" && policy != "allow-if-replica-is-stopped";
    let can_start = no_target == 0 && (last_replica.is_empty() || !blocks_last);
    let bad_next: Vec<&FurtherFailure> = further
        .iter()
        .filter(|f| f.stranded_vms + f.stranded_replicas + f.volumes_without_replica > 0)
        .collect();
    let survives_next_failure = can_start && bad_next.is_empty();
    let p = &l.scenario.platform;
    let rebuild_hours_if_away = drained
        .iter()
        .map(|&d| {
            let (input, _) = rebuild_input(&l.scenario, pl, d, p.rebuild_limit);
            rebuild::simulate(&input).hours_to_full_redundancy
        })
        .try_fold(0.0f64, |acc, h| h.map(|h| acc.max(h)));
    let degraded_count: usize = degraded.iter().map(|x| x.2).sum();
    let degraded_for = if degraded_count == 0 {
        "no volume has a replica on these nodes".to_string()
    } else {
        format!(
            "for as long as the nodes are away; should they stay away longer than replica-replenishment-wait-interval ({:.0} s), Longhorn rebuilds the attached volumes' replicas elsewhere{}",
            p.replenishment_wait_s,
            match rebuild_hours_if_away {
                Some(h) => format!(", which the rebuild model puts at {h:.2} h more"),
                None => ", which the rebuild model says never completes".to_string(),
            }
        )
    };
    let nodes: Vec<String> = drained.iter().map(|&d| name(d)).collect();
    let list = nodes.join(", ");
    let sentence = if !can_start {
        let mut why = Vec::new();
        if no_target > 0 {
            why.push(format!("{no_target} VM(s) have no migration target"));
        }
        if !last_replica.is_empty() && blocks_last {
            why.push(format!(
                "{} volume(s) hold their last healthy replica there (node-drain-policy {policy} blocks the drain)",
                last_replica.len()
            ));
        }
        format!("{list} cannot go into maintenance now: {}", why.join("; "))
    } else if let Some(w) = bad_next.first() {
        let mut parts = Vec::new();
        if w.stranded_vms > 0 {
            parts.push(format!("strand {} VM(s)", w.stranded_vms));
        }
        if w.stranded_replicas > 0 {
            parts.push(format!(
                "leave {} replica(s) with no disk to rebuild on",
                w.stranded_replicas
            ));
        }
        if w.volumes_without_replica > 0 {
            parts.push(format!(
                "leave {} volume(s) with no healthy replica until the drained nodes return",
                w.volumes_without_replica
            ));
        }
        format!(
            "{list} can go into maintenance now, but a further failure of {} during it would {} ({} of {} nodes would strand something)",
            w.node,
            parts.join(" and "),
            bad_next.len(),
            further.len()
        )
    } else {
        format!(
            "{list} can go into maintenance now: every VM has a target, and any one further node failure during it strands nothing"
        )
    };
    DrainReport {
        nodes,
        can_start,
        survives_next_failure,
        sentence,
        moves,
        no_target,
        stopped,
        degraded,
        last_replica,
        degraded_for,
        rebuild_hours_if_away,
        further,
        node_drain_policy: policy.to_string(),
    }
}
