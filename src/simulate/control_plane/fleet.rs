//! What the control-plane model reads off a placed fleet: the counts objects and writes
//! grow with (nodes, VMs, volumes, replicas), what the worst node and rack would restart
//! and rebuild, the management nodes with what already runs on them, and the same counts
//! for one more cluster of a shape. More clusters are added in proportion to capacity, as
//! the scheduler's least-allocated scoring and Longhorn's disk choice spread them: a node
//! (or rack) gains the share of each new cluster's VMs and requests that its allocatable
//! memory is of the fleet's, and the share of its replicas that its disks are.

use crate::simulate::fleet::is_management;
use crate::simulate::place::{Placement, workload};
use crate::simulate::scenario::{Platform, Pool};
use crate::simulate::study::Study;

use super::figures::MANAGEMENT_NODES;

/// Counts that objects and writes grow with.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Counts {
    pub(crate) nodes: f64,
    pub(crate) vms: f64,
    pub(crate) running: f64,
    pub(crate) volumes: f64,
    pub(crate) attached: f64,
    pub(crate) replicas: f64,
}

impl Counts {
    /// These counts plus `n` times `d`.
    pub(crate) fn plus(&self, d: &Counts, n: f64) -> Counts {
        Counts {
            nodes: self.nodes + n * d.nodes,
            vms: self.vms + n * d.vms,
            running: self.running + n * d.running,
            volumes: self.volumes + n * d.volumes,
            attached: self.attached + n * d.attached,
            replicas: self.replicas + n * d.replicas,
        }
    }

    /// One cluster of `pools`.
    pub(crate) fn of_shape(pools: &[Pool], p: &Platform) -> Counts {
        let mut c = Counts::default();
        for pool in pools {
            let n = f64::from(pool.count);
            let disks = pool.disks_gib.len() as f64;
            c.vms += n;
            c.volumes += n * disks;
            if pool.running {
                c.running += n;
                c.attached += n * disks;
            }
        }
        c.replicas = c.volumes * f64::from(p.replicas);
        c
    }
}

/// What one failure takes away: running VMs to restart elsewhere (with their attached
/// volumes) and replicas to rebuild.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Loss {
    pub(crate) name: String,
    pub(crate) vms: f64,
    pub(crate) volumes: f64,
    pub(crate) replicas: f64,
    /// Nodes lost, and nodes left to receive the rebuilt replicas.
    pub(crate) nodes: f64,
    pub(crate) receivers: f64,
    /// Its share of the fleet's allocatable memory and of its disks.
    pub(crate) memory_share: f64,
    pub(crate) disk_share: f64,
}

/// A management node and what else runs on it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Manager {
    pub(crate) name: String,
    /// Logical CPUs and GiB of the machine (the scheduler's share plus the reservation).
    pub(crate) threads: f64,
    pub(crate) memory_gib: f64,
    /// Requests of the VMs placed on it, and volumes with a replica on it.
    pub(crate) vm_cpu: f64,
    pub(crate) vm_memory_gib: f64,
    pub(crate) volumes: f64,
    /// Its share of the fleet's allocatable CPUs, memory and disks.
    pub(crate) cpu_share: f64,
    pub(crate) memory_share: f64,
    pub(crate) disk_share: f64,
}

/// The placed fleet as the model sees it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub(crate) now: Counts,
    pub(crate) node_loss: Loss,
    pub(crate) rack_loss: Loss,
    pub(crate) managers: Vec<Manager>,
    /// How the management nodes were chosen.
    pub(crate) managers_from: String,
    /// Mean memory of a running VM, bytes, and volumes per VM.
    pub(crate) vm_memory_bytes: f64,
    pub(crate) volumes_per_vm: f64,
}

