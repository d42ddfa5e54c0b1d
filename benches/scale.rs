//! The large-fleet targets, measured as users run them: the whole `rackplan` process under
//! `/usr/bin/time -v` (CPU seconds, user + system; wall seconds; peak RSS), on the generated
//! fleets the other benchmarks use (the reference scenario scaled,
//! `simulate::scenario::scaled`; the kubectl dump of `live::synth`, as `benches/review.rs`
//! and `benches/live_dump.rs` make it; the replay BMCs of `benches/redfish_fleet.rs`).
//!
//! | what | target (2 cores) |
//! | --- | --- |
//! | `simulate SCENARIO`, 1,000 nodes (13,338 VMs) | under 5 s of CPU |
//! | `simulate SCENARIO`, 3,000 nodes (40,002 VMs) | under 20 s of CPU, 512 MiB |
//! | `simulate --from-cluster DUMP`, 3,000 nodes | under 10 s, 512 MiB |
//! | `admit REQUEST SCENARIO --from-cluster DUMP`, 3,000 nodes | under 10 s, 512 MiB |
//! | `admit REQUEST SCENARIO --from-cluster DUMP`, 1,000 nodes | under 0.5 s, the whole process |
//! | `discover redfish`, 20 BMCs at 100 ms, defaults | within 1.2x the critical-path bound |
//! | `discover redfish`, 20 BMCs at 100 ms and one that never answers, defaults | within 15 s of the 20 alone |
//!
//! The replay BMCs honour `$expand` as their capture's ServiceRoot advertises it (DSP0266);
//! the "expand refused" row has them answer it with 400 instead, as a BMC that advertises it
//! but does not implement it.
//!
//! With `BASELINE=/path/to/rackplan` (another build, e.g. the previous commit's) every row
//! runs that binary too, beside this one, on the same inputs in the same run. `ONLY=word`
//! runs the rows whose name holds the word; `SCALE_DIR=path` keeps the generated inputs
//! there. A row whose first run takes under 2 s is run 7 times, the binaries alternating,
//! and its median run reported with the range. Run: `cargo bench --bench scale`.

#[path = "../tests/support/replay.rs"]
mod replay;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rackplan::live::synth;

/// What one run of a process took.
struct Took {
    wall: f64,
    cpu: f64,
    rss_mib: f64,
    code: i32,
    stdout: Vec<u8>,
}

