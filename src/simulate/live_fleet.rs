//! The running fleet of a dump (`crate::live`) as a placement the simulator's analyses
//! take: hosts from the Nodes (allocatable CPU and memory, zone as rack) and their Longhorn
//! disks, VMs where their VMIs run with the requests Harvester's webhook set, volumes with
//! their replicas on the disks they are on. Nothing is re-placed. Cordoned nodes and nodes
//! in maintenance keep what they hold but take nothing new.

use std::collections::BTreeMap;

use super::placement::{Placement, Vm, Volume};
use super::scenario::Platform;
use super::topology::{Host, Topology};
use crate::live::LiveState;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The adopted fleet and what could not be taken into it.
pub struct LiveFleet {
    pub placement: Placement,
    /// `namespace/name` of each VM, in placement order.
    pub vm_names: Vec<String>,
    pub notes: Vec<String>,
}

pub fn adopt(state: &LiveState, p: &Platform) -> Result<LiveFleet, String> {
    let mut notes = Vec::new();
    let mut nodes: Vec<&crate::live::Node> = state.nodes.iter().filter(|n| !n.witness).collect();
    if nodes.is_empty() {
        return Err("the dump has no Node that can host VMs (witness nodes hold none)".into());
    }
    let zone = |n: &crate::live::Node| n.zone.clone().unwrap_or_else(|| "default".into());
    nodes.sort_by(|a, b| (zone(a), &a.name).cmp(&(zone(b), &b.name)));
    let mut racks: Vec<String> = nodes.iter().map(|n| zone(n)).collect();
    racks.dedup();
    let lh: BTreeMap<&str, &crate::live::LonghornNode> = state
        .longhorn_nodes
        .iter()
        .map(|n| (n.name.as_str(), n))
        .collect();
    // (node, disk uuid) -> (host, disk index)
    let mut disk_of: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    let mut hosts = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let disks: Vec<f64> = match lh.get(n.name.as_str()) {
            Some(l) => l
                .disks
                .iter()
                .enumerate()
                .map(|(d, disk)| {
                    if let Some(u) = &disk.uuid {
                        disk_of.insert((n.name.clone(), u.clone()), (i, d));
                    }
                    disk.maximum.unwrap_or(0.0)
                })
                .collect(),
            None => Vec::new(),
        };
        let (Some(cpu), Some(mem)) = (n.cpu_milli, n.memory_bytes) else {
            return Err(format!(
                "node {}: allocatable CPU or memory missing",
                n.name
            ));
        };
        hosts.push(Host {
            name: n.name.clone(),
            rack: racks.iter().position(|r| *r == zone(n)).unwrap_or(0),
            cpu: cpu / 1000.0,
            mem_gib: mem / GIB,
            disks,
        });
    }
    let power = vec![None; racks.len()];
    let topo = Topology::build(hosts, racks, &power);
    let host_of: BTreeMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let mut groups: BTreeMap<&str, u32> = BTreeMap::new();
    let mut vms = Vec::new();
    let mut vm_node = Vec::new();
    let mut vm_names = Vec::new();
    // Claim name -> VM (Longhorn names a volume's PVC without its namespace).
    let mut by_claim: BTreeMap<String, usize> = BTreeMap::new();
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
            by_claim.insert(c.clone(), idx);
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
    }
    let mut volumes = Vec::new();
    let mut replicas_of: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for r in state
        .replicas
        .iter()
        .filter(|r| r.state.as_deref() == Some("running"))
    {
        let (Some(vol), Some(n), Some(d)) = (&r.volume, &r.node, &r.disk_uuid) else {
            continue;
        };
        match disk_of.get(&(n.clone(), d.clone())) {
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
        let vm = v.pvc.as_ref().and_then(|pvc| by_claim.get(pvc).copied());
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
            vms.len() - 1
        });
        let idx = volumes.len();
        vms[vm].volumes.push(idx);
        volumes.push(Volume {
            vm,
            size,
            data: size * p.data_fill,
            replicas: replicas_of.remove(v.name.as_str()).unwrap_or_default(),
            attached,
        });
    }
    let mut pl = Placement::adopt(topo, vms, volumes, vm_node, p);
    // Cordoned nodes and nodes in maintenance take no restarted VM.
    for (i, n) in nodes.iter().enumerate() {
        if n.cordoned || n.maintenance.is_some() {
            pl.free.cpu[i] = pl.free.cpu[i].min(0.0);
            pl.free.mem[i] = pl.free.mem[i].min(0.0);
            notes.push(format!(
                "node {} is cordoned or in maintenance: it takes no VM",
                n.name
            ));
        }
    }
    Ok(LiveFleet {
        placement: pl,
        vm_names,
        notes,
    })
}