/// The model's view of placement `pl` of study `l`.
pub(crate) fn snapshot(l: &Study, pl: &Placement) -> Snapshot {
    let topo = pl.topo();
    let vms = pl.vms();
    let running = |v: &usize| vms[*v].running;
    let attached_of = |v: usize| {
        vms[v]
            .volumes
            .iter()
            .filter(|&&x| pl.volumes()[x].attached)
            .count() as f64
    };
    let mut now = Counts {
        nodes: topo.hosts.len() as f64,
        vms: vms.len() as f64,
        running: vms.iter().filter(|v| v.running).count() as f64,
        volumes: pl.volumes().len() as f64,
        attached: pl.volumes().iter().filter(|v| v.attached).count() as f64,
        replicas: 0.0,
    };
    now.replicas = pl.volumes().iter().map(|v| v.replicas.len() as f64).sum();
    let per_node: Vec<(f64, f64, f64)> = (0..topo.hosts.len())
        .map(|n| {
            let here: Vec<usize> = pl.vms_on()[n].iter().copied().filter(running).collect();
            (
                here.len() as f64,
                here.iter().map(|&v| attached_of(v)).sum(),
                pl.vols_on()[n].len() as f64,
            )
        })
        .collect();
    let n_nodes = topo.hosts.len() as f64;
    let shares = Shares::of(topo);
    let worst = (0..topo.hosts.len()).max_by(|&a, &b| {
        per_node[a]
            .0
            .total_cmp(&per_node[b].0)
            .then(per_node[a].2.total_cmp(&per_node[b].2))
            .then(b.cmp(&a))
    });
    let node_loss = worst.map_or_else(Loss::default, |n| Loss {
        name: topo.hosts[n].name.clone(),
        vms: per_node[n].0,
        volumes: per_node[n].1,
        replicas: per_node[n].2,
        nodes: 1.0,
        receivers: (n_nodes - 1.0).max(0.0),
        memory_share: shares.memory(n),
        disk_share: shares.disk(n),
    });
    let mut racks: Vec<Loss> = topo
        .racks
        .iter()
        .map(|r| Loss {
            name: r.clone(),
            ..Loss::default()
        })
        .collect();
    for (n, h) in topo.hosts.iter().enumerate() {
        if let Some(r) = racks.get_mut(h.rack) {
            r.vms += per_node[n].0;
            r.volumes += per_node[n].1;
            r.replicas += per_node[n].2;
            r.nodes += 1.0;
            r.memory_share += shares.memory(n);
            r.disk_share += shares.disk(n);
        }
    }
    let rack_loss = racks
        .into_iter()
        .map(|mut r| {
            r.receivers = (n_nodes - r.nodes).max(0.0);
            r
        })
        .max_by(|a, b| {
            a.vms
                .total_cmp(&b.vms)
                .then(a.replicas.total_cmp(&b.replicas))
        })
        .unwrap_or_default();
    let (managers, managers_from) = managers(l, pl, &shares);
    let running_vms: Vec<&crate::simulate::place::Vm> = vms.iter().filter(|v| v.running).collect();
    Snapshot {
        now,
        node_loss,
        rack_loss,
        managers,
        managers_from,
        vm_memory_bytes: if running_vms.is_empty() {
            0.0
        } else {
            running_vms.iter().map(|v| v.mem_gib).sum::<f64>() / running_vms.len() as f64
                * crate::units::GIB
        },
        volumes_per_vm: if now.vms > 0.0 {
            now.volumes / now.vms
        } else {
            0.0
        },
    }
}

