//! Longhorn's rebuild after losing a node, as a discrete-event model.
//!
//! Each volume that had a replica on the lost node is one job (Longhorn rebuilds one replica
//! per volume at a time). A job starts when a target node has a free slot under
//! `concurrent-replica-rebuild-per-node-limit` (counted on the receiving side, as Longhorn
//! does) and room for the replica; its source is the least busy surviving replica. Rates
//! are shared max-min fairly under: the per-stream rate, one bond member per TCP flow, each
//! node's ingress and egress payload capacity (links x speed x wire efficiency at the MTU,
//! less foreground replication traffic), and disk read/write throughput. Jobs are started
//! largest first. Detection delay and the replenishment wait come before; a single replica
//! that would take longer than Longhorn's 24 h gRPC timeout is reported as aborted.

use serde::Serialize;

#[derive(Debug, Clone)]
pub struct NodeCaps {
    pub rack: usize,
    /// Bytes/s.
    pub ingress: f64,
    pub egress: f64,
    pub disk_write: f64,
    pub disk_read: f64,
    /// Room for new replicas, bytes.
    pub room: f64,
}

#[derive(Debug, Clone)]
pub struct Job {
    pub volume: usize,
    pub bytes: f64,
    /// Nodes holding a healthy replica: the possible sources, and never a target.
    pub holders: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct RebuildInput {
    pub nodes: Vec<NodeCaps>,
    pub jobs: Vec<Job>,
    pub limit: u32,
    /// Bytes/s of one stream, and the cap of one flow (one bond member).
    pub stream_rate: f64,
    pub flow_cap: f64,
    pub detect_s: f64,
    pub wait_s: f64,
    pub abort_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub volume: usize,
    pub hours: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RebuildResult {
    pub limit: u32,
    pub hours_to_full_redundancy: f64,
    pub transfer_hours: f64,
    pub bytes: f64,
    pub bottleneck: String,
    pub aborted: usize,
    pub stranded: usize,
    /// Largest share of a node's storage-link ingress taken by rebuild traffic.
    pub peak_link_share: f64,
    pub windows: Vec<Window>,
}

/// Payload share of the wire: TCP/IPv4 with timestamps over a VLAN-tagged frame.
pub fn wire_efficiency(mtu: u32) -> f64 {
    let mtu = f64::from(mtu);
    (mtu - 52.0) / (mtu + 38.0 + 4.0)
}

struct Stream {
    job: usize,
    src: usize,
    dst: usize,
    remaining: f64,
    rate: f64,
    started: f64,
    limited_by: usize,
}

const CATS: [&str; 6] = [
    "per-stream rate",
    "per-node rebuild limit x per-stream rate",
    "network ingress of target nodes",
    "network egress of source nodes",
    "disk write of target nodes",
    "disk read of source nodes",
];

/// Max-min fair rates; returns for each stream the resource category that froze it.
fn share(streams: &mut [Stream], nodes: &[NodeCaps], flow: f64) {
    let n = nodes.len();
    let mut rem: Vec<f64> = Vec::with_capacity(4 * n);
    rem.extend(nodes.iter().map(|x| x.ingress));
    rem.extend(nodes.iter().map(|x| x.egress));
    rem.extend(nodes.iter().map(|x| x.disk_write));
    rem.extend(nodes.iter().map(|x| x.disk_read));
    let res = |s: &Stream| [s.dst, n + s.src, 2 * n + s.dst, 3 * n + s.src];
    let mut frozen = vec![false; streams.len()];
    for s in streams.iter_mut() {
        s.rate = 0.0;
    }
    loop {
        let mut users = vec![0usize; 4 * n];
        for (i, s) in streams.iter().enumerate() {
            if !frozen[i] {
                for r in res(s) {
                    users[r] += 1;
                }
            }
        }
        if frozen.iter().all(|f| *f) {
            break;
        }
        let mut inc = f64::INFINITY;
        for (i, s) in streams.iter().enumerate() {
            if !frozen[i] {
                inc = inc.min(flow - s.rate);
            }
        }
        for r in 0..4 * n {
            if users[r] > 0 {
                inc = inc.min(rem[r].max(0.0) / users[r] as f64);
            }
        }
        for (i, s) in streams.iter_mut().enumerate() {
            if frozen[i] {
                continue;
            }
            s.rate += inc;
            for r in res(s) {
                rem[r] -= inc;
            }
        }
        for (i, s) in streams.iter_mut().enumerate() {
            if frozen[i] {
                continue;
            }
            if s.rate >= flow - 1e-6 {
                frozen[i] = true;
                s.limited_by = 0;
                continue;
            }
            for (k, r) in res(s).into_iter().enumerate() {
                if rem[r] <= 1e-6 {
                    frozen[i] = true;
                    s.limited_by = 2 + k;
                    break;
                }
            }
        }
    }
}

pub fn simulate(input: &RebuildInput) -> RebuildResult {
    let nodes = &input.nodes;
    let k = input.limit.max(1) as usize;
    let flow = input.stream_rate.min(input.flow_cap);
    let mut order: Vec<usize> = (0..input.jobs.len()).collect();
    order.sort_by(|&a, &b| {
        input.jobs[b]
            .bytes
            .total_cmp(&input.jobs[a].bytes)
            .then(a.cmp(&b))
    });
    let mut waiting: std::collections::VecDeque<usize> = order.into();
    let mut room: Vec<f64> = nodes.iter().map(|n| n.room).collect();
    let mut inbound = vec![0usize; nodes.len()];
    let mut outbound = vec![0usize; nodes.len()];
    let mut active: Vec<Stream> = Vec::new();
    let mut t = 0.0;
    let mut windows = Vec::new();
    let mut by_cat = [0.0f64; CATS.len()];
    let (mut aborted, mut stranded) = (0, 0);
    let mut peak_share: f64 = 0.0;
    let total: f64 = input.jobs.iter().map(|j| j.bytes).sum();
    loop {
        // Start what can start, in order; a job with no possible target at all is stranded.
        let mut still = std::collections::VecDeque::new();
        while let Some(j) = waiting.pop_front() {
            let job = &input.jobs[j];
            let holder_racks: Vec<usize> = job.holders.iter().map(|&h| nodes[h].rack).collect();
            let possible =
                (0..nodes.len()).any(|n| !job.holders.contains(&n) && room[n] >= job.bytes);
            if !possible || job.holders.is_empty() {
                stranded += 1;
                continue;
            }
            let target = (0..nodes.len())
                .filter(|&n| !job.holders.contains(&n) && inbound[n] < k && room[n] >= job.bytes)
                .min_by(|&a, &b| {
                    let ka = (holder_racks.contains(&nodes[a].rack), inbound[a]);
                    let kb = (holder_racks.contains(&nodes[b].rack), inbound[b]);
                    ka.cmp(&kb)
                        .then(room[b].total_cmp(&room[a]))
                        .then(a.cmp(&b))
                });
            match target {
                Some(dst) => {
                    let src = *job
                        .holders
                        .iter()
                        .min_by_key(|&&h| (outbound[h], h))
                        .expect("not empty");
                    inbound[dst] += 1;
                    outbound[src] += 1;
                    room[dst] -= job.bytes;
                    active.push(Stream {
                        job: j,
                        src,
                        dst,
                        remaining: job.bytes,
                        rate: 0.0,
                        started: t,
                        limited_by: 0,
                    });
                }
                None => still.push_back(j),
            }
        }
        waiting = still;
        if active.is_empty() {
            stranded += waiting.len();
            break;
        }
        share(&mut active, nodes, flow);
        let mut per_node_in = vec![0.0; nodes.len()];
        for s in &active {
            per_node_in[s.dst] += s.rate;
        }
        for (n, r) in per_node_in.iter().enumerate() {
            if nodes[n].ingress > 0.0 {
                peak_share = peak_share.max(r / (nodes[n].ingress.max(1e-9)));
            }
        }
        let dt = active
            .iter()
            .map(|s| {
                if s.rate > 0.0 {
                    s.remaining / s.rate
                } else {
                    f64::INFINITY
                }
            })
            .fold(f64::INFINITY, f64::min);
        if !dt.is_finite() {
            stranded += active.len() + waiting.len();
            break;
        }
        let queued = !waiting.is_empty();
        for s in &mut active {
            let moved = s.rate * dt;
            s.remaining -= moved;
            let cat = if s.limited_by == 0 && queued {
                1
            } else {
                s.limited_by
            };
            by_cat[cat] += moved;
        }
        t += dt;
        let mut i = 0;
        while i < active.len() {
            if active[i].remaining <= 1e-3 {
                let s = active.swap_remove(i);
                inbound[s.dst] -= 1;
                outbound[s.src] -= 1;
                if t - s.started > input.abort_s {
                    aborted += 1;
                }
                windows.push(Window {
                    volume: input.jobs[s.job].volume,
                    hours: (input.detect_s + input.wait_s + t) / 3600.0,
                });
            } else {
                i += 1;
            }
        }
    }
    windows.sort_by_key(|w| w.volume);
    let best = by_cat
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or("none", |(i, _)| CATS[i]);
    RebuildResult {
        limit: input.limit,
        hours_to_full_redundancy: (input.detect_s + input.wait_s + t) / 3600.0,
        transfer_hours: t / 3600.0,
        bytes: total,
        bottleneck: if total > 0.0 {
            best.to_string()
        } else {
            "nothing to rebuild".into()
        },
        aborted,
        stranded,
        peak_link_share: peak_share,
        windows,
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    pub limit: u32,
    pub hours: f64,
    pub bottleneck: String,
    pub peak_link_share: f64,
}

/// Rebuild time for limits 1..=8 and the recommended limit: the smallest within 10 % of the
/// fastest whose rebuild leaves at least half of the busiest target's link to foreground I/O
/// (or simply the smallest within 10 % when none does).
pub fn sweep(input: &RebuildInput) -> (Vec<SweepPoint>, u32) {
    let points: Vec<SweepPoint> = (1..=8)
        .map(|k| {
            let mut i = input.clone();
            i.limit = k;
            let r = simulate(&i);
            SweepPoint {
                limit: k,
                hours: r.hours_to_full_redundancy,
                bottleneck: r.bottleneck,
                peak_link_share: r.peak_link_share,
            }
        })
        .collect();
    let best = points.iter().map(|p| p.hours).fold(f64::INFINITY, f64::min);
    let near: Vec<&SweepPoint> = points.iter().filter(|p| p.hours <= best * 1.10).collect();
    let pick = near
        .iter()
        .find(|p| p.peak_link_share <= 0.5)
        .or(near.first())
        .map_or(2, |p| p.limit);
    (points, pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIB: f64 = 1024.0 * 1024.0 * 1024.0 * 1024.0;
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    /// capacity-model.md §1.5: 15 TiB on the failed node in 300 replicas, the largest
    /// 500 GiB; 25 GbE; disks 2 GB/s; no foreground load; +600 s wait +45 s detection.
    fn worked(nodes: usize, k: u32, rate: f64, one_big: Option<f64>) -> f64 {
        let link = 25e9 / 8.0 * wire_efficiency(9000);
        let survivors = nodes - 1;
        let caps = (0..survivors)
            .map(|i| NodeCaps {
                rack: i % 3,
                ingress: link,
                egress: link,
                disk_write: 2e9,
                disk_read: 2e9,
                room: 1e15,
            })
            .collect();
        let mut jobs = Vec::new();
        if let Some(b) = one_big {
            jobs.push(Job {
                volume: 0,
                bytes: b,
                holders: vec![0, 1],
            });
        } else {
            let rest = (15.0 * TIB - 500.0 * GIB) / 299.0;
            for v in 0..300 {
                let bytes = if v == 0 { 500.0 * GIB } else { rest };
                jobs.push(Job {
                    volume: v,
                    bytes,
                    holders: vec![v % survivors, (v + 1) % survivors],
                });
            }
        }
        let r = simulate(&RebuildInput {
            nodes: caps,
            jobs,
            limit: k,
            stream_rate: rate,
            flow_cap: link,
            detect_s: 45.0,
            wait_s: 600.0,
            abort_s: 86_400.0,
        });
        r.hours_to_full_redundancy
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
        let nodes: Vec<NodeCaps> = (0..4)
            .map(|i| NodeCaps {
                rack: i,
                ingress: 50e6,
                egress: 1e9,
                disk_write: 2e9,
                disk_read: 2e9,
                room: 1e15,
            })
            .collect();
        let jobs = (0..20)
            .map(|v| Job {
                volume: v,
                bytes: 10e9,
                holders: vec![v % 4],
            })
            .collect();
        let r = simulate(&RebuildInput {
            nodes,
            jobs,
            limit: 4,
            stream_rate: 100e6,
            flow_cap: 1e9,
            detect_s: 0.0,
            wait_s: 0.0,
            abort_s: 86_400.0,
        });
        assert_eq!(r.bottleneck, "network ingress of target nodes");
        // 200 GB over 4 targets at 50 MB/s each = 1000 s.
        assert!(
            (r.transfer_hours * 3600.0 - 1000.0).abs() < 1.0,
            "{}",
            r.transfer_hours * 3600.0
        );
    }

    #[test]
    fn the_24h_abort_is_flagged() {
        let nodes: Vec<NodeCaps> = (0..3)
            .map(|i| NodeCaps {
                rack: i,
                ingress: 1e9,
                egress: 1e9,
                disk_write: 2e9,
                disk_read: 2e9,
                room: 1e15,
            })
            .collect();
        let r = simulate(&RebuildInput {
            nodes,
            jobs: vec![Job {
                volume: 0,
                bytes: 10e12,
                holders: vec![0],
            }],
            limit: 2,
            stream_rate: 100e6,
            flow_cap: 1e9,
            detect_s: 0.0,
            wait_s: 0.0,
            abort_s: 86_400.0,
        });
        assert_eq!(r.aborted, 1);
    }
}
