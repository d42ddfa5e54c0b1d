//! Longhorn's rebuild after losing a node, as a discrete-event model.
//!
//! Each volume that had a replica on the lost node is one job (Longhorn rebuilds one replica
//! per volume at a time: `controller/volume_controller.go` `replenishReplicas`). The job's
//! receiving node and disk were fixed when its replica was created (`place::create_burst`,
//! Longhorn's scheduler, which never looks at rebuild slots); there it waits for a slot under
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
//!
//! Each receiving disk's data is counted against its free space before the failure, as it
//! arrives. Nothing in longhorn-manager v1.10.2 checks free space when a rebuild starts
//! (the scheduler reads the space from before the burst, `place::replenish`), so a pile can
//! overfill its disk; the model then says which disk, by how much and when it fills, and
//! gives no time to full redundancy. What Longhorn does next is no finite rebuild: the
//! engine sets a replica on a full disk to ERR when its write fails, a rebuilding (WO) one
//! and a healthy (RW) one alike (longhorn-engine v1.10.2 `pkg/controller/control.go`
//! `handleDiskNoSpaceErrorForReplicas`, 1256-1299); the manager marks it failed
//! (`controller/volume_controller.go` `ReconcileEngineReplicaState`, 714-739), deletes a
//! failed replacement because it was created never to be reused (`createReplica` sets
//! `RebuildRetryCount` to the maximum, 3938-3944; `shouldCleanUpFailedReplica`, 5264-5268)
//! and creates another by the same rule (`replenishReplicas`, 2485-2504), which avoids the
//! disk only once the disk monitor's next statfs pass (30 s) makes it unschedulable
//! (`controller/node_controller.go` 914-920); the volumes whose healthy replicas failed on
//! the full disk are degraded in turn.

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
    /// Its disk, an index of `RebuildInput::disks`; `None` where disks are not modelled.
    pub(crate) disk: Option<usize>,
}

/// A disk that receives new replicas: its node (an index of `RebuildInput::nodes`), its
/// name, and its free space before the failure, bytes.
#[derive(Debug, Clone)]
pub(crate) struct ReceivingDisk {
    pub(crate) node: usize,
    pub(crate) name: String,
    pub(crate) free: f64,
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
    /// The disks the jobs go to.
    pub(crate) disks: Vec<ReceivingDisk>,
    /// Replicas whose disk was drawn among exactly tied candidates (Go's map order decides
    /// in Longhorn), and the most candidates one such tie had (1: none).
    pub(crate) tied_replicas: usize,
    pub(crate) widest_tie: usize,
}

