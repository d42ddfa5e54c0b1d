//! The rebuild after losing a node, worked out by hand: where Longhorn's scheduler puts
//! each replacement replica (at creation, by zone and node anti-affinity and its disk
//! rule) and how long each receiving node's queue takes under the per-node limit. The
//! same fleet with racks as zones and with no zones, and under both disk rules.

use rackplan::simulate::failure::headroom;
use rackplan::simulate::failure::rebuild::{rebuild_input, simulate};
use rackplan::simulate::fleet::{Host, Topology};
use rackplan::simulate::place::{DiskChoice, Placement, Vm, Volume};
use rackplan::simulate::scenario::Scenario;

const TB: f64 = 1e12;
const GB: f64 = 1e9;

/// Six nodes in three racks (a0 a1 | b0 b1 | c0 c1), one 10 TB disk each. Four volumes
/// of 360 GB (600 GB nominal) have a replica on a0 and their other two in racks b and c:
/// V0 on b0 c0, V1 on b1 c1, V2 on b0 c1, V3 on b1 c0. One-replica filler volumes make the
/// available space before the failure, most first: c1 (10 - 0.72 - 0.5 TB), b1 (- 1),
/// c0 (- 1.5), b0 (- 2), a1 (- 3).
fn fleet(zones: bool) -> (Scenario, Placement) {
    fleet_on(zones, "v1.7")
}

/// `fleet` with the Harvester version named (which picks the Longhorn disk rule).
fn fleet_on(zones: bool, harvester: &str) -> (Scenario, Placement) {
    let names = ["a0", "a1", "b0", "b1", "c0", "c1"];
    let hosts = names
        .iter()
        .enumerate()
        .map(|(i, n)| Host {
            name: (*n).into(),
            rack: i / 2,
            cpu: 64.0,
            mem_gib: 256.0,
            disks: vec![10.0 * TB],
        })
        .collect();
    let mut topo = Topology::build(
        hosts,
        vec!["ra".into(), "rb".into(), "rc".into()],
        &[None, None, None],
    );
    if !zones {
        topo.set_zones(&vec![String::new(); 6]);
    }
    let vol = |replicas: &[usize], data: f64| Volume {
        vm: 0,
        size: data / 0.6,
        data,
        replicas: replicas.iter().map(|&n| (n, 0)).collect(),
        attached: true,
        selector: 0,
    };
    let (a0, a1, b0, b1, c0, c1) = (0, 1, 2, 3, 4, 5);
    let volumes = vec![
        vol(&[a0, b0, c0], 360.0 * GB),
        vol(&[a0, b1, c1], 360.0 * GB),
        vol(&[a0, b0, c1], 360.0 * GB),
        vol(&[a0, b1, c0], 360.0 * GB),
        vol(&[a1], 3.0 * TB),
        vol(&[b0], 2.0 * TB),
        vol(&[c0], 1.5 * TB),
        vol(&[b1], 1.0 * TB),
        vol(&[c1], 0.5 * TB),
    ];
    let vms = holder_of(volumes.len());
    let s: Scenario = serde_saphyr::from_str(
        &format!("name: by-hand\nplatform: {{harvester_version: {harvester}, rebuild_limit: 2, stream_mbps: 100, detection_s: 45, replenishment_wait_s: 600}}\n"),
    )
    .unwrap();
    let pl = Placement::adopt(topo, vms, volumes, vec![None], &s.platform);
    (s, pl)
}

/// (node, replicas it receives, seconds until its last one is done), by node name.
fn queues(s: &Scenario, pl: &Placement) -> (Vec<(String, usize, f64)>, f64) {
    let (input, detached) = rebuild_input(s, pl, 0, 2);
    assert_eq!(detached, 0);
    assert_eq!(input.jobs.len(), 4, "the four volumes with a replica on a0");
    let r = simulate(&input);
    let mut q: Vec<(String, usize, f64)> = r
        .receivers
        .iter()
        .map(|x| (x.node.clone(), x.replicas, x.done_s.expect("completes")))
        .collect();
    q.sort_by(|a, b| a.0.cmp(&b.0));
    (q, r.hours_to_full_redundancy.expect("completes"))
}

