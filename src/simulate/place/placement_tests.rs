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
