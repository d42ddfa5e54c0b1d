//! Longhorn's rebuild after losing a node, as a discrete-event model.
//!
//! Each volume that had a replica on the lost node is one job (Longhorn rebuilds one replica
//! per volume at a time: `controller/volume_controller.go` `replenishReplicas`). The job's
//! receiving node was fixed when its replica was created (`place::replace_lost`, Longhorn's
//! scheduler, which never looks at rebuild slots); there it waits for a slot under
//! `concurrent-replica-rebuild-per-node-limit`, which Longhorn counts on the receiving node
//! only (`controller/replica_controller.go` `CanStartRebuildingReplica`; a waiting replica
//! stays stopped). Waiting replicas start in the order they were created (Longhorn
//! re-queues them all when a slot frees and the first to reconcile wins). The source is the
//! least busy surviving replica. Rates are shared max-min fairly under: the per-stream
//! rate, one bond member per TCP flow, each node's ingress and egress payload capacity
//! (links x speed x wire efficiency at the MTU, less foreground replication traffic), and
//! disk read/write throughput. Detection delay and the replenishment wait come before; a
//! single replica that would take longer than Longhorn's 24 h gRPC timeout is reported as
//! aborted.

use serde::Serialize;

pub(crate) use super::share::NodeCaps;
use super::share::{CATS, Stream, share};

#[derive(Debug, Clone)]
pub struct Job {
    pub(crate) volume: usize,
    /// Actual data to copy.
    pub(crate) bytes: f64,
    /// Nodes holding a healthy replica: the possible sources.
    pub(crate) holders: Vec<usize>,
    /// The node the new replica was created on; `None`: no node could take it.
    pub(crate) target: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct RebuildInput {
    pub(crate) nodes: Vec<NodeCaps>,
    /// In the order the replicas were created.
    pub jobs: Vec<Job>,
    pub(crate) limit: u32,
    /// Bytes/s of one stream, and the cap of one flow (one bond member).
    pub(crate) stream_rate: f64,
    pub(crate) flow_cap: f64,
    pub(crate) detect_s: f64,
    pub(crate) wait_s: f64,
    pub(crate) abort_s: f64,
    /// Rack names, for the bottleneck's words.
    pub(crate) racks: Vec<String>,
}

/// What one receiving node took: its replicas, their data, and when its last one was done
/// (transfer seconds after the rebuilds began; `None`: some never completes).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NodeLoad {
    pub node: String,
    pub(crate) rack: String,
    pub replicas: usize,
    pub(crate) bytes: f64,
    pub done_s: Option<f64>,
}

/// How long one volume ran without its full replica count; `None`: it never got it back.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Window {
    pub(crate) volume: usize,
    pub(crate) hours: Option<f64>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RebuildResult {
    pub(crate) limit: u32,
    /// `None` when some replica is never rebuilt; `never` says why.
    pub hours_to_full_redundancy: Option<f64>,
    pub(crate) never: Option<String>,
    /// Transfer time until the last replica that does complete.
    pub(crate) transfer_hours: f64,
    pub(crate) bytes: f64,
    /// What limited the bytes moved most, and where ("7 receiving nodes in rack r02 x
    /// limit 2 x 100 MB/s"); `limited_by` says only what.
    pub(crate) bottleneck: String,
    pub(crate) limited_by: String,
    /// Replicas whose every attempt exceeds the abort limit: Longhorn restarts them forever.
    pub(crate) aborted: usize,
    /// Attempts aborted at the limit and started again, in all.
    pub(crate) abort_restarts: usize,
    /// Replicas no node can take (hard node anti-affinity and the storage rules), or with
    /// no healthy source.
    pub(crate) stranded: usize,
    /// Replicas that wait forever for a slot held by rebuilds that restart forever.
    pub(crate) blocked: usize,
    /// Largest share of a node's network capacity (ingress or egress, after foreground
    /// traffic) taken by rebuild traffic, and of a node's disk throughput.
    pub(crate) peak_link_share: f64,
    pub(crate) peak_disk_share: f64,
    /// The same two on the receiving side only, and on the sending side only.
    pub(crate) peak_target_share: f64,
    pub(crate) peak_source_share: f64,
    /// Most rebuild streams one source node served at once (Longhorn limits targets only).
    pub(crate) peak_source_streams: usize,
    /// Every node that received replicas, the slowest first.
    pub receivers: Vec<NodeLoad>,
    pub(crate) windows: Vec<Window>,
}