/// One stopped VM holding every volume: the rebuild sees the volumes, the placement no
/// VM load.
pub(crate) fn holder_of(volumes: usize) -> Vec<Vm> {
    vec![Vm {
        cluster: 0,
        pool: String::new(),
        group: None,
        vcpu: 0.0,
        mem_gib: 0.0,
        cpu_req: 0.0,
        mem_req: 0.0,
        mem_actual: 0.0,
        volumes: (0..volumes).collect(),
        running: false,
    }]
}

#[track_caller]
fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1.0, "got {got}, want {want}");
}

#[test]
fn racks_as_zones_send_every_replacement_to_the_lost_nodes_rack() {
    let (s, pl) = fleet(true);
    assert_eq!(
        pl.rules().choice,
        DiskChoice::MostAvailable,
        "Harvester v1.7"
    );
    // Zones rb and rc hold the other two replicas of every volume; a0 is down, so its
    // replica marks no zone: zone ra is the only zone without a replica, and a1 its only
    // node. All four replacements are created on a1, whatever its space.
    let (q, hours) = queues(&s, &pl);
    // a1 rebuilds two at a time: 360 GB / 100 MB/s = 3600 s per round, two rounds.
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!((q[0].0.as_str(), q[0].1), ("a1", 4));
    close(q[0].2, 7200.0);
    // Detection 45 s and the 600 s wait come first.
    close(hours * 3600.0, 45.0 + 600.0 + 7200.0);
    // The headroom analysis re-homes by the same burst: the same four on a1, none stranded.
    let h = headroom::scenario(&pl, "node a0", headroom::Kind::Node, &[0]);
    assert_eq!((h.displaced_replicas, h.stranded_replicas), (4, 0));
}

#[test]
fn with_no_zones_the_most_available_disk_of_each_volume_takes_it() {
    let (s, pl) = fleet(false);
    // One zone, holding replicas of every volume: no node is in an unused zone, so any node
    // without a replica may take it, and Longhorn up to v1.10 takes the one with the most
    // available space (c1 > b1 > c0 > b0 > a1):
    //   V0 (b0 c0): a1 b1 c1 -> c1;  V1 (b1 c1): a1 b0 c0 -> c0;
    //   V2 (b0 c1): a1 b1 c0 -> b1;  V3 (b1 c0): a1 b0 c1 -> c1.
    let (q, hours) = queues(&s, &pl);
    let want = [("b1", 1), ("c0", 1), ("c1", 2)];
    assert_eq!(q.len(), 3, "{q:?}");
    for ((node, n, done), (wn, wc)) in q.iter().zip(want) {
        assert_eq!((node.as_str(), *n), (wn, wc));
        // Two slots on c1: every replica streams at once, 3600 s.
        close(*done, 3600.0);
    }
    close(hours * 3600.0, 45.0 + 600.0 + 3600.0);
}

#[test]
fn from_longhorn_v1_11_the_balance_score_spreads_by_usable_space() {
    // Harvester v1.8 bundles Longhorn v1.11.
    let (s, pl) = fleet_on(false, "v1.8");
    assert_eq!(pl.rules().choice, DiskChoice::BalanceScore);
    // Usable = available - scheduled (nominal sizes, 600 GB per test volume), per node:
    //   a1 10 - 3 - 5 = 2 TB; b0 10 - 2.72 - (3.33 + 1.2) = 2.75; b1 10 - 1.72 - (1.67 +
    //   1.2) = 5.41; c0 10 - 2.22 - (2.5 + 1.2) = 4.08; c1 10 - 1.22 - (0.83 + 1.2) = 6.75.
    // Each replica goes to the candidate with the most usable space; its 600 GB nominal
    // then counts as scheduled there:
    //   V0: a1 b1 c1 -> c1 (6.15 left);  V1: a1 b0 c0 -> c0 (3.48);
    //   V2: a1 b1 c0 -> b1 (4.81);       V3: a1 b0 c1 -> c1 (5.55).
    let (q, _) = queues(&s, &pl);
    let got: Vec<(&str, usize)> = q.iter().map(|x| (x.0.as_str(), x.1)).collect();
    assert_eq!(got, [("b1", 1), ("c0", 1), ("c1", 2)]);
}

