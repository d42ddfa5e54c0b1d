//! The running fleet adopted as it is: capacity left is allocatable minus what runs, and
//! the simulator's node and rack failures re-place what a lost host ran. A generated dump
//! (four nodes in two zones, tenant clusters of three anti-affine VMs, one volume each with
//! two replicas) goes through the same reader as a real one.

use serde_json::{Value, json};

fn node(name: &str, zone: &str, cordoned: bool) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
        "spec": {"unschedulable": cordoned},
        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "200"},
                   "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn lh_node(name: &str) -> Value {
    json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Node", "metadata": {"name": name, "namespace": "longhorn-system"},
        "spec": {"allowScheduling": true, "disks": {"d": {"path": "/var/lib/longhorn", "allowScheduling": true, "storageReserved": 0}}},
        "status": {"diskStatus": {"d": {"diskUUID": format!("uuid-{name}"), "storageMaximum": 2e12, "storageAvailable": 2e12,
                                        "storageScheduled": 0, "conditions": [{"type": "Schedulable", "status": "True"}]}}}})
}

fn vmi(ns: &str, name: &str, node: &str, cluster: &str, mem: &str) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": name, "namespace": ns, "labels": {"guestcluster.harvesterhci.io/name": cluster}},
        "spec": {"domain": {"cpu": {"cores": 4}, "resources": {"requests": {"cpu": "250m", "memory": mem}, "limits": {"cpu": "4", "memory": mem}}},
                 "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"labelSelector": {"matchLabels": {"harvesterhci.io/machineSetName": format!("{ns}-{cluster}-cp")}}, "topologyKey": "kubernetes.io/hostname"}]}},
                 "volumes": [{"name": "disk-0", "persistentVolumeClaim": {"claimName": format!("{name}-disk")}}]},
        "status": {"phase": "Running", "nodeName": node}})
}

fn volume(name: &str, pvc: &str) -> Value {
    json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume", "metadata": {"name": name, "namespace": "longhorn-system"},
        "spec": {"size": "42949672960", "numberOfReplicas": 2},
        "status": {"state": "attached", "robustness": "healthy", "kubernetesStatus": {"pvcName": pvc}}})
}

fn replica(vol: &str, node: &str, i: usize) -> Value {
    json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Replica", "metadata": {"name": format!("{vol}-r-{i}"), "namespace": "longhorn-system"},
        "spec": {"volumeName": vol, "nodeID": node, "diskID": format!("uuid-{node}")},
        "status": {"currentState": "running"}})
}

