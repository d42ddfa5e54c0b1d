//! Redfish fleet benchmark: 200 virtual BMCs (the 11 mockups, mixed) on loopback, each
//! answering after 100 ms, inventoried by the real `rackplan discover redfish`.
//!
//! Reports wall time, the critical-path bound (requests of the slowest BMC / per-BMC
//! concurrency x latency), their ratio, total requests and peak memory (from
//! `/usr/bin/time -v` when present). Run: `cargo bench --bench redfish_fleet`
//! (BMCS=N and LATENCY_MS=N override the defaults). HOSTILE=1 makes every BMC hostile: its
//! Systems collection lists ~20,000 members (just under the 1 MiB body cap), to measure that
//! memory stays bounded at the default concurrency.

#[path = "../tests/support/replay.rs"]
mod replay;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use replay::{BmcSpec, Fleet};

fn main() {
    let n: usize = std::env::var("BMCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let latency_ms: u64 = std::env::var("LATENCY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let per_bmc = 4usize;
    let shared = std::env::var_os("RACKPLAN_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        PathBuf::from,
    );
    let root = shared.join("reference/redfish-mockups");
    let mut mockups: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("mockups")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("redfish/v1/index.json").exists())
        .collect();
    mockups.sort();
    let specs: Vec<BmcSpec> = (0..n)
        .map(|i| {
            let m = &mockups[i % mockups.len()];
            let mut s = BmcSpec::new(m);
            s.latency = Duration::from_millis(latency_ms);
            if std::env::var_os("HOSTILE").is_some() {
                let coll: serde_json::Value = serde_json::from_str(
                    &std::fs::read_to_string(m.join("redfish/v1/Systems/index.json")).unwrap(),
                )
                .unwrap();
                let mut members = coll["Members"].as_array().cloned().unwrap_or_default();
                for k in 0..20_000 {
                    members.push(
                        serde_json::json!({"@odata.id": format!("/redfish/v1/Systems/junk-{k}")}),
                    );
                }
                s.patches.push((
                    "/redfish/v1/Systems".into(),
                    "/Members".into(),
                    serde_json::Value::Array(members),
                ));
            }
            s
        })
        .collect();
    let fleet = Fleet::start(specs);
    let dir = tempfile::tempdir().unwrap();
    let mut y = String::from("bmcs:\n");
    for b in &fleet.bmcs {
        y.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    std::fs::write(dir.path().join("bmcs.yaml"), y).unwrap();

    let bin = env!("CARGO_BIN_EXE_rackplan");
    let timev = std::path::Path::new("/usr/bin/time").exists();
    let mut cmd = if let Ok(wrap) = std::env::var("BENCH_WRAP") {
        // e.g. BENCH_WRAP="perf record -e cpu-clock -g -o /tmp/perf.data --" to profile rackplan
        let mut parts = wrap.split_whitespace();
        let mut c = Command::new(parts.next().expect("a command"));
        c.args(parts).arg(bin);
        c
    } else if timev {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-v").arg(bin);
        c
    } else {
        Command::new(bin)
    };
    cmd.args(["--output", "json", "discover", "redfish", "--site"])
        .arg(dir.path())
        .args([
            "--concurrency",
            &n.to_string(),
            "--per-bmc",
            &per_bmc.to_string(),
        ]);
    let started = Instant::now();
    let out = cmd.output().expect("run rackplan");
    let wall = started.elapsed().as_secs_f64();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json output");
    let bmcs = v["bmcs"].as_array().unwrap();
    let ok = bmcs.iter().filter(|b| b["ok"] == true).count();
    let total: u64 = bmcs.iter().map(|b| b["requests"].as_u64().unwrap()).sum();
    let max_req = bmcs
        .iter()
        .map(|b| b["requests"].as_u64().unwrap())
        .max()
        .unwrap();
    let latency = latency_ms as f64 / 1000.0;
    let bound = max_req as f64 / per_bmc as f64 * latency;
    let slowest = bmcs
        .iter()
        .map(|b| b["seconds"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rss_kib = stderr
        .lines()
        .find(|l| l.contains("Maximum resident set size"))
        .and_then(|l| l.rsplit(':').next())
        .and_then(|v| v.trim().parse::<u64>().ok());
    println!(
        "redfish fleet: {n} BMCs, {latency_ms} ms per response, {per_bmc} requests in flight per BMC"
    );
    println!("  BMCs inventoried     {ok}/{n}");
    println!("  total requests       {total}");
    println!("  slowest BMC          {max_req} requests, {slowest:.2} s");
    println!("  critical-path bound  {bound:.2} s  ({max_req} / {per_bmc} x {latency_ms} ms)");
    println!("  wall time            {wall:.2} s");
    println!(
        "  wall / bound         {:.2}  (target <= 1.5)",
        wall / bound
    );
    let field = |name: &str| {
        stderr
            .lines()
            .find(|l| l.contains(name))
            .and_then(|l| l.rsplit(':').next())
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    if let (Some(u), Some(s)) = (field("User time (seconds)"), field("System time (seconds)")) {
        println!(
            "  rackplan CPU         {u:.2} s user + {s:.2} s system (2 cores shared with the {n} replay BMCs)"
        );
    }
    match rss_kib {
        Some(k) => println!(
            "  peak memory          {:.1} MiB  (target < 200 MiB)",
            k as f64 / 1024.0
        ),
        None => println!("  peak memory          (install GNU time for /usr/bin/time -v)"),
    }
    let mut per_mockup: Vec<(String, u64, f64)> = Vec::new();
    for (i, b) in bmcs.iter().enumerate().take(mockups.len()) {
        let name = mockups[i % mockups.len()]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        per_mockup.push((
            name,
            b["requests"].as_u64().unwrap(),
            b["seconds"].as_f64().unwrap(),
        ));
    }
    println!("  requests per system:");
    for (name, r, secs) in per_mockup {
        let peer = match name.as_str() {
            "dell-poweredge-r750-idrac9-6.00" => " (rf_sys_inventory: 91)",
            "lenovo-thinksystem-sr670v2-xcc" => " (rf_sys_inventory: 130)",
            _ => "",
        };
        let own = r as f64 / per_bmc as f64 * latency;
        println!("    {name:45} {r:4} requests, {secs:5.2} s, own bound {own:4.2} s{peer}");
    }
    drop(fleet);
}