/// `fleet.racks_are_zones: false` reaches the placement: one zone, said in the assumptions.
#[test]
fn a_scenario_can_say_its_racks_are_not_zones() {
    use rackplan::simulate::{ScenarioInput, Study, StudyInput};
    let text = |zones: bool| {
        format!(
            "name: z\nfleet:\n  racks_are_zones: {zones}\n  classes:\n    - {{name: c, count: 6, threads: 64, memory_gib: 256, disks: 1, disk_tb: 4, racks: [r1, r2, r3]}}\n\
             shapes:\n  s: {{pools: [{{name: w, count: 6, vcpu: 2, memory_gib: 4, disks_gib: [100]}}]}}\nclusters: [{{shape: s, count: 1}}]\nanalysis: {{risk_trials: 100}}\n"
        )
    };
    for zones in [true, false] {
        let t = text(zones);
        let l = Study::open(&StudyInput {
            scenario: ScenarioInput::Text {
                name: std::path::Path::new("z.yaml"),
                text: &t,
            },
            site: None,
            dump: None,
            rebuild_what_if: None,
        })
        .unwrap();
        let topo = l.topology();
        assert_eq!(topo.zones.len(), if zones { 3 } else { 1 });
        let r = rackplan::simulate::questions::review(&l);
        let z = r
            .assumptions
            .iter()
            .find(|a| a.input == "Longhorn zones")
            .unwrap();
        assert_eq!(z.source, "scenario", "the scenario states the key");
        assert_eq!(z.value.starts_with("one zone"), !zones, "{}", z.value);
    }
}

/// A site names the Harvester it installs: the analyses use that version (and the Longhorn
/// it bundles), and say so, even when the scenario names another.
#[test]
fn the_sites_harvester_version_is_the_one_modelled() {
    use rackplan::simulate::{ScenarioInput, Study, StudyInput};
    let repo = crate::support::repo();
    let l = Study::open(&StudyInput {
        scenario: ScenarioInput::File(&repo.join("simulations/reference-factory.yaml")),
        site: Some(&repo.join("inventory/example")),
        dump: None,
        rebuild_what_if: None,
    })
    .unwrap();
    assert_eq!(l.scenario.platform.harvester_version, "v1.6.1");
    let r = rackplan::simulate::questions::review(&l);
    assert!(
        r.vm_restart.derivation.contains("Harvester v1.6.1"),
        "{}",
        r.vm_restart.derivation
    );
    assert!(!r.vm_restart.derivation.contains("v1.7"));
    let h = r
        .assumptions
        .iter()
        .find(|a| a.input == "Harvester version")
        .unwrap();
    assert_eq!((h.value.as_str(), h.source), ("v1.6.1", "site"));
    assert!(h.note.as_deref().unwrap_or("").contains("v1.7"), "{h:?}");
    assert!(
        r.rebuild.longhorn.contains("v1.9"),
        "{}",
        r.rebuild.longhorn
    );
}

