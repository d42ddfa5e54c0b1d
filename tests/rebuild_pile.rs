//! The burst of new replicas as Longhorn v1.10 creates it after a node fails, worked out by
//! hand from longhorn-manager v1.10.2's own rule and compared with the model:
//! `getDiskWithMostUsableStorage` takes the candidate disk with the most `StorageAvailable -
//! StorageReserved`, which the new, still empty replicas do not lower, so every disk keeps
//! its free space from before the failure for the whole burst; `IsSchedulableToDisk`'s
//! actual-space rule reads that same free space, and only its over-provisioning rule
//! (`StorageScheduled + size <= StorageMaximum x over-provisioning`) counts the burst. So
//! the pile stays on disks, not nodes: two disks of one node can take it all; only
//! over-provisioning moves it on; nothing stops it overfilling a disk.

use rackplan::simulate::failure::rebuild::{rebuild_input, simulate};
use rackplan::simulate::fleet::{Host, Topology};
use rackplan::simulate::place::{Placement, Volume};
use rackplan::simulate::scenario::Scenario;
use serde_json::Value;

use crate::rebuild_longhorn::holder_of;

const TB: f64 = 1e12;
const GB: f64 = 1e9;
/// Data of each volume the failed node held, and its nominal size (data fill 0.6).
const DATA: f64 = 100.0 * GB;
const SIZE: f64 = DATA / 0.6;
/// Volumes with a replica on the failed node.
const LOST: usize = 12;

/// A candidate disk: its node, its size, and the data on it before the failure (held by
/// one filler volume of nominal size data / 0.6).
#[derive(Clone, Copy)]
struct Disk {
    node: &'static str,
    max: f64,
    used: f64,
}

/// A candidate disk of `max_tb` TB holding `used_tb` TB.
fn disk(node: &'static str, max_tb: f64, used_tb: f64) -> Disk {
    Disk {
        node,
        max: max_tb * TB,
        used: used_tb * TB,
    }
}

/// Five kinds of node in one zone: `f` fails; `s0` and `s1` hold the other two replicas of
/// the `LOST` volumes (so hard node anti-affinity leaves them out); the candidates `n0`,
/// `n1`, ... carry `disks`. Limit 2, 100 MB/s a stream: a node rebuilds 100 GB in rounds of
/// two per 1,000 s.
fn fleet(disks: &[Disk], platform: &str) -> (Scenario, Placement) {
    let mut names: Vec<&str> = vec!["f", "s0", "s1"];
    for d in disks {
        if !names.contains(&d.node) {
            names.push(d.node);
        }
    }
    let hosts: Vec<Host> = names
        .iter()
        .enumerate()
        .map(|(i, &n)| Host {
            name: n.into(),
            rack: i,
            cpu: 64.0,
            mem_gib: 256.0,
            disks: if i < 3 {
                vec![10.0 * TB]
            } else {
                disks
                    .iter()
                    .filter(|d| d.node == n)
                    .map(|d| d.max)
                    .collect()
            },
        })
        .collect();
    let racks: Vec<String> = names.iter().map(|n| format!("r{n}")).collect();
    let power = vec![None; names.len()];
    let mut topo = Topology::build(hosts, racks, &power);
    topo.set_zones(&vec![String::new(); names.len()]);
    let vol = |replicas: Vec<(usize, usize)>, data: f64| Volume {
        vm: 0,
        size: data / 0.6,
        data,
        replicas,
        attached: true,
        selector: 0,
    };
    let mut volumes: Vec<Volume> = (0..LOST)
        .map(|_| vol(vec![(0, 0), (1, 0), (2, 0)], DATA))
        .collect();
    for (i, d) in disks.iter().enumerate() {
        let n = names.iter().position(|x| *x == d.node).unwrap();
        let k = disks[..i].iter().filter(|e| e.node == d.node).count();
        volumes.push(vol(vec![(n, k)], d.used));
    }
    let vms = holder_of(volumes.len());
    let s: Scenario = serde_saphyr::from_str(&format!(
        "name: pile\nplatform: {{harvester_version: v1.7, rebuild_limit: 2, stream_mbps: 100, detection_s: 45, replenishment_wait_s: 600, {platform}}}\n"
    ))
    .unwrap();
    let pl = Placement::adopt(topo, vms, volumes, vec![None], &s.platform);
    (s, pl)
}

