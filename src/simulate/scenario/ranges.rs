//! Every number of a scenario checked against a range that means something, each error
//! located at its key.

use std::collections::BTreeMap;

use super::model::{Pool, Scenario};
use crate::files::yaml::{InputError, Source};
use crate::path;

/// Every number of a scenario within a range that means something: finite (NaN and
/// infinities are refused), counts bounded so the model stays tractable, shares within
/// 0..1, rates above zero where the model divides by them. Each error is located.
pub(super) fn check_ranges(
    s: &Scenario,
    shapes: &BTreeMap<String, Vec<Pool>>,
    src: &Source,
) -> Result<(), InputError> {
    use crate::files::yaml::Seg;
    let num = |path: Vec<Seg>, v: f64, lo: f64, hi: f64| -> Result<(), InputError> {
        if v.is_finite() && v >= lo && v <= hi {
            Ok(())
        } else {
            Err(src.error_at(
                &path,
                format!("{v} is out of range"),
                Some(format!("give a number from {lo} to {hi}")),
            ))
        }
    };
    let mut total_nodes = 0u64;
    for (i, c) in s.fleet.classes.iter().enumerate() {
        num(
            path!["fleet", "classes", i, "count"],
            f64::from(c.count),
            0.0,
            100_000.0,
        )?;
        num(
            path!["fleet", "classes", i, "threads"],
            f64::from(c.threads),
            1.0,
            4096.0,
        )?;
        num(
            path!["fleet", "classes", i, "memory_gib"],
            c.memory_gib,
            1.0,
            65_536.0,
        )?;
        num(
            path!["fleet", "classes", i, "disks"],
            f64::from(c.disks),
            0.0,
            256.0,
        )?;
        num(
            path!["fleet", "classes", i, "disk_tb"],
            c.disk_tb,
            0.0,
            1000.0,
        )?;
        if c.racks.is_empty() {
            return Err(src.error_at(
                &path!["fleet", "classes", i, "racks"],
                "a node class needs at least one rack",
                Some("list the racks its nodes stand in, e.g. `racks: [r01]`".into()),
            ));
        }
        total_nodes += u64::from(c.count);
    }
    if total_nodes > 100_000 {
        return Err(src.error_at(
            &path!["fleet", "classes"],
            format!("{total_nodes} nodes in all; rackplan models at most 100,000"),
            None,
        ));
    }
    let p = &s.platform;
    for (k, v, lo, hi) in [
        ("overcommit_cpu_pct", p.overcommit_cpu_pct, 1.0, 100_000.0),
        (
            "overcommit_memory_pct",
            p.overcommit_memory_pct,
            1.0,
            10_000.0,
        ),
        (
            "overcommit_storage_pct",
            p.overcommit_storage_pct,
            1.0,
            10_000.0,
        ),
        ("reserved_cpu", p.reserved_cpu, 0.0, 4096.0),
        ("reserved_memory_gib", p.reserved_memory_gib, 0.0, 65_536.0),
        (
            "vm_memory_overhead_gib",
            p.vm_memory_overhead_gib,
            0.0,
            1024.0,
        ),
        ("rebuild_limit", f64::from(p.rebuild_limit), 1.0, 64.0),
        (
            "scheduled_refresh_every",
            f64::from(p.scheduled_refresh_every),
            0.0,
            1e6,
        ),
        (
            "replenishment_wait_s",
            p.replenishment_wait_s,
            0.0,
            86_400.0 * 30.0,
        ),
        ("detection_s", p.detection_s, 0.0, 86_400.0),
        ("minimal_available_pct", p.minimal_available_pct, 0.0, 99.0),
        ("stream_mbps", p.stream_mbps, 0.001, 1e6),
        ("disk_read_mbps", p.disk_read_mbps, 0.001, 1e6),
        ("disk_write_mbps", p.disk_write_mbps, 0.001, 1e6),
        ("write_mbps_per_volume", p.write_mbps_per_volume, 0.0, 1e5),
        ("data_fill", p.data_fill, 0.0, 1.0),
        ("vm_restart_s", p.vm_restart_s.unwrap_or(0.0), 0.0, 86_400.0),
        ("pod_start_s", p.pod_start_s, 0.0, 86_400.0),
        ("guest_boot_s", p.guest_boot_s, 0.0, 86_400.0),
        ("max_pods", f64::from(p.max_pods), 1.0, 10_000.0),
        (
            "system_pods_per_node",
            f64::from(p.system_pods_per_node),
            0.0,
            10_000.0,
        ),
        ("rebuild_abort_h", p.rebuild_abort_h, 0.001, 8760.0),
        ("node_upgrade_s", p.node_upgrade_s, 0.0, 86_400.0 * 7.0),
        ("migration_dirty_mbps", p.migration_dirty_mbps, 0.0, 1e6),
        (
            "etcd_quota_gib",
            p.etcd_quota_gib.unwrap_or(2.0),
            0.001,
            1024.0,
        ),
    ] {
        num(path!["platform", k], v, lo, hi)?;
    }
    let f = &s.failures;
    for (k, v, hi) in [
        ("node_permanent_per_year", f.node_permanent_per_year, 365.0),
        (
            "node_transient_per_year",
            f.node_transient_per_year,
            10_000.0,
        ),
        ("transient_minutes", f.transient_minutes, 525_600.0),
        ("rack_events_per_year", f.rack_events_per_year, 365.0),
        ("rack_outage_hours", f.rack_outage_hours, 8760.0),
        (
            "rack_event_permanent_share",
            f.rack_event_permanent_share,
            1.0,
        ),
        ("burst_fraction", f.burst_fraction, 1.0),
    ] {
        num(path!["failures", k], v, 0.0, hi)?;
    }
    num(
        path!["failures", "node_replacement_hours"],
        f.node_replacement_hours,
        0.01,
        87_660.0,
    )?;
    if crate::simulate::scenario::version(&p.harvester_version).is_none_or(|v| v < (1, 0)) {
        return Err(src.error_at(
            &path!["platform", "harvester_version"],
            format!("`{}` is not a Harvester version", p.harvester_version),
            Some("write it like v1.7 or v1.6.1".into()),
        ));
    }
    if let Some(v) = &p.longhorn_version
        && crate::simulate::scenario::version(v).is_none_or(|v| v < (1, 0))
    {
        return Err(src.error_at(
            &path!["platform", "longhorn_version"],
            format!("`{v}` is not a Longhorn version"),
            Some("write it like v1.10 or v1.11.1".into()),
        ));
    }
    if let Some(pol) = &p.vm_force_reset_policy
        && pol.period == 0
    {
        return Err(src.error_at(
            &path!["platform", "vm_force_reset_policy", "period"],
            "period must be above 0 (Harvester refuses 0)",
            None,
        ));
    }
    let h = &s.headroom;
    num(
        path!["headroom", "failures"],
        f64::from(h.failures),
        1.0,
        2.0,
    )?;
    if h.node_and_rack && h.failures < 2 {
        return Err(src.error_at(
            &path!["headroom", "node_and_rack"],
            "node_and_rack checks a rack plus one more node, which needs `failures: 2`",
            Some("set headroom.failures: 2".into()),
        ));
    }
    for (i, set) in h.sets.iter().enumerate() {
        if set.nodes.is_empty() && set.racks.is_empty() {
            return Err(src.error_at(
                &path!["headroom", "sets", i],
                format!("failure set `{}` names no nodes and no racks", set.name),
                None,
            ));
        }
    }
    if let Some(w) = &s.rebuild {
        num(path!["rebuild", "data_tib"], w.data_tib, 0.001, 1e6)?;
    }
    num(
        path!["analysis", "warn", "rebuild_share"],
        s.analysis.warn.rebuild_share,
        0.01,
        1.0,
    )?;
    let a = &s.analysis;
    num(
        path!["analysis", "risk_years"],
        f64::from(a.risk_years),
        1.0,
        1000.0,
    )?;
    num(
        path!["analysis", "risk_trials"],
        f64::from(a.risk_trials),
        1.0,
        10_000_000.0,
    )?;
    num(
        path!["analysis", "correlated_failed_nodes"],
        f64::from(a.correlated_failed_nodes),
        0.0,
        100_000.0,
    )?;
    num(
        path!["analysis", "copyset_scatter_width"],
        f64::from(a.copyset_scatter_width),
        1.0,
        100_000.0,
    )?;
    for (name, pools) in shapes {
        check_pools(pools, &path!["shapes", name.as_str(), "pools"], src)?;
    }
    // Counts of clusters: bounded one by one, and the VMs they make bounded in all, so
    // no scenario asks for more work (or memory) than a fleet of the largest size holds.
    let vms_of = |shape: &str| -> u64 {
        shapes
            .get(shape)
            .map_or(0, |p| p.iter().map(|p| u64::from(p.count)).sum())
    };
    let mut total_vms = 0u64;
    for (i, c) in s.clusters.iter().enumerate() {
        num(
            path!["clusters", i, "count"],
            f64::from(c.count),
            0.0,
            f64::from(MAX_CLUSTERS),
        )?;
        total_vms += u64::from(c.count) * vms_of(&c.shape);
    }
    let mut months: Vec<(i32, Vec<crate::files::yaml::Seg>)> = Vec::new();
    for (t, team) in s.teams.iter().enumerate() {
        if let Some(q) = team.vcpu_quota {
            num(path!["teams", t, "vcpu_quota"], q, 0.0, 1e9)?;
        }
        for (i, r) in team.requests.iter().enumerate() {
            num(
                path!["teams", t, "requests", i, "count"],
                f64::from(r.count),
                1.0,
                f64::from(MAX_CLUSTERS),
            )?;
            total_vms += u64::from(r.count) * vms_of(&r.shape);
            for (k, m) in [("from", Some(&r.from)), ("until", r.until.as_ref())] {
                if let Some(i_m) = m.and_then(|m| super::model::month_index(m)) {
                    months.push((i_m, path!["teams", t, "requests", i, k]));
                }
            }
        }
    }
    // Every VM is a pod (its virt-launcher): past the fleet's pods nothing can fit, and
    // placing it all would only cost time.
    let pods = total_nodes * u64::from(s.platform.max_pods);
    if total_nodes > 0 && total_vms > pods {
        return Err(src.error_at(
            &path!["clusters"],
            format!(
                "{total_vms} VMs in the clusters and team requests together, but the fleet's {total_nodes} nodes run at most {pods} pods ({} each), one per VM",
                s.platform.max_pods
            ),
            Some("lower the cluster counts, or add node classes".into()),
        ));
    }
    if total_vms > MAX_VMS {
        return Err(src.error_at(
            &path!["clusters"],
            format!(
                "{total_vms} VMs in the clusters and team requests together; rackplan models at most {MAX_VMS}"
            ),
            Some("lower the cluster counts".into()),
        ));
    }
    if let (Some(first), Some(last)) = (
        months.iter().min_by_key(|m| m.0),
        months.iter().max_by_key(|m| m.0),
    ) && last.0 - first.0 > MAX_TIMELINE_MONTHS
    {
        return Err(src.error_at(
            &last.1,
            format!(
                "the timeline would run from {} to {}: {} months, more than the {MAX_TIMELINE_MONTHS} rackplan plans",
                super::model::month_name(first.0),
                super::model::month_name(last.0),
                last.0 - first.0 + 1
            ),
            Some("plan at most 50 years ahead".into()),
        ));
    }
    crate::simulate::delivery::check_spec(&s.delivery, shapes, src)?;
    Ok(())
}

