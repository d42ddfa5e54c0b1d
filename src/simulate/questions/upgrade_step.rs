//! One run of the rolling upgrade: the nodes in a given order, one at a time, each step
//! moving the node's VMs (or stopping them, and why), taking the node away for its upgrade
//! and reboot, and waiting until its volumes are healthy again before the next node.
//! `upgrade.rs` holds the rules' sources, the answer's types and the order search.

use std::collections::BTreeMap;

use super::upgrade::{Blocker, NextFailure, Segment, Step, VmFate};
use crate::simulate::failure::rebuild::{self, Job, NodeCaps, RebuildInput, rebuild_input};
use crate::simulate::fleet::VmPins;
use crate::simulate::place::{
    INDEX_FROM, MigrationConfig, MigrationLink, Outcome, Placement, evacuate, pick_disk, pick_node,
};
use crate::simulate::scenario::{BondMode, Scenario};

/// A node of the order: a host of the placement, or a witness (etcd only, no VMs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Host(usize),
    Witness(usize),
}

/// Everything a run reads; the placement is the fleet before the upgrade.
pub struct Fleet<'a> {
    pub scenario: &'a Scenario,
    pub pl: Placement,
    pub vm_names: Vec<String>,
    pub pins: Vec<VmPins>,
    pub strategy: Vec<Option<String>>,
    pub migratable: Vec<Option<bool>>,
    pub labels: Vec<BTreeMap<String, String>>,
    pub cordoned: Vec<bool>,
    pub management: Vec<bool>,
    pub witnesses: Vec<String>,
    pub volume_names: Vec<String>,
    pub policy: String,
    pub cfg: MigrationConfig,
    pub link: MigrationLink,
    pub node_upgrade_s: f64,
    /// Longhorn's replica-replenishment-wait-interval while the upgrade runs.
    pub wait_s: f64,
}

/// What a run found.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub steps: Vec<Step>,
    pub blockers: Vec<Blocker>,
    pub window_s: f64,
    /// Seconds during which some attached volume runs degraded.
    pub degraded_s: f64,
    /// Volume-hours of degraded attached volumes.
    pub degraded_volume_h: f64,
    pub migrations: usize,
    pub remigrations: usize,
}

impl Fleet<'_> {
    pub fn stop_name(&self, s: Stop) -> String {
        match s {
            Stop::Host(h) => self.pl.topo.hosts[h].name.clone(),
            Stop::Witness(w) => self.witnesses[w].clone(),
        }
    }

    fn caps(&self) -> Vec<NodeCaps> {
        let (s, pl) = (self.scenario, &self.pl);
        let p = &s.platform;
        let eff = rebuild::wire_efficiency(s.network.mtu);
        let link = s.network.speed_gbps * 1e9 / 8.0 * eff;
        let links = match s.network.bond {
            BondMode::Lacp => f64::from(s.network.links.max(1)),
            BondMode::ActiveBackup => 1.0,
        };
        let w = p.write_mbps_per_volume * 1e6;
        let n = pl.topo.hosts.len();
        let (mut fg_in, mut fg_out) = (vec![0.0; n], vec![0.0; n]);
        for vol in pl.volumes.iter().filter(|v| v.attached) {
            for &(h, _) in &vol.replicas {
                fg_in[h] += w;
            }
            if let Some(&Some(h)) = pl.vm_node.get(vol.vm) {
                fg_out[h] += w * vol.replicas.len() as f64;
            }
        }
        pl.topo
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| NodeCaps {
                name: h.name.clone(),
                rack: h.rack,
                ingress: (links * link - fg_in[i]).max(0.0),
                egress: (links * link - fg_out[i]).max(0.0),
                disk_write: (p.disk_write_mbps * 1e6 * h.disks.len().max(1) as f64 - fg_in[i])
                    .max(0.0),
                disk_read: p.disk_read_mbps * 1e6 * h.disks.len().max(1) as f64,
            })
            .collect()
    }

    /// Seconds to copy `jobs` under Longhorn's rebuild limits (`None`: some never completes).
    fn transfer_s(&self, caps: &[NodeCaps], jobs: Vec<Job>) -> Option<f64> {
        if jobs.is_empty() {
            return Some(0.0);
        }
        let (s, p) = (self.scenario, &self.scenario.platform);
        let eff = rebuild::wire_efficiency(s.network.mtu);
        let input = RebuildInput {
            nodes: caps.to_vec(),
            jobs,
            limit: p.rebuild_limit,
            stream_rate: p.stream_mbps * 1e6,
            flow_cap: s.network.speed_gbps * 1e9 / 8.0 * eff,
            detect_s: 0.0,
            wait_s: 0.0,
            abort_s: p.rebuild_abort_h * 3600.0,
            racks: self.pl.topo.racks.clone(),
        };
        rebuild::simulate(&input)
            .hours_to_full_redundancy
            .map(|h| h * 3600.0)
    }

    fn vm_name(&self, v: usize) -> String {
        self.vm_names
            .get(v)
            .cloned()
            .unwrap_or_else(|| format!("vm {v}"))
    }

    fn volume_name(&self, i: usize) -> String {
        self.volume_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("a volume of {}", self.vm_name(self.pl.volumes[i].vm)))
    }
}

