//! The control-plane answer of a review: the objects and etcd size now, the steady writes
//! and the storms, what the management nodes serve, and for each catalogue shape how many
//! more clusters fit before each limit (etcd's quota and suggested maximum, 60,000 objects
//! of one type, the write rate served); then which limit stops the max-clusters shape
//! first, the dump's own figures beside the model's, and what to change.

use std::collections::BTreeMap;

use super::advice::advice;
use super::figures::{
    CAL_FSYNC_PER_WRITE, CALIBRATION_MACHINE, ETCD_QUOTA_DEFAULT, ETCD_SUGGESTED_MAX, IM_CPU_SHARE,
    OBJECTS_PER_TYPE, figures, p99_at_share,
};
use super::fleet::{Snapshot, snapshot};
use super::model::{
    Binding, ControlPlane, ControlPlaneStop, LimitRow, Measured, Peak, ShapeGrowth, Until,
};
use super::objects::Objects;
use super::state::{Model, State};
use super::writes::steady;
use crate::simulate::place::{MigrationConfig, Outcome, migrate};
use crate::simulate::report::{MaxClusters, Warning};
use crate::simulate::scenario::{Pool, month_index};
use crate::simulate::study::Study;
use crate::words::{group, round_count};

/// The shape named when the scenario has none: the limits of the fleet as it is.
pub(crate) const AS_IT_IS: &str = "(no shape: the fleet as it is)";

/// Most clusters a growth search looks at.
const SEARCH_BOUND: u32 = 100_000;

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

/// The smallest `n` for which `past(n)` holds, as the clusters that fit before it.
pub(crate) fn until(past: impl Fn(u32) -> bool) -> Until {
    if past(0) {
        return Until::AlreadyPast;
    }
    let mut hi = 1u32;
    while !past(hi) {
        if hi >= SEARCH_BOUND {
            return Until::Never;
        }
        hi = hi.saturating_mul(2).min(SEARCH_BOUND);
    }
    let mut lo = hi / 2;
    // past(lo) is false (lo = 0 or a power of two checked), past(hi) true.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if past(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Until::Additional(hi - 1)
}

fn gib(b: f64) -> String {
    if b >= GIB {
        format!("{:.2} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", b / MIB)
    }
}

/// The limits for more clusters of `shape`.
fn growth(m: &Model<'_>, shape: &str, pools: &[Pool], now: &State) -> ShapeGrowth {
    let one = m.state(shape, pools, 1.0);
    let quota = m.quota.0;
    let state = |n: u32| m.state(shape, pools, f64::from(n));
    let mut limits = vec![
        LimitRow {
            limit: "etcd quota".into(),
            threshold: format!("{} ({})", gib(quota), m.quota.1),
            now: gib(now.db_peak),
            until: until(|n| state(n).db_peak > quota),
            detail: "the database file at its largest: objects, a compaction window of history, the largest storm".into(),
        },
        LimitRow {
            limit: "etcd suggested maximum".into(),
            threshold: gib(ETCD_SUGGESTED_MAX),
            now: gib(now.db_peak),
            until: until(|n| state(n).db_peak > ETCD_SUGGESTED_MAX),
            detail: "etcd's suggested largest database (the quota can be raised to it)".into(),
        },
        LimitRow {
            limit: "objects of one type".into(),
            threshold: group(OBJECTS_PER_TYPE as u64),
            now: format!("{} {}", group(now.largest.1.round() as u64), now.largest.0),
            until: until(|n| state(n).largest.1 > OBJECTS_PER_TYPE),
            detail: format!("{} grows fastest", one.largest.0),
        },
        LimitRow {
            limit: "write capacity".into(),
            threshold: format!(
                "{} writes/s served now",
                round_count(now.capacity.writes_per_s)
            ),
            now: format!("peak {} writes/s ({})", round_count(now.peak.1), now.peak.0),
            until: until(|n| {
                let s = state(n);
                s.peak.1 > s.capacity.writes_per_s
            }),
            detail: "the peak (steady plus the worst storm) against what the management nodes serve, which VMs placed there reduce".into(),
        },
    ];
    // The first one reached; etcd's suggested maximum counts only when the quota is above
    // it (the quota is reached first otherwise).
    let first = limits
        .iter()
        .filter(|r| r.limit != "etcd suggested maximum" || quota > ETCD_SUGGESTED_MAX)
        .min_by_key(|r| r.until)
        .map_or(("none".into(), Until::Never), |r| {
            (r.limit.clone(), r.until)
        });
    limits.retain(|r| r.limit != "etcd suggested maximum" || quota < ETCD_SUGGESTED_MAX);
    ShapeGrowth {
        shape: shape.to_string(),
        vms_per_cluster: one.counts.vms - now.counts.vms,
        objects_per_cluster: one.objects_total - now.objects_total,
        etcd_bytes_per_cluster: one.db.live_bytes - now.db.live_bytes,
        limits,
        first: first.0,
        until: first.1,
    }
}

