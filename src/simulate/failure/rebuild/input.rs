//! The rebuild model's input from a placement: the surviving nodes' links and disks less
//! foreground traffic, and one job per volume that lost a replica on the failed node, on
//! the node Longhorn's scheduler creates its new replica on (`place::replace_lost`, the
//! same burst the headroom analysis re-homes by).

use super::model::{Job, NodeCaps, RebuildInput, wire_efficiency};
use crate::simulate::place::{BurstIndex, Placement, replace_lost};
use crate::simulate::scenario::{BondMode, Scenario};

/// Rebuild inputs for losing `failed` in a placement; also the replicas of detached
/// volumes that Longhorn leaves alone.
pub fn rebuild_input(
    s: &Scenario,
    pl: &Placement,
    failed: usize,
    limit: u32,
) -> (RebuildInput, usize) {
    let p = &s.platform;
    let net = &s.network;
    let eff = wire_efficiency(net.mtu);
    let link = net.speed_gbps * 1e9 / 8.0 * eff;
    let links = match net.bond {
        BondMode::Lacp => f64::from(net.links.max(1)),
        BondMode::ActiveBackup => 1.0,
    };
    let survivors: Vec<usize> = (0..pl.topo().hosts.len())
        .filter(|&n| n != failed)
        .collect();
    let mut index_of = vec![usize::MAX; pl.topo().hosts.len()];
    for (i, &n) in survivors.iter().enumerate() {
        index_of[n] = i;
    }
    let w = p.write_mbps_per_volume * 1e6;
    let mut fg_in = vec![0.0; pl.topo().hosts.len()];
    let mut fg_out = vec![0.0; pl.topo().hosts.len()];
    for vol in pl.volumes().iter().filter(|v| v.attached) {
        for &(n, _) in &vol.replicas {
            fg_in[n] += w;
        }
        if let Some(&Some(h)) = pl.vm_node().get(vol.vm) {
            fg_out[h] += w * vol.replicas.len() as f64;
        }
    }
    let nodes = survivors
        .iter()
        .map(|&n| {
            let h = &pl.topo().hosts[n];
            NodeCaps {
                name: h.name.clone(),
                rack: h.rack,
                ingress: (links * link - fg_in[n]).max(0.0),
                egress: (links * link - fg_out[n]).max(0.0),
                disk_write: (p.disk_write_mbps * 1e6 * h.disks.len().max(1) as f64 - fg_in[n])
                    .max(0.0),
                disk_read: p.disk_read_mbps * 1e6 * h.disks.len().max(1) as f64,
            }
        })
        .collect();
    let rebuilt = |i: usize| pl.volumes()[i].attached || p.offline_replica_rebuilding;
    let mut alive = vec![true; pl.topo().hosts.len()];
    if let Some(a) = alive.get_mut(failed) {
        *a = false;
    }
    let mut free = pl.free().clone();
    let index = BurstIndex::new(pl.topo(), pl.free());
    let placed = replace_lost(pl, &alive, &[failed], &index, &mut free);
    let detached = placed.iter().filter(|r| !rebuilt(r.volume)).count();
    let jobs = placed
        .iter()
        .filter(|r| rebuilt(r.volume))
        .map(|r| {
            let v = &pl.volumes()[r.volume];
            Job {
                volume: r.volume,
                bytes: v.data,
                holders: v
                    .replicas
                    .iter()
                    .filter(|&&(n, _)| n != failed)
                    .map(|&(n, _)| index_of[n])
                    .collect(),
                target: r.target.map(|(n, _)| index_of[n]),
            }
        })
        .collect();
    (
        RebuildInput {
            nodes,
            jobs,
            limit,
            stream_rate: p.stream_mbps * 1e6,
            flow_cap: link,
            detect_s: p.detection_s,
            wait_s: p.replenishment_wait_s,
            abort_s: p.rebuild_abort_h * 3600.0,
            racks: pl.topo().racks.clone(),
        },
        detached,
    )
}

/// The node the rebuild model fails: the one the scenario names, else the one holding the
/// most replica data.
pub fn rebuild_target(s: &Scenario, pl: &Placement) -> usize {
    let mut data = vec![0.0; pl.topo().hosts.len()];
    for v in pl.volumes() {
        for &(n, _) in &v.replicas {
            data[n] += v.data;
        }
    }
    s.analysis
        .rebuild_node
        .filter(|&n| n < data.len())
        .unwrap_or_else(|| {
            (0..data.len())
                .max_by(|&a, &b| data[a].total_cmp(&data[b]).then(b.cmp(&a)))
                .unwrap_or(0)
        })
}
