//! The rebuild model against the capacity model's worked examples and by hand.

use super::model::*;
use crate::units::{GIB, TIB};

fn caps(n: usize, rack: usize, ingress: f64, egress: f64) -> NodeCaps {
    NodeCaps {
        name: format!("n{n}"),
        rack,
        ingress,
        egress,
        disk_write: 2e9,
        disk_read: 2e9,
    }
}

fn input(nodes: Vec<NodeCaps>, jobs: Vec<Job>, limit: u32, rate: f64, flow: f64) -> RebuildInput {
    RebuildInput {
        nodes,
        jobs,
        limit,
        stream_rate: rate,
        flow_cap: flow,
        detect_s: 0.0,
        wait_s: 0.0,
        abort_s: 86_400.0,
        racks: vec!["r0".into(), "r1".into(), "r2".into(), "r3".into()],
        disks: Vec::new(),
        tied_replicas: 0,
        widest_tie: 1,
    }
}

/// capacity-model.md §1.5: 15 TiB on the failed node in 300 replicas, the largest
/// 500 GiB; 25 GbE; disks 2 GB/s; no foreground load; +600 s wait +45 s detection. The
/// published figures assume the new replicas spread evenly over the survivors, so each
/// job (largest first) goes to the survivor not holding the volume with the least data
/// given so far.
fn worked(nodes: usize, k: u32, rate: f64, one_big: Option<f64>) -> f64 {
    let link = 25e9 / 8.0 * wire_efficiency(9000);
    let survivors = nodes - 1;
    let caps = (0..survivors).map(|i| caps(i, i % 3, link, link)).collect();
    let mut jobs = Vec::new();
    if let Some(b) = one_big {
        jobs.push(Job {
            volume: 0,
            bytes: b,
            holders: vec![0, 1],
            target: Some(2),
            disk: None,
        });
    } else {
        let rest = (15.0 * TIB - 500.0 * GIB) / 299.0;
        let mut given = vec![0.0f64; survivors];
        for v in 0..300 {
            let bytes = if v == 0 { 500.0 * GIB } else { rest };
            let holders = vec![v % survivors, (v + 1) % survivors];
            let t = (0..survivors)
                .filter(|n| !holders.contains(n))
                .min_by(|&a, &b| given[a].total_cmp(&given[b]).then(a.cmp(&b)))
                .unwrap();
            given[t] += bytes;
            jobs.push(Job {
                volume: v,
                bytes,
                target: Some(t),
                disk: None,
                holders,
            });
        }
    }
    let mut i = input(caps, jobs, k, rate, link);
    i.detect_s = 45.0;
    i.wait_s = 600.0;
    simulate(&i).hours_to_full_redundancy.expect("completes")
}

#[track_caller]
fn within_10pct(got: f64, want: f64) {
    assert!(
        (got - want).abs() / want <= 0.10,
        "got {got:.2} h, published {want} h"
    );
}

#[test]
fn reproduces_the_worked_examples() {
    within_10pct(worked(16, 2, 100e6, None), 1.7);
    within_10pct(worked(16, 2, 60e6, None), 2.7);
    within_10pct(worked(16, 2, 364.0 * 1024.0 * 1024.0, None), 0.6);
    within_10pct(worked(6, 2, 100e6, None), 4.8);
    within_10pct(worked(6, 5, 100e6, None), 2.0);
    within_10pct(worked(4, 2, 100e6, None), 7.8);
    within_10pct(worked(16, 2, 100e6, Some(8e12)), 22.0);
}

#[test]
fn wire_efficiency_matches_the_table() {
    // TCP + timestamps + 802.1Q: 93.90 % at 1500, 98.96 % at 9000.
    assert!((wire_efficiency(1500) - 0.9390).abs() < 0.0005);
    assert!((wire_efficiency(9000) - 0.9896).abs() < 0.0005);
}

#[test]
fn a_slow_link_becomes_the_bottleneck() {
    let nodes: Vec<NodeCaps> = (0..4).map(|i| caps(i, i, 50e6, 1e9)).collect();
    let jobs = (0..20)
        .map(|v| Job {
            volume: v,
            bytes: 10e9,
            holders: vec![v % 4],
            target: Some((v + 1) % 4),
            disk: None,
        })
        .collect();
    let r = simulate(&input(nodes, jobs, 4, 100e6, 1e9));
    assert!(
        r.bottleneck.starts_with("network ingress of target nodes"),
        "{}",
        r.bottleneck
    );
    // 200 GB over 4 targets at 50 MB/s each = 1000 s.
    assert!(
        (r.transfer_hours * 3600.0 - 1000.0).abs() < 1.0,
        "{}",
        r.transfer_hours * 3600.0
    );
}

#[test]
fn replicas_wait_on_the_node_they_were_given() {
    // Six replicas of 360 GB all created on node 0 while nodes 1 and 2 hold the
    // sources: at limit 2 and 100 MB/s node 0 runs three rounds of two streams, 3600 s
    // each; nodes 1 and 2 never receive, whatever slots they have.
    let nodes: Vec<NodeCaps> = (0..3).map(|i| caps(i, i, 1e9, 1e9)).collect();
    let jobs = (0..6)
        .map(|v| Job {
            volume: v,
            bytes: 360e9,
            holders: vec![1 + v % 2],
            target: Some(0),
            disk: None,
        })
        .collect();
    let r = simulate(&input(nodes, jobs, 2, 100e6, 1e9));
    assert!(
        (r.transfer_hours - 3.0).abs() < 1e-6,
        "{}",
        r.transfer_hours
    );
    assert_eq!(r.receivers.len(), 1);
    assert_eq!(r.receivers[0].replicas, 6);
    assert_eq!(
        r.bottleneck,
        "1 receiving node in rack r0 x limit 2 x 100 MB/s"
    );
}

#[test]
fn the_24h_abort_is_flagged() {
    let nodes: Vec<NodeCaps> = (0..3).map(|i| caps(i, i, 1e9, 1e9)).collect();
    let jobs = vec![Job {
        volume: 0,
        bytes: 10e12,
        holders: vec![0],
        target: Some(1),
        disk: None,
    }];
    let r = simulate(&input(nodes, jobs, 2, 100e6, 1e9));
    assert_eq!(r.aborted, 1);
    assert!(r.abort_restarts >= 1);
    assert_eq!(r.hours_to_full_redundancy, None, "never completes");
    assert!(r.never.as_deref().unwrap().contains("restart forever"));
    assert_eq!(r.windows[0].hours, None);
}