/// The quota etcd runs with: the dump's metrics, an etcd Pod's flag, the scenario, or
/// etcd's default.
fn quota(l: &Study) -> (f64, String) {
    if let Some(q) = l.metrics.as_ref().and_then(|m| m.quota_bytes) {
        return (q, "the dump's etcd metrics".into());
    }
    if let Some((q, pod)) = l
        .census
        .as_ref()
        .and_then(|c| c.quota_backend_bytes.clone())
    {
        return (q, format!("{pod} --quota-backend-bytes"));
    }
    if let Some(g) = l.scenario.platform.etcd_quota_gib {
        return (g * GIB, "platform.etcd_quota_gib".into());
    }
    (ETCD_QUOTA_DEFAULT, "etcd's default".into())
}

/// Longhorn's `guaranteed-instance-manager-cpu`: a plain percentage or, from Longhorn
/// 1.10, a JSON map by data engine (`{"v1":"12"}`); the v1 engine's is taken.
fn im_share(setting: Option<&str>) -> f64 {
    let Some(s) = setting else {
        return IM_CPU_SHARE;
    };
    let v = match serde_json::from_str::<serde_json::Value>(s) {
        Ok(serde_json::Value::Object(m)) => m.get("v1").and_then(|x| {
            x.as_str()
                .map(str::to_string)
                .or_else(|| x.as_f64().map(|f| f.to_string()))
        }),
        _ => Some(s.to_string()),
    };
    v.and_then(|x| x.trim().parse::<f64>().ok())
        .filter(|p| (0.0..=100.0).contains(p))
        .map_or(IM_CPU_SHARE, |p| p / 100.0)
}

/// The clusters the busiest month of the scenario's requests delivers (at least one).
fn busiest_month(l: &Study) -> f64 {
    let mut by: BTreeMap<i32, u32> = BTreeMap::new();
    for t in &l.scenario.teams {
        for r in &t.requests {
            if let Some(m) = month_index(&r.from) {
                *by.entry(m).or_default() += r.count;
            }
        }
    }
    f64::from(by.values().copied().max().unwrap_or(1).max(1))
}

/// Migrations at once and seconds each for the fleet's mean VM.
fn migrations(l: &Study, snap: &Snapshot) -> (f64, f64) {
    let mut notes = Vec::new();
    let cfg = l
        .live
        .as_ref()
        .and_then(|f| f.pins.kubevirt_migration.as_deref())
        .map_or_else(MigrationConfig::default, |j| {
            MigrationConfig::from_setting(j, &mut notes)
        });
    let link = crate::simulate::questions::migration_link(l);
    let slots = cfg.slots();
    let rate = crate::simulate::place::copy_rate(&cfg, &link, slots);
    let secs = match migrate(&cfg, &link, snap.vm_memory_bytes, rate) {
        Outcome::Done(s) | Outcome::Aborted(s) => s,
    };
    (slots as f64, secs)
}