/// Four nodes (n1, n2 in zone a; n3, n4 in zone b), `clusters` tenant clusters of three
/// VMs of `mem` each, spread round-robin, every VM with a 40 GiB volume on two nodes.
fn dump(clusters: usize, mem: &str, cordon_n4: bool) -> Value {
    let names = ["n1", "n2", "n3", "n4"];
    let mut items: Vec<Value> = names
        .iter()
        .map(|n| {
            node(
                n,
                if *n < "n3" { "a" } else { "b" },
                cordon_n4 && *n == "n4",
            )
        })
        .collect();
    items.extend(names.iter().map(|n| lh_node(n)));
    let mut k = 0;
    for c in 0..clusters {
        for v in 0..3 {
            let host = names[(c + v) % 4];
            let name = format!("t{c}-cp-{v}");
            items.push(vmi("tenants", &name, host, &format!("t{c}"), mem));
            let vol = format!("pvc-{c}-{v}");
            items.push(volume(&vol, &format!("{name}-disk")));
            items.push(replica(&vol, host, 0));
            items.push(replica(&vol, names[(c + v + 1) % 4], 1));
            k += 1;
        }
    }
    assert_eq!(k, clusters * 3);
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

fn adopt(d: &Value) -> rackplan::simulate::fleet::LiveFleet {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("dump.json");
    std::fs::write(&f, d.to_string()).unwrap();
    let state = rackplan::live::read(&f).unwrap();
    assert!(state.findings.is_empty(), "{:?}", state.findings);
    let p = rackplan::simulate::scenario::Platform::default();
    rackplan::simulate::fleet::adopt(&state, &p).unwrap()
}

#[test]
fn the_running_fleet_is_adopted_as_it_is() {
    let f = adopt(&dump(2, "8Gi", false));
    let pl = &f.placement;
    assert_eq!(pl.topo().hosts.len(), 4);
    assert_eq!(pl.topo().racks, ["a", "b"]);
    assert_eq!(pl.vms().len(), 6);
    // Where they run is where the dump says; nothing was re-placed.
    for (i, name) in f.vm_names.iter().enumerate() {
        let host = &pl.topo().hosts[pl.vm_node()[i].unwrap()].name;
        let c: usize = name["tenants/t".len()..name.find("-cp").unwrap()]
            .parse()
            .unwrap();
        let v: usize = name[name.len() - 1..].parse().unwrap();
        assert_eq!(host, ["n1", "n2", "n3", "n4"][(c + v) % 4], "{name}");
    }
    // Capacity left = allocatable - requests (+ the platform's per-VM overhead).
    let p = rackplan::simulate::scenario::Platform::default();
    for (n, h) in pl.topo().hosts.iter().enumerate() {
        let on: Vec<usize> = (0..pl.vms().len())
            .filter(|&v| pl.vm_node()[v] == Some(n))
            .collect();
        let want = 64.0 - on.len() as f64 * (8.0 + p.vm_memory_overhead_gib);
        assert!(
            (pl.free().mem[n] - want).abs() < 1e-9,
            "{}: {} vs {want}",
            h.name,
            pl.free().mem[n]
        );
        assert!((pl.free().cpu[n] - (16.0 - on.len() as f64 * 0.25)).abs() < 1e-9);
    }
    let replicas: usize = pl.volumes().iter().map(|v| v.replicas.len()).sum();
    assert_eq!(replicas, 12);
    // The three VMs of a cluster share one anti-affinity group.
    assert_eq!(pl.vms()[0].group, pl.vms()[1].group);
    assert_ne!(pl.vms()[0].group, pl.vms()[3].group);
    let h = rackplan::simulate::failure::headroom::analyse(pl);
    // Any one node: its VMs restart elsewhere.
    for s in h.scenarios.iter().filter(|s| s.name.starts_with("node ")) {
        assert_eq!(s.stranded, 0, "{s:?}");
    }
    // A zone: t0 ran on n1, n2, n3 and t1 on n2, n3, n4. Losing zone a (n1, n2) leaves n3
    // and n4; t0's two lost VMs have only n4 (n3 holds t0), t1's one lost VM has none (n3
    // and n4 hold t1): 2 VMs cannot restart under the control plane's anti-affinity.
    let zone_a = h.scenarios.iter().find(|s| s.name == "rack a").unwrap();
    assert_eq!((zone_a.displaced, zone_a.stranded), (3, 2), "{zone_a:?}");
    assert!(!h.verdict.passes());
}

#[test]
fn a_full_fleet_fails_where_the_simulator_says_and_a_cordoned_node_takes_nothing() {
    // 4 clusters x 3 VMs of 20 GiB on 4 x 64 GiB: 3 VMs a node, no room for a lost node's.
    let f = adopt(&dump(4, "20Gi", false));
    let h = rackplan::simulate::failure::headroom::analyse(&f.placement);
    assert!(!h.verdict.passes());
    let node_fail = h.scenarios.iter().find(|s| s.name.contains("n1")).unwrap();
    assert!(node_fail.stranded > 0, "{node_fail:?}");
    // Cordon n4: it keeps its VM but takes none. Losing n1 (t0's VM) then strands it: n2
    // and n3 hold t0 and only n4, cordoned, did not (uncordoned, every node loss passed,
    // above). Losing n3 (t0's and t1's VMs): t1's goes to n1, t0's has nowhere.
    let f = adopt(&dump(2, "8Gi", true));
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("n4") && n.contains("takes no VM")),
        "{:?}",
        f.notes
    );
    assert!(f.placement.free().mem[3] <= 0.0);
    let h = rackplan::simulate::failure::headroom::analyse(&f.placement);
    let by = |n: &str| h.scenarios.iter().find(|s| s.name == n).unwrap().stranded;
    assert_eq!(by("node n1"), 1);
    assert_eq!(by("node n3"), 1);
}
