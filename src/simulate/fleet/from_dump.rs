//! The running fleet of a dump (`crate::live`) as a placement the simulator's analyses
//! take: hosts from the Nodes (allocatable CPU and memory, zone as rack) and their Longhorn
//! disks, VMs where their VMIs run with the requests Harvester's webhook set, volumes with
//! their replicas on the disks they are on. Nothing is re-placed. Cordoned nodes and nodes
//! in maintenance keep what they hold but take nothing new.
//!
//! Longhorn puts a new replica only on a node whose `Ready` and `Schedulable` conditions
//! are True and whose `spec.allowScheduling` is set (`scheduler/replica_scheduler.go`
//! `ListSchedulableNodes`), on a disk that allows scheduling and is Ready and Schedulable.
//! The node's conditions follow Kubernetes (`controller/node_controller.go`
//! `setReadyAndSchedulableConditions`: not Ready when the Kubernetes node is not Ready or
//! under disk, memory, PID or network pressure; not Schedulable while cordoned when
//! `disable-scheduling-on-cordoned-node` is on, its default), so the Kubernetes node's own
//! state counts as well as what the Longhorn Node says. Node and disk tags and the
//! volumes' node and disk selectors are kept for the scheduler.

/// Lookups by name over a dump's hundreds of thousands of objects (never iterated).
type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

use super::pins::{FleetPins, VmPins};
use super::topology::{Host, Topology};
use crate::live::LiveState;
use crate::simulate::place::{Placement, Vm, Volume};
use crate::simulate::scenario::Platform;

use crate::units::GIB;

/// The adopted fleet and what could not be taken into it.
#[derive(Clone)]
pub struct LiveFleet {
    pub placement: Placement,
    /// `namespace/name` of each VM, in placement order.
    pub vm_names: Vec<String>,
    /// Per VM: the VMI's LiveMigratable condition (`None`: not stated).
    pub(crate) migratable: Vec<Option<bool>>,
    /// Per VM: its `harvesterhci.io/maintain-mode-strategy` label.
    pub(crate) strategy: Vec<Option<String>>,
    /// Hosts that take no new VM: cordoned, in maintenance, not Ready, or not VM-schedulable.
    pub(crate) cordoned: Vec<usize>,
    /// Tenant clusters running (distinct `guestcluster.harvesterhci.io/name` labels).
    pub(crate) tenant_clusters: usize,
    /// Longhorn's `node-drain-policy` (its default when the dump has none).
    pub(crate) node_drain_policy: String,
    pub notes: Vec<String>,
    /// What pins VMs, node labels and roles, volume names: for the rolling upgrade.
    pub pins: FleetPins,
}

/// The disks as Longhorn reports them, where they say more than the replicas do: space
/// used by other data (`storageMaximum - storageAvailable`), sizes scheduled
/// (`storageScheduled`), the reservation (`storageReserved`, which shrinks what may be
/// scheduled), and disks or nodes that take no new replica (scheduling off, or not
/// Schedulable).
fn live_disks(
    pl: &mut Placement,
    nodes: &[&crate::live::Node],
    lh: &Map<&str, &crate::live::LonghornNode>,
    p: &Platform,
    notes: &mut Vec<String>,
) {
    let op = p.overcommit_storage_pct / 100.0;
    let (mut fuller, mut closed) = (0usize, Vec::new());
    for (i, n) in nodes.iter().enumerate() {
        let Some(l) = lh.get(n.name.as_str()) else {
            continue;
        };
        for (d, disk) in l.disks.iter().enumerate() {
            let Some(max) = disk.maximum else { continue };
            let Some(e) = pl.disk_usage_mut(i, d) else {
                continue;
            };
            let mut changed = false;
            if let Some(avail) = disk.available {
                let used_live = (max - avail).max(0.0);
                if used_live > e.1 + 1.0 {
                    e.1 = used_live;
                    changed = true;
                }
            }
            let reserved = disk.reserved.unwrap_or(0.0).max(0.0) * op;
            let sched_live = disk.scheduled.unwrap_or(0.0).max(0.0);
            let sched = e.0.max(sched_live) + reserved;
            if sched > e.0 + 1.0 {
                e.0 = sched;
                changed = true;
            }
            if !l.allow_scheduling
                || !disk.allow_scheduling
                || disk.schedulable == Some(false)
                || disk.ready == Some(false)
            {
                // Nothing new fits: scheduled past any over-provisioning.
                e.0 = f64::INFINITY;
                closed.push(format!("{}/{}", n.name, disk.name));
            } else if changed {
                fuller += 1;
            }
        }
        pl.refresh_room(i);
    }
    if fuller > 0 {
        notes.push(format!(
            "{fuller} disk(s) hold more than their replicas explain (other data, or storageReserved): Longhorn's own storageAvailable, storageScheduled and storageReserved are used for them"
        ));
    }
    if !closed.is_empty() {
        notes.push(format!(
            "{} disk(s) take no new replica (scheduling off, not Ready or not Schedulable): {}",
            closed.len(),
            closed.join(", ")
        ));
    }
    pl.finish();
}