/// Run `bin args` under `/usr/bin/time -v`.
fn measure(bin: &Path, args: &[&str]) -> Took {
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(bin)
        .args(args)
        .output()
        .expect("GNU time (/usr/bin/time) runs rackplan");
    let wall = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let field = |name: &str| {
        stderr
            .lines()
            .find(|l| l.contains(name))
            .and_then(|l| l.rsplit(':').next())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    Took {
        wall,
        cpu: field("User time (seconds)") + field("System time (seconds)"),
        rss_mib: field("Maximum resident set size") / 1024.0,
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
    }
}

/// Rounds of a short row: a row whose first run takes under `SHORT` seconds is run this
/// many times, the binaries alternating, and its median run reported (a single run of a
/// half-second command is at the machine's mercy).
const ROUNDS: usize = 7;
const SHORT: f64 = 2.0;

/// Each binary's run of `args`: the median of `ROUNDS` (by wall time, with the range in
/// the note) when the row is short, else the one run.
fn median_runs<'b>(bins: &'b [(&'b str, PathBuf)], args: &[&str]) -> Vec<(&'b str, Took, String)> {
    let mut runs: Vec<Vec<Took>> = bins.iter().map(|(_, b)| vec![measure(b, args)]).collect();
    if runs.iter().all(|r| r[0].wall < SHORT) {
        for _ in 1..ROUNDS {
            for (r, (_, b)) in runs.iter_mut().zip(bins) {
                r.push(measure(b, args));
            }
        }
    }
    runs.into_iter()
        .zip(bins)
        .map(|(mut r, (label, _))| {
            r.sort_by(|a, b| a.wall.total_cmp(&b.wall));
            let note = if r.len() > 1 {
                format!(
                    "median of {} runs ({:.2}-{:.2} s)",
                    r.len(),
                    r[0].wall,
                    r[r.len() - 1].wall
                )
            } else {
                String::new()
            };
            (*label, r.swap_remove(r.len() / 2), note)
        })
        .collect()
}

/// A target: seconds (of CPU, or wall) and MiB.
#[derive(Clone, Copy)]
struct Target {
    secs: f64,
    cpu: bool,
    mib: Option<f64>,
}

impl Target {
    fn judge(self, t: &Took) -> &'static str {
        let secs = if self.cpu { t.cpu } else { t.wall };
        if secs < self.secs && self.mib.is_none_or(|m| t.rss_mib < m) {
            "met"
        } else {
            "missed"
        }
    }

    fn describe(self) -> String {
        format!(
            "< {:.1} s {}{}",
            self.secs,
            if self.cpu { "CPU" } else { "wall" },
            self.mib.map_or_else(String::new, |m| format!(", {m} MiB"))
        )
    }
}

fn print_row(name: &str, label: &str, t: &Took, target: Target, note: &str) {
    println!(
        "  {name:<34} {label:<8} {:>8.2} {:>8.2} {:>8.0} {:>4}  {:<22} {:<6} {note}",
        t.wall,
        t.cpu,
        t.rss_mib,
        t.code,
        target.describe(),
        target.judge(t)
    );
}

fn main() {
    let here = PathBuf::from(env!("CARGO_BIN_EXE_rackplan"));
    let mut bins: Vec<(&str, PathBuf)> = vec![("this", here)];
    if let Some(old) = std::env::var_os("BASELINE") {
        bins.insert(0, ("baseline", PathBuf::from(old)));
    }
    let only = std::env::var("ONLY").unwrap_or_default();
    // SCALE_DIR=path keeps the generated inputs there (to profile one row by hand).
    let temp = tempfile::tempdir().expect("temp dir");
    let dir =
        std::env::var_os("SCALE_DIR").map_or_else(|| temp.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&dir).expect("the inputs' folder");
    let dir = dir.as_path();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    println!(
        "  {:<34} {:<8} {:>8} {:>8} {:>8} {:>4}  {:<22} {:<6}",
        "row", "binary", "wall s", "CPU s", "MiB", "exit", "target", ""
    );
    let cpu = |secs: f64, mib: Option<f64>| Target {
        secs,
        cpu: true,
        mib,
    };
    let wall = |secs: f64, mib: Option<f64>| Target {
        secs,
        cpu: false,
        mib,
    };
    let mut rows: Vec<(String, Vec<String>, Target)> = Vec::new();
    for (nodes, target) in [(1000, cpu(5.0, None)), (3000, cpu(20.0, Some(512.0)))] {
        let name = format!("simulate, {nodes} nodes");
        if !name.contains(&only) {
            continue;
        }
        let p = dir.join(format!("scaled-{nodes}.yaml"));
        std::fs::write(
            &p,
            rackplan::simulate::scenario::scaled::reference_at(nodes, 1),
        )
        .expect("write the scenario");
        let args = vec![
            "simulate".into(),
            p.display().to_string(),
            "--output".into(),
            "json".into(),
        ];
        rows.push((name, args, target));
    }
    let scenario = repo.join("simulations/reference-factory.yaml");
    let request = dir.join("request.yaml");
    std::fs::write(&request, "team: paiement\nshape: standard\ncount: 1\n").expect("request");
    for nodes in [1000, 3000] {
        let wanted = [
            format!("simulate --from-cluster, {nodes} nodes"),
            format!("admit --from-cluster, {nodes} nodes"),
        ];
        if !wanted.iter().any(|w| w.contains(&only)) {
            continue;
        }
        let dump = dir.join(format!("dump-{nodes}.json"));
        write_dump(&dump, nodes);
        let dump = dump.display().to_string();
        if nodes == 3000 && wanted[0].contains(&only) {
            rows.push((
                wanted[0].clone(),
                vec![
                    "simulate".into(),
                    "--from-cluster".into(),
                    dump.clone(),
                    "--output".into(),
                    "json".into(),
                ],
                wall(10.0, Some(512.0)),
            ));
        }
        if wanted[1].contains(&only) {
            rows.push((
                wanted[1].clone(),
                vec![
                    "admit".into(),
                    request.display().to_string(),
                    scenario.display().to_string(),
                    "--from-cluster".into(),
                    dump.clone(),
                    "--output".into(),
                    "json".into(),
                ],
                if nodes == 1000 {
                    wall(0.5, None)
                } else {
                    wall(10.0, Some(512.0))
                },
            ));
        }
    }
    for (name, args, target) in &rows {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for (label, t, note) in median_runs(&bins, &args) {
            let answer = answer_of(&String::from_utf8_lossy(&t.stdout));
            let note = [answer, note]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
            print_row(name, label, &t, *target, &note);
        }
    }
    discovery(&bins, &only);
}

/// A generated kubectl dump of `nodes` nodes (`benches/review.rs`'s: 5 clusters of 3 + 3
/// VMs per node, zones of 40 nodes).
fn write_dump(path: &Path, nodes: usize) {
    let spec = synth::Spec {
        nodes,
        zones: (nodes / 40).max(3),
        clusters: nodes * 5,
        node_memory_gib: 760,
        ..synth::Spec::default()
    };
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("dump file"));
    synth::write_json(&spec, &mut f).expect("write the dump");
    f.flush().expect("flush the dump");
}

/// The answer's headline from a JSON document: the verdict, max clusters, admitted.
fn answer_of(json: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
        return String::new();
    };
    let mut out = Vec::new();
    if let Some(x) = v.get("verdict") {
        out.push(format!("verdict {x}"));
    }
    if let Some(m) = v.get("max_clusters").and_then(|m| m.get("additional")) {
        out.push(format!("max clusters {m}"));
    }
    if let Some(a) = v.get("admitted") {
        out.push(format!("admitted {a}"));
    }
    out.join(", ")
}

