//! Placement like the real schedulers. VMs go through a kube-scheduler-like filter and
//! score: requests after Harvester's overcommit must fit, required anti-affinity keeps the
//! control-plane VMs of one cluster on different hosts, and the least-allocated node wins
//! (ties to the lowest index, so runs are reproducible). Each VM disk is a Longhorn volume
//! whose replicas go to distinct nodes (hard node anti-affinity), to new racks first (soft
//! zone anti-affinity, racks as zones), on the disk with most room, subject to Longhorn's
//! two storage rules (minimal available percentage, over-provisioning).

use super::free::{Free, StorageRules};
use super::replica_scheduler::pick_disk;
use super::vm_scheduler::{ScoreIndex, pick_node};
use super::workload::{Vm, Volume};
use crate::simulate::fleet::Topology;
use crate::simulate::scenario::Platform;

/// Fleets from this many hosts get the VM score index.
pub const INDEX_FROM: usize = 256;

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
    /// The nodes by their least-allocated score once everything is placed.
    pub scores: ScoreIndex,
}

impl Placement {
    /// Every host whole, the VMs where `vm_node` says (their requests not yet taken), no
    /// volume: what `build` places into and `adopt` records into.
    fn empty(topo: Topology, vms: Vec<Vm>, vm_node: Vec<Option<usize>>, p: &Platform) -> Placement {
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
        Placement {
            groups: vec![Vec::new(); topo.hosts.len()],
            vm_node,
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
            scores: ScoreIndex::default(),
        }
    }

    /// Place every VM, then every volume's replicas.
    pub fn build(topo: Topology, vms: Vec<Vm>, volumes: Vec<Volume>, p: &Platform) -> Placement {
        let mut pl = Placement::empty(topo, Vec::new(), Vec::new(), p);
        pl.add_workload(vms, volumes, p);
        pl
    }

    /// A placement as it is (a running fleet's): `vm_node` says where each VM runs and each
    /// volume lists its replicas' (node, disk). Nothing is re-placed; capacity is what is left.
    pub fn adopt(
        topo: Topology,
        vms: Vec<Vm>,
        volumes: Vec<Volume>,
        vm_node: Vec<Option<usize>>,
        p: &Platform,
    ) -> Placement {
        let mut pl = Placement::empty(topo, vms, vm_node, p);
        for v in 0..pl.vms.len() {
            if let (true, Some(n)) = (pl.vms[v].running, pl.vm_node[v]) {
                let (cpu, mem, group) = (pl.vms[v].cpu_req, pl.vms[v].mem_req, pl.vms[v].group);
                pl.take(n, cpu, mem, group);
            }
        }
        for vol in &volumes {
            for &(n, d) in &vol.replicas {
                pl.free.add_replica(&pl.topo, n, d, vol);
            }
        }
        pl.volumes = volumes;
        pl.finish();
        pl
    }

    /// This placement on `topo` (the same hosts, possibly with more appended), with `vms`
    /// and `volumes` (numbered as `workload` numbers them) placed into what is left, like
    /// `build` places: what runs stays where it is.
    #[must_use]
    pub fn extend(
        &self,
        topo: Topology,
        vms: Vec<Vm>,
        volumes: Vec<Volume>,
        p: &Platform,
    ) -> Placement {
        let mut pl = self.clone();
        for h in &topo.hosts[pl.topo.hosts.len().min(topo.hosts.len())..] {
            pl.free.cpu.push(h.cpu);
            pl.free.mem.push(h.mem_gib);
            pl.free.disk.push(vec![(0.0, 0.0); h.disks.len()]);
            pl.free
                .node_room
                .push(h.disks.iter().copied().fold(0.0, f64::max));
            pl.groups.push(Vec::new());
        }
        pl.topo = topo;
        pl.add_workload(vms, volumes, p);
        pl
    }

    /// A node takes a VM's requests (and its anti-affinity group).
    fn take(&mut self, n: usize, cpu: f64, mem: f64, group: Option<u32>) {
        self.free.cpu[n] -= cpu;
        self.free.mem[n] -= mem;
        if let Some(g) = group
            && !self.groups[n].contains(&g)
        {
            self.groups[n].push(g);
        }
    }

