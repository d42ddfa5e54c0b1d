//! How the rebuild streams running at one moment share the fleet: max-min fair rates
//! under the per-stream rate (and one bond member per flow), each node's ingress and egress
//! and its disk write and read throughput; and which of these froze each stream.

/// What one surviving node can give rebuilds, bytes/s, after foreground traffic.
#[derive(Debug, Clone)]
pub struct NodeCaps {
    pub(crate) name: String,
    pub(crate) rack: usize,
    /// Bytes/s.
    pub(crate) ingress: f64,
    pub(crate) egress: f64,
    pub(crate) disk_write: f64,
    pub(crate) disk_read: f64,
}

/// One running rebuild: its job, source and receiving node, bytes left, rate, start, and
/// what limits it.
pub(crate) struct Stream {
    pub(crate) job: usize,
    pub(crate) src: usize,
    pub(crate) dst: usize,
    pub(crate) remaining: f64,
    pub(crate) rate: f64,
    pub(crate) started: f64,
    pub(crate) limited_by: usize,
    /// Aborted at the limit since the rates last changed: it will abort again.
    pub(crate) looping: bool,
}

pub(crate) const CATS: [&str; 6] = [
    "per-stream rate",
    "per-node rebuild limit x per-stream rate",
    "network ingress of target nodes",
    "network egress of source nodes",
    "disk write of target nodes",
    "disk read of source nodes",
];

/// Max-min fair rates; returns for each stream the resource category that froze it.
pub(crate) fn share(streams: &mut [Stream], nodes: &[NodeCaps], flow: f64) {
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
