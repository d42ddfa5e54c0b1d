//! Node conditions on a running fleet: Longhorn puts no new replica on a node that is not
//! Ready (or not Schedulable, or with scheduling off), whatever its disks say. A six-node
//! kubectl dump (zones a, b, c of two nodes each) with n5 NotReady: the replicas each node
//! and each zone failure strands are worked out here by exhaustive search over every way
//! to re-home the lost replicas, and the simulator must find the same.

use serde_json::{Value, json};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
/// Every disk's size, every volume's size and data.
const DISK: f64 = 1024.0 * GIB;
const VOL: f64 = 100.0 * GIB;
const NAMES: [&str; 6] = ["n1", "n2", "n3", "n4", "n5", "n6"];
/// Index of the NotReady node.
const NOT_READY: usize = 4;

/// The volumes, by the nodes holding their replicas.
fn volumes() -> Vec<Vec<usize>> {
    vec![
        vec![0, 1, 2],
        vec![0, 3],
        vec![3, 4, 5],
        vec![2, 5],
        vec![2, 3, 5],
        vec![0, 3, 5],
        vec![0, 4],
    ]
}

/// How many more replicas of VOL each node's disk has room for; its available space is
/// set so that exactly that many fit under the 25 % minimal-available rule.
const ROOM: [usize; 6] = [1, 2, 0, 0, 2, 0];

fn available(n: usize) -> f64 {
    // Room for k more: DISK - used - k * VOL > 25 % of DISK for k <= ROOM, not above.
    DISK * 0.25 + (ROOM[n] as f64 + 0.5) * VOL
}

fn dump(longhorn_says_only: bool) -> Value {
    let mut items = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let zone = ["a", "b", "c"][i / 2];
        let k8s_ready = if i == NOT_READY && !longhorn_says_only {
            "False"
        } else {
            "True"
        };
        items.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
            "spec": {},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "200"},
                       "conditions": [{"type": "Ready", "status": k8s_ready}]}}));
        let (ready, schedulable) = match (i == NOT_READY, longhorn_says_only) {
            (false, _) => ("True", "True"),
            (true, false) => ("False", "True"),
            // The Kubernetes node is Ready, but Longhorn's node is not Schedulable.
            (true, true) => ("True", "False"),
        };
        items.push(json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Node",
            "metadata": {"name": name, "namespace": "longhorn-system"},
            "spec": {"allowScheduling": true, "disks": {"d": {"path": "/var/lib/longhorn", "allowScheduling": true, "storageReserved": 0}}},
            "status": {"conditions": [{"type": "Ready", "status": ready}, {"type": "Schedulable", "status": schedulable}],
                       "diskStatus": {"d": {"diskUUID": format!("uuid-{name}"), "storageMaximum": DISK, "storageAvailable": available(i),
                                            "storageScheduled": 0,
                                            "conditions": [{"type": "Ready", "status": "True"}, {"type": "Schedulable", "status": "True"}]}}}}));
    }
    for (v, nodes) in volumes().iter().enumerate() {
        let vol = format!("pvc-{v}");
        items.push(
            json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume",
            "metadata": {"name": vol, "namespace": "longhorn-system"},
            "spec": {"size": VOL.to_string(), "numberOfReplicas": nodes.len()},
            "status": {"state": "attached", "robustness": "healthy", "actualSize": VOL}}),
        );
        for (k, &n) in nodes.iter().enumerate() {
            items.push(json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
                "metadata": {"name": format!("{vol}-r-{k}"), "namespace": "longhorn-system"},
                "spec": {"volumeName": vol, "nodeID": NAMES[n], "diskID": format!("uuid-{}", NAMES[n])},
                "status": {"currentState": "running"}}));
        }
    }
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// The most lost replicas that can be re-homed when `failed` go down: every assignment of
/// each lost replica to a node (or to none) is tried, where a node may take it if it is up,
/// may receive replicas (`ready_only`: not the NotReady one), has room left, and holds no
/// replica of the volume (the surviving ones and those re-homed before). Returns the
/// replicas lost and the fewest left without a node.
fn exhaustive(failed: &[usize], ready_only: bool) -> (usize, usize) {
    let vols = volumes();
    let mut lost: Vec<usize> = Vec::new();
    for (v, nodes) in vols.iter().enumerate() {
        for n in nodes {
            if failed.contains(n) {
                lost.push(v);
            }
        }
    }
    let may = |n: usize| !(failed.contains(&n) || (ready_only && n == NOT_READY));
    let mut room: Vec<usize> = (0..6).map(|n| if may(n) { ROOM[n] } else { 0 }).collect();
    let mut holders: Vec<Vec<usize>> = vols
        .iter()
        .map(|ns| ns.iter().copied().filter(|n| !failed.contains(n)).collect())
        .collect();
    fn search(
        i: usize,
        lost: &[usize],
        room: &mut [usize],
        holders: &mut [Vec<usize>],
        placed: usize,
        best: &mut usize,
    ) {
        if i == lost.len() {
            *best = (*best).max(placed);
            return;
        }
        let v = lost[i];
        for n in 0..6 {
            if room[n] > 0 && !holders[v].contains(&n) {
                room[n] -= 1;
                holders[v].push(n);
                search(i + 1, lost, room, holders, placed + 1, best);
                holders[v].pop();
                room[n] += 1;
            }
        }
        search(i + 1, lost, room, holders, placed, best);
    }
    let mut best = 0;
    search(0, &lost, &mut room, &mut holders, 0, &mut best);
    (lost.len(), lost.len() - best)
}

fn headroom_of(d: &Value) -> rackplan::simulate::failure::headroom::Headroom {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("dump.json");
    std::fs::write(&f, d.to_string()).unwrap();
    let state = rackplan::live::read(&f).unwrap();
    let p = rackplan::simulate::scenario::Platform::default();
    let fleet = rackplan::simulate::fleet::adopt(&state, &p).unwrap();
    assert!(
        fleet
            .notes
            .iter()
            .any(|n| n.contains("n5") && n.contains("no new replica")),
        "{:?}",
        fleet.notes
    );
    rackplan::simulate::failure::headroom::analyse(&fleet.placement)
}

fn stranded(h: &rackplan::simulate::failure::headroom::Headroom, name: &str) -> (usize, usize) {
    let s = h
        .scenarios
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no scenario {name}"));
    (s.displaced_replicas, s.stranded_replicas)
}

#[test]
fn a_not_ready_node_takes_no_replica_and_the_strandings_match_an_exhaustive_search() {
    for longhorn_says_only in [false, true] {
        let h = headroom_of(&dump(longhorn_says_only));
        let mut per_node = Vec::new();
        for (i, name) in NAMES.iter().enumerate() {
            let want = exhaustive(&[i], true);
            assert_eq!(stranded(&h, &format!("node {name}")), want, "node {name}");
            per_node.push(want.1);
        }
        let mut per_zone = Vec::new();
        for (z, zone) in ["a", "b", "c"].iter().enumerate() {
            let want = exhaustive(&[2 * z, 2 * z + 1], true);
            assert_eq!(stranded(&h, &format!("rack {zone}")), want, "zone {zone}");
            per_zone.push(want.1);
        }
        // The answers the issue gives for this fleet; letting n5 receive replicas would
        // strand fewer, which the search shows too.
        assert_eq!(per_node, [2, 1, 1, 1, 0, 1]);
        assert_eq!(per_zone, [5, 4, 3]);
        let careless: Vec<usize> = (0..6).map(|i| exhaustive(&[i], false).1).collect();
        assert_ne!(
            careless, per_node,
            "the NotReady node must make a difference"
        );
    }
}