/// The rule by hand: each of the `LOST` replicas, in creation order, to the candidate with
/// the most free space before the failure (never lowered in the burst) among those whose
/// scheduled sizes stay within max x `op` (the filler's size, then the burst's sizes) and
/// whose free space less the replica's data stays above max x `min`. Returns, per disk
/// (by its index in `disks`), the replicas it takes; `None` for a replica none takes.
fn by_rule(disks: &[Disk], op: f64, min: f64) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..disks.len()).collect();
    order.sort_by(|&a, &b| {
        let free = |d: &Disk| d.max - d.used;
        free(&disks[b]).total_cmp(&free(&disks[a]))
    });
    let mut taken = vec![0usize; disks.len()];
    let mut none = 0;
    for _ in 0..LOST {
        let fits = |i: usize| {
            let d = &disks[i];
            let sched = d.used / 0.6 + taken[i] as f64 * SIZE;
            sched + SIZE <= d.max * op && d.max - d.used - DATA > d.max * min
        };
        match order.iter().copied().find(|&i| fits(i)) {
            Some(i) => taken[i] += 1,
            None => none += 1,
        }
    }
    (taken, none)
}

/// What the model did: replicas per "node/disk N", the hours, and the receiving disks as
/// JSON (data, free space, overfill).
fn modelled(s: &Scenario, pl: &Placement) -> (Vec<(String, usize)>, Option<f64>, Vec<Value>) {
    let (input, _) = rebuild_input(s, pl, 0, 2);
    assert_eq!(input.jobs.len(), LOST);
    let r = simulate(&input);
    let disks: Vec<Value> = r
        .disks
        .iter()
        .map(|d| serde_json::to_value(d).unwrap())
        .collect();
    let mut got: Vec<(String, usize)> = r
        .disks
        .iter()
        .map(|d| (format!("{}/{}", d.node, d.disk), d.replicas))
        .collect();
    got.sort();
    (got, r.hours_to_full_redundancy, disks)
}

/// `by_rule`'s answer named as the model names disks ("n0/disk-2"), receiving ones only.
fn named(disks: &[Disk], taken: &[usize]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = disks
        .iter()
        .enumerate()
        .filter(|&(i, _)| taken[i] > 0)
        .map(|(i, d)| {
            let k = disks[..i].iter().filter(|e| e.node == d.node).count();
            (format!("{}/disk-{}", d.node, k + 1), taken[i])
        })
        .collect();
    out.sort();
    out
}

#[track_caller]
fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1.0, "got {got}, want {want}");
}

/// Before the rebuilds: detection 45 s and the 600 s wait.
const BEFORE_S: f64 = 645.0;

#[test]
fn the_two_emptiest_disks_on_one_node_take_the_whole_burst_and_the_time_doubles() {
    // Over-provisioning 27.5 % of a 10 TB disk: 2.75 TB may be scheduled. The emptiest disk
    // (1.0 TB used, 1.67 TB scheduled) takes 6 replicas of 167 GB, the next emptiest 6
    // more (1.02 TB used, 1.70 TB scheduled); n1 (1.5 TB used) only if they refuse.
    let op = 0.275;
    let platform = "overcommit_storage_pct: 27.5";
    let together = [
        disk("n0", 10.0, 1.0),
        disk("n0", 10.0, 1.02),
        disk("n1", 10.0, 1.5),
    ];
    let (taken, none) = by_rule(&together, op, 0.25);
    assert_eq!(
        (taken.as_slice(), none),
        (&[6, 6, 0][..], 0),
        "the rule's own answer"
    );
    let (s, pl) = fleet(&together, platform);
    let (got, hours, _) = modelled(&s, &pl);
    assert_eq!(got, named(&together, &taken));
    // One node, two slots: six rounds of 1,000 s.
    close(hours.expect("completes") * 3600.0, BEFORE_S + 6000.0);

    // The same, but the second emptiest disk is n1's: three rounds on each node.
    let apart = [
        disk("n0", 10.0, 1.0),
        disk("n0", 10.0, 1.5),
        disk("n1", 10.0, 1.02),
    ];
    let (taken, _) = by_rule(&apart, op, 0.25);
    assert_eq!(taken, [6, 0, 6], "the rule's own answer");
    let (s, pl) = fleet(&apart, platform);
    let (got, hours_apart, _) = modelled(&s, &pl);
    assert_eq!(got, named(&apart, &taken));
    close(hours_apart.expect("completes") * 3600.0, BEFORE_S + 3000.0);
    let transfer = |h: Option<f64>| h.unwrap() * 3600.0 - BEFORE_S;
    close(transfer(hours) / transfer(hours_apart), 2.0);
}