/// Clusters in one count (a `clusters` entry, a team request, an admit request).
pub(crate) const MAX_CLUSTERS: u32 = 100_000;
/// VMs a scenario may ask for in all (clusters and team requests at once).
pub(crate) const MAX_VMS: u64 = 200_000;
/// VMs in one pool.
pub(crate) const MAX_POOL_VMS: u32 = 10_000;
/// Months from the first to the last month a timeline names.
pub(crate) const MAX_TIMELINE_MONTHS: i32 = 600;

/// The pools of a shape or a request: counts, sizes and disks within ranges that mean
/// something, each error at its key under `at`.
pub(crate) fn check_pools(
    pools: &[Pool],
    at: &[crate::files::yaml::Seg],
    src: &Source,
) -> Result<(), InputError> {
    let num = |k: crate::files::yaml::Seg,
               i: usize,
               sub: Option<usize>,
               v: f64,
               lo: f64,
               hi: f64|
     -> Result<(), InputError> {
        if v.is_finite() && v >= lo && v <= hi {
            return Ok(());
        }
        let mut path = at.to_vec();
        path.extend(path![i, k]);
        if let Some(j) = sub {
            path.extend(path![j]);
        }
        Err(src.error_at(
            &path,
            format!("{v} is out of range"),
            Some(format!("give a number from {lo} to {hi}")),
        ))
    };
    use crate::files::yaml::Seg;
    for (i, pool) in pools.iter().enumerate() {
        let k = |s: &'static str| Seg::Key(s.into());
        num(
            k("count"),
            i,
            None,
            f64::from(pool.count),
            0.0,
            f64::from(MAX_POOL_VMS),
        )?;
        num(k("vcpu"), i, None, pool.vcpu, 0.0, 4096.0)?;
        num(k("memory_gib"), i, None, pool.memory_gib, 0.0, 65_536.0)?;
        for (j, d) in pool.disks_gib.iter().enumerate() {
            num(k("disks_gib"), i, Some(j), *d, 0.0, 1e7)?;
        }
    }
    Ok(())
}
