//! What users run: the default `rackplan simulate` (open the study, then the whole review:
//! headroom, max clusters, the timeline, the rebuild sweep, risk, warnings and the fix) on
//! generated fleets of the reference shape (3 management nodes, the rest compute nodes of
//! the reference design, 60 standard clusters per 27 nodes, the reference teams), at 27,
//! 100, 300 and 1,000 nodes; and the same with `headroom: failures: 2` (N+2) at 100 and 300
//! nodes.
//!
//! Targets (2 cores, release build): the default review at 100 nodes under 2 s and at 1,000
//! nodes under 20 s; N+2 with every default analysis at 100 nodes under 10 s. A size is
//! skipped, and says so, once a smaller one of its series took longer than this size's
//! target (or a minute).
//!
//! And `simulate --from-cluster` with defaults on the generated 1,000-node dump
//! (`benches/live_dump.rs`'s): target under 20 s and under 1 GiB. A targets table closes
//! the run.
//!
//! The delivery section's share of each review is timed on its own (`delivery`).
//!
//! Run: `cargo bench --bench review`.

use std::time::Instant;

use rackplan::simulate::{ScenarioInput, Study, StudyInput, questions};

fn run(label: &str, nodes: usize, failures: u32) -> f64 {
    let text = rackplan::simulate::scenario::scaled::reference_at(nodes, failures);
    let name = std::path::PathBuf::from(format!("{label}-{nodes}.yaml"));
    let t = Instant::now();
    let study = Study::open(&StudyInput {
        scenario: ScenarioInput::Text {
            name: &name,
            text: &text,
        },
        site: None,
        dump: None,
        rebuild_what_if: None,
    })
    .expect("the scaled scenario opens");
    let r = questions::review(&study);
    let secs = t.elapsed().as_secs_f64();
    // The delivery section's share: its placements (the fleet without and with one, then
    // the burst of each shape) and the critical paths, run again on their own.
    let d = Instant::now();
    let delivery = rackplan::simulate::delivery::review(&study);
    let delivery_secs = d.elapsed().as_secs_f64();
    assert_eq!(delivery.shapes.len(), 2);
    FIGURES.lock().expect("figures").push((
        if failures > 1 { "N+2" } else { "default" },
        nodes,
        secs,
    ));
    println!(
        "  {label:<8} {nodes:>6} {:>8} {:>7} {secs:>9.2} {:>8} {:>13} {delivery_secs:>9.2}",
        r.clusters,
        r.vms,
        format!("{:?}", r.verdict).to_lowercase(),
        r.max_clusters
            .as_ref()
            .and_then(|m| m.additional)
            .map_or_else(|| "-".to_string(), |a| a.to_string()),
    );
    secs
}

fn main() {
    println!(
        "the default review ({} threads):",
        rayon::current_num_threads()
    );
    println!(
        "  {:<8} {:>6} {:>8} {:>7} {:>9} {:>8} {:>13} {:>9}",
        "series", "nodes", "clusters", "VMs", "seconds", "verdict", "max clusters", "delivery"
    );
    // The running fleet first, so that the peak RSS read after it is its own.
    let live = from_cluster(1000);
    for (label, failures, sizes) in [
        ("default", 1, &[27, 100, 300, 1000][..]),
        ("N+2", 2, &[100, 300][..]),
    ] {
        let mut last = 0.0;
        for &n in sizes {
            // Growth is super-linear: a size is skipped once a smaller one took longer
            // than this size's target, or over a minute.
            let limit = target(label, n).unwrap_or(60.0).min(60.0);
            if last > limit {
                println!(
                    "  {label:<8} {n:>6}  skipped: the size before took {last:.0} s (over {limit:.0} s)"
                );
                continue;
            }
            last = run(label, n, failures);
        }
    }
    println!();
    println!("targets:");
    for (label, n, secs) in FIGURES.lock().expect("figures").iter() {
        if let Some(t) = target(label, *n) {
            let verdict = if *secs < t { "met" } else { "missed" };
            println!("  {label:<8} {n:>6} {secs:>9.2} s  target under {t:.0} s: {verdict}");
        }
    }
    let (secs, rss) = live;
    println!(
        "  {:<8} {:>6} {secs:>9.2} s  target under 20 s: {}; peak RSS {rss:.0} MiB, target under 1024 MiB: {}",
        "dump",
        1000,
        if secs < 20.0 { "met" } else { "missed" },
        if rss < 1024.0 { "met" } else { "missed" }
    );
}

/// Seconds of each run, for the targets table.
static FIGURES: std::sync::Mutex<Vec<(&'static str, usize, f64)>> =
    std::sync::Mutex::new(Vec::new());

/// The target for a series and size, in seconds.
fn target(label: &str, nodes: usize) -> Option<f64> {
    match (label, nodes) {
        ("default", 100) => Some(2.0),
        ("default", 1000) => Some(20.0),
        ("N+2", 100) => Some(10.0),
        _ => None,
    }
}

/// `simulate --from-cluster DUMP` with defaults (no scenario) on a generated kubectl dump of
/// `nodes` nodes (`live::synth`, as `benches/live_dump.rs`: 5,000 clusters, 30,000 VMIs,
/// 90,000 replicas at 1,000 nodes): reading the dump and the whole review. Returns the
/// seconds and the peak RSS of the process so far (MiB).
fn from_cluster(nodes: usize) -> (f64, f64) {
    use std::io::Write as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("dump.json");
    let spec = rackplan::live::synth::Spec {
        nodes,
        zones: (nodes / 40).max(3),
        clusters: nodes * 5,
        node_memory_gib: 760,
        ..rackplan::live::synth::Spec::default()
    };
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("dump file"));
    rackplan::live::synth::write_json(&spec, &mut f).expect("write the dump");
    f.flush().expect("flush the dump");
    drop(f);
    let t = Instant::now();
    let study = Study::open(&StudyInput {
        scenario: ScenarioInput::None,
        site: None,
        dump: Some(&path),
        rebuild_what_if: None,
    })
    .expect("the dump opens");
    let r = questions::review(&study);
    let secs = t.elapsed().as_secs_f64();
    let rss = peak_rss_mib();
    println!(
        "  {:<8} {nodes:>6} {:>8} {:>7} {secs:>9.2} {:>8} {:>13}   (--from-cluster, defaults; peak RSS {rss:.0} MiB)",
        "dump",
        r.clusters,
        r.vms,
        format!("{:?}", r.verdict).to_lowercase(),
        "-",
    );
    // The control plane's answer for the dump: what the review says beside the timing.
    if let Some(cp) = &r.control_plane {
        println!("           control plane: {}", cp.summary);
        let gib = |b: f64| b / f64::from(1u32 << 30);
        println!(
            "             etcd: {:.2} GiB of objects, {:.2} GiB of steady history, {:.2} GiB of the largest storm's; steady {:.0} writes/s: {}",
            gib(cp.etcd.live_bytes),
            gib(cp.etcd.steady_history_bytes),
            gib(cp.etcd.storm_history_bytes),
            cp.steady_per_s,
            cp.steady
                .iter()
                .map(|p| format!("{} {:.0}", p.what, p.per_s))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for g in &cp.growth {
            for l in &g.limits {
                println!(
                    "             {} {}: {:?} (now {}; threshold {})",
                    g.shape, l.limit, l.until, l.now, l.threshold
                );
            }
        }
        for a in &cp.advice {
            println!("             advice: {}: {}", a.action, a.reason);
        }
    }
    (secs, rss)
}

/// Peak resident memory of this process, MiB (`VmHWM`).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}