impl std::fmt::Debug for LiveFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveFleet")
            .field("hosts", &self.placement.topo().hosts.len())
            .field("vms", &self.vm_names.len())
            .field("volumes", &self.placement.volumes().len())
            .finish_non_exhaustive()
    }
}

/// Why a dump's fleet cannot be adopted.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AdoptError {
    #[error("the dump has no Node that can host VMs (witness nodes hold none)")]
    NoNodes,
    #[error(
        "node {0}: allocatable CPU or memory missing or unreadable (a quantity past any real machine is unreadable)"
    )]
    NoAllocatable(String),
}

pub fn adopt(state: &LiveState, p: &Platform) -> Result<LiveFleet, AdoptError> {
    let mut notes = Vec::new();
    let mut nodes: Vec<&crate::live::Node> = state.nodes.iter().filter(|n| !n.witness).collect();
    if nodes.is_empty() {
        return Err(AdoptError::NoNodes);
    }
    fn zone_of(n: &crate::live::Node) -> &str {
        n.zone.as_deref().unwrap_or("default")
    }
    nodes.sort_by(|a, b| (zone_of(a), &a.name).cmp(&(zone_of(b), &b.name)));
    let mut racks: Vec<String> = nodes.iter().map(|n| zone_of(n).to_string()).collect();
    racks.dedup();
    let lh: Map<&str, &crate::live::LonghornNode> = state
        .longhorn_nodes
        .iter()
        .map(|n| (n.name.as_str(), n))
        .collect();
    // node -> disk uuid -> (host, disk index)
    let mut disk_of: Map<&str, Map<&str, (usize, usize)>> = Map::default();
    let mut hosts = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let disks: Vec<f64> = match lh.get(n.name.as_str()) {
            Some(l) => l
                .disks
                .iter()
                .enumerate()
                .map(|(d, disk)| {
                    if let Some(u) = &disk.uuid {
                        disk_of
                            .entry(n.name.as_str())
                            .or_default()
                            .insert(u.as_str(), (i, d));
                    }
                    disk.maximum.unwrap_or(0.0)
                })
                .collect(),
            None => Vec::new(),
        };
        let (Some(cpu), Some(mem)) = (n.cpu_milli, n.memory_bytes) else {
            return Err(AdoptError::NoAllocatable(n.name.clone()));
        };
        hosts.push(Host {
            name: n.name.clone(),
            rack: racks.iter().position(|r| r == zone_of(n)).unwrap_or(0),
            cpu: cpu / 1000.0,
            mem_gib: mem / GIB,
            disks,
        });
    }
    let power = vec![None; racks.len()];
    let mut topo = Topology::build(hosts, racks, &power);
    topo.tags.selectors.push((Vec::new(), Vec::new()));
    topo.tags.node = nodes
        .iter()
        .map(|n| {
            lh.get(n.name.as_str())
                .map(|l| l.tags.clone())
                .unwrap_or_default()
        })
        .collect();
    // Per node, its disks' tags, names and storageReserved.
    for n in &nodes {
        let disks = lh
            .get(n.name.as_str())
            .map_or(&[][..], |l| l.disks.as_slice());
        topo.tags
            .disk
            .push(disks.iter().map(|d| d.tags.clone()).collect());
        topo.disk_names
            .push(disks.iter().map(|d| d.name.clone()).collect());
        topo.disk_reserved
            .push(disks.iter().map(|d| d.reserved.unwrap_or(0.0)).collect());
    }
    let on_cordon = state
        .settings
        .longhorn
        .get("disable-scheduling-on-cordoned-node")
        .is_none_or(|v| v.trim() != "false");
    for (i, n) in nodes.iter().enumerate() {
        let l = lh.get(n.name.as_str());
        let why = if n.ready == Some(false) || l.is_some_and(|l| l.ready == Some(false)) {
            Some("is not Ready")
        } else if n.pressure {
            Some("is under disk, memory, PID or network pressure (Longhorn: not Ready)")
        } else if on_cordon && (n.cordoned || n.maintenance.is_some()) {
            Some("is cordoned (disable-scheduling-on-cordoned-node: not Schedulable)")
        } else if l.is_some_and(|l| l.schedulable == Some(false)) {
            Some("is not Schedulable")
        } else if l.is_some_and(|l| !l.allow_scheduling) {
            Some("has Longhorn scheduling off")
        } else {
            None
        };
        if let Some(why) = why {
            topo.no_replicas[i] = true;
            notes.push(format!(
                "node {} {why}: Longhorn puts no new replica on it",
                n.name
            ));
        }
    }
    let host_of: Map<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let mut groups: Map<&str, u32> = Map::default();
    // One entry per running VMI, and per volume no running VM uses: sized once.
    let at_most = state.vmis.len() + state.volumes.len();
    let mut vms = Vec::with_capacity(at_most);
    let mut vm_node = Vec::with_capacity(at_most);
    let mut vm_names = Vec::with_capacity(at_most);
    let mut migratable = Vec::with_capacity(at_most);
    let mut strategy = Vec::with_capacity(at_most);
    let mut pins = FleetPins {
        labels: nodes.iter().map(|n| n.labels.clone()).collect(),
        witnesses: state
            .nodes
            .iter()
            .filter(|n| n.witness)
            .map(|n| n.name.clone())
            .collect(),
        kubevirt_migration: state.settings.harvester.get("kubevirt-migration").cloned(),
        vms: Vec::with_capacity(at_most),
        volume_names: Vec::with_capacity(state.volumes.len()),
        wanted_replicas: Vec::with_capacity(state.volumes.len()),
    };
    let strategy_of: Map<(&str, &str), &str> = state
        .vms
        .iter()
        .filter_map(|v| {
            Some((
                (v.namespace.as_str(), v.name.as_str()),
                v.maintain_strategy.as_deref()?,
            ))
        })
        .collect();
    // Claim name -> VM (Longhorn names a volume's PVC without its namespace).
    let mut by_claim: Map<&str, usize> =
        Map::with_capacity_and_hasher(state.vmis.len(), Default::default());
    for v in state.vmis.iter().filter(|v| v.occupies()) {
        let Some(&h) = v.node.as_deref().and_then(|n| host_of.get(n)) else {
            notes.push(format!(
                "VMI {}/{}: not on a node of the fleet; left out",
                v.namespace, v.name
            ));
            continue;
        };
        let limit_cpu = v.cpu_limit_milli.map(|m| m / 1000.0);
        let limit_mem = v.memory_limit_bytes.map(|b| b / GIB);
        let cpu_req = v
            .cpu_request_milli
            .map(|m| m / 1000.0)
            .or_else(|| limit_cpu.map(|c| c * 100.0 / p.overcommit_cpu_pct))
            .unwrap_or(0.0);
        let mem_req = v
            .memory_request_bytes
            .map(|b| b / GIB)
            .or_else(|| limit_mem.map(|m| m * 100.0 / p.overcommit_memory_pct))
            .unwrap_or(0.0)
            + p.vm_memory_overhead_gib;
        let mem_gib = limit_mem.unwrap_or(mem_req);
        let next = u32::try_from(groups.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        let group = v
            .anti_affinity
            .as_deref()
            .map(|k| *groups.entry(k).or_insert(next));
        let idx = vms.len();
        for c in &v.claims {
            by_claim.insert(c.as_str(), idx);
        }
        vms.push(Vm {
            cluster: 0,
            pool: v.guest_cluster.clone().unwrap_or_default(),
            group,
            vcpu: f64::from(v.vcpus).max(limit_cpu.unwrap_or(0.0)),
            mem_gib,
            cpu_req,
            mem_req,
            mem_actual: mem_gib + p.vm_memory_overhead_gib,
            volumes: Vec::new(),
            running: true,
        });
        vm_node.push(Some(h));
        vm_names.push(format!("{}/{}", v.namespace, v.name));
        migratable.push(v.live_migratable);
        pins.vms.push(VmPins::of(v));
        strategy.push(
            strategy_of
                .get(&(v.namespace.as_str(), v.name.as_str()))
                .map(|s| (*s).to_string()),
        );
    }
    let mut volumes = Vec::with_capacity(state.volumes.len());
    let mut estimated_data = 0;
    let mut replicas_of: Map<&str, Vec<(usize, usize)>> =
        Map::with_capacity_and_hasher(state.volumes.len(), Default::default());
    for r in state
        .replicas
        .iter()
        .filter(|r| r.state.as_deref() == Some("running"))
    {
        let (Some(vol), Some(n), Some(d)) = (&r.volume, &r.node, &r.disk_uuid) else {
            continue;
        };
        match disk_of.get(n.as_str()).and_then(|m| m.get(d.as_str())) {
            Some(&nd) => replicas_of.entry(vol.as_str()).or_default().push(nd),
            None => notes.push(format!(
                "replica {}: its disk is not in the fleet; left out",
                r.name
            )),
        }
    }
    for v in &state.volumes {
        let Some(size) = v.size else {
            notes.push(format!("volume {}: no size; left out", v.name));
            continue;
        };
        let attached = v.state.as_deref() == Some("attached");
        // The VM whose claim this volume backs (the PVC is named in the volume's status).
        let vm = v.pvc.as_deref().and_then(|pvc| by_claim.get(pvc).copied());
        let vm = vm.unwrap_or_else(|| {
            // A volume no running VM uses still holds storage: give it a stopped owner.
            vms.push(Vm {
                cluster: 0,
                pool: String::new(),
                group: None,
                vcpu: 0.0,
                mem_gib: 0.0,
                cpu_req: 0.0,
                mem_req: 0.0,
                mem_actual: 0.0,
                volumes: Vec::new(),
                running: false,
            });
            vm_node.push(None);
            vm_names.push(format!("(no VM: volume {})", v.name));
            migratable.push(None);
            pins.vms.push(VmPins::default());
            strategy.push(None);
            vms.len() - 1
        });
        let idx = volumes.len();
        vms[vm].volumes.push(idx);
        pins.volume_names.push(v.name.clone());
        pins.wanted_replicas.push(v.replicas.unwrap_or(0));
        let selector = if v.node_selector.is_empty() && v.disk_selector.is_empty() {
            0
        } else {
            let want = (v.node_selector.clone(), v.disk_selector.clone());
            let sels = &mut topo.tags.selectors;
            let at = sels.iter().position(|x| *x == want).unwrap_or_else(|| {
                sels.push(want);
                sels.len() - 1
            });
            u32::try_from(at).unwrap_or(0)
        };
        volumes.push(Volume {
            selector,
            vm,
            size,
            data: v.actual_size.unwrap_or_else(|| {
                estimated_data += 1;
                size * p.data_fill
            }),
            replicas: replicas_of.remove(v.name.as_str()).unwrap_or_default(),
            attached,
        });
    }
    let mut pl = Placement::adopt(topo, vms, volumes, vm_node, p);
    live_disks(&mut pl, &nodes, &lh, p, &mut notes);
    // Cordoned nodes and nodes in maintenance take no restarted VM.
    let mut cordoned = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let why = if n.cordoned || n.maintenance.is_some() {
            Some("is cordoned or in maintenance")
        } else if n.ready == Some(false) {
            Some("is not Ready")
        } else if n.pressure {
            Some("is under disk, memory, PID or network pressure (tainted NoSchedule)")
        } else if n.vm_schedulable == Some(false) {
            Some("has kubevirt.io/schedulable=false (virt-handler not ready)")
        } else {
            None
        };
        if let Some(why) = why {
            cordoned.push(i);
            pl.cordon(i);
            notes.push(format!("node {} {why}: it takes no VM", n.name));
        }
    }
    if estimated_data > 0 {
        notes.push(format!(
            "{estimated_data} volume(s) have no status.actualSize: their data is taken as {:.0}% of their size",
            p.data_fill * 100.0
        ));
    }
    Ok(LiveFleet {
        placement: pl,
        vm_names,
        migratable,
        strategy,
        cordoned,
        tenant_clusters: state
            .vmis
            .iter()
            .filter(|v| v.occupies())
            .filter_map(|v| v.guest_cluster.as_deref())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        node_drain_policy: state
            .settings
            .longhorn
            .get("node-drain-policy")
            .cloned()
            .unwrap_or_else(|| "block-if-contains-last-replica".into()),
        notes,
        pins,
    })
}

