//! Placement like the real schedulers. VMs go through a kube-scheduler-like filter and
//! score: requests after Harvester's overcommit must fit, required anti-affinity keeps the
//! control-plane VMs of one cluster on different hosts, and the least-allocated node wins
//! (ties to the lowest index, so runs are reproducible). Each VM disk is a Longhorn volume
//! whose replicas go to distinct nodes (hard node anti-affinity), to new racks first (soft
//! zone anti-affinity, racks as zones), on the disk with most room, subject to Longhorn's
//! two storage rules (minimal available percentage, over-provisioning).

use super::free::{Free, StorageRules};
use super::room_index::RoomIndex;
use super::vm_scheduler::{REINDEX_AFTER, ScoreIndex, pick_node, pick_node_indexed};
use super::workload::{Vm, Volume};
use crate::simulate::fleet::Topology;
use crate::simulate::scenario::Platform;

/// Fleets from this many hosts get the VM score index.
pub const INDEX_FROM: usize = 256;

/// Where every VM and replica is, with the free table and the per-node indexes kept in step
/// with it: the fields are private, so only the methods here move a VM or a replica.
#[derive(Clone)]
pub struct Placement {
    topo: Topology,
    vms: Vec<Vm>,
    volumes: Vec<Volume>,
    vm_node: Vec<Option<usize>>,
    free: Free,
    /// Anti-affinity groups present on each node (a few per node: a plain list is fastest).
    groups: Vec<Vec<u32>>,
    stranded_vms: usize,
    stranded_replicas: usize,
    rules: StorageRules,
    /// Per node: the VMs and the volumes (with a replica) it holds.
    vms_on: Vec<Vec<usize>>,
    vols_on: Vec<Vec<usize>>,
    /// Per node: physical memory of its VMs (GiB) and its virt-launcher pods.
    mem_actual: Vec<f64>,
    pods: Vec<u32>,
    /// The nodes by their least-allocated score once everything is placed.
    scores: ScoreIndex,
}

/// Read access; every change goes through the methods that keep the indexes in step.
impl Placement {
    pub fn topo(&self) -> &Topology {
        &self.topo
    }

    pub fn vms(&self) -> &[Vm] {
        &self.vms
    }

    pub fn volumes(&self) -> &[Volume] {
        &self.volumes
    }

    /// Each VM's node; `None` when it is not placed.
    pub fn vm_node(&self) -> &[Option<usize>] {
        &self.vm_node
    }

    pub fn free(&self) -> &Free {
        &self.free
    }

    /// Anti-affinity groups present on each node.
    pub(crate) fn groups(&self) -> &[Vec<u32>] {
        &self.groups
    }

    pub fn stranded_vms(&self) -> usize {
        self.stranded_vms
    }

    pub fn stranded_replicas(&self) -> usize {
        self.stranded_replicas
    }

    pub fn rules(&self) -> &StorageRules {
        &self.rules
    }

    /// Per node: the VMs it holds.
    pub(crate) fn vms_on(&self) -> &[Vec<usize>] {
        &self.vms_on
    }

    /// Per node: the volumes with a replica on it.
    pub(crate) fn vols_on(&self) -> &[Vec<usize>] {
        &self.vols_on
    }

