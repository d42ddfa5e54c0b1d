//! `rackplan admit` on the reference fleet (27 nodes, 60 running clusters plus the teams'
//! requests): scenario load, request load and the decision (quota, then placement and every
//! node and rack failure re-placed twice, without and with the request), then the delivery
//! prediction `rackplan admit` adds (the fleet placed without and with the request for
//! Longhorn's room, and the critical path). Target: under 100 ms per request on 2 cores,
//! to sit in an approval webhook.
//! Run: `cargo bench --bench admit`.

use std::path::PathBuf;
use std::time::Instant;

use rackplan::simulate::{Study, questions, scenario};

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let scenario = repo.join("simulations/reference-factory.yaml");
    let dir = tempfile::tempdir().unwrap();
    let req = dir.path().join("request.yaml");
    std::fs::write(
        &req,
        "team: paiement\nshape: standard\ncount: 1\nduration: 72h\n",
    )
    .unwrap();
    let at = rackplan::clock::parse_at("2027-02-10").unwrap();
    let mut times = Vec::new();
    let mut with_delivery = Vec::new();
    let mut last = None;
    for _ in 0..50 {
        let t0 = Instant::now();
        let l = Study::from_file(&scenario).unwrap();
        let r = scenario::load_request(&req, &l.shapes).unwrap();
        let d = questions::decide(&l, &r, at).unwrap();
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
        let now = rackplan::simulate::delivery::FleetNow::of(&l);
        let a = rackplan::simulate::delivery::request_answer(
            &l, &now, "standard", &r.pools, r.count, None,
        );
        with_delivery.push(t0.elapsed().as_secs_f64() * 1000.0);
        assert!(a.prediction.total_s.is_some());
        last = Some(d);
    }
    times.sort_by(f64::total_cmp);
    with_delivery.sort_by(f64::total_cmp);
    let d = last.unwrap();
    println!(
        "admit on the reference fleet ({} -> {} clusters, {}): 50 runs, min {:.1} ms, median {:.1} ms, max {:.1} ms (target < 100 ms)",
        d.clusters_before,
        d.clusters_after,
        if d.admitted { "admitted" } else { "refused" },
        times[0],
        times[times.len() / 2],
        times[times.len() - 1]
    );
    println!(
        "with the delivery prediction: min {:.1} ms, median {:.1} ms, max {:.1} ms (target < 100 ms)",
        with_delivery[0],
        with_delivery[with_delivery.len() / 2],
        with_delivery[with_delivery.len() - 1]
    );
}