/// Why a VM on the node does not live-migrate: (fate, why, fix; `None` fix: its owner's
/// choice, not a blocker). Harvester's checks first (they stop the VM before the drain),
/// then KubeVirt's (the evacuation skips it and the pre-drain waits).
fn no_migration(
    f: &Fleet<'_>,
    v: usize,
    others_fit: bool,
) -> Option<(&'static str, String, Option<String>)> {
    let name = f.vm_name(v);
    let pins = f.pins.get(v).cloned().unwrap_or_default();
    if let Some(s) = f.strategy.get(v).and_then(|s| s.as_deref()) {
        let why = match s {
            "Migrate" | "" => None,
            "ShutdownAndRestartAfterEnable" => Some(
                "shut down and restarted on another node (maintain-mode strategy ShutdownAndRestartAfterEnable)",
            ),
            "ShutdownAndRestartAfterDisable" => Some(
                "shut down and restarted here once the node is back (maintain-mode strategy ShutdownAndRestartAfterDisable)",
            ),
            "Shutdown" => Some("shut down and left off (maintain-mode strategy Shutdown)"),
            _ => Some("shut down (maintain-mode strategy not one Harvester knows)"),
        };
        if let Some(why) = why {
            return Some(("stopped as asked", why.to_string(), None));
        }
    }
    if let Some(d) = pins.host_devices.first() {
        return Some((
            "stopped",
            format!("{d} cannot live-migrate: Harvester stops the VM before the drain"),
            Some(format!(
                "stop {name} for the window or remove its {d}; or set upgrade-config restoreVM so Harvester restarts it"
            )),
        ));
    }
    if let Some((k, val)) = pins.node_selector.first() {
        return Some((
            "stopped",
            format!("nodeSelector {k}={val}: Harvester counts it not live-migratable and stops it"),
            Some(format!(
                "replace {name}'s nodeSelector with a preferred node affinity, or stop it for the window"
            )),
        ));
    }
    if !pins.node_affinity.is_empty() && !others_fit {
        return Some((
            "stopped",
            "its required node affinity matches no other node: Harvester stops it".into(),
            Some(format!(
                "widen {name}'s required node affinity to a second node, or stop it for the window"
            )),
        ));
    }
    let eviction = pins.eviction.as_deref();
    if f.migratable.get(v).copied().flatten() == Some(false) {
        let reason = pins
            .migratable_reason
            .clone()
            .unwrap_or_else(|| "LiveMigratable is False".into());
        return Some((
            "stalls",
            format!(
                "not live-migratable ({reason}): KubeVirt never moves it and the pre-drain waits for it"
            ),
            Some(format!(
                "stop {name} before its node's turn, or make it migratable ({reason})"
            )),
        ));
    }
    match eviction {
        Some("LiveMigrate" | "LiveMigrateIfPossible") => None,
        other => Some((
            "stalls",
            format!(
                "evictionStrategy {}: the drain taint does not evacuate it and the pre-drain waits for it",
                other.unwrap_or("unset (KubeVirt's default None)")
            ),
            Some(format!(
                "set {name}'s evictionStrategy to LiveMigrateIfPossible (the Harvester UI's default)"
            )),
        )),
    }
}