/// The management nodes: a dump's by their role labels, else the first three nodes (the
/// ones Harvester promotes); each with the VMs and replicas placed on it.
fn managers(l: &Study, pl: &Placement, shares: &Shares) -> (Vec<Manager>, String) {
    let p = &l.scenario.platform;
    let topo = pl.topo();
    let labelled: Vec<usize> = l.live.as_ref().map_or_else(Vec::new, |f| {
        f.pins
            .labels
            .iter()
            .enumerate()
            .filter(|(_, labels)| is_management(labels))
            .map(|(i, _)| i)
            .collect()
    });
    let (chosen, from) = if labelled.is_empty() {
        let n = (MANAGEMENT_NODES as usize).min(topo.hosts.len());
        (
            (0..n).collect::<Vec<_>>(),
            if l.live.is_some() {
                "no Node carries a control-plane or etcd role label: the first three nodes are taken, as Harvester promotes them".to_string()
            } else {
                "the first three nodes, as Harvester promotes them".to_string()
            },
        )
    } else {
        (
            labelled,
            "the Nodes labelled control-plane, master or etcd".to_string(),
        )
    };
    let vms = pl.vms();
    let out = chosen
        .into_iter()
        .filter(|&h| h < topo.hosts.len())
        .map(|h| {
            let host = &topo.hosts[h];
            let here = pl.vms_on()[h].iter().filter(|&&v| vms[v].running);
            Manager {
                name: host.name.clone(),
                threads: host.cpu + p.reserved_cpu,
                memory_gib: host.mem_gib + p.reserved_memory_gib,
                vm_cpu: here.clone().map(|&v| vms[v].cpu_req).sum(),
                vm_memory_gib: here.map(|&v| vms[v].mem_req).sum(),
                volumes: pl.vols_on()[h].len() as f64,
                cpu_share: shares.cpu(h),
                memory_share: shares.memory(h),
                disk_share: shares.disk(h),
            }
        })
        .collect();
    (out, from)
}

/// Each host's part of the fleet's allocatable CPUs, memory and disks.
struct Shares {
    cpu: Vec<f64>,
    memory: Vec<f64>,
    disk: Vec<f64>,
}

impl Shares {
    fn of(topo: &crate::simulate::fleet::Topology) -> Shares {
        let part = |f: &dyn Fn(&crate::simulate::fleet::Host) -> f64| {
            let total: f64 = topo.hosts.iter().map(f).sum();
            topo.hosts
                .iter()
                .map(|h| if total > 0.0 { f(h) / total } else { 0.0 })
                .collect()
        };
        Shares {
            cpu: part(&|h| h.cpu),
            memory: part(&|h| h.mem_gib),
            disk: part(&|h| h.disks.iter().sum()),
        }
    }

    fn cpu(&self, h: usize) -> f64 {
        self.cpu.get(h).copied().unwrap_or(0.0)
    }

    fn memory(&self, h: usize) -> f64 {
        self.memory.get(h).copied().unwrap_or(0.0)
    }

    fn disk(&self, h: usize) -> f64 {
        self.disk.get(h).copied().unwrap_or(0.0)
    }
}

impl Snapshot {
    /// The worst node's and rack's losses after `n` more clusters of `d`: their share of
    /// the new running VMs and volumes (by memory) and replicas (by disk).
    pub(crate) fn losses_at(&self, d: &Counts, n: f64) -> (Loss, Loss) {
        let grow = |l: &Loss| Loss {
            vms: l.vms + n * d.running * l.memory_share,
            volumes: l.volumes + n * d.attached * l.memory_share,
            replicas: l.replicas + n * d.replicas * l.disk_share,
            ..l.clone()
        };
        (grow(&self.node_loss), grow(&self.rack_loss))
    }

    /// The management nodes after `n` more clusters whose requests are `per_cluster`
    /// (CPUs, GiB) and replicas `replicas`: each gets its share.
    pub(crate) fn managers_at(
        &self,
        per_cluster: (f64, f64),
        replicas: f64,
        n: f64,
    ) -> Vec<Manager> {
        self.managers
            .iter()
            .map(|m| Manager {
                vm_cpu: m.vm_cpu + n * per_cluster.0 * m.cpu_share,
                vm_memory_gib: m.vm_memory_gib + n * per_cluster.1 * m.memory_share,
                volumes: m.volumes + n * replicas * m.disk_share,
                ..m.clone()
            })
            .collect()
    }
}

/// The scheduler-visible requests of one cluster of `pools`: (CPUs, GiB).
pub(crate) fn requests(pools: &[Pool], p: &Platform) -> (f64, f64) {
    let (vms, _) = workload(&[pools], p);
    vms.iter()
        .filter(|v| v.running)
        .fold((0.0, 0.0), |a, v| (a.0 + v.cpu_req, a.1 + v.mem_req))
}
