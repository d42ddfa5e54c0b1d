//! The workload to place: clusters of pools expanded into VMs (requests after Harvester's
//! overcommit, the anti-affinity group of a cluster's control planes) and the Longhorn
//! volumes of their disks.

use crate::simulate::scenario::{Platform, Pool};

#[derive(Debug, Clone)]
pub struct Vm {
    pub cluster: usize,
    pub pool: String,
    /// Anti-affinity group (cluster x pool), if the pool asks for it.
    pub group: Option<u32>,
    pub vcpu: f64,
    pub mem_gib: f64,
    /// Scheduler-visible requests.
    pub cpu_req: f64,
    pub mem_req: f64,
    /// Physical memory the VM takes (its memory plus the virt-launcher overhead), GiB.
    pub mem_actual: f64,
    pub volumes: Vec<usize>,
    /// Stopped VMs hold storage but no CPU or memory, and are not restarted.
    pub running: bool,
}

#[derive(Debug, Clone)]
pub struct Volume {
    pub vm: usize,
    pub size: f64,
    pub data: f64,
    /// (node, disk) of each replica.
    pub replicas: Vec<(usize, usize)>,
    /// Attached to a running VM; Longhorn rebuilds only attached volumes by default.
    pub attached: bool,
    /// Its node and disk selectors, as an index into the topology's `tags.selectors`
    /// (0: none).
    pub selector: u32,
}

/// Expand clusters of pools into VMs and volumes.
pub fn workload(clusters: &[&[Pool]], p: &Platform) -> (Vec<Vm>, Vec<Volume>) {
    let mut vms = Vec::new();
    let mut vols = Vec::new();
    let mut group = 0u32;
    for (c, pools) in clusters.iter().enumerate() {
        for pool in *pools {
            let g = pool.anti_affinity.then(|| {
                group += 1;
                group
            });
            for _ in 0..pool.count {
                let vm = vms.len();
                let volumes: Vec<usize> = pool
                    .disks_gib
                    .iter()
                    .map(|gib| {
                        let size = gib * 1024f64.powi(3);
                        vols.push(Volume {
                            vm,
                            size,
                            data: size * p.data_fill,
                            replicas: Vec::new(),
                            attached: pool.running,
                            selector: 0,
                        });
                        vols.len() - 1
                    })
                    .collect();
                vms.push(Vm {
                    cluster: c,
                    pool: pool.name.clone(),
                    group: g,
                    vcpu: pool.vcpu,
                    mem_gib: pool.memory_gib,
                    cpu_req: pool.vcpu * 100.0 / p.overcommit_cpu_pct,
                    mem_req: pool.memory_gib * 100.0 / p.overcommit_memory_pct
                        + p.vm_memory_overhead_gib,
                    mem_actual: pool.memory_gib + p.vm_memory_overhead_gib,
                    volumes,
                    running: pool.running,
                });
            }
        }
    }
    (vms, vols)
}
