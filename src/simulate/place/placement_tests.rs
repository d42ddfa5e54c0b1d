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

/// Where `pick_node` over every node puts each VM, placed in order on `topo` all up.
fn plain_vm_nodes(topo: &Topology, vms: &[Vm]) -> Vec<Option<usize>> {
    let n = topo.hosts.len();
    let mut free =
        Placement::empty(topo.clone(), Vec::new(), Vec::new(), &Platform::default()).free;
    let mut groups: Vec<Vec<u32>> = vec![Vec::new(); n];
    let alive = vec![true; n];
    vms.iter()
        .map(|vm| {
            let node = vm
                .running
                .then(|| pick_node(vm, &free, topo, &groups, &[], &alive))
                .flatten();
            if let Some(h) = node {
                free.cpu[h] -= vm.cpu_req;
                free.mem[h] -= vm.mem_req;
                if let Some(g) = vm.group
                    && !groups[h].contains(&g)
                {
                    groups[h].push(g);
                }
            }
            node
        })
        .collect()
}

/// On a fleet large enough for the score index, of mixed sizes, filled past full with
/// anti-affine, plain and stopped VMs, each VM goes where the plain scan puts it: placed
/// whole, and grown by a second batch onto the first.
#[test]
fn the_indexed_placement_is_the_plain_scans_choice_vm_for_vm() {
    let hosts: Vec<Host> = (0..300)
        .map(|i| Host {
            name: format!("h{i}"),
            rack: i % 7,
            cpu: [32.0, 64.0, 96.0][i % 3],
            mem_gib: [128.0, 256.0, 512.0, 384.0][i % 4],
            disks: vec![3.84e12; 2],
        })
        .collect();
    assert!(hosts.len() >= INDEX_FROM);
    let topo = Topology::build(
        hosts,
        (0..7).map(|r| format!("r{r}")).collect(),
        &vec![None; 7],
    );
    let pool = |name: &str, count, vcpu, memory_gib, anti_affinity, running| Pool {
        name: name.into(),
        count,
        vcpu,
        memory_gib,
        disks_gib: vec![40.0],
        anti_affinity,
        running,
    };
    let a = [
        pool("cp", 3, 4.0, 8.0, true, true),
        pool("w", 4, 8.0, 32.0, false, true),
        pool("off", 1, 16.0, 64.0, false, false),
    ];
    let b = [
        pool("big", 2, 24.0, 96.0, true, true),
        pool("s", 5, 2.0, 4.0, false, true),
    ];
    let p = Platform::default();
    let mut clusters: Vec<&[Pool]> = Vec::new();
    for i in 0..800 {
        clusters.push(if i % 3 == 0 { &b[..] } else { &a[..] });
    }
    let (vms, vols) = workload(&clusters, &p);
    let whole = Placement::build(topo.clone(), vms.clone(), vols, &p);
    assert!(whole.stranded_vms() > 0, "filled past full");
    assert_eq!(whole.vm_node, plain_vm_nodes(&topo, &vms));

    let (first, first_vols) = workload(&clusters[..100], &p);
    let mut grown = Placement::build(topo.clone(), first, first_vols, &p);
    let (rest, rest_vols) = workload(&clusters[100..], &p);
    let groups = clusters[..100]
        .iter()
        .map(|c| c.iter().filter(|p| p.anti_affinity).count() as u32)
        .sum();
    grown.add_renumbered(rest, rest_vols, 100, groups, &p);
    assert_eq!(grown.vm_node, whole.vm_node);
}
