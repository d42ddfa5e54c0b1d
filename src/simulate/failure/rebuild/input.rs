//! The rebuild model's input from a placement: the surviving nodes' links and disks less
//! foreground traffic, and one job per volume that lost a replica on the failed node, on
//! the node and disk Longhorn's scheduler creates its new replica on
//! (`place::create_burst`: the burst as Longhorn creates it, each disk keeping its free
//! space from before the failure), with each receiving disk's free space, so the model can
//! say which disks the rebuild overfills.

use super::model::{Job, NodeCaps, RebuildInput, ReceivingDisk, wire_efficiency};
use crate::simulate::place::{BurstHow, BurstIndex, Placement, create_burst};
use crate::simulate::scenario::{BondMode, Scenario};

/// Rebuild inputs for losing `failed` in a placement; also the replicas of detached
/// volumes that Longhorn leaves alone.
pub fn rebuild_input(
    s: &Scenario,
    pl: &Placement,
    failed: usize,
    limit: u32,
) -> (RebuildInput, usize) {
    rebuild_input_with(s, pl, failed, limit, 0)
}

/// `rebuild_input` with the draws among exactly tied disks salted (`salt` 0: the
/// answer's own draws), for the spread Go's map order gives.
pub(crate) fn rebuild_input_with(
    s: &Scenario,
    pl: &Placement,
    failed: usize,
    limit: u32,
    salt: u64,
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
    let index = BurstIndex::as_created(pl.topo(), pl.free());
    let how = BurstHow {
        refresh_every: p.scheduled_refresh_every,
        salt,
    };
    let placed = create_burst(pl, &alive, &[failed], &index, &mut free, how);
    let detached = placed.iter().filter(|r| !rebuilt(r.volume)).count();
    let mut disks: Vec<ReceivingDisk> = Vec::new();
    let mut disk_of: std::collections::HashMap<(usize, usize), usize> =
        std::collections::HashMap::new();
    let mut tied = (0usize, 1usize);
    let jobs = placed
        .iter()
        .filter(|r| rebuilt(r.volume))
        .map(|r| {
            let v = &pl.volumes()[r.volume];
            if r.tied > 1 {
                tied = (tied.0 + 1, tied.1.max(r.tied));
            }
            let disk = r.target.map(|(n, d)| {
                *disk_of.entry((n, d)).or_insert_with(|| {
                    disks.push(ReceivingDisk {
                        node: index_of[n],
                        name: pl.topo().disk_name(n, d),
                        free: (pl.topo().hosts[n].disks[d] - pl.free().disk[n][d].1).max(0.0),
                    });
                    disks.len() - 1
                })
            });
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
                disk,
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
            disks,
            tied_replicas: tied.0,
            widest_tie: tied.1,
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