/// Payload share of the wire: TCP/IPv4 with timestamps over a VLAN-tagged frame.
pub(crate) fn wire_efficiency(mtu: u32) -> f64 {
    let mtu = f64::from(mtu);
    (mtu - 52.0) / (mtu + 38.0 + 4.0)
}

/// Upper bound on event-loop steps: every step starts, completes or aborts a stream, and a
/// fixed point ends the loop long before this.
const MAX_STEPS: usize = 2_000_000;

#[allow(clippy::too_many_lines)] // one event loop, read top to bottom
pub fn simulate(input: &RebuildInput) -> RebuildResult {
    let nodes = &input.nodes;
    let k = input.limit.max(1) as usize;
    let flow = input.stream_rate.min(input.flow_cap);
    // Each receiving node's queue, in creation order; jobs with no node or no source are
    // stranded from the start.
    let mut queue: Vec<std::collections::VecDeque<usize>> =
        vec![std::collections::VecDeque::new(); nodes.len()];
    let mut never_jobs: Vec<usize> = Vec::new();
    let mut stranded = 0;
    for (j, job) in input.jobs.iter().enumerate() {
        match job.target.filter(|&t| t < nodes.len()) {
            Some(t) if !job.holders.is_empty() => queue[t].push_back(j),
            _ => {
                stranded += 1;
                never_jobs.push(j);
            }
        }
    }
    let mut done_at: Vec<Option<f64>> = vec![Some(0.0); nodes.len()];
    let mut inbound = vec![0usize; nodes.len()];
    let mut outbound = vec![0usize; nodes.len()];
    let mut active: Vec<Stream> = Vec::new();
    let mut t = 0.0;
    let mut last_done = 0.0;
    let mut windows = Vec::new();
    let mut by_cat = [0.0f64; CATS.len()];
    let (mut aborted, mut blocked, mut restarts) = (0, 0, 0);
    let mut peak_src = 0usize;
    // Peak rebuild share of each node resource: ingress, egress, disk write, disk read.
    let mut peak = [0.0f64; 4];
    let total: f64 = input.jobs.iter().map(|j| j.bytes).sum();
    let mut steps = 0usize;
    loop {
        steps += 1;
        // Each node starts what its free slots allow, in the order the replicas were made.
        let mut started_any = false;
        for (dst, q) in queue.iter_mut().enumerate() {
            while inbound[dst] < k {
                let Some(j) = q.pop_front() else { break };
                let job = &input.jobs[j];
                let src = *job
                    .holders
                    .iter()
                    .min_by_key(|&&h| (outbound[h], h))
                    .expect("not empty");
                inbound[dst] += 1;
                outbound[src] += 1;
                peak_src = peak_src.max(outbound[src]);
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
        }
        let waiting = queue.iter().any(|q| !q.is_empty());
        if started_any {
            for s in &mut active {
                s.looping = false;
            }
        }
        if active.is_empty() {
            break;
        }
        // Every stream restarts forever under rates that no longer change: a fixed point.
        if active.iter().all(|s| s.looping) || steps >= MAX_STEPS {
            aborted += active.len();
            for s in &active {
                never_jobs.push(s.job);
                done_at[s.dst] = None;
            }
            for (n, q) in queue.iter_mut().enumerate() {
                if !q.is_empty() {
                    done_at[n] = None;
                }
                blocked += q.len();
                never_jobs.extend(q.drain(..));
            }
            break;
        }
        share(&mut active, nodes, flow);
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
        for s in &mut active {
            let moved = s.rate * dt;
            s.remaining -= moved;
            // A stream at the full per-stream rate while replicas wait on its node: the
            // limit times the rate is what holds that node back.
            let cat = if s.limited_by == 0 && waiting && !queue[s.dst].is_empty() {
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
                if let Some(d) = done_at[s.dst].as_mut() {
                    *d = t;
                }
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
        .map_or(0, |(i, _)| i);
    let mut load: Vec<(usize, f64)> = vec![(0, 0.0); nodes.len()];
    for j in &input.jobs {
        if let Some(t) = j.target.filter(|&t| t < nodes.len()) {
            load[t].0 += 1;
            load[t].1 += j.bytes;
        }
    }
    let rack_name = |r: usize| input.racks.get(r).cloned().unwrap_or_default();
    let mut receivers: Vec<NodeLoad> = (0..nodes.len())
        .filter(|&n| load[n].0 > 0)
        .map(|n| NodeLoad {
            node: nodes[n].name.clone(),
            rack: rack_name(nodes[n].rack),
            replicas: load[n].0,
            bytes: load[n].1,
            done_s: done_at[n],
        })
        .collect();
    receivers.sort_by(|a, b| {
        let key = |x: &NodeLoad| x.done_s.unwrap_or(f64::INFINITY);
        key(b).total_cmp(&key(a)).then(a.node.cmp(&b.node))
    });
    let bottleneck = if total <= 0.0 {
        "nothing to rebuild".to_string()
    } else {
        describe(
            input,
            best,
            receivers.first().map(|r| r.rack.as_str()),
            &receivers,
        )
    };
    let mut why = Vec::new();
    if stranded > 0 {
        why.push(format!(
            "{stranded} replica(s) have no node that may take them (Longhorn's anti-affinity and node conditions, and its minimal-available and over-provisioning rules per disk)"
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
        bottleneck,
        limited_by: if total > 0.0 {
            CATS[best].to_string()
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
        receivers,
        windows,
    }
}

/// The bottleneck in words: what limited the bytes moved most, and where. When the
/// per-node limit decided it, the rack whose receiving node finished last, how many of its
/// nodes received, the limit and the stream rate: "7 receiving nodes in rack r02 x limit 2
/// x 100 MB/s".
fn describe(
    input: &RebuildInput,
    cat: usize,
    rack: Option<&str>,
    receivers: &[NodeLoad],
) -> String {
    let Some(rack) = rack else {
        return CATS[cat].to_string();
    };
    let in_rack = receivers.iter().filter(|r| r.rack == rack).count();
    let mbps = input.stream_rate.min(input.flow_cap) / 1e6;
    let nodes = if in_rack == 1 {
        "1 receiving node".to_string()
    } else {
        format!("{in_rack} receiving nodes")
    };
    match cat {
        1 => format!(
            "{nodes} in rack {rack} x limit {} x {mbps:.0} MB/s",
            input.limit
        ),
        0 => format!("per-stream rate ({mbps:.0} MB/s; {nodes} in rack {rack}, no replica waits)"),
        c => format!("{} ({nodes} in rack {rack})", CATS[c]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn input(
        nodes: Vec<NodeCaps>,
        jobs: Vec<Job>,
        limit: u32,
        rate: f64,
        flow: f64,
    ) -> RebuildInput {
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
        }];
        let r = simulate(&input(nodes, jobs, 2, 100e6, 1e9));
        assert_eq!(r.aborted, 1);
        assert!(r.abort_restarts >= 1);
        assert_eq!(r.hours_to_full_redundancy, None, "never completes");
        assert!(r.never.as_deref().unwrap().contains("restart forever"));
        assert_eq!(r.windows[0].hours, None);
    }
}