    /// The volumes with a replica on any of `nodes`, each once, in index order.
    pub(crate) fn volumes_on(&self, nodes: &[usize]) -> Vec<usize> {
        let mut v: Vec<usize> = nodes
            .iter()
            .flat_map(|&n| self.vols_on[n].iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Per node: physical memory of its VMs (GiB).
    pub(crate) fn mem_actual(&self) -> &[f64] {
        &self.mem_actual
    }

    /// Per node: its virt-launcher pods.
    pub(crate) fn pods(&self) -> &[u32] {
        &self.pods
    }

    /// The nodes by their least-allocated score once everything is placed.
    pub(crate) fn scores(&self) -> &ScoreIndex {
        &self.scores
    }
}

/// The few changes made from outside: each keeps the free table and the indexes in step.
impl Placement {
    /// The node takes no new VM: its free cpu and memory drop to zero (or stay below).
    pub(crate) fn cordon(&mut self, node: usize) {
        self.free.cpu[node] = self.free.cpu[node].min(0.0);
        self.free.mem[node] = self.free.mem[node].min(0.0);
    }

    /// A disk's (scheduled, used) bytes, for reconciling with what the fleet reports;
    /// [`Placement::refresh_room`] afterwards.
    pub(crate) fn disk_usage_mut(&mut self, node: usize, disk: usize) -> Option<&mut (f64, f64)> {
        self.free.disk.get_mut(node).and_then(|x| x.get_mut(disk))
    }

    /// Recompute a node's largest free disk after its disks changed.
    pub(crate) fn refresh_room(&mut self, node: usize) {
        self.free.node_room[node] = self.free.room(&self.topo, node);
    }

    /// The VM is no longer placed (it stops).
    pub(crate) fn unplace_vm(&mut self, v: usize) {
        self.vm_node[v] = None;
    }

    /// The VM moves to node `to`, taking its full request there (both nodes hold it while
    /// it migrates).
    /// A live migration's target holds the VM's full requests (and its anti-affinity
    /// group) while source and target both hold it.
    pub(crate) fn hold_for_migration(&mut self, t: usize, v: usize) {
        let (cpu, mem, g) = (self.vms[v].cpu_req, self.vms[v].mem_req, self.vms[v].group);
        self.free.cpu[t] -= cpu;
        self.free.mem[t] -= mem;
        if let Some(g) = g
            && !self.groups[t].contains(&g)
        {
            self.groups[t].push(g);
        }
    }

    /// A target gives back what [`Placement::hold_for_migration`] took; its group stays
    /// only if another VM on it holds the group.
    pub(crate) fn release_hold(&mut self, t: usize, v: usize) {
        self.free.cpu[t] += self.vms[v].cpu_req;
        self.free.mem[t] += self.vms[v].mem_req;
        if let Some(g) = self.vms[v].group
            && !self
                .vm_node
                .iter()
                .enumerate()
                .any(|(o, &h)| h == Some(t) && self.vms[o].group == Some(g))
        {
            self.groups[t].retain(|&x| x != g);
        }
    }

    /// A VM leaves `from` for `to` (`None`: it is off): the per-node lists follow, so a
    /// rolling upgrade never re-indexes the whole placement.
    pub(crate) fn relocate_vm(&mut self, v: usize, from: usize, to: Option<usize>) {
        self.vm_node[v] = to;
        self.vms_on[from].retain(|&x| x != v);
        self.mem_actual[from] -= self.vms[v].mem_actual;
        self.pods[from] = self.pods[from].saturating_sub(1);
        if let Some(t) = to {
            self.vms_on[t].push(v);
            self.mem_actual[t] += self.vms[v].mem_actual;
            self.pods[t] += 1;
        }
    }

    /// The node a VM left gives back its requests.
    pub(crate) fn release_requests(&mut self, d: usize, v: usize) {
        self.free.cpu[d] += self.vms[v].cpu_req;
        self.free.mem[d] += self.vms[v].mem_req;
    }

    /// A VM that stops (shut down for maintenance, or left off).
    pub(crate) fn stop_vm(&mut self, v: usize) {
        self.vms[v].running = false;
    }

    /// The anti-affinity groups present on `node`, as recomputed by the caller.
    pub(crate) fn set_groups(&mut self, node: usize, groups: Vec<u32>) {
        self.groups[node] = groups;
    }

    /// Volume `i`'s replica on node `from` moves to disk `k` of node `to` (an eviction):
    /// the disks' usage and the per-node indexes follow.
    pub(crate) fn move_replica(&mut self, i: usize, from: usize, to: usize, k: usize) {
        let mut vol = self.volumes[i].clone();
        if let Some(pos) = vol.replicas.iter().position(|r| r.0 == from) {
            let (rn, rd) = vol.replicas[pos];
            self.free.remove_replica(&self.topo, rn, rd, &vol);
            vol.replicas[pos] = (to, k);
            self.free.add_replica(&self.topo, to, k, &vol);
            self.vols_on[from].retain(|&x| x != i);
            self.vols_on[to].push(i);
        }
        self.volumes[i] = vol;
    }

    pub(crate) fn migrate_vm(&mut self, v: usize, to: usize) {
        let vm = &self.vms[v];
        self.free.cpu[to] -= vm.cpu_req;
        self.free.mem[to] -= vm.mem_req;
        if let Some(g) = vm.group
            && !self.groups[to].contains(&g)
        {
            self.groups[to].push(g);
        }
        self.vm_node[v] = Some(to);
    }

    /// Replace the volumes (their replicas moved) and rebuild the indexes.
    pub(crate) fn set_volumes(&mut self, volumes: Vec<Volume>) {
        self.volumes = volumes;
        self.finish();
    }

    /// Remove every replica on `node`, freeing its disks.
    pub(crate) fn drop_replicas_on(&mut self, node: usize) {
        for vi in std::mem::take(&mut self.vols_on[node]) {
            let vol = &mut self.volumes[vi];
            for &(n, d) in vol.replicas.iter().filter(|r| r.0 == node) {
                self.free.disk[n][d].0 -= vol.size;
                self.free.disk[n][d].1 -= vol.data;
            }
            vol.replicas.retain(|r| r.0 != node);
        }
        self.free.node_room[node] = self.topo.hosts[node]
            .disks
            .iter()
            .zip(&self.free.disk[node])
            .map(|(max, s)| max - s.1)
            .fold(0.0, f64::max);
    }

    /// Put a replica of `vol` on disk `disk` of `node`.
    pub(crate) fn add_replica(&mut self, node: usize, disk: usize, vol: &Volume) {
        self.free.add_replica(&self.topo, node, disk, vol);
    }

    /// Add a volume whose replicas were placed with [`Placement::add_replica`].
    pub(crate) fn push_volume(&mut self, vol: Volume) {
        let vi = self.volumes.len();
        for &(n, _) in &vol.replicas {
            self.vols_on[n].push(vi);
        }
        self.volumes.push(vol);
    }

    /// The same placement under other Longhorn rules for what comes next (another disk
    /// rule, another over-provisioning percentage); what is placed stays where it is.
    pub(crate) fn rules_mut(&mut self) -> &mut StorageRules {
        &mut self.rules
    }

    /// Without the score index: the plain scan it speeds up (tests compare the two).
    #[cfg(test)]
    pub(crate) fn drop_scores(&mut self) {
        self.scores = ScoreIndex::default();
    }
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
    pub(crate) fn build(
        topo: Topology,
        vms: Vec<Vm>,
        volumes: Vec<Volume>,
        p: &Platform,
    ) -> Placement {
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
    pub(crate) fn extend(
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

    /// Place replicas of volume `i` until it has `r`, as Longhorn would, on a fleet all up
    /// (`alive`) whose rooms `index` holds; those that find no disk are counted stranded.
    fn top_up(
        &mut self,
        vol: &mut Volume,
        i: usize,
        r: usize,
        alive: &[bool],
        index: &mut RoomIndex,
    ) {
        for k in vol.replicas.len()..r {
            let draw = (i as u64) << 8 | k as u64;
            match index.pick(vol, &self.free, &self.topo, &self.rules, alive, draw) {
                Some((n, d)) => {
                    self.free.add_replica(&self.topo, n, d, vol);
                    index.set(n, self.free.node_room[n]);
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
        let hosts = self.topo.hosts.len();
        let alive = vec![true; hosts];
        // Large fleets: each VM's node read off the score index (`pick_node`'s choice), the
        // nodes that took a VM since it was built scored directly, the index brought up to
        // date after `REINDEX_AFTER` of them.
        let indexed = hosts >= INDEX_FROM;
        if indexed && !(self.scores.is_built() && self.scores.indexes(&self.free, &[])) {
            self.scores = ScoreIndex::new(&self.topo, &self.free);
        }
        let mut changed: Vec<usize> = Vec::new();
        let mut is_changed = vec![false; if indexed { hosts } else { 0 }];
        for mut vm in vms {
            vm.group = vm.group.map(|g| g + group_off);
            vm.cluster += cluster_off;
            for v in &mut vm.volumes {
                *v += vol_off;
            }
            let node = match (vm.running, indexed) {
                (false, _) => None,
                (true, false) => pick_node(&vm, &self.free, &self.topo, &self.groups, &[], &alive),
                (true, true) => {
                    if changed.len() > REINDEX_AFTER {
                        self.scores = self.scores.updated(&self.topo, &self.free, &changed);
                        for c in changed.drain(..) {
                            is_changed[c] = false;
                        }
                    }
                    pick_node_indexed(
                        &vm,
                        &self.free,
                        &self.topo,
                        &self.groups,
                        &[],
                        &alive,
                        &self.scores,
                        &changed,
                        &is_changed,
                    )
                }
            };
            match node {
                Some(n) => {
                    self.take(n, vm.cpu_req, vm.mem_req, vm.group);
                    if indexed && !is_changed[n] {
                        is_changed[n] = true;
                        changed.push(n);
                    }
                }
                None if vm.running => self.stranded_vms += 1,
                None => {}
            }
            self.vm_node.push(node);
            self.vms.push(vm);
        }
        let r = p.replicas as usize;
        let mut index = RoomIndex::new(&self.topo, &self.free);
        for (i, vol) in volumes.iter_mut().enumerate() {
            vol.vm += vm_off;
            self.top_up(vol, vol_off + i, r, &alive, &mut index);
        }
        self.volumes.extend(volumes);
        self.index_from(vm_off, vol_off);
    }

    /// `finish` for the VMs and volumes from `vm_off` and `vol_off` on, the ones before
    /// indexed already: the per-node lists stay in index order and the sums in VM order, as
    /// `finish` makes them.
    fn index_from(&mut self, vm_off: usize, vol_off: usize) {
        let hosts = self.topo.hosts.len();
        if self.vms_on.len() != hosts || self.vols_on.len() != hosts {
            self.finish();
            return;
        }
        for (k, node) in self.vm_node.iter().enumerate().skip(vm_off) {
            if let Some(n) = *node {
                self.vms_on[n].push(k);
                self.mem_actual[n] += self.vms[k].mem_actual;
                self.pods[n] += 1;
            }
        }
        for (k, vol) in self.volumes.iter().enumerate().skip(vol_off) {
            for &(n, _) in &vol.replicas {
                self.vols_on[n].push(k);
            }
        }
        if hosts >= INDEX_FROM {
            // Only the nodes that took a new VM changed their CPU and memory (when nothing
            // else moved since the index was built: else it is built anew).
            let mut took: Vec<usize> = self.vm_node[vm_off..].iter().flatten().copied().collect();
            took.sort_unstable();
            took.dedup();
            self.scores = if self.scores.is_built() && self.scores.indexes(&self.free, &took) {
                self.scores.updated(&self.topo, &self.free, &took)
            } else {
                ScoreIndex::new(&self.topo, &self.free)
            };
        }
    }

    /// Every volume at `r` replicas: the newest beyond `r` dropped, missing ones placed as
    /// Longhorn would (a what-if on a running fleet).
    #[must_use]
    pub(crate) fn with_replicas(&self, r: usize) -> Placement {
        let mut pl = self.clone();
        let alive = vec![true; pl.topo.hosts.len()];
        let mut volumes = std::mem::take(&mut pl.volumes);
        let mut index = RoomIndex::new(&pl.topo, &pl.free);
        for (i, vol) in volumes.iter_mut().enumerate() {
            while vol.replicas.len() > r {
                if let Some((n, d)) = vol.replicas.pop() {
                    pl.free.remove_replica(&pl.topo, n, d, vol);
                    index.set(n, pl.free.node_room[n]);
                }
            }
            pl.top_up(vol, i, r, &alive, &mut index);
        }
        pl.volumes = volumes;
        pl.finish();
        pl
    }

    /// The per-node lists and indexes, once every VM and replica has its place (again,
    /// after VMs or replicas were moved by hand).
    pub(crate) fn finish(&mut self) {
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
    pub(crate) fn utilisation(&self) -> (f64, f64, f64) {
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
#[path = "placement_tests.rs"]
mod tests;