/// The pile-up of Longhorn up to v1.10 (longhorn/longhorn#12587), on a fleet small enough to
/// work out: five nodes in one zone, f n0 n1 n2 n3, one 10 TB disk each. Twelve volumes of
/// 100 GB data (167 GB nominal) have their replicas on f, n2 and n3; fillers leave n0 with
/// 8.4 TB available and n1 with 8.0 TB. When f fails, every replacement may go to n0 or n1
/// (node anti-affinity is hard), and each rule's answer is computed here from its source:
/// - `getDiskWithMostUsableStorage` (`storageAvailable - storageReserved`, which the new,
///   empty replicas do not lower): every one to n0, whose two rebuild slots then take six
///   rounds of 1,000 s (100 GB at 100 MB/s);
/// - `getDiskWithMostBalanceScore`: each to the node that leaves `(max - min) / mean` of
///   the candidates' usable space (`available - reserved - scheduled`, the new replica's
///   nominal size counted at once) smallest: the burst spreads.
fn pile_up_fleet(choice: &str) -> (Scenario, Placement) {
    let names = ["f", "n0", "n1", "n2", "n3"];
    let hosts = names
        .iter()
        .enumerate()
        .map(|(i, n)| Host {
            name: (*n).into(),
            rack: i,
            cpu: 64.0,
            mem_gib: 256.0,
            disks: vec![10.0 * TB],
        })
        .collect();
    let racks: Vec<String> = names.iter().map(|n| format!("r{n}")).collect();
    let mut topo = Topology::build(hosts, racks, &[None, None, None, None, None]);
    topo.set_zones(&vec![String::new(); 5]);
    let vol = |replicas: &[usize], data: f64| Volume {
        vm: 0,
        size: data / 0.6,
        data,
        replicas: replicas.iter().map(|&n| (n, 0)).collect(),
        attached: true,
        selector: 0,
    };
    let mut volumes: Vec<Volume> = (0..12).map(|_| vol(&[0, 3, 4], 100.0 * GB)).collect();
    volumes.push(vol(&[1], 1.6 * TB));
    volumes.push(vol(&[2], 2.0 * TB));
    let vms = holder_of(volumes.len());
    let s: Scenario = serde_saphyr::from_str(&format!(
        "name: pile-up\nplatform: {{harvester_version: v1.7, replica_disk_choice: {choice}, rebuild_limit: 2, stream_mbps: 100, detection_s: 45, replenishment_wait_s: 600}}\n"
    ))
    .unwrap();
    let pl = Placement::adopt(topo, vms, volumes, vec![None], &s.platform);
    (s, pl)
}

fn receivers(s: &Scenario, pl: &Placement) -> Vec<(String, usize, f64)> {
    let (input, _) = rebuild_input(s, pl, 0, 2);
    assert_eq!(input.jobs.len(), 12);
    let r = simulate(&input);
    let mut q: Vec<(String, usize, f64)> = r
        .receivers
        .iter()
        .map(|x| (x.node.clone(), x.replicas, x.done_s.expect("completes")))
        .collect();
    q.sort_by(|a, b| a.0.cmp(&b.0));
    q
}

#[test]
fn most_available_piles_the_burst_on_one_node_and_the_balance_score_spreads_it() {
    // Harvester v1.7 bundles Longhorn v1.10; the scenario key picks either rule.
    let (s, pl) = pile_up_fleet("most-available");
    assert_eq!(pl.rules().choice, DiskChoice::MostAvailable);
    let q = receivers(&s, &pl);
    assert_eq!(q.len(), 1, "all on one node: {q:?}");
    assert_eq!((q[0].0.as_str(), q[0].1), ("n0", 12));
    close(q[0].2, 6.0 * 1000.0);

    // The balance score, worked from its definition.
    let size = 100.0 * GB / 0.6;
    let mut usable = [
        (10.0 * TB - 1.6 * TB) - 1.6 * TB / 0.6,
        (10.0 * TB - 2.0 * TB) - 2.0 * TB / 0.6,
    ];
    let mut count = [0usize; 2];
    for _ in 0..12 {
        let score = |u: [f64; 2]| {
            let (max, min) = (u[0].max(u[1]), u[0].min(u[1]));
            (max - min) / f64::midpoint(u[0], u[1])
        };
        let take = |c: usize| {
            let mut u = usable;
            u[c] -= size;
            score(u)
        };
        let c = usize::from(take(1) < take(0));
        usable[c] -= size;
        count[c] += 1;
    }
    // Seven to n0 until its usable space falls below n1's, then they alternate.
    assert_eq!(count, [9, 3], "the rule's own answer");
    let (s, pl) = pile_up_fleet("balance-score");
    assert_eq!(pl.rules().choice, DiskChoice::BalanceScore);
    let q = receivers(&s, &pl);
    let got: Vec<(&str, usize)> = q.iter().map(|x| (x.0.as_str(), x.1)).collect();
    assert_eq!(got, [("n0", count[0]), ("n1", count[1])]);
    // Two slots each: five rounds on n0, two on n1; done in 5,000 s, not 6,000 s.
    close(q[0].2, 5.0 * 1000.0);
    close(q[1].2, 2.0 * 1000.0);
}
