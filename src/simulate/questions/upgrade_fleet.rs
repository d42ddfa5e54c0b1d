//! The fleet one rolling-upgrade run reads (the placement before it, what pins each VM,
//! node roles and labels, the migration settings), why a VM does not live-migrate, and
//! the next-failure check during a step.

use std::collections::BTreeMap;

use super::upgrade_answer::{Blocker, NextFailure, Step};
use crate::simulate::failure::rebuild::{self, Job, NodeCaps, RebuildInput};
use crate::simulate::fleet::VmPins;
use crate::simulate::place::{INDEX_FROM, MigrationConfig, MigrationLink, Placement, pick_node};
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
            Stop::Host(h) => self.pl.topo().hosts[h].name.clone(),
            Stop::Witness(w) => self.witnesses[w].clone(),
        }
    }

    pub fn caps(&self) -> Vec<NodeCaps> {
        let (s, pl) = (self.scenario, &self.pl);
        let p = &s.platform;
        let eff = rebuild::wire_efficiency(s.network.mtu);
        let link = s.network.speed_gbps * 1e9 / 8.0 * eff;
        let links = match s.network.bond {
            BondMode::Lacp => f64::from(s.network.links.max(1)),
            BondMode::ActiveBackup => 1.0,
        };
        let w = p.write_mbps_per_volume * 1e6;
        let n = pl.topo().hosts.len();
        let (mut fg_in, mut fg_out) = (vec![0.0; n], vec![0.0; n]);
        for vol in pl.volumes().iter().filter(|v| v.attached) {
            for &(h, _) in &vol.replicas {
                fg_in[h] += w;
            }
            if let Some(&Some(h)) = pl.vm_node().get(vol.vm) {
                fg_out[h] += w * vol.replicas.len() as f64;
            }
        }
        pl.topo()
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
    pub fn transfer_s(&self, caps: &[NodeCaps], jobs: Vec<Job>) -> Option<f64> {
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
            racks: self.pl.topo().racks.clone(),
            disks: Vec::new(),
            tied_replicas: 0,
            widest_tie: 1,
        };
        rebuild::simulate(&input)
            .hours_to_full_redundancy
            .map(|h| h * 3600.0)
    }

    pub fn vm_name(&self, v: usize) -> String {
        self.vm_names
            .get(v)
            .cloned()
            .unwrap_or_else(|| format!("vm {v}"))
    }

    pub fn volume_name(&self, i: usize) -> String {
        self.volume_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("a volume of {}", self.vm_name(self.pl.volumes()[i].vm)))
    }
}

/// Harvester's non-migratable test (harvester/harvester
/// `pkg/util/virtualmachineinstance/virtualmachineinstance.go`
/// `GetAllNonLiveMigratableVMINames`, `migratableByNodeAffinity`), the maintain-mode
/// strategies (`pkg/util/constants.go`), and KubeVirt's evacuation filter (kubevirt
/// `pkg/util/migrations/migrations.go` `VMIMigratableOnEviction`).
///
/// Why a VM on the node does not live-migrate: (fate, why, fix; `None` fix: its owner's
/// choice, not a blocker). Harvester's checks first (they stop the VM before the drain),
/// then KubeVirt's (the evacuation skips it and the pre-drain waits).
pub fn no_migration(
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
    if f.pl.topo().hosts.len() == 1 {
        return Some((
            "stopped",
            "a single-node cluster: Harvester's upgrade stops every VM (command_single_node_upgrade)".into(),
            Some(format!("plan {name}'s downtime for the node's upgrade, or add a node")),
        ));
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

/// One more node failing while `d` is away: the worst such node and how many would harm.
/// Its VMs need a node (the scheduler's rules, the drained node down); volumes whose other
/// healthy replicas are all on it lose every one. Large fleets check the nodes holding the
/// most VMs and those sharing most volumes with `d`.
pub fn next_failure(f: &Fleet<'_>, pl: &Placement, d: usize) -> (Option<NextFailure>, usize) {
    let n = pl.topo().hosts.len();
    let mut lost = vec![0usize; n];
    for &i in &pl.vols_on()[d] {
        let vol = &pl.volumes()[i];
        let mut others = vol.replicas.iter().map(|r| r.0).filter(|&h| h != d);
        if let (Some(h), None) = (others.next(), others.next()) {
            lost[h] += 1;
        }
    }
    let mut candidates: Vec<usize> = (0..n).filter(|&h| h != d).collect();
    if n >= INDEX_FROM {
        let mut by_vms = candidates.clone();
        by_vms.sort_by_key(|&h| std::cmp::Reverse((pl.pods()[h], h)));
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
        let mut free = pl.free().clone();
        let mut groups = pl.groups().to_vec();
        let mut stranded = 0;
        for &v in pl.vms_on()[h].iter().filter(|&&v| pl.vms()[v].running) {
            let vm = &pl.vms()[v];
            match pick_node(vm, &free, pl.topo(), &groups, &[], &alive) {
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
            node: pl.topo().hosts[h].name.clone(),
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
