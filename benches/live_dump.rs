//! A running fleet read from a dump: a generated kubectl `kind: List` JSON (`live::synth`) of
//! 1,000 nodes, 30,000 VMs and VMIs, 30,000 Longhorn volumes and 90,000 replicas (plus
//! Longhorn nodes and settings), read,
//! adopted as a placement, and given its single-failure (every node, every zone) headroom
//! verdict; and the reference size (27 nodes, 360 VMs). Targets (issue 12): under 2 s and
//! under 1 GiB for the large one, under 0.3 s for the reference one, on 2 cores. Then
//! `--upgrade` on the large one (issue 22: under 10 s).
//! Run: `cargo bench --bench live_dump`.

use std::io::Write as _;
use std::time::Instant;

use rackplan::live::synth;
use rackplan::simulate::failure::headroom;
use rackplan::simulate::{ScenarioInput, Study, StudyInput, fleet, scenario::Platform};

fn write_dump(path: &std::path::Path, spec: &synth::Spec) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    synth::write_json(spec, &mut f).unwrap();
    f.flush().unwrap();
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_string)
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    println!(
        "live dump: read, adopt, single-failure headroom (every node and every zone); median of 3 runs"
    );
    println!(
        "  {:>6} {:>7} {:>8} {:>8} {:>8} {:>10} {:>8} {:>9}",
        "nodes", "VMIs", "MB", "read s", "adopt s", "headroom s", "total s", "verdict"
    );
    for (nodes, clusters, memory) in [(27, 60, 500), (1000, 5000, 760)] {
        let spec = synth::Spec {
            nodes,
            zones: (nodes / 40).max(3),
            clusters,
            node_memory_gib: memory,
            ..synth::Spec::default()
        };
        let p = dir.path().join(format!("dump-{nodes}.json"));
        write_dump(&p, &spec);
        let mb = std::fs::metadata(&p).unwrap().len() as f64 / 1e6;
        // Median of three runs of each step: this machine's timings vary by a quarter.
        let mut runs = Vec::new();
        let mut last = None;
        for _ in 0..3 {
            let t0 = Instant::now();
            let state = rackplan::live::read(&p).unwrap();
            let t1 = Instant::now();
            let fleet = fleet::adopt(&state, &Platform::default()).unwrap();
            let t2 = Instant::now();
            let h = headroom::analyse(&fleet.placement);
            let t3 = Instant::now();
            runs.push([
                (t1 - t0).as_secs_f64(),
                (t2 - t1).as_secs_f64(),
                (t3 - t2).as_secs_f64(),
                (t3 - t0).as_secs_f64(),
            ]);
            last = Some((state.vmis.len(), h.verdict));
        }
        let median = |k: usize| {
            let mut v: Vec<f64> = runs.iter().map(|r| r[k]).collect();
            v.sort_by(f64::total_cmp);
            v[1]
        };
        let (vmis, verdict) = last.unwrap();
        println!(
            "  {:>6} {:>7} {:>8.1} {:>8.3} {:>8.3} {:>10.3} {:>8.3} {:>9}",
            nodes,
            vmis,
            mb,
            median(0),
            median(1),
            median(2),
            median(3),
            verdict
        );
    }
    println!("  peak RSS of the run: {:.0} MiB", peak_rss_mib());
    // The whole review the CLI runs on the reference size: every analysis, not only the
    // single-failure verdict.
    let p = dir.path().join("dump-27.json");
    let t0 = Instant::now();
    let l = Study::open(&StudyInput {
        scenario: ScenarioInput::None,
        site: None,
        dump: Some(&p),
        rebuild_what_if: None,
    })
    .unwrap();
    let r = rackplan::simulate::questions::review(&l);
    println!(
        "  full review (headroom, rebuild and sweep, risk 10,000 x 10 years) of the reference size: {:.3} s, verdict {}",
        t0.elapsed().as_secs_f64(),
        r.verdict
    );
    // The rolling upgrade of the large fleet (issue 22: under 10 s): every node in turn,
    // its VMs re-placed, its volumes resynced, the next failure checked, and the other
    // orders tried.
    let p = dir.path().join("dump-1000.json");
    let l = Study::open(&StudyInput {
        scenario: ScenarioInput::None,
        site: None,
        dump: Some(&p),
        rebuild_what_if: None,
    })
    .unwrap();
    let t0 = Instant::now();
    let u = rackplan::simulate::questions::upgrade(&l, &[]).unwrap();
    println!(
        "  --upgrade on 1,000 nodes: {:.3} s ({} steps, {} migrations, window {}, clean {})",
        t0.elapsed().as_secs_f64(),
        u.steps.len(),
        u.migrations,
        rackplan::simulate::questions::minutes(u.window_s),
        u.clean
    );
}