/// What the dump held and what it could not answer, for the report's first section.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct LiveSummary {
    pub(crate) source: String,
    pub(crate) nodes: usize,
    pub(crate) witness_nodes: usize,
    pub(crate) vmis_running: usize,
    pub(crate) volumes: usize,
    pub(crate) replicas: usize,
    pub(crate) cordoned: Vec<String>,
    /// "rebuild, risk: skipped, the dump has no Volume (longhorn.io)".
    pub(crate) skipped_analyses: Vec<String>,
    /// Objects of API versions rackplan does not read.
    pub(crate) skipped_objects: Vec<String>,
    pub(crate) findings: Vec<String>,
    pub(crate) notes: Vec<String>,
    /// Scenario parts the dump replaces.
    pub(crate) scenario_overridden: Vec<String>,
    /// Why the rebuild and risk figures do not describe this fleet, when the dump lacks
    /// the Longhorn objects they need.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) storage_skipped: Option<String>,
    /// Why headroom saw no VMs, when the dump has no VMIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) vms_skipped: Option<String>,
    /// Tenant clusters named by the VMs' `guestcluster.harvesterhci.io/name` label.
    pub tenant_clusters: usize,
    /// The newest timestamp among the objects read (creation, writes, conditions): about
    /// when the dump was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_object: Option<String>,
}