/// 20 replay BMCs (the mockups, mixed) answering after 100 ms, with and without a 21st
/// that accepts and never answers, crawled with the default settings; and the 20 refusing
/// `$expand`.
fn discovery(bins: &[(&str, PathBuf)], only: &str) {
    let shared = std::env::var_os("RACKPLAN_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        PathBuf::from,
    );
    let root = shared.join("reference/redfish-mockups");
    let Ok(entries) = std::fs::read_dir(&root) else {
        println!(
            "  discover redfish: skipped, no mockups at {}",
            root.display()
        );
        return;
    };
    let mut mockups: Vec<PathBuf> = entries
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("redfish/v1/index.json").exists())
        .collect();
    mockups.sort();
    let spec = |i: usize, expand: bool| {
        let mut s = replay::BmcSpec::new(&mockups[i % mockups.len()]);
        s.latency = Duration::from_millis(100);
        s.expand = expand;
        s
    };
    for (silent, expand) in [(false, true), (false, false), (true, true)] {
        let name = match (silent, expand) {
            (true, _) => "discover redfish, 20 + 1 silent",
            (false, true) => "discover redfish, 20 BMCs",
            (false, false) => "discover redfish, 20, expand refused",
        };
        if !name.contains(only) {
            continue;
        }
        let mut specs: Vec<replay::BmcSpec> = (0..20).map(|i| spec(i, expand)).collect();
        if silent {
            let mut s = spec(0, expand);
            s.fault = replay::Fault::Hang;
            specs.push(s);
        }
        let fleet = replay::Fleet::start(specs);
        let site = tempfile::tempdir().expect("site");
        let mut y = String::from("bmcs:\n");
        for b in &fleet.bmcs {
            y.push_str(&format!("  - address: \"{}\"\n", b.url()));
        }
        std::fs::write(site.path().join("bmcs.yaml"), y).expect("bmcs.yaml");
        let dir = site.path().display().to_string();
        for (label, bin) in bins {
            // Each binary starts from the same site.
            let _ = std::fs::remove_file(site.path().join("nodes.yaml"));
            let t = measure(
                bin,
                &["--output", "json", "discover", "redfish", "--site", &dir],
            );
            let v: serde_json::Value =
                serde_json::from_slice(&t.stdout).unwrap_or(serde_json::Value::Null);
            let empty = Vec::new();
            let bmcs = v["bmcs"].as_array().unwrap_or(&empty);
            let req = |b: &serde_json::Value| b["requests"].as_u64().unwrap_or(0);
            let total: u64 = bmcs.iter().take(20).map(req).sum();
            let most = bmcs.iter().take(20).map(req).max().unwrap_or(0);
            // The request bound: the busiest BMC's requests, 4 at a time, 100 ms each.
            let bound = most as f64 / 4.0 * 0.1;
            let ok = bmcs.iter().filter(|b| b["ok"] == true).count();
            let mut note = format!(
                "{ok} ok; the 20: {total} requests, bound {bound:.2} s, wall / bound {:.2}",
                t.wall / bound.max(1e-9)
            );
            // The silent row: within 15 s of the 20 alone; the others: within 1.2x of the
            // critical path (below), the request bound where no chain is longer.
            let mut target = Target {
                secs: if silent { 15.0 + bound } else { 1.2 * bound },
                cpu: false,
                mib: None,
            };
            if !silent {
                // The critical path with the walk's dependent requests: each BMC's time
                // with no cap on its requests in flight (its chain of requests that wait
                // for another's answer), or its requests 4 at a time, whichever is longer.
                let _ = std::fs::remove_file(site.path().join("nodes.yaml"));
                let open = measure(
                    bin,
                    &[
                        "--output",
                        "json",
                        "discover",
                        "redfish",
                        "--site",
                        &dir,
                        "--per-bmc",
                        "64",
                    ],
                );
                let u: serde_json::Value =
                    serde_json::from_slice(&open.stdout).unwrap_or(serde_json::Value::Null);
                let path = bmcs
                    .iter()
                    .take(20)
                    .enumerate()
                    .map(|(i, b)| {
                        let chain = u["bmcs"][i]["seconds"].as_f64().unwrap_or(f64::NAN);
                        (req(b) as f64 / 4.0 * 0.1).max(chain)
                    })
                    .fold(0.0, f64::max);
                note.push_str(&format!(
                    "; with the dependent requests (the critical path) {path:.2} s, wall / that {:.2}",
                    t.wall / path.max(1e-9)
                ));
                if path.is_finite() {
                    target.secs = 1.2 * path.max(bound);
                }
            }
            print_row(name, label, &t, target, &note);
        }
        drop(fleet);
    }
}
