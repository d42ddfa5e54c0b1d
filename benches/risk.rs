//! The risk section of a review (`questions::risk_section`: the model's loss, unavailability
//! and VM downtime by conditional Monte Carlo, 2 and 3 replicas compared, the Markov note,
//! the correlated-outage what-if with exact copyset counts) on the reference factory and on
//! generated fleets of its shape (60 standard clusters per 27 nodes) at 100 and 1,000
//! nodes. Targets (issue 25, 2 cores): well under 2 s at 100 nodes; the reference
//! factory's 3-replica estimate within a factor of 2 (upper/lower) in under 2 s.
//! Before each group the answers are printed once, so the figures and their intervals sit
//! beside the timings. Run: `cargo bench --bench risk`.

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rackplan::simulate::Study;
use rackplan::simulate::failure::risk::Rate;
use rackplan::simulate::questions::risk_section;

/// A fleet of `nodes` compute nodes in racks of 40 (at least 3), with the reference
/// factory's failure rates and 60 standard clusters per 27 nodes.
fn fleet_yaml(nodes: usize) -> String {
    let racks = (nodes / 40).max(3);
    let clusters = nodes * 60 / 27;
    let rack_list: Vec<String> = (0..racks).map(|r| format!("r{r:02}")).collect();
    format!(
        "name: scale\nfleet:\n  classes:\n    - {{name: c, count: {nodes}, threads: 128, memory_gib: 768, disks: 4, disk_tb: 7.68, racks: [{}]}}\n\
         shapes:\n  standard:\n    pools:\n      - {{name: cp, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [60], anti_affinity: true}}\n      - {{name: workers, count: 3, vcpu: 8, memory_gib: 32, disks_gib: [200]}}\n\
         clusters:\n  - {{shape: standard, count: {clusters}}}\n",
        rack_list.join(", ")
    )
}

fn show(d: &Rate) -> String {
    format!(
        "{:.3e}/yr [{:.3e}, {:.3e}] x{:.2}",
        d.per_year,
        d.ci95[0],
        d.ci95[1],
        d.ci95[1] / d.ci95[0]
    )
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let reference = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("simulations/reference-factory.yaml");
    let mut cases = vec![("reference-27".to_string(), reference)];
    for nodes in [100, 1000] {
        let p = dir.path().join(format!("fleet-{nodes}.yaml"));
        std::fs::write(&p, fleet_yaml(nodes)).unwrap();
        cases.push((format!("generated-{nodes}"), p));
    }
    let mut g = c.benchmark_group("risk_section");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(8));
    for (name, path) in &cases {
        let l = Study::from_file(path).unwrap();
        let clusters = l.current();
        let pl = l.place(&clusters);
        let stranded = vec![0usize; pl.topo().hosts.len()];
        let t = Instant::now();
        let k = risk_section(
            &l,
            &pl,
            &clusters,
            0.54,
            String::new(),
            &stranded,
            &mut Vec::new(),
        );
        println!(
            "{name}: {} nodes, {} volumes; once in {:.2} s: loss {}; unavailable {}; 2 replicas {}; 3 replicas {}; {} nodes at once: {} {:.4e}",
            pl.topo().hosts.len(),
            pl.volumes().len(),
            t.elapsed().as_secs_f64(),
            show(&k.estimate.data_loss),
            show(&k.estimate.unavailable),
            show(&k.by_replicas[0].data_loss),
            show(&k.by_replicas[1].data_loss),
            k.correlated.failed_nodes,
            k.correlated.longhorn.method,
            k.correlated.longhorn.value
        );
        g.bench_with_input(BenchmarkId::from_parameter(name), &(), |b, ()| {
            b.iter(|| {
                risk_section(
                    &l,
                    &pl,
                    &clusters,
                    0.54,
                    String::new(),
                    &stranded,
                    &mut Vec::new(),
                )
            });
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
