//! Placement like the real schedulers. VMs go through a kube-scheduler-like filter and
//! score: requests after Harvester's overcommit must fit, required anti-affinity keeps the
//! control-plane VMs of one cluster on different hosts, and the least-allocated node wins
//! (ties to the lowest index, so runs are reproducible). Each VM disk is a Longhorn volume
//! whose replicas go to distinct nodes (hard node anti-affinity), to new racks first (soft
//! zone anti-affinity, racks as zones), on the disk with most room, subject to Longhorn's
//! two storage rules (minimal available percentage, over-provisioning).

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

/// Free capacity of every node; cloned per failure scenario.
#[derive(Debug, Clone)]
pub struct Free {
    pub cpu: Vec<f64>,
    pub mem: Vec<f64>,
    /// Per node, per disk: (scheduled bytes, used bytes).
    pub disk: Vec<Vec<(f64, f64)>>,
    /// Per node: the room left on its emptiest disk (kept in step with `disk`).
    pub node_room: Vec<f64>,
}

impl Free {
    /// Record a replica on (node, disk).
    pub fn add_replica(&mut self, topo: &Topology, n: usize, d: usize, vol: &Volume) {
        self.disk[n][d].0 += vol.size;
        self.disk[n][d].1 += vol.data;
        self.node_room[n] = topo.hosts[n]
            .disks
            .iter()
            .zip(&self.disk[n])
            .map(|(max, s)| max - s.1)
            .fold(0.0, f64::max);
    }
}

/// Longhorn's storage rules for one replica on one disk.
#[derive(Debug, Clone, Copy)]
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

    /// Whether a replica of `size` bytes (nominal) holding `data` bytes (actual) may go on a
    /// disk of `max` bytes that has `sched` bytes scheduled and `used` bytes used: the data
    /// must leave more than the minimal available share free, and the scheduled sizes must
    /// stay within the over-provisioning share (Longhorn's `IsSchedulableToDisk`). Placement,
    /// headroom re-homing and the rebuild model all ask this one question, per disk.
    pub fn fits(&self, max: f64, (sched, used): (f64, f64), size: f64, data: f64) -> bool {
        max > 0.0
            && max - used - data > max * self.min_available
            && sched + size <= max * self.overprovision
    }

    /// Replica data a disk can take at most under the minimal-available rule.
    pub fn data_capacity(&self, max: f64) -> f64 {
        max * (1.0 - self.min_available)
    }
}

#[derive(Clone)]
pub struct Placement {
    pub topo: Topology,
    pub vms: Vec<Vm>,
    pub volumes: Vec<Volume>,
    pub vm_node: Vec<Option<usize>>,
    pub free: Free,
    /// Anti-affinity groups present on each node (a few per node: a plain list is fastest).
    pub groups: Vec<Vec<u32>>,
    pub stranded_vms: usize,
    pub stranded_replicas: usize,
    pub rules: StorageRules,
    /// Per node: the VMs and the volumes (with a replica) it holds.
    pub vms_on: Vec<Vec<usize>>,
    pub vols_on: Vec<Vec<usize>>,
    /// Per node: physical memory of its VMs (GiB) and its virt-launcher pods.
    pub mem_actual: Vec<f64>,
    pub pods: Vec<u32>,
}

