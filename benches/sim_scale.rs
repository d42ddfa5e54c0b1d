//! Simulator benchmarks: how the headroom analysis grows with nodes and clusters (every
//! single-node and every rack failure re-placed), up to 1,000 nodes hosting 5,000 six-VM
//! clusters (target: headroom under 0.8 s on 2 cores); N+2, every pair of 100 nodes
//! hosting 600 clusters, 4,950 scenarios (target: under 2 s); and the Monte Carlo of the
//! reference factory, 10,000 trials x 10 years (target: under 10 s on 2 cores).
//! Run: `cargo bench --bench sim_scale`.

use std::time::Instant;

use rackplan::simulate::Study;
use rackplan::simulate::failure::{headroom, risk};

fn fleet_yaml(nodes: usize, clusters: usize) -> String {
    let racks = (nodes / 40).max(3);
    let rack_list: Vec<String> = (0..racks).map(|r| format!("r{r:02}")).collect();
    format!(
        "name: scale\nfleet:\n  classes:\n    - {{name: c, count: {nodes}, threads: 128, memory_gib: 768, disks: 4, disk_tb: 7.68, racks: [{}]}}\n\
         shapes:\n  standard:\n    pools:\n      - {{name: cp, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [60], anti_affinity: true}}\n      - {{name: workers, count: 3, vcpu: 8, memory_gib: 32, disks_gib: [200]}}\n\
         clusters:\n  - {{shape: standard, count: {clusters}}}\n",
        rack_list.join(", ")
    )
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    println!("headroom analysis (placement, then every node and every rack re-placed):");
    println!(
        "  {:>6} {:>8} {:>7} {:>10} {:>12} {:>10} {:>8}",
        "nodes", "clusters", "VMs", "scenarios", "placement s", "headroom s", "verdict"
    );
    for (nodes, clusters) in [
        (100, 500),
        (250, 1250),
        (500, 2500),
        (1000, 1000),
        (1000, 2500),
        (1000, 5000),
    ] {
        let p = dir.path().join(format!("s-{nodes}-{clusters}.yaml"));
        std::fs::write(&p, fleet_yaml(nodes, clusters)).unwrap();
        let l = Study::from_file(&p).unwrap();
        let cl = l.current();
        let t0 = Instant::now();
        let pl = l.place(&cl);
        let t1 = Instant::now();
        let h = headroom::analyse(&pl);
        let t2 = Instant::now();
        println!(
            "  {:>6} {:>8} {:>7} {:>10} {:>12.3} {:>10.3} {:>8}",
            nodes,
            clusters,
            pl.vms().len(),
            h.scenarios.len(),
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            h.verdict
        );
    }

    // N+2: every pair of 100 nodes. The best of three runs is reported.
    let p = dir.path().join("pairs.yaml");
    std::fs::write(&p, fleet_yaml(100, 600)).unwrap();
    let l = Study::from_file(&p).unwrap();
    let cl = l.current();
    let pl = l.place(&cl);
    let spec = headroom::Spec {
        pairs: true,
        ..headroom::Spec::default()
    };
    let mut best = f64::INFINITY;
    let mut h = None;
    for _ in 0..3 {
        let t = Instant::now();
        h = Some(headroom::analyse_with(&pl, &spec));
        best = best.min(t.elapsed().as_secs_f64());
    }
    let h = h.expect("ran");
    let c = &h.combined[0];
    println!(
        "N+2, 100 nodes x 600 clusters: {} pairs (+{} single scenarios) in {best:.3} s on {} threads (target 2 s); {} pairs fail, verdict {}",
        c.checked,
        h.scenarios.len(),
        rayon::current_num_threads(),
        c.failing,
        h.verdict
    );

    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("simulations/reference-factory.yaml");
    let l = Study::from_file(&path).unwrap();
    let cl = l.current();
    let pl = l.place(&cl);
    let fr = risk::fleet_risk(&l.scenario, &pl, 0.54, &[]);
    for (trials, years) in [(1_000, 10), (10_000, 10)] {
        let t = Instant::now();
        let r = risk::monte_carlo(&fr, years, trials, 1);
        println!(
            "Plain Monte Carlo, reference factory ({} nodes, {} copysets): {trials} trials x {years} years in {:.2} s on {} threads; {} loss starts ({:.2e}/yr), VM downtime {:.1} VM-h/yr (the conditional estimate: `cargo bench --bench risk`)",
            pl.topo().hosts.len(),
            fr.copysets.len(),
            t.elapsed().as_secs_f64(),
            rayon::current_num_threads(),
            r.loss_events,
            r.loss_per_year.0,
            r.vm_downtime.0
        );
    }
}
