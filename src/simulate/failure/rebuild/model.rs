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

use crate::simulate::place::StorageRules;

/// One Longhorn disk as the storage rules see it, bytes.
#[derive(Debug, Clone, Copy)]
pub struct DiskRoom {
    pub max: f64,
    pub sched: f64,
    pub used: f64,
}

#[derive(Debug, Clone)]
pub struct NodeCaps {
    pub rack: usize,
    /// Bytes/s.
    pub ingress: f64,
    pub egress: f64,
    pub disk_write: f64,
    pub disk_read: f64,
    /// Its disks, with what is scheduled and used on them now.
    pub disks: Vec<DiskRoom>,
}

#[derive(Debug, Clone)]
pub struct Job {
    pub volume: usize,
    /// Actual data to copy, and the volume's nominal size (what over-provisioning counts).
    pub bytes: f64,
    pub size: f64,
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
    pub rules: StorageRules,
}

/// How long one volume ran without its full replica count; `None`: it never got it back.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub volume: usize,
    pub hours: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RebuildResult {
    pub limit: u32,
    /// `None` when some replica is never rebuilt; `never` says why.
    pub hours_to_full_redundancy: Option<f64>,
    pub never: Option<String>,
    /// Transfer time until the last replica that does complete.
    pub transfer_hours: f64,
    pub bytes: f64,
    pub bottleneck: String,
    /// Replicas whose every attempt exceeds the abort limit: Longhorn restarts them forever.
    pub aborted: usize,
    /// Attempts aborted at the limit and started again, in all.
    pub abort_restarts: usize,
    /// Replicas no node can take (hard node anti-affinity and the storage rules), or with
    /// no healthy source.
    pub stranded: usize,
    /// Replicas that wait forever for a slot held by rebuilds that restart forever.
    pub blocked: usize,
    /// Largest share of a node's network capacity (ingress or egress, after foreground
    /// traffic) taken by rebuild traffic, and of a node's disk throughput.
    pub peak_link_share: f64,
    pub peak_disk_share: f64,
    /// The same two on the receiving side only, and on the sending side only.
    pub peak_target_share: f64,
    pub peak_source_share: f64,
    /// Most rebuild streams one source node served at once (Longhorn limits targets only).
    pub peak_source_streams: usize,
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
    /// Aborted at the limit since the rates last changed: it will abort again.
    looping: bool,
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

/// The disk of `node` that takes a replica: among those the storage rules allow, the one
/// with the most available room.
fn fitting_disk(node: &NodeCaps, rules: &StorageRules, job: &Job) -> Option<usize> {
    node.disks
        .iter()
        .enumerate()
        .filter(|(_, d)| rules.fits(d.max, (d.sched, d.used), job.size, job.bytes))
        .max_by(|a, b| {
            (a.1.max - a.1.used)
                .total_cmp(&(b.1.max - b.1.used))
                .then(b.0.cmp(&a.0))
        })
        .map(|(i, _)| i)
}

/// The best room a node offers a replica (for ordering targets).
fn room_of(node: &NodeCaps) -> f64 {
    node.disks
        .iter()
        .map(|d| d.max - d.used)
        .fold(0.0, f64::max)
}

/// Upper bound on event-loop steps: every step starts, completes or aborts a stream, and a
/// fixed point ends the loop long before this.
const MAX_STEPS: usize = 2_000_000;

#[allow(clippy::too_many_lines)] // one event loop, read top to bottom
pub fn simulate(input: &RebuildInput) -> RebuildResult {
    let mut nodes = input.nodes.clone();
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
    let mut inbound = vec![0usize; nodes.len()];
    let mut outbound = vec![0usize; nodes.len()];
    let mut active: Vec<Stream> = Vec::new();
    let mut t = 0.0;
    let mut last_done = 0.0;
    let mut windows = Vec::new();
    let mut by_cat = [0.0f64; CATS.len()];
    let (mut aborted, mut stranded, mut blocked, mut restarts) = (0, 0, 0, 0);
    let mut peak_src = 0usize;
    // Peak rebuild share of each node resource: ingress, egress, disk write, disk read.
    let mut peak = [0.0f64; 4];
    let total: f64 = input.jobs.iter().map(|j| j.bytes).sum();
    let mut steps = 0usize;
    let mut never_jobs: Vec<usize> = Vec::new();
    loop {
        steps += 1;
        // Start what can start, in order; a job no node can ever take is stranded.
        let mut started_any = false;
        let mut still = std::collections::VecDeque::new();
        while let Some(j) = waiting.pop_front() {
            let job = &input.jobs[j];
            let eligible = |n: usize| !job.holders.contains(&n);
            let possible = (0..nodes.len())
                .any(|n| eligible(n) && fitting_disk(&nodes[n], &input.rules, job).is_some());
            if !possible || job.holders.is_empty() {
                stranded += 1;
                never_jobs.push(j);
                continue;
            }
            let holder_racks: Vec<usize> = job.holders.iter().map(|&h| nodes[h].rack).collect();
            let target = (0..nodes.len())
                .filter(|&n| eligible(n) && inbound[n] < k)
                .filter_map(|n| fitting_disk(&nodes[n], &input.rules, job).map(|d| (n, d)))
                .min_by(|&(a, _), &(b, _)| {
                    let ka = (holder_racks.contains(&nodes[a].rack), inbound[a]);
                    let kb = (holder_racks.contains(&nodes[b].rack), inbound[b]);
                    ka.cmp(&kb)
                        .then(room_of(&nodes[b]).total_cmp(&room_of(&nodes[a])))
                        .then(a.cmp(&b))
                });
            match target {
                Some((dst, d)) => {
                    let src = *job
                        .holders
                        .iter()
                        .min_by_key(|&&h| (outbound[h], h))
                        .expect("not empty");
                    inbound[dst] += 1;
                    outbound[src] += 1;
                    peak_src = peak_src.max(outbound[src]);
                    let disk = &mut nodes[dst].disks[d];
                    disk.sched += job.size;
                    disk.used += job.bytes;
                    started_any = true;
                    active.push(Stream {
                        job: j,
                        src,
                        dst,
                        remaining: job.bytes,
                        rate: 0.0,
                        started: t,
                        limited_by: 0,
                        looping: false,
                    });
                }
                None => still.push_back(j),
            }
        }
        waiting = still;
        if started_any {
            for s in &mut active {
                s.looping = false;
            }
        }
        if active.is_empty() {
            stranded += waiting.len();
            never_jobs.extend(waiting.drain(..));
            break;
        }
        // Every stream restarts forever under rates that no longer change: a fixed point.
        if active.iter().all(|s| s.looping) || steps >= MAX_STEPS {
            aborted += active.len();
            never_jobs.extend(active.iter().map(|s| s.job));
            blocked += waiting.len();
            never_jobs.extend(waiting.drain(..));
            break;
        }
        share(&mut active, &nodes, flow);
        let mut rate_in = vec![0.0; nodes.len()];
        let mut rate_out = vec![0.0; nodes.len()];
        for s in &active {
            rate_in[s.dst] += s.rate;
            rate_out[s.src] += s.rate;
        }
        let frac = |r: f64, cap: f64| if cap > 0.0 { r / cap } else { 0.0 };
        for (n, node) in nodes.iter().enumerate() {
            let now = [
                frac(rate_in[n], node.ingress),
                frac(rate_out[n], node.egress),
                frac(rate_in[n], node.disk_write),
                frac(rate_out[n], node.disk_read),
            ];
            for (p, x) in peak.iter_mut().zip(now) {
                *p = p.max(x);
            }
        }
        // The next event: a stream completes, or one reaches the abort limit.
        let dt = active
            .iter()
            .map(|s| {
                let done = if s.rate > 0.0 {
                    s.remaining / s.rate
                } else {
                    f64::INFINITY
                };
                done.min(s.started + input.abort_s - t)
            })
            .fold(f64::INFINITY, f64::min)
            .max(0.0);
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
        let mut completed_any = false;
        let mut i = 0;
        while i < active.len() {
            if active[i].remaining <= 1e-3 {
                let s = active.swap_remove(i);
                inbound[s.dst] -= 1;
                outbound[s.src] -= 1;
                completed_any = true;
                last_done = t;
                windows.push(Window {
                    volume: input.jobs[s.job].volume,
                    hours: Some((input.detect_s + input.wait_s + t) / 3600.0),
                });
            } else {
                if t - active[i].started >= input.abort_s - 1e-6 {
                    // Longhorn aborts the attempt and starts the rebuild again from scratch.
                    let s = &mut active[i];
                    s.remaining = input.jobs[s.job].bytes;
                    s.started = t;
                    s.looping = true;
                    restarts += 1;
                }
                i += 1;
            }
        }
        if completed_any {
            // Rates change: an attempt that failed before may succeed now.
            for s in &mut active {
                s.looping = false;
            }
        }
    }
    for &j in &never_jobs {
        windows.push(Window {
            volume: input.jobs[j].volume,
            hours: None,
        });
    }
    windows.sort_by_key(|w| w.volume);
    let best = by_cat
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or("none", |(i, _)| CATS[i]);
    let mut why = Vec::new();
    if stranded > 0 {
        why.push(format!(
            "{stranded} replica(s) have no node that may take them (one replica per node, and Longhorn's minimal-available and over-provisioning rules per disk)"
        ));
    }
    if aborted > 0 {
        why.push(format!(
            "{aborted} replica rebuild(s) take longer than Longhorn's {} h limit on every attempt and restart forever",
            (input.abort_s / 36.0).round() / 100.0
        ));
    }
    if blocked > 0 {
        why.push(format!(
            "{blocked} replica(s) wait forever for a rebuild slot those restarts hold"
        ));
    }
    let complete = why.is_empty();
    RebuildResult {
        limit: input.limit,
        hours_to_full_redundancy: if input.jobs.is_empty() {
            Some(0.0)
        } else {
            complete.then(|| (input.detect_s + input.wait_s + last_done) / 3600.0)
        },
        never: (!complete).then(|| why.join("; ")),
        transfer_hours: last_done / 3600.0,
        bytes: total,
        bottleneck: if total > 0.0 {
            best.to_string()
        } else {
            "nothing to rebuild".into()
        },
        aborted,
        abort_restarts: restarts,
        stranded,
        blocked,
        peak_link_share: peak[0].max(peak[1]),
        peak_disk_share: peak[2].max(peak[3]),
        peak_target_share: peak[0].max(peak[2]),
        peak_source_share: peak[1].max(peak[3]),
        peak_source_streams: peak_src,
        windows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: StorageRules = StorageRules {
        min_available: 0.25,
        overprovision: 2.0,
    };
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
                disks: vec![DiskRoom {
                    max: 1e15,
                    sched: 0.0,
                    used: 0.0,
                }],
            })
            .collect();
        let mut jobs = Vec::new();
        if let Some(b) = one_big {
            jobs.push(Job {
                volume: 0,
                bytes: b,
                size: b,
                holders: vec![0, 1],
            });
        } else {
            let rest = (15.0 * TIB - 500.0 * GIB) / 299.0;
            for v in 0..300 {
                let bytes = if v == 0 { 500.0 * GIB } else { rest };
                jobs.push(Job {
                    volume: v,
                    bytes,
                    size: bytes,
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
            rules: RULES,
        });
        r.hours_to_full_redundancy.expect("completes")
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
                disks: vec![DiskRoom {
                    max: 1e15,
                    sched: 0.0,
                    used: 0.0,
                }],
            })
            .collect();
        let jobs = (0..20)
            .map(|v| Job {
                volume: v,
                bytes: 10e9,
                size: 10e9,
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
            rules: RULES,
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
                disks: vec![DiskRoom {
                    max: 1e15,
                    sched: 0.0,
                    used: 0.0,
                }],
            })
            .collect();
        let r = simulate(&RebuildInput {
            nodes,
            jobs: vec![Job {
                volume: 0,
                bytes: 10e12,
                size: 10e12,
                holders: vec![0],
            }],
            limit: 2,
            stream_rate: 100e6,
            flow_cap: 1e9,
            detect_s: 0.0,
            wait_s: 0.0,
            abort_s: 86_400.0,
            rules: RULES,
        });
        assert_eq!(r.aborted, 1);
        assert!(r.abort_restarts >= 1);
        assert_eq!(r.hours_to_full_redundancy, None, "never completes");
        assert!(r.never.as_deref().unwrap().contains("restart forever"));
        assert_eq!(r.windows[0].hours, None);
    }
}