/// The control-plane answer for study `l` placed as `pl`, with max clusters' answer when
/// it was asked.
pub(crate) fn answer(
    l: &Study,
    pl: &crate::simulate::place::Placement,
    max_clusters: Option<&MaxClusters>,
) -> ControlPlane {
    let p = &l.scenario.platform;
    let snap = snapshot(l, pl);
    let objects = Objects::new(
        &snap.now,
        f64::from(p.system_pods_per_node),
        l.census.as_ref(),
    );
    let m = Model {
        l,
        migrations: migrations(l, &snap),
        snap,
        objects,
        quota: quota(l),
        im_cpu: im_share(l.instance_manager_cpu.as_deref()),
        burst: busiest_month(l),
    };
    // The shape whose delivery burst the answer now shows: max clusters', else the one
    // with most VMs.
    let shapes: Vec<(&String, &Vec<Pool>)> = l.shapes.iter().collect();
    let lead = max_clusters.map(|mc| mc.shape.clone()).or_else(|| {
        shapes
            .iter()
            .max_by_key(|(_, pools)| pools.iter().map(|x| x.count).sum::<u32>())
            .map(|(n, _)| (*n).clone())
    });
    let empty: Vec<Pool> = Vec::new();
    let lead_pools = lead
        .as_ref()
        .and_then(|s| l.shapes.get(s))
        .unwrap_or(&empty);
    let now = m.state(lead.as_deref().unwrap_or(""), lead_pools, 0.0);
    let mut growth: Vec<ShapeGrowth> = shapes
        .iter()
        .map(|(name, pools)| growth(&m, name, pools, &now))
        .collect();
    if growth.is_empty() {
        // No shape to add: the limits of the fleet as it is (each past already, or never).
        growth.push(self::growth(&m, AS_IT_IS, &[], &now));
    }
    let binding = max_clusters.and_then(|mc| binding(mc, &growth));
    let peak = Peak {
        storm: now.peak.0.clone(),
        per_s: now.peak.1,
        fsyncs_per_s: now.peak.1 * CAL_FSYNC_PER_WRITE,
        steady_share: share(now.steady, now.capacity.writes_per_s),
        peak_share: share(now.peak.1, now.capacity.writes_per_s),
        model_p99_s: p99_at_share(share(now.steady, now.capacity.writes_per_s)),
    };
    let measured = l.metrics.as_ref().map(|mt| Measured {
        files: mt.files.clone(),
        write_p99_s: mt.write_p99_s,
        model_p99_s: peak.model_p99_s,
        db_bytes: mt.db_total_bytes,
        model_db_bytes: now.db.live_bytes + now.db.steady_history_bytes,
        wal_fsync_p99_s: mt.wal_fsync_p99_s,
    });
    let advice = advice(
        &m,
        &now,
        &growth,
        binding.as_ref(),
        measured.as_ref(),
        lead_pools,
    );
    let summary = summary(&now, &peak, binding.as_ref(), &growth);
    ControlPlane {
        summary,
        objects_total: now.objects_total,
        objects: m.objects.rows.clone(),
        largest_kind: now.largest.0.clone(),
        largest_count: now.largest.1,
        etcd: now.db.clone(),
        steady: steady(&now.counts, p.write_mbps_per_volume > 0.0),
        steady_per_s: now.steady,
        storms: now.storms.clone(),
        peak,
        capacity: now.capacity.clone(),
        growth,
        binding,
        measured,
        advice,
        not_counted: not_counted(l.census.is_some()),
        figures: figures(),
        calibration_machine: CALIBRATION_MACHINE.into(),
    }
}

fn share(x: f64, of: f64) -> f64 {
    if of > 0.0 { x / of } else { f64::INFINITY }
}

fn not_counted(dump: bool) -> Vec<String> {
    let mut v = vec![
        "reads: controllers read from watch caches; the request rate counted is writes".to_string(),
        "Longhorn Snapshot and VolumeAttachment (longhorn.io) objects, backing images, and the guest clusters' own API objects (they live in the guest clusters)".to_string(),
    ];
    if !dump {
        v.push(
            "Harvester's own objects (settings, CRDs, RBAC, chart secrets): a dump counts them"
                .into(),
        );
    }
    v
}

/// What stops the placement's answer: the resource with least slack at the first
/// failing count.
fn hosts_cause(mc: &MaxClusters) -> String {
    let Some(f) = mc.first_failure else {
        return if mc.lower_bound {
            "not reached before the search stopped".into()
        } else {
            "the raw capacity bound of the search".into()
        };
    };
    let Some((_, s, _)) = mc.curve.iter().find(|(n, _, _)| *n == f) else {
        return "hosts".into();
    };
    if s.storage <= s.cpu.min(s.memory) {
        "storage".into()
    } else if s.memory <= s.cpu {
        "hosts (memory)".into()
    } else {
        "hosts (cpu)".into()
    }
}