#[allow(clippy::too_many_lines)] // one node's step, in the order Harvester takes it
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
    let n = pl.topo.hosts.len();
    let hosts: Vec<String> = pl.topo.hosts.iter().map(|h| h.name.clone()).collect();
    let name = |h: usize| hosts[h].clone();
    let node = name(d);
    let alive: Vec<bool> = (0..n).map(|h| h != d && !f.cordoned[h]).collect();
    let mut fates = Vec::new();
    let mut to_copy: Vec<(usize, usize)> = Vec::new();
    let running: Vec<usize> = pl.vms_on[d]
        .iter()
        .copied()
        .filter(|&v| pl.vms[v].running)
        .collect();
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
                let vm = pl.vms[v].clone();
                if let Some(t) = pick_node(&vm, &pl.free, &pl.topo, &pl.groups, &[], mask) {
                    take(pl, t, v);
                    release(pl, d, v);
                    pl.vm_node[v] = Some(t);
                    to = Some(name(t));
                }
            } else if strategy == "Shutdown" {
                release(pl, d, v);
                pl.vm_node[v] = None;
                pl.vms[v].running = false;
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
        let vm = pl.vms[v].clone();
        // Both nodes hold the VM while it migrates: the target takes the full requests.
        if let Some(t) = pick_node(&vm, &pl.free, &pl.topo, &pl.groups, &[], mask) {
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
        .map(|&(v, _)| pl.vms[v].mem_gib.max(0.0) * 1024f64.powi(3))
        .collect();
    let (outcomes, migrate_s) = evacuate(&f.cfg, &f.link, &bytes);
    for (&(v, t), &(_, o)) in to_copy.iter().zip(&outcomes) {
        match o {
            Outcome::Done(s) => {
                release(pl, d, v);
                pl.vm_node[v] = Some(t);
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
                        .completion_timeout_s(pl.vms[v].mem_gib * 1024f64.powi(3))
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
    // The node's anti-affinity groups are those of the VMs left on it.
    let mut groups = Vec::new();
    for (v, &h) in pl.vm_node.iter().enumerate() {
        if h == Some(d)
            && let Some(g) = pl.vms[v].group
            && !groups.contains(&g)
        {
            groups.push(g);
        }
    }
    pl.groups[d] = groups;
    // Volumes: last replicas first (the drain blocks on them or they are evicted).
    let evict_all = f.policy == "block-for-eviction";
    let evict_last = f.policy == "block-for-eviction-if-contains-last-replica";
    let (mut degraded, mut blocked, mut faulted, mut evicted) = (Vec::new(), Vec::new(), 0, 0);
    let mut evict_jobs = Vec::new();
    let mut host_alive = alive.clone();
    host_alive[d] = false;
    for i in pl.vols_on[d].clone() {
        let vol = &pl.volumes[i];
        let others: Vec<usize> = vol
            .replicas
            .iter()
            .map(|r| r.0)
            .filter(|&h| h != d)
            .collect();
        let last = others.is_empty();
        if evict_all || (evict_last && last) {
            let draw = (i as u64) << 8 | 0xe;
            let pick = pick_disk(vol, &pl.free, &pl.topo, &pl.rules, &host_alive, draw);
            if let Some((t, k)) = pick {
                let holders = if last { vec![d] } else { others.clone() };
                evict_jobs.push(Job {
                    volume: i,
                    bytes: vol.data,
                    size: vol.size,
                    holders,
                    target: Some(t),
                });
                let mut vol = pl.volumes[i].clone();
                let topo = pl.topo.clone();
                if let Some(pos) = vol.replicas.iter().position(|r| r.0 == d) {
                    let (rn, rd) = vol.replicas[pos];
                    pl.free.remove_replica(&topo, rn, rd, &vol);
                    vol.replicas[pos] = (t, k);
                    pl.free.add_replica(&topo, t, k, &vol);
                }
                pl.volumes[i] = vol;
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
    pl.finish();
    let away = f.node_upgrade_s;
    let attached: Vec<usize> = degraded
        .iter()
        .copied()
        .filter(|&i| pl.volumes[i].attached)
        .collect();
    let p = &f.scenario.platform;
    let (volume_s, volume_how) = if attached.is_empty() {
        (0.0, "none degraded".to_string())
    } else if away <= f.wait_s {
        let w = p.write_mbps_per_volume * 1e6;
        let jobs = attached
            .iter()
            .map(|&i| {
                let vol = &pl.volumes[i];
                Job {
                    volume: i,
                    bytes: (w * away).min(vol.data),
                    size: vol.size,
                    holders: vol
                        .replicas
                        .iter()
                        .map(|r| r.0)
                        .filter(|&h| h != d)
                        .collect(),
                    target: Some(d),
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
        match rebuild::simulate(&input).hours_to_full_redundancy {
            Some(h) => (
                (h * 3600.0 - away).max(0.0),
                format!(
                    "{} rebuilt elsewhere: the node is away past the {:.0} s replenishment wait",
                    attached.len(),
                    f.wait_s
                ),
            ),
            None => {
                run.blockers.push(Blocker {
                    node: Some(node.clone()),
                    subject: node.clone(),
                    what: format!("{node} is away past the replenishment wait and Longhorn cannot rebuild all its replicas elsewhere"),
                    fix: "shorten the node's upgrade, or free disk space for the rebuilds".into(),
                });
                (0.0, "never all rebuilt elsewhere".into())
            }
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
    let (cpu, mem, g) = (pl.vms[v].cpu_req, pl.vms[v].mem_req, pl.vms[v].group);
    pl.free.cpu[t] -= cpu;
    pl.free.mem[t] -= mem;
    if let Some(g) = g
        && !pl.groups[t].contains(&g)
    {
        pl.groups[t].push(g);
    }
}

/// A target gives back what `take` took (its group stays only if another VM holds it).
fn unwind(pl: &mut Placement, t: usize, v: usize) {
    pl.free.cpu[t] += pl.vms[v].cpu_req;
    pl.free.mem[t] += pl.vms[v].mem_req;
    if let Some(g) = pl.vms[v].group
        && !pl
            .vm_node
            .iter()
            .enumerate()
            .any(|(o, &h)| h == Some(t) && pl.vms[o].group == Some(g))
    {
        pl.groups[t].retain(|&x| x != g);
    }
}

fn release(pl: &mut Placement, d: usize, v: usize) {
    pl.free.cpu[d] += pl.vms[v].cpu_req;
    pl.free.mem[d] += pl.vms[v].mem_req;
}

/// One more node failing while `d` is away: the worst such node and how many would harm.
/// Its VMs need a node (the scheduler's rules, the drained node down); volumes whose other
/// healthy replicas are all on it lose every one. Large fleets check the nodes holding the
/// most VMs and those sharing most volumes with `d`.
fn next_failure(f: &Fleet<'_>, pl: &Placement, d: usize) -> (Option<NextFailure>, usize) {
    let n = pl.topo.hosts.len();
    let mut lost = vec![0usize; n];
    for &i in &pl.vols_on[d] {
        let vol = &pl.volumes[i];
        let mut others = vol.replicas.iter().map(|r| r.0).filter(|&h| h != d);
        if let (Some(h), None) = (others.next(), others.next()) {
            lost[h] += 1;
        }
    }
    let mut candidates: Vec<usize> = (0..n).filter(|&h| h != d).collect();
    if n >= INDEX_FROM {
        let mut by_vms = candidates.clone();
        by_vms.sort_by_key(|&h| std::cmp::Reverse((pl.pods[h], h)));
        let mut by_vols = candidates.clone();
        by_vols.sort_by_key(|&h| std::cmp::Reverse((lost[h], h)));
        candidates = by_vms
            .into_iter()
            .take(4)
            .chain(by_vols.into_iter().take(4))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
    }
    let mut worst: Option<NextFailure> = None;
    let mut harmful = 0;
    for h in candidates {
        let alive: Vec<bool> = (0..n).map(|x| x != d && x != h && !f.cordoned[x]).collect();
        let mut free = pl.free.clone();
        let mut groups = pl.groups.clone();
        let mut stranded = 0;
        for &v in pl.vms_on[h].iter().filter(|&&v| pl.vms[v].running) {
            let vm = &pl.vms[v];
            match pick_node(vm, &free, &pl.topo, &groups, &[], &alive) {
                Some(t) => {
                    free.cpu[t] -= vm.cpu_req;
                    free.mem[t] -= vm.mem_req;
                    if let Some(g) = vm.group {
                        groups[t].push(g);
                    }
                }
                None => stranded += 1,
            }
        }
        if stranded + lost[h] == 0 {
            continue;
        }
        harmful += 1;
        let this = NextFailure {
            node: pl.topo.hosts[h].name.clone(),
            stranded_vms: stranded,
            volumes_without_replica: lost[h],
        };
        let key = |x: &NextFailure| x.stranded_vms + x.volumes_without_replica;
        if worst.as_ref().is_none_or(|w| key(&this) > key(w)) {
            worst = Some(this);
        }
    }
    (worst, harmful)
}

/// Take the fleet through `order`; `detail` keeps every VM's fate and checks the next
/// failure (the order search runs without).
pub fn run(f: &Fleet<'_>, order: &[Stop], detail: bool) -> Run {
    let mut pl = f.pl.clone();
    let mut run = Run::default();
    let mut moved = vec![false; pl.vms.len()];
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
