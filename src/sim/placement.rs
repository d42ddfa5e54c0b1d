//! Placement like the real schedulers. VMs go through a kube-scheduler-like filter and
//! score: requests after Harvester's overcommit must fit, required anti-affinity keeps the
//! control-plane VMs of one cluster on different hosts, and the least-allocated node wins
//! (ties to the lowest index, so runs are reproducible). Each VM disk is a Longhorn volume
//! whose replicas go to distinct nodes (hard node anti-affinity), to new racks first (soft
//! zone anti-affinity, racks as zones), on the disk with most room, subject to Longhorn's
//! two storage rules (minimal available percentage, over-provisioning).

use std::collections::HashSet;

use super::scenario::{Platform, Pool};
use super::topology::Topology;

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
    pub volumes: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Volume {
    pub vm: usize,
    pub size: f64,
    pub data: f64,
    /// (node, disk) of each replica.
    pub replicas: Vec<(usize, usize)>,
}

/// Expand clusters of pools into VMs and volumes.
pub fn workload(clusters: &[&[Pool]], p: &Platform) -> (Vec<Vm>, Vec<Volume>) {
    let mut vms = Vec::new();
    let mut vols = Vec::new();
    let mut group = 0u32;
    for (c, pools) in clusters.iter().enumerate() {
        for pool in pools.iter() {
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
                    volumes,
                });
            }
        }
    }
    (vms, vols)
}

/// Free capacity of every node; cloned per failure scenario.
#[derive(Debug, Clone)]
pub struct Free {
    pub cpu: Vec<f64>,
    pub mem: Vec<f64>,
    /// Per node, per disk: (scheduled bytes, used bytes).
    pub disk: Vec<Vec<(f64, f64)>>,
}

/// Longhorn's storage rules for one replica on one disk.
pub struct StorageRules {
    pub min_available: f64,
    pub overprovision: f64,
}

impl StorageRules {
    pub fn from(p: &Platform) -> StorageRules {
        StorageRules {
            min_available: p.minimal_available_pct / 100.0,
            overprovision: p.overcommit_storage_pct / 100.0,
        }
    }

    pub fn fits(&self, max: f64, (sched, used): (f64, f64), vol: &Volume) -> bool {
        max - used - vol.data > max * self.min_available
            && sched + vol.size <= max * self.overprovision
    }
}

pub struct Placement {
    pub topo: Topology,
    pub vms: Vec<Vm>,
    pub volumes: Vec<Volume>,
    pub vm_node: Vec<Option<usize>>,
    pub free: Free,
    /// Anti-affinity groups present on each node.
    pub groups: Vec<HashSet<u32>>,
    pub stranded_vms: usize,
    pub stranded_replicas: usize,
    pub rules: StorageRules,
}

/// The scheduler's choice for one VM among `alive` nodes; `extra` are (node, group) pairs
/// placed during a scenario on top of `groups`.
pub fn pick_node(
    vm: &Vm,
    free: &Free,
    topo: &Topology,
    groups: &[HashSet<u32>],
    extra: &[(usize, u32)],
    alive: &[bool],
) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for n in 0..free.cpu.len() {
        if !alive[n] || free.cpu[n] < vm.cpu_req - 1e-9 || free.mem[n] < vm.mem_req - 1e-9 {
            continue;
        }
        if let Some(g) = vm.group
            && (groups[n].contains(&g) || extra.iter().any(|&(en, eg)| en == n && eg == g))
        {
            continue;
        }
        let h = &topo.hosts[n];
        let score = ((free.cpu[n] - vm.cpu_req) / h.cpu.max(1e-9)
            + (free.mem[n] - vm.mem_req) / h.mem_gib.max(1e-9))
            / 2.0;
        if best.is_none_or(|(s, _)| score > s + 1e-12) {
            best = Some((score, n));
        }
    }
    best.map(|(_, n)| n)
}