pub fn summary(state: &LiveState, fleet: &LiveFleet, source: &str) -> LiveSummary {
    LiveSummary {
        source: source.to_string(),
        newest_object: state.newest_object.clone(),
        nodes: state.nodes.len(),
        witness_nodes: state.nodes.iter().filter(|n| n.witness).count(),
        vmis_running: state.vmis.iter().filter(|v| v.occupies()).count(),
        volumes: state.volumes.len(),
        replicas: state.replicas.len(),
        cordoned: fleet
            .cordoned
            .iter()
            .map(|&h| fleet.placement.topo().hosts[h].name.clone())
            .collect(),
        skipped_analyses: state
            .missing
            .iter()
            .map(|m| format!("{}: the dump has no {}", m.needed_for, m.kind))
            .collect(),
        skipped_objects: state.skipped.clone(),
        findings: state.findings.clone(),
        notes: state.notes.iter().chain(&fleet.notes).cloned().collect(),
        scenario_overridden: Vec::new(),
        storage_skipped: state
            .missing
            .iter()
            .find(|m| m.kind.contains("longhorn.io"))
            .map(|m| format!("the dump has no {}", m.kind)),
        vms_skipped: state
            .missing
            .iter()
            .find(|m| m.kind.starts_with("VirtualMachineInstance"))
            .map(|m| format!("the dump has no {}", m.kind)),
        tenant_clusters: fleet.tenant_clusters,
    }
}
