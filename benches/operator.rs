//! `rackplan operator`'s judging pass, without the API server's round trips: the fleet
//! as listed from the Harvester cluster (a generated kubectl List of 1,000 nodes and
//! 30,000 VMIs, `live::synth`) decoded into a study, then the pending ClusterRequests
//! judged in creation order with `rackplan admit`'s code (quota, then every node and rack
//! failure re-placed with and without each request, counting those admitted before it).
//! Reported:
//! - admission latency of one request on the 1,000-node fleet: decode + study + judge, the
//!   work of one judging pass (target: under 1 s on 2 cores);
//! - reconcile throughput of 500 pending requests, judged in one pass (the operator judges
//!   every pending request under one lock, so 500 created at once are one pass), on the
//!   1,000-node fleet and on the reference fleet (27 nodes).
//!
//! Run: `cargo bench --bench operator`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use rackplan::live::{self, synth};
use std::collections::BTreeMap;

use rackplan::operator::admission::{Pass, judge_pending};
use rackplan::operator::catalogue::Catalogue;
use rackplan::operator::harvester::running_per_cluster;
use rackplan::operator::spec::Rules;
use rackplan::operator::teams::Teams;
use rackplan::operator::{ClusterRequest, ClusterRequestSpec};
use rackplan::simulate::{ScenarioInput, Study};

const NOW: i64 = 1_796_000_000;

fn request(i: usize) -> ClusterRequest {
    let team = ["paiement", "logistique", "data"][i % 3];
    let shape = ["standard", "large"][i % 2];
    let mut cr = ClusterRequest::new(
        &format!("req-{i:04}"),
        ClusterRequestSpec {
            team: team.into(),
            shape: shape.into(),
            duration: "14d".into(),
            requester: Some("bench".into()),
            ..Default::default()
        },
    );
    cr.metadata.namespace = Some(format!("team-{team}"));
    cr.metadata.generation = Some(1);
    cr.metadata.uid = Some(format!("uid-{i}"));
    cr.metadata.creation_timestamp = Some(Time(
        k8s_openapi::jiff::Timestamp::from_second(NOW - 10_000 + i64::try_from(i).unwrap())
            .unwrap(),
    ));
    cr
}

const QUOTAS: &str = "name: operator-bench
teams:
  - {name: paiement, vcpu_quota: 4000}
  - {name: logistique, vcpu_quota: 4000}
  - {name: data, vcpu_quota: 400}
";

fn items(spec: &synth::Spec) -> Vec<serde_json::Value> {
    let mut buf = Vec::new();
    synth::write_json(spec, &mut buf).unwrap();
    let list: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    match list {
        serde_json::Value::Object(mut m) => match m.remove("items") {
            Some(serde_json::Value::Array(a)) => a,
            _ => panic!("the generated dump has no items"),
        },
        _ => panic!("the generated dump is not a List"),
    }
}

/// One judging pass: decode the listed objects, build the study, judge `requests`.
fn pass(
    objects: &[serde_json::Value],
    cat: &Catalogue,
    requests: &[ClusterRequest],
) -> (f64, f64, usize, usize) {
    // The operator hands the listed objects over without a copy; the copy is not timed.
    let objects = objects.to_vec();
    let t0 = Instant::now();
    let state = live::from_objects("bench-harvester", objects).unwrap();
    let decoded = t0.elapsed().as_secs_f64();
    let running = running_per_cluster(&state);
    let mut study = Study::on_state(
        ScenarioInput::Text {
            name: Path::new("<quotas>"),
            text: QUOTAS,
        },
        &state,
        Path::new("bench-harvester"),
    )
    .unwrap();
    let teams = Teams::adopt(&mut study, None);
    let namespaces: BTreeMap<String, String> = ["paiement", "logistique", "data"]
        .iter()
        .map(|t| (format!("team-{t}"), (*t).to_string()))
        .collect();
    let read = t0.elapsed().as_secs_f64();
    let v = judge_pending(
        &Pass {
            study: &study,
            catalogue: cat,
            rules: &Rules::default(),
            teams: &teams,
            namespaces: &namespaces,
            running: &running,
            now: NOW,
            dry_run: false,
            measured: &std::collections::BTreeMap::new(),
            delivery_target_s: None,
        },
        requests,
    );
    let total = t0.elapsed().as_secs_f64();
    assert_eq!(
        v.len(),
        requests.len(),
        "every pending request gets a verdict"
    );
    let admitted = v.iter().filter(|x| x.admitted()).count();
    if std::env::var("RACKPLAN_BENCH_PARTS").is_ok() {
        println!("    decode {decoded:.3} s, study {:.3} s", read - decoded);
    }
    (read, total, admitted, v.len() - admitted)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cat = Catalogue::read(&repo.join("iso-config/example/catalogue")).unwrap();
    println!(
        "operator judging pass (decode the listed fleet, build the study, judge in creation order)"
    );
    for (nodes, clusters, memory) in [(1000usize, 5000usize, 760u32), (27, 60, 500)] {
        let spec = synth::Spec {
            nodes,
            zones: (nodes / 40).max(3),
            clusters,
            node_memory_gib: memory,
            ..synth::Spec::default()
        };
        let objects = items(&spec);
        let one = vec![request(1)];
        let runs: Vec<(f64, f64, usize, usize)> =
            (0..3).map(|_| pass(&objects, &cat, &one)).collect();
        let read = median(runs.iter().map(|r| r.0).collect());
        let total = median(runs.iter().map(|r| r.1).collect());
        println!(
            "  {nodes:>4} nodes, {} objects: one request {:.3} s (decode + study {:.3} s, judge {:.3} s; {}) target < 1 s",
            objects.len(),
            total,
            read,
            total - read,
            if runs[0].2 == 1 {
                "admitted"
            } else {
                "refused"
            }
        );
        let n = std::env::var("RACKPLAN_BENCH_PENDING")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(500);
        let many: Vec<ClusterRequest> = (0..n).map(request).collect();
        let (read, total, admitted, refused) = pass(&objects, &cat, &many);
        println!(
            "  {nodes:>4} nodes: {n} pending requests in one pass {:.1} s ({:.1} requests/s; {admitted} admitted, {refused} refused; decode + study {:.3} s)",
            total,
            n as f64 / (total - read).max(1e-9),
            read
        );
    }
}
