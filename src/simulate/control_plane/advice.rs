//! What to change, each with the figure that calls for it: dedicated disks for etcd when
//! the modelled fsync load or the measured fsync latency asks for them, and, where the
//! control plane stops growth before the hosts (or is past a limit already), the change
//! that moves that limit to the hosts' answer, computed on the fleet at that count: a
//! larger quota, larger management nodes (or VMs kept off them), or a separate Harvester
//! cluster.

use super::figures::{
    CAL_FSYNC_PER_WRITE, ETCD_SUGGESTED_MAX, FSYNC_HEAVY_PER_S, OBJECTS_PER_TYPE,
    WAL_FSYNC_P99_LIMIT_S,
};
use super::fleet::requests;
use super::model::{Advice, Binding, Measured, ShapeGrowth, Until};
use super::serve::{capacity, needed_per_node};
use super::state::{Model, State};
use crate::simulate::scenario::Pool;
use crate::words::{group, round_count};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

pub(crate) fn advice(
    m: &Model<'_>,
    now: &State,
    growth: &[ShapeGrowth],
    binding: Option<&Binding>,
    measured: Option<&Measured>,
    lead_pools: &[Pool],
) -> Vec<Advice> {
    let mut out = Vec::new();
    let replicas_on_managers: f64 = m.snap.managers.iter().map(|x| x.volumes).sum();
    let shared = if replicas_on_managers > 0.0 {
        format!(
            "; Longhorn keeps {} replicas on the management nodes, on the disks etcd would share",
            group(replicas_on_managers.round() as u64)
        )
    } else {
        String::new()
    };
    if let Some(p99) = measured.and_then(|x| x.wal_fsync_p99_s)
        && p99 > WAL_FSYNC_P99_LIMIT_S
    {
        out.push(Advice {
            action: "Move etcd to dedicated disks".into(),
            reason: format!(
                "the dump's etcd metrics show a WAL fsync p99 of {:.1} ms, above the {:.0} ms etcd needs to keep its heartbeats{shared}",
                p99 * 1000.0,
                WAL_FSYNC_P99_LIMIT_S * 1000.0
            ),
        });
    } else {
        let fsyncs = now.peak.1 * CAL_FSYNC_PER_WRITE;
        if fsyncs > FSYNC_HEAVY_PER_S {
            out.push(Advice {
                action: "Move etcd to dedicated disks (SSD or NVMe used by etcd alone)".into(),
                reason: format!(
                    "at the peak ({}) etcd writes about {} WAL fsyncs/s ({CAL_FSYNC_PER_WRITE:.2} per write, calibrated), above the {FSYNC_HEAVY_PER_S:.0} sequential fsyncs/s etcd's hardware guide recommends for heavily loaded clusters{shared}",
                    now.peak.0,
                    round_count(fsyncs)
                ),
            });
        }
    }
    // The count to reach: the hosts' answer where the control plane stops growth first;
    // the fleet as it is where it is past a limit already.
    let lead = binding.and_then(|b| {
        let g = growth.iter().find(|g| g.shape == b.shape)?;
        (b.first.starts_with("control plane")).then(|| (g, b.hosts_additional.unwrap_or(0)))
    });
    let past_now = growth
        .iter()
        .find(|g| g.until == Until::AlreadyPast)
        .map(|g| (g, 0));
    let Some((g, target)) = lead.or(past_now) else {
        return out;
    };
    let pools = m.l.shapes.get(&g.shape).map_or(lead_pools, Vec::as_slice);
    let at = m.state(&g.shape, pools, f64::from(target));
    let when = if target == 0 {
        "as the fleet is".to_string()
    } else {
        format!("at the hosts' {target} more {} clusters", g.shape)
    };
    let reached = |u: Until| match target {
        0 => u == Until::AlreadyPast,
        t => u < Until::Additional(t),
    };
    for r in g.limits.iter().filter(|r| reached(r.until)) {
        match r.limit.as_str() {
            "etcd quota" if at.db_peak <= ETCD_SUGGESTED_MAX => out.push(Advice {
                action: format!(
                    "Raise etcd's quota-backend-bytes to {:.0} GiB",
                    (at.db_peak * 1.25 / GIB).ceil().clamp(1.0, ETCD_SUGGESTED_MAX / GIB)
                ),
                reason: format!(
                    "{when} the database reaches {:.2} GiB at its largest, past the quota of {:.2} GiB ({}); up to 8 GiB is etcd's suggested maximum",
                    at.db_peak / GIB,
                    m.quota.0 / GIB,
                    m.quota.1
                ),
            }),
            "etcd quota" | "etcd suggested maximum" => out.push(Advice {
                action: format!(
                    "Split the fleet into {:.0} Harvester clusters",
                    (at.db_peak / ETCD_SUGGESTED_MAX).ceil().max(2.0)
                ),
                reason: format!(
                    "{when} etcd's database reaches {:.2} GiB, past the 8 GiB etcd suggests as its largest",
                    at.db_peak / GIB
                ),
            }),
            "objects of one type" => out.push(Advice {
                action: format!(
                    "Split the fleet into {:.0} Harvester clusters",
                    (at.largest.1 / OBJECTS_PER_TYPE).ceil().max(2.0)
                ),
                reason: format!(
                    "{when} {} reaches {} objects; past about {} of one type etcd and the API server slow down (Rancher's observation)",
                    at.largest.0,
                    group(at.largest.1.round() as u64),
                    group(OBJECTS_PER_TYPE as u64)
                ),
            }),
            "write capacity" => {
                let p = &m.l.scenario.platform;
                let d = super::fleet::Counts::of_shape(pools, p);
                let managers = m.snap.managers_at(requests(pools, p), d.replicas, f64::from(target));
                let reserved = (p.reserved_cpu, p.reserved_memory_gib);
                let (threads, gib) = needed_per_node(&managers, at.peak.1, m.im_cpu, reserved);
                let (t0, g0) = managers
                    .first()
                    .map_or((0.0, 0.0), |x| (x.threads, x.memory_gib));
                out.push(Advice {
                    action: format!(
                        "Management nodes of {:.0} CPUs and {:.0} GiB each (now {t0:.0} and {g0:.0})",
                        threads.max(t0).ceil(),
                        gib.max(g0).ceil()
                    ),
                    reason: format!(
                        "{when} the peak ({}) is {} writes/s, and the management nodes serve {}",
                        at.peak.0,
                        round_count(at.peak.1),
                        round_count(at.capacity.writes_per_s)
                    ),
                });
                let vm_cpu: f64 = managers.iter().map(|x| x.vm_cpu).sum();
                if vm_cpu > 0.0 {
                    let bare: Vec<_> = managers
                        .iter()
                        .map(|x| super::fleet::Manager {
                            vm_cpu: 0.0,
                            vm_memory_gib: 0.0,
                            ..x.clone()
                        })
                        .collect();
                    let freed = capacity(&bare, "", m.im_cpu, reserved);
                    if freed.writes_per_s >= at.peak.1 {
                        out.push(Advice {
                            action: "Or keep VMs off the management nodes (taint them)".into(),
                            reason: format!(
                                "their VMs request {vm_cpu:.1} CPUs there; without them the management nodes serve {} writes/s, above the peak of {}",
                                round_count(freed.writes_per_s),
                                round_count(at.peak.1)
                            ),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}