/// The scheduler's choice for one VM among `alive` nodes; `extra[n]` are the groups placed
/// on node n during a scenario, on top of `groups` (empty slice: no overlay).
pub fn pick_node(
    vm: &Vm,
    free: &Free,
    topo: &Topology,
    groups: &[Vec<u32>],
    extra: &[Vec<u32>],
    alive: &[bool],
) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for n in 0..free.cpu.len() {
        if !alive[n] || free.cpu[n] < vm.cpu_req - 1e-9 || free.mem[n] < vm.mem_req - 1e-9 {
            continue;
        }
        if let Some(g) = vm.group
            && (groups[n].contains(&g) || extra.get(n).is_some_and(|e| e.contains(&g)))
        {
            continue;
        }
        let (ic, im) = topo.inv_cap[n];
        let score = f64::midpoint(
            (free.cpu[n] - vm.cpu_req) * ic,
            (free.mem[n] - vm.mem_req) * im,
        );
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
    // At most four replicas: their racks fit in a small array, no allocation.
    let mut used_racks = [usize::MAX; 4];
    for (k, &(n, _)) in vol.replicas.iter().take(4).enumerate() {
        used_racks[k] = topo.hosts[n].rack;
    }
    let rack_of = &topo.rack_of;
    let room = &free.node_room;
    let mut rejected: Vec<usize> = Vec::new();
    // Which class a node is in (1: a rack without a replica of the volume, 0: the rest),
    // or `None` when it cannot take the replica at all.
    let class = |n: usize, rejected: &[usize]| -> Option<usize> {
        if !alive[n]
            || room[n] <= vol.data
            || vol.replicas.iter().any(|&(rn, _)| rn == n)
            || rejected.contains(&n)
        {
            return None;
        }
        Some(usize::from(!used_racks.contains(&rack_of[n])))
    };
    let top_of = |want: usize, rejected: &[usize]| {
        let mut top = f64::NEG_INFINITY;
        for (n, &r) in room.iter().enumerate() {
            if class(n, rejected) == Some(want) {
                top = top.max(r);
            }
        }
        top
    };
    // One pass for the most room in each class.
    let mut top = [f64::NEG_INFINITY; 2];
    for (n, &r) in room.iter().enumerate() {
        if let Some(c) = class(n, &rejected) {
            top[c] = top[c].max(r);
        }
    }
    // Zone anti-affinity is soft: nodes in racks without a replica first, the rest after.
    let mut draw = draw;
    for want in [1, 0] {
        loop {
            if !top[want].is_finite() {
                break;
            }
            let cut = top[want] * 0.95;
            let near =
                |n: usize, rejected: &[usize]| class(n, rejected) == Some(want) && room[n] >= cut;
            let count = (0..room.len()).filter(|&n| near(n, &rejected)).count() as u64;
            // A small deterministic mix of the draw number (splitmix64).
            let mut z = draw.wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let nth = (z % count.max(1)) as usize;
            let Some(n) = (0..room.len()).filter(|&n| near(n, &rejected)).nth(nth) else {
                break;
            };
            // The chosen node's disks are checked against the storage rules; a node none of
            // whose disks fits is passed over.
            let disk = topo.hosts[n]
                .disks
                .iter()
                .enumerate()
                .filter(|&(d, &max)| rules.fits(max, free.disk[n][d], vol.size, vol.data))
                .max_by(|a, b| {
                    (a.1 - free.disk[n][a.0].1)
                        .total_cmp(&(b.1 - free.disk[n][b.0].1))
                        .then(b.0.cmp(&a.0))
                });
            if let Some((d, _)) = disk {
                return Some((n, d));
            }
            rejected.push(n);
            top[want] = top_of(want, &rejected);
            draw = draw.wrapping_add(1);
        }
    }
    None
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
            node_room: topo
                .hosts
                .iter()
                .map(|h| h.disks.iter().copied().fold(0.0, f64::max))
                .collect(),
        };
        let mut pl = Placement {
            groups: vec![Vec::new(); topo.hosts.len()],
            vm_node: vec![None; vms.len()],
            topo,
            vms,
            volumes: Vec::new(),
            free,
            stranded_vms: 0,
            stranded_replicas: 0,
            rules: StorageRules::from(p),
            vms_on: Vec::new(),
            vols_on: Vec::new(),
            mem_actual: Vec::new(),
            pods: Vec::new(),
        };
        let alive = vec![true; pl.topo.hosts.len()];
        for v in 0..pl.vms.len() {
            if !pl.vms[v].running {
                continue;
            }
            match pick_node(&pl.vms[v], &pl.free, &pl.topo, &pl.groups, &[], &alive) {
                Some(n) => {
                    pl.free.cpu[n] -= pl.vms[v].cpu_req;
                    pl.free.mem[n] -= pl.vms[v].mem_req;
                    if let Some(g) = pl.vms[v].group
                        && !pl.groups[n].contains(&g)
                    {
                        pl.groups[n].push(g);
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
                        pl.free.add_replica(&pl.topo, n, d, vol);
                        vol.replicas.push((n, d));
                    }
                    None => pl.stranded_replicas += 1,
                }
            }
        }
        pl.volumes = volumes;
        let hosts = pl.topo.hosts.len();
        pl.vms_on = vec![Vec::new(); hosts];
        pl.vols_on = vec![Vec::new(); hosts];
        pl.mem_actual = vec![0.0; hosts];
        pl.pods = vec![0; hosts];
        for (v, n) in pl.vm_node.iter().enumerate() {
            if let Some(n) = n {
                pl.vms_on[*n].push(v);
                pl.mem_actual[*n] += pl.vms[v].mem_actual;
                pl.pods[*n] += 1;
            }
        }
        for (i, vol) in pl.volumes.iter().enumerate() {
            for &(n, _) in &vol.replicas {
                pl.vols_on[n].push(i);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::scenario::Platform;
    use crate::simulate::topology::Host;

    fn host(rack: usize, tb: f64) -> Host {
        Host {
            name: format!("h{rack}"),
            rack,
            cpu: 64.0,
            mem_gib: 256.0,
            disks: vec![tb * 1e12],
        }
    }

    #[test]
    fn zone_anti_affinity_is_soft_and_node_anti_affinity_hard() {
        // Two racks, three replicas: the third shares a rack, never a node.
        let topo = Topology::build(
            vec![host(0, 4.0), host(0, 4.0), host(1, 4.0)],
            vec!["a".into(), "b".into()],
            &[None, None],
        );
        let pools = [Pool {
            name: "w".into(),
            count: 1,
            vcpu: 2.0,
            memory_gib: 4.0,
            disks_gib: vec![100.0],
            anti_affinity: false,
            running: true,
        }];
        let p = Platform::default();
        let (vms, vols) = workload(&[&pools[..]], &p);
        let pl = Placement::build(topo, vms, vols, &p);
        let nodes: Vec<usize> = pl.volumes[0].replicas.iter().map(|r| r.0).collect();
        assert_eq!(nodes.len(), 3);
        let mut sorted = nodes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 3, "three distinct nodes: {nodes:?}");
        // The first two replicas went to different racks.
        assert_ne!(pl.topo.hosts[nodes[0]].rack, pl.topo.hosts[nodes[1]].rack);
    }

    #[test]
    fn control_planes_of_one_cluster_never_share_a_host() {
        let topo = Topology::build(
            (0..4).map(|i| host(i % 2, 4.0)).collect(),
            vec!["a".into(), "b".into()],
            &[None, None],
        );
        let pools = [Pool {
            name: "cp".into(),
            count: 3,
            vcpu: 4.0,
            memory_gib: 8.0,
            disks_gib: vec![60.0],
            anti_affinity: true,
            running: true,
        }];
        let p = Platform::default();
        let (vms, vols) = workload(&[&pools[..], &pools[..]], &p);
        let pl = Placement::build(topo, vms, vols, &p);
        for c in 0..2 {
            let mut hosts: Vec<usize> = (0..pl.vms.len())
                .filter(|&v| pl.vms[v].cluster == c)
                .map(|v| pl.vm_node[v].unwrap())
                .collect();
            hosts.sort_unstable();
            hosts.dedup();
            assert_eq!(hosts.len(), 3, "cluster {c}");
        }
    }

    #[test]
    fn requests_are_taken_after_overcommit() {
        let p = Platform::default();
        let pools = [Pool {
            name: "w".into(),
            count: 1,
            vcpu: 16.0,
            memory_gib: 30.0,
            disks_gib: vec![],
            anti_affinity: false,
            running: true,
        }];
        let (vms, _) = workload(&[&pools[..]], &p);
        assert!(
            (vms[0].cpu_req - 1.0).abs() < 1e-12,
            "16 vCPU at 1600 % overcommit request one CPU"
        );
        assert!(
            (vms[0].mem_req - (20.0 + 0.25)).abs() < 1e-9,
            "30 GiB at 150 % plus overhead"
        );
    }
}
