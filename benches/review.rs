//! What users run: the default `rackplan simulate` (open the study, then the whole review:
//! headroom, max clusters, the timeline, the rebuild sweep, risk, warnings and the fix) on
//! generated fleets of the reference shape (3 management nodes, the rest compute nodes of
//! the reference design, 60 standard clusters per 27 nodes, the reference teams), at 27,
//! 100, 300 and 1,000 nodes; and the same with `headroom: failures: 2` (N+2) at 100 and 300
//! nodes.
//!
//! Targets (2 cores, release build): the default review at 100 nodes under 2 s and at 1,000
//! nodes under 20 s; N+2 with every default analysis at 100 nodes under 10 s. A size is
//! skipped, and says so, once a smaller one of its series took longer than a minute.
//!
//! Run: `cargo bench --bench review`.

use std::time::Instant;

use rackplan::simulate::{ScenarioInput, Study, StudyInput, questions};

/// The reference scenario scaled to `nodes` nodes (compute nodes spread over racks of at
/// most 40), with its clusters scaled alike; `failures` sets `headroom.failures`.
fn scaled(nodes: usize, failures: u32) -> String {
    let reference = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("simulations/reference-factory.yaml"),
    )
    .expect("the reference scenario");
    let compute = nodes - 3;
    let racks = compute.div_ceil(40).max(3);
    let rack_list: Vec<String> = (1..=racks).map(|r| format!("r{r:02}")).collect();
    let clusters = (60 * nodes).div_ceil(27);
    let mut s = reference
        .replace("count: 24", &format!("count: {compute}"))
        .replace(
            "      racks: [r01, r02, r03]\n  racks:",
            &format!("      racks: [{}]\n  racks:", rack_list.join(", ")),
        )
        .replace(
            "- {shape: standard, count: 60}",
            &format!("- {{shape: standard, count: {clusters}}}"),
        );
    // Feeds for the added racks.
    let extra: String = (4..=racks)
        .map(|r| format!("    r{r:02}: {{power: feed-b}}\n"))
        .collect();
    s = s.replace(
        "    r03: {power: feed-b}\n",
        &format!("    r03: {{power: feed-b}}\n{extra}"),
    );
    if failures > 1 {
        s.push_str(&format!("\nheadroom:\n  failures: {failures}\n"));
    }
    s
}

fn run(label: &str, nodes: usize, failures: u32) -> f64 {
    let text = scaled(nodes, failures);
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
    println!(
        "  {label:<8} {nodes:>6} {:>8} {:>7} {secs:>9.2} {:>8} {:>13}",
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
        "  {:<8} {:>6} {:>8} {:>7} {:>9} {:>8} {:>13}",
        "series", "nodes", "clusters", "VMs", "seconds", "verdict", "max clusters"
    );
    for (label, failures, sizes) in [
        ("default", 1, &[27, 100, 300, 1000][..]),
        ("N+2", 2, &[100, 300][..]),
    ] {
        let mut last = 0.0;
        for &n in sizes {
            if last > 60.0 {
                println!("  {label:<8} {n:>6}  skipped: the size before took {last:.0} s");
                continue;
            }
            last = run(label, n, failures);
        }
    }
}