/// A (node, disk) for one more replica of `vol`: not on a node that holds one, new racks
/// first, then among the disks with the most available room. Longhorn takes the disk with
/// the most usable storage; in a real fleet small differences in actual data make that
/// choice look random among near-equal candidates, so ties within 5 % are broken by a
/// seeded draw (reproducible, and it gives the spread of copysets a real fleet has).
pub fn pick_disk(
    vol: &Volume,
    free: &Free,
    topo: &Topology,
    rules: &StorageRules,
    alive: &[bool],
    draw: u64,
) -> Option<(usize, usize)> {
    let used_racks: Vec<usize> = vol
        .replicas
        .iter()
        .map(|&(n, _)| topo.hosts[n].rack)
        .collect();
    let mut cands: Vec<(bool, f64, usize, usize)> = Vec::new();
    for (n, disks) in free.disk.iter().enumerate() {
        if !alive[n] || vol.replicas.iter().any(|&(rn, _)| rn == n) {
            continue;
        }
        let new_rack = !used_racks.contains(&topo.hosts[n].rack);
        let best_disk = disks
            .iter()
            .enumerate()
            .filter(|&(d, &state)| rules.fits(topo.hosts[n].disks[d], state, vol))
            .map(|(d, &state)| (topo.hosts[n].disks[d] - state.1, d))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        if let Some((room, d)) = best_disk {
            cands.push((new_rack, room, n, d));
        }
    }
    let any_new = cands.iter().any(|c| c.0);
    cands.retain(|c| c.0 == any_new);
    let top = cands.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
    cands.retain(|c| c.1 >= top * 0.95);
    if cands.is_empty() {
        return None;
    }
    // A small deterministic mix of the draw number (splitmix64).
    let mut z = draw.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let c = cands[(z % cands.len() as u64) as usize];
    Some((c.2, c.3))
}

impl Placement {
    /// Place every VM, then every volume's replicas.
    pub fn build(
        topo: Topology,
        vms: Vec<Vm>,
        mut volumes: Vec<Volume>,
        p: &Platform,
    ) -> Placement {
        let free = Free {
            cpu: topo.hosts.iter().map(|h| h.cpu).collect(),
            mem: topo.hosts.iter().map(|h| h.mem_gib).collect(),
            disk: topo
                .hosts
                .iter()
                .map(|h| vec![(0.0, 0.0); h.disks.len()])
                .collect(),
        };
        let mut pl = Placement {
            groups: vec![HashSet::new(); topo.hosts.len()],
            vm_node: vec![None; vms.len()],
            topo,
            vms,
            volumes: Vec::new(),
            free,
            stranded_vms: 0,
            stranded_replicas: 0,
            rules: StorageRules::from(p),
        };
        let alive = vec![true; pl.topo.hosts.len()];
        for v in 0..pl.vms.len() {
            match pick_node(&pl.vms[v], &pl.free, &pl.topo, &pl.groups, &[], &alive) {
                Some(n) => {
                    pl.free.cpu[n] -= pl.vms[v].cpu_req;
                    pl.free.mem[n] -= pl.vms[v].mem_req;
                    if let Some(g) = pl.vms[v].group {
                        pl.groups[n].insert(g);
                    }
                    pl.vm_node[v] = Some(n);
                }
                None => pl.stranded_vms += 1,
            }
        }
        let r = p.replicas as usize;
        for (i, vol) in volumes.iter_mut().enumerate() {
            for k in 0..r {
                let draw = (i as u64) << 8 | k as u64;
                match pick_disk(vol, &pl.free, &pl.topo, &pl.rules, &alive, draw) {
                    Some((n, d)) => {
                        let s = &mut pl.free.disk[n][d];
                        s.0 += vol.size;
                        s.1 += vol.data;
                        vol.replicas.push((n, d));
                    }
                    None => pl.stranded_replicas += 1,
                }
            }
        }
        pl.volumes = volumes;
        pl
    }

    /// Fleet-wide use of (cpu requests, memory requests, storage data) over capacity.
    pub fn utilisation(&self) -> (f64, f64, f64) {
        let (mut ac, mut am, mut fc, mut fm) = (0.0, 0.0, 0.0, 0.0);
        let (mut smax, mut sused) = (0.0, 0.0);
        for (n, h) in self.topo.hosts.iter().enumerate() {
            ac += h.cpu;
            am += h.mem_gib;
            fc += self.free.cpu[n];
            fm += self.free.mem[n];
            for (d, max) in h.disks.iter().enumerate() {
                smax += max;
                sused += self.free.disk[n][d].1;
            }
        }
        let frac = |used: f64, total: f64| if total > 0.0 { used / total } else { 0.0 };
        (frac(ac - fc, ac), frac(am - fm, am), frac(sused, smax))
    }
}