#[test]
fn only_over_provisioning_moves_the_pile_on_to_the_next_disks() {
    // One disk per node, free space before the failure 9.0 > 8.9 > 8.8 > 8.7 TB.
    let disks = [
        disk("n0", 10.0, 1.0),
        disk("n1", 10.0, 1.1),
        disk("n2", 10.0, 1.2),
        disk("n3", 10.0, 1.3),
    ];
    // Harvester's 200 %: all 12 on n0, even with storage-minimal-available-percentage at
    // 85 %, which 1.2 TB of new data would cross on n0 (9.0 - 1.2 < 8.5): during the burst
    // that rule reads the free space from before it, and cannot stop the pile.
    for platform in [
        "overcommit_storage_pct: 200",
        "overcommit_storage_pct: 200, minimal_available_pct: 85",
    ] {
        let min = if platform.contains("85") { 0.85 } else { 0.25 };
        let (taken, none) = by_rule(&disks, 2.0, min);
        assert_eq!((taken.as_slice(), none), (&[12, 0, 0, 0][..], 0));
        let (s, pl) = fleet(&disks, platform);
        let (got, hours, _) = modelled(&s, &pl);
        assert_eq!(got, named(&disks, &taken), "{platform}");
        close(hours.unwrap() * 3600.0, BEFORE_S + 6000.0);
    }
    // 22 % (2.2 TB schedulable per disk): n0 (1.67 TB scheduled) takes 3, n1 (1.83) 2,
    // n2 (2.0) 1 ... and so on down the list as each is refused.
    let (taken, none) = by_rule(&disks, 0.22, 0.25);
    assert_eq!(none, 6, "the rule's own answer: six have no disk at 22 %");
    assert_eq!(taken, [3, 2, 1, 0]);
    let (s, pl) = fleet(&disks, "overcommit_storage_pct: 22");
    let (got, hours, _) = modelled(&s, &pl);
    assert_eq!(got, named(&disks, &taken));
    assert_eq!(hours, None, "six replicas have no disk");
    // 29 % (2.9 TB): 7, then 5 on the next disk only.
    let (taken, none) = by_rule(&disks, 0.29, 0.25);
    assert_eq!((taken.as_slice(), none), (&[7, 5, 0, 0][..], 0));
    let (s, pl) = fleet(&disks, "overcommit_storage_pct: 29");
    let (got, hours, _) = modelled(&s, &pl);
    assert_eq!(got, named(&disks, &taken));
    // n0 four rounds (7 replicas), n1 three.
    close(hours.unwrap() * 3600.0, BEFORE_S + 4000.0);
}

#[test]
fn a_pile_past_a_disks_free_space_is_named_and_has_no_time() {
    // 2 TB disks: n0 has 1.5 TB free, n1 1.4 TB. The lost volumes hold 150 GB each here
    // (250 GB nominal). At 200 % every replica fits n0's over-provisioning (0.83 + 12 x
    // 0.25 TB <= 4 TB) and its actual-space rule reads 1.5 TB free the whole burst, so
    // all 12 go there: 1.8 TB of data onto 1.5 TB free.
    let disks = [disk("n0", 2.0, 0.5), disk("n1", 2.0, 0.6)];
    let (s, mut pl) = fleet(&disks, "overcommit_storage_pct: 200");
    let mut vols = pl.volumes().to_vec();
    for v in vols.iter_mut().take(LOST) {
        v.data = 150.0 * GB;
        v.size = 250.0 * GB;
    }
    pl = Placement::adopt(
        pl.topo().clone(),
        pl.vms().to_vec(),
        vols,
        vec![None],
        &s.platform,
    );
    let (got, hours, json) = modelled(&s, &pl);
    assert_eq!(got, [("n0/disk-1".to_string(), 12)]);
    assert_eq!(hours, None, "no finite time is given");
    let d = &json[0];
    let f = |k: &str| d[k].as_f64().unwrap();
    close(f("bytes") / GB, 1800.0);
    close(f("free_bytes") / GB, 1500.0);
    close(f("overfill_bytes") / GB, 300.0);
    // Two streams of 100 MB/s fill 1.5 TB in 7,500 s, after the 645 s before them.
    close(f("full_after_h") * 3600.0, BEFORE_S + 7500.0);
}