fn binding(mc: &MaxClusters, growth: &[ShapeGrowth]) -> Option<Binding> {
    let g = growth.iter().find(|g| g.shape == mc.shape)?;
    let cause = hosts_cause(mc);
    let cp_first = match (g.until, mc.additional) {
        (Until::AlreadyPast, _) => true,
        (Until::Additional(c), Some(h)) => c < h,
        (Until::Additional(_), None) | (Until::Never, _) => false,
    };
    let first = if cp_first {
        format!("control plane ({})", g.first)
    } else {
        cause.clone()
    };
    let hosts = mc.additional.map_or_else(
        || "none (the fleet fails as it is)".to_string(),
        |h| format!("{h} more"),
    );
    let sentence = if cp_first {
        format!(
            "The control plane stops {} clusters first: {} ({}); the hosts alone take {hosts}.",
            mc.shape,
            g.until.words(),
            g.first
        )
    } else {
        let mut what = cause.clone();
        if let Some(c) = what.get_mut(0..1) {
            c.make_ascii_uppercase();
        }
        format!(
            "{what} stop {} clusters first: {hosts}; the control plane allows {} ({}).",
            mc.shape,
            g.until.words(),
            g.first
        )
    };
    Some(Binding {
        shape: mc.shape.clone(),
        hosts_additional: mc.additional,
        hosts_cause: cause,
        control_plane: g.until,
        control_plane_limit: g.first.clone(),
        first,
        sentence,
    })
}

fn summary(now: &State, peak: &Peak, b: Option<&Binding>, growth: &[ShapeGrowth]) -> String {
    let mut s = format!(
        "{} objects in etcd (most: {} {}), a database of about {} at its largest against a quota of {}; {} writes/s steady, {} at the peak ({}), against {} served.",
        group(now.objects_total.round() as u64),
        group(now.largest.1.round() as u64),
        now.largest.0,
        gib(now.db_peak),
        gib(now.db.quota_bytes),
        round_count(now.steady),
        round_count(peak.per_s),
        now.peak.0,
        round_count(now.capacity.writes_per_s),
    );
    if let Some(b) = b {
        s.push(' ');
        s.push_str(&b.sentence);
    } else if let Some(g) = growth.iter().find(|g| g.shape == AS_IT_IS) {
        s.push_str(&match g.until {
            Until::AlreadyPast => format!(" The fleet is past a control-plane limit as it is: {}.", g.first),
            _ => " No control-plane limit is reached by the fleet as it is (the scenario names no shape to add).".into(),
        });
    } else if let Some(g) = growth.iter().min_by_key(|g| g.until) {
        s.push_str(&format!(
            " The first limit for more {} clusters: {}, {}.",
            g.shape,
            g.first,
            g.until.words()
        ));
    }
    s
}

/// Max clusters names the control plane when it stops growth first: `additional` becomes
/// the control plane's answer, and the hosts' answer is kept beside it.
pub(crate) fn cap(mc: &mut MaxClusters, cp: &ControlPlane) {
    let Some(b) = &cp.binding else {
        return;
    };
    if b.shape != mc.shape || !b.first.starts_with("control plane") {
        return;
    }
    mc.control_plane = Some(ControlPlaneStop {
        limit: b.control_plane_limit.clone(),
        hosts_additional: mc.additional,
    });
    mc.additional = match b.control_plane {
        Until::Additional(n) => Some(mc.additional.map_or(n, |h| h.min(n))),
        Until::AlreadyPast | Until::Never => None,
    };
}

/// The warning when the fleet is past a control-plane limit as it is.
pub(crate) fn warnings(cp: &ControlPlane) -> Vec<Warning> {
    let mut past: Vec<String> = Vec::new();
    for r in cp
        .growth
        .iter()
        .flat_map(|g| &g.limits)
        .filter(|r| r.until == Until::AlreadyPast)
    {
        let line = format!("{} ({} against {})", r.limit, r.now, r.threshold);
        if !past.contains(&line) {
            past.push(line);
        }
    }
    if past.is_empty() {
        return Vec::new();
    }
    vec![Warning {
        kind: "control-plane",
        message: format!(
            "the control plane is past its limit as the fleet is: {}; see the control-plane section for what to change",
            past.join("; ")
        ),
    }]
}