/// What one receiving disk took, against its free space before the failure.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiskLoad {
    pub node: String,
    pub disk: String,
    pub replicas: usize,
    pub(crate) bytes: f64,
    pub(crate) free_bytes: f64,
    /// Data past the free space (0: it fits).
    pub(crate) overfill_bytes: f64,
    /// Hours after the failure (detection and the replenishment wait included) when the
    /// disk is full; `None`: it never fills (it fits, or the writes that would fill it
    /// never run).
    pub(crate) full_after_h: Option<f64>,
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
    /// Every disk that received replicas: the overfilled first (most over first), then by
    /// data received.
    pub disks: Vec<DiskLoad>,
    /// Receiving disks whose data exceeds their free space.
    pub(crate) overfilled: usize,
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
    // Per receiving disk: data written so far, and when it filled (transfer seconds).
    let mut written = vec![0.0f64; input.disks.len()];
    let mut full_at: Vec<Option<f64>> = vec![None; input.disks.len()];
    let disk_of = |s: &Stream| input.jobs[s.job].disk.filter(|&d| d < input.disks.len());
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
        // A disk fills during this step when what flows into it reaches its free space.
        let mut inflow = vec![0.0f64; input.disks.len()];
        for s in &active {
            if let Some(d) = disk_of(s) {
                inflow[d] += s.rate;
            }
        }
        for (d, rate) in inflow.into_iter().enumerate() {
            let left = input.disks[d].free - written[d];
            if full_at[d].is_none() && rate > 0.0 && rate * dt >= left {
                full_at[d] = Some(t + (left / rate).max(0.0));
            }
        }
        for s in &mut active {
            let moved = s.rate * dt;
            s.remaining -= moved;
            if let Some(d) = disk_of(s) {
                written[d] += moved;
            }
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
                    // Longhorn aborts the attempt and starts the rebuild again from scratch,
                    // over the data it wrote.
                    if let Some(d) = disk_of(&active[i]) {
                        written[d] -= input.jobs[active[i].job].bytes - active[i].remaining;
                    }
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
    // Per receiving disk: replicas and data. The volumes rebuilt onto an overfilled disk,
    // and the node holding it, never finish.
    let mut disk_load: Vec<(usize, f64)> = vec![(0, 0.0); input.disks.len()];
    for j in &input.jobs {
        if let Some(d) = j.disk.filter(|&d| d < input.disks.len()) {
            disk_load[d].0 += 1;
            disk_load[d].1 += j.bytes;
        }
    }
    let overfull = |d: usize| disk_load[d].1 > input.disks[d].free;
    for (d, disk) in input.disks.iter().enumerate() {
        if overfull(d)
            && let Some(x) = done_at.get_mut(disk.node)
        {
            *x = None;
        }
    }
    let lost: std::collections::HashSet<usize> = input
        .jobs
        .iter()
        .filter(|j| j.disk.is_some_and(|d| d < input.disks.len() && overfull(d)))
        .map(|j| j.volume)
        .collect();
    for w in &mut windows {
        if lost.contains(&w.volume) {
            w.hours = None;
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
    let start_h = (input.detect_s + input.wait_s) / 3600.0;
    let disks = disk_loads(input, &disk_load, &full_at, start_h);
    let overfilled = disks.iter().filter(|d| d.overfill_bytes > 0.0).count();
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
    if let Some(first) = disks.first().filter(|d| d.overfill_bytes > 0.0) {
        why.push(overfill_words(first, overfilled));
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
        disks,
        overfilled,
        windows,
    }
}

impl DiskLoad {
    /// "node/disk".
    pub(crate) fn label(&self) -> String {
        format!("{}/{}", self.node, self.disk)
    }
}

/// Each receiving disk's replicas and data (`load`) against its free space, the overfilled
/// first; `full_at` in transfer seconds, `start_h` the hours before the rebuilds begin.
fn disk_loads(
    input: &RebuildInput,
    load: &[(usize, f64)],
    full_at: &[Option<f64>],
    start_h: f64,
) -> Vec<DiskLoad> {
    let mut out: Vec<DiskLoad> = input
        .disks
        .iter()
        .zip(load)
        .zip(full_at)
        .filter(|((_, l), _)| l.0 > 0)
        .map(|((d, &(replicas, bytes)), &full)| DiskLoad {
            node: input
                .nodes
                .get(d.node)
                .map_or_else(String::new, |n| n.name.clone()),
            disk: d.name.clone(),
            replicas,
            bytes,
            free_bytes: d.free,
            overfill_bytes: (bytes - d.free).max(0.0),
            full_after_h: full.map(|s| start_h + s / 3600.0),
        })
        .collect();
    out.sort_by(|a, b| {
        b.overfill_bytes
            .total_cmp(&a.overfill_bytes)
            .then(b.bytes.total_cmp(&a.bytes))
            .then((&a.node, &a.disk).cmp(&(&b.node, &b.disk)))
    });
    out
}

/// Why an overfilled pile has no time: the worst disk, with how many more.
fn overfill_words(d: &DiskLoad, overfilled: usize) -> String {
    let tib = |b: f64| b / crate::units::TIB;
    let when = d.full_after_h.map_or_else(String::new, |h| {
        format!(", full {h:.2} h after the failure")
    });
    let more = match overfilled {
        0 | 1 => String::new(),
        k => format!(" ({} more disk(s) overfill)", k - 1),
    };
    format!(
        "{} receives {:.2} TiB of rebuilt data with {:.2} TiB free ({:.2} TiB over{when}){more}; on a full disk Longhorn fails the replicas that write to it, rebuilding or healthy, and creates new ones, so the rebuild has no finite end here",
        d.label(),
        tib(d.bytes),
        tib(d.free_bytes),
        tib(d.overfill_bytes),
    )
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