/// The review of a fleet whose lost node's rack has one other node, with a disk too small
/// for the burst: racks are zones, so every replacement goes to small-01 (the rest of the
/// rack), whose 1 TB disk cannot hold the 1.2 TiB; at 500 % over-provisioning nothing
/// refuses a replica. The verdict fails on it and names the disk; the fix is the highest
/// over-provisioning at which small-01 refuses enough that the rest go to other racks
/// (zone anti-affinity is soft), which the test checks by asking the review at that
/// percentage and one above it.
#[test]
fn the_review_fails_on_an_overfilled_disk_and_says_what_would_stop_it() {
    let text = |pct: u32| {
        format!(
            "name: overfill\nfleet:\n  classes:\n    - {{name: big, count: 3, threads: 64, memory_gib: 256, disks: 1, disk_tb: 2, racks: [r1, r2, r3]}}\n    - {{name: small, count: 3, threads: 64, memory_gib: 256, disks: 1, disk_tb: 1, racks: [r1, r2, r3]}}\nplatform: {{overcommit_storage_pct: {pct}, rebuild_limit: 2, stream_mbps: 100}}\nshapes:\n  s: {{pools: [{{name: w, count: 3, vcpu: 2, memory_gib: 4, disks_gib: [100]}}]}}\nclusters: [{{shape: s, count: 2}}]\nanalysis: {{risk_trials: 100}}\nrebuild: {{node: big-01, data_tib: 1.2}}\n"
        )
    };
    let v = review_json(&text(500));
    let rb = &v["rebuild"];
    assert_eq!(v["verdict"], "fail");
    assert!(rb["hours_to_full_redundancy"].is_null(), "{rb}");
    let disks = rb["receiving_disks"].as_array().unwrap();
    assert_eq!(disks.len(), 1, "{disks:?}");
    let d = &disks[0];
    assert_eq!(
        (d["node"].as_str(), d["disk"].as_str()),
        (Some("small-01"), Some("disk-1"))
    );
    let f = |k: &str| d[k].as_f64().unwrap();
    let tib = 1024f64.powi(4);
    assert!((f("bytes") / tib - 1.2).abs() < 1e-6, "all of the burst");
    assert!(f("free_bytes") <= 1.0 * TB, "at most its 1 TB");
    assert!((f("overfill_bytes") - (f("bytes") - f("free_bytes"))).abs() < 1.0);
    assert_eq!(rb["overfilled_disks"], 1);
    let reason = v["verdict_reasons"][0].as_str().unwrap();
    assert!(
        reason.contains("small-01/disk-1 receives 1.20 TiB") && reason.contains("no finite end"),
        "{reason}"
    );
    // v1.11's rule has the same one candidate disk.
    let fix = &rb["overfill_fix"];
    assert_eq!(fix["from_pct"], 500);
    assert_eq!(fix["other_rule_overfilled"], 1, "{fix}");
    // The fix found: at that percentage the rebuild completes with no disk overfilled, one
    // percent higher small-01 overfills again.
    let pct = u32::try_from(fix["over_provisioning_pct"].as_u64().expect("found")).unwrap();
    assert!(pct < 500);
    let at = review_json(&text(pct));
    assert_eq!(at["rebuild"]["overfilled_disks"], 0);
    assert_eq!(
        at["rebuild"]["hours_to_full_redundancy"].as_f64(),
        fix["hours_at_that"].as_f64()
    );
    assert!(at["rebuild"]["receiving_disks"].as_array().unwrap().len() > 1);
    let above = review_json(&text(pct + 1));
    assert_eq!(above["rebuild"]["overfilled_disks"], 1);
}

fn review_json(text: &str) -> Value {
    use rackplan::simulate::{ScenarioInput, Study, StudyInput};
    let l = Study::open(&StudyInput {
        scenario: ScenarioInput::Text {
            name: std::path::Path::new("overfill.yaml"),
            text,
        },
        site: None,
        dump: None,
        rebuild_what_if: None,
    })
    .unwrap();
    serde_json::to_value(rackplan::simulate::questions::review(&l)).unwrap()
}
