//! The review's control-plane section: objects and etcd size, steady writes and storms,
//! what the management nodes serve, more clusters until each limit and which binds first,
//! the dump's own figures beside the model's, what to change, and every constant with its
//! source.

use super::model::Section;
use crate::simulate::control_plane::{ControlPlane, Until};
use crate::words::{group, pct, round_count, sentence};

/// Rows of the object table a screen shows (the largest kinds first).
const KINDS_SHOWN: usize = 12;

const MIB: f64 = 1024.0 * 1024.0;

fn mib(b: f64) -> String {
    if b >= 1024.0 * MIB {
        format!("{:.2} GiB", b / MIB / 1024.0)
    } else if b >= MIB {
        format!("{:.0} MiB", b / MIB)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

fn seconds(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{:.0} ms", v * 1000.0))
}

pub(crate) fn section(cp: &ControlPlane) -> Section {
    let mut s = Section::new(
        "control-plane",
        "Control plane: Harvester's API server and etcd",
    );
    s.text(sentence(&cp.summary));
    let mut kinds: Vec<&crate::simulate::control_plane::KindRow> = cp.objects.iter().collect();
    kinds.sort_by(|a, b| b.count.total_cmp(&a.count).then(a.kind.cmp(&b.kind)));
    s.long_table(
        &[
            "kind",
            "objects",
            "from",
            "bytes each in etcd",
            "per VM",
            "in etcd",
        ],
        kinds
            .iter()
            .map(|k| {
                vec![
                    k.kind.clone(),
                    group(k.count.round() as u64),
                    k.count_from.clone(),
                    format!("{:.0} ({})", k.etcd_bytes, k.size_from),
                    ratio(k.per_vm),
                    mib(k.count * k.etcd_bytes),
                ]
            })
            .collect(),
        KINDS_SHOWN,
    );
    let e = &cp.etcd;
    s.text(format!(
        "etcd's database: {} of objects, {} of steady history kept between compactions and {} of the largest storm's writes and events: {} at its largest (the file keeps that size until defragmented), against a quota of {} ({}) and the {} etcd suggests as a maximum.",
        mib(e.live_bytes),
        mib(e.steady_history_bytes),
        mib(e.storm_history_bytes),
        mib(e.peak_bytes),
        mib(e.quota_bytes),
        e.quota_from,
        mib(e.suggested_max_bytes)
    ));
    let mut steady: Vec<Vec<String>> = cp
        .steady
        .iter()
        .map(|p| vec![p.what.clone(), format!("{:.1}", p.per_s)])
        .collect();
    steady.push(vec![
        "steady, in all".into(),
        format!("{:.1}", cp.steady_per_s),
    ]);
    s.table(&["steady writes", "per s"], steady);
    s.table(
        &[
            "storm",
            "what",
            "writes",
            "busiest phase",
            "writes/s on top",
        ],
        cp.storms
            .iter()
            .map(|x| {
                vec![
                    x.name.clone(),
                    x.what.clone(),
                    round_count(x.writes),
                    x.phase.clone(),
                    round_count(x.peak_per_s),
                ]
            })
            .collect(),
    );
    let c = &cp.capacity;
    s.text(format!(
        "What the management nodes serve ({}: {}): {}.",
        c.nodes_from,
        c.nodes.join(", "),
        c.derivation
    ));
    let p = &cp.peak;
    s.text(format!(
        "Peak: {} writes/s during the {}, {} of what they serve (steady: {}); about {} WAL fsyncs/s for etcd's disk. {}",
        round_count(p.per_s),
        p.storm,
        pct(p.peak_share),
        pct(p.steady_share),
        round_count(p.fsyncs_per_s),
        match p.model_p99_s {
            Some(v) => format!(
                "At the steady share of its own knee the calibration machine answered writes with a p99 of {:.0} ms.",
                v * 1000.0
            ),
            None => "The steady load is past the calibration machine's knee at the same share.".into(),
        }
    ));
    let mut rows = Vec::new();
    for g in &cp.growth {
        for r in &g.limits {
            rows.push(vec![
                g.shape.clone(),
                r.limit.clone(),
                r.threshold.clone(),
                r.now.clone(),
                r.until.words(),
            ]);
        }
    }
    s.table(
        &["shape", "limit", "threshold", "now", "more clusters"],
        rows,
    );
    for g in cp.growth.iter().filter(|g| g.vms_per_cluster > 0.0) {
        s.text(format!(
            "{}: {:.0} VMs, {} objects and {} of etcd per cluster; first limit: {}, {}.",
            g.shape,
            g.vms_per_cluster,
            group(g.objects_per_cluster.round() as u64),
            mib(g.etcd_bytes_per_cluster),
            g.first,
            match g.until {
                Until::Additional(n) => format!("after {n} more"),
                u => u.words(),
            }
        ));
    }
    if let Some(b) = &cp.binding {
        s.text(sentence(&b.sentence));
    }
    if let Some(m) = &cp.measured {
        s.table(
            &["measured (the dump's metrics)", "measured", "model"],
            vec![
                vec![
                    "write p99".into(),
                    seconds(m.write_p99_s),
                    seconds(m.model_p99_s),
                ],
                vec![
                    "etcd database".into(),
                    m.db_bytes.map_or_else(|| "-".into(), mib),
                    mib(m.model_db_bytes),
                ],
                vec![
                    "etcd WAL fsync p99".into(),
                    seconds(m.wal_fsync_p99_s),
                    "-".into(),
                ],
            ],
        );
        s.text(format!("Metrics read from: {}.", m.files.join(", ")));
    }
    if cp.advice.is_empty() {
        s.text(if cp.binding.is_some() {
            "Nothing to change: no control-plane limit is reached before the hosts', and etcd's disk load stays within its guidance."
        } else {
            "Nothing to change now: the fleet as it is stays within every control-plane limit, and etcd's disk load within its guidance."
        });
    } else {
        s.table(
            &["change", "why"],
            cp.advice
                .iter()
                .map(|a| vec![a.action.clone(), sentence(&a.reason)])
                .collect(),
        );
    }
    s.text(format!("Not counted: {}.", cp.not_counted.join("; ")));
    s.text(format!(
        "Constants: the calibrated ones were fitted by `cargo bench --bench control_plane` on {}; analogues are another distribution's published figures.",
        cp.calibration_machine
    ));
    s.long_table(
        &["constant", "value", "unit", "origin", "source"],
        cp.figures
            .iter()
            .map(|f| {
                vec![
                    f.name.to_string(),
                    if f.value.abs() >= 1000.0 {
                        group(f.value.round() as u64)
                    } else {
                        format!("{}", (f.value * 1000.0).round() / 1000.0)
                    },
                    f.unit.to_string(),
                    f.origin.word().to_string(),
                    f.source.to_string(),
                ]
            })
            .collect(),
        0,
    );
    s
}