    /// Place replicas of volume `i` until it has `r`, as Longhorn would; those that find
    /// no disk are counted stranded.
    fn top_up(&mut self, vol: &mut Volume, i: usize, r: usize, alive: &[bool]) {
        for k in vol.replicas.len()..r {
            let draw = (i as u64) << 8 | k as u64;
            match pick_disk(vol, &self.free, &self.topo, &self.rules, alive, draw) {
                Some((n, d)) => {
                    self.free.add_replica(&self.topo, n, d, vol);
                    vol.replicas.push((n, d));
                }
                None => self.stranded_replicas += 1,
            }
        }
    }

    /// Place `vms`, then `volumes`' replicas (numbered as `workload` numbers them, from
    /// zero) after what this placement holds, and index the result.
    fn add_workload(&mut self, vms: Vec<Vm>, volumes: Vec<Volume>, p: &Platform) {
        let (group_off, cluster_off) = self.next_numbers();
        self.add_renumbered(vms, volumes, cluster_off, group_off, p);
    }

    /// The anti-affinity group and the cluster number the workload placed next is
    /// numbered after (`add_workload` adds them to the workload's own numbers).
    pub fn next_numbers(&self) -> (u32, usize) {
        let group_off = self.vms.iter().filter_map(|v| v.group).max().unwrap_or(0);
        let cluster_off = self.vms.iter().map(|v| v.cluster + 1).max().unwrap_or(0);
        (group_off, cluster_off)
    }

    /// Place `vms` and `volumes` (numbered as `workload` numbers them, from zero) after
    /// what this placement holds, their clusters numbered from `cluster_off` and their
    /// groups from `group_off`: the growth questions add one cluster at a time with the
    /// numbers the whole workload would give it. VMs take CPU, memory and groups, replicas
    /// only disk room, so placing a cluster's VMs after the volumes of the clusters before
    /// it lands where `build` of the whole workload (every VM, then every volume) does.
    pub fn add_renumbered(
        &mut self,
        vms: Vec<Vm>,
        mut volumes: Vec<Volume>,
        cluster_off: usize,
        group_off: u32,
        p: &Platform,
    ) {
        let (vm_off, vol_off) = (self.vms.len(), self.volumes.len());
        let alive = vec![true; self.topo.hosts.len()];
        for mut vm in vms {
            vm.group = vm.group.map(|g| g + group_off);
            vm.cluster += cluster_off;
            for v in &mut vm.volumes {
                *v += vol_off;
            }
            let node = if vm.running {
                pick_node(&vm, &self.free, &self.topo, &self.groups, &[], &alive)
            } else {
                None
            };
            match node {
                Some(n) => self.take(n, vm.cpu_req, vm.mem_req, vm.group),
                None if vm.running => self.stranded_vms += 1,
                None => {}
            }
            self.vm_node.push(node);
            self.vms.push(vm);
        }
        let r = p.replicas as usize;
        for (i, vol) in volumes.iter_mut().enumerate() {
            vol.vm += vm_off;
            self.top_up(vol, vol_off + i, r, &alive);
        }
        self.volumes.extend(volumes);
        self.finish();
    }

    /// Every volume at `r` replicas: the newest beyond `r` dropped, missing ones placed as
    /// Longhorn would (a what-if on a running fleet).
    #[must_use]
    pub fn with_replicas(&self, r: usize) -> Placement {
        let mut pl = self.clone();
        let alive = vec![true; pl.topo.hosts.len()];
        let mut volumes = std::mem::take(&mut pl.volumes);
        for (i, vol) in volumes.iter_mut().enumerate() {
            while vol.replicas.len() > r {
                if let Some((n, d)) = vol.replicas.pop() {
                    pl.free.remove_replica(&pl.topo, n, d, vol);
                }
            }
            pl.top_up(vol, i, r, &alive);
        }
        pl.volumes = volumes;
        pl.finish();
        pl
    }

    /// The per-node lists and indexes, once every VM and replica has its place (again,
    /// after VMs or replicas were moved by hand).
    pub fn finish(&mut self) {
        let pl = self;
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
        // On small fleets a scan of every node is cheaper than keeping indexes.
        if hosts >= INDEX_FROM {
            pl.scores = ScoreIndex::new(&pl.topo, &pl.free);
        }
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
    use crate::simulate::fleet::Host;
    use crate::simulate::place::workload;
    use crate::simulate::scenario::{Platform, Pool};

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
