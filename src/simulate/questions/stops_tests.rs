use super::*;
use crate::simulate::failure::headroom::ScenarioResult;

fn study(text: &str) -> Study {
    Study::from_text(text, None)
}

/// The reference factory with `compute` compute nodes, no clusters and `extra` appended.
fn factory(compute: usize, extra: &str) -> String {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("simulations/reference-factory.yaml"),
    )
    .unwrap()
    .replace("count: 24", &format!("count: {compute}"))
    .replace(
        "- {shape: standard, count: 60}",
        "- {shape: standard, count: 0}",
    );
    format!("{text}\n{extra}")
}

/// The computation before the bounds: every failure of the count re-placed whole.
fn plain(l: &Study, shape: &str, count: u32) -> Option<MaxClustersStop> {
    let pools = l.shapes[shape].as_slice();
    let base = l.current();
    let mut growth = Growth::new(l, &base, pools);
    let pl = growth.at(count);
    let h = headroom::analyse_with(pl, &l.headroom_spec(pl.topo()));
    let failing: Vec<&ScenarioResult> = h
        .scenarios
        .iter()
        .filter(|s| s.kind.decides() && s.fails())
        .chain(
            h.combined
                .iter()
                .flat_map(|c| c.worst.iter())
                .filter(|s| s.fails()),
        )
        .collect();
    let worst = failing.iter().max_by_key(|s| {
        (
            s.stranded + s.stranded_replicas,
            std::cmp::Reverse(s.name.clone()),
        )
    })?;
    let (resource, free) = if worst.stranded == 0 {
        ("storage", worst.slack.storage)
    } else if worst.slack.cpu < worst.slack.memory {
        ("cpu", worst.slack.cpu)
    } else {
        ("memory", worst.slack.memory)
    };
    Some(MaxClustersStop {
        count,
        failure: Some(worst.name.clone()),
        failing: failing.len(),
        stranded_vms: worst.stranded,
        stranded_replicas: worst.stranded_replicas,
        resource: resource.to_string(),
        free_share: free,
    })
}

/// At the first failing count and past it, N+1 and N+2 with rack + node and a named set
/// plus any node: the failure named, how many fail, what strands and the tightest resource
/// are those of re-placing every failure whole.
#[test]
fn what_stops_is_the_whole_re_placements_answer() {
    let cases = [
        factory(6, ""),
        factory(
            8,
            "headroom:\n  failures: 2\n  node_and_rack: true\n  sets:\n    - {name: feed, racks: [r03], plus_any_node: true}\n",
        ),
    ];
    for text in &cases {
        let l = study(text);
        let first = crate::simulate::questions::max_clusters(&l, "standard")
            .first_failure
            .expect("the fleet fills");
        let mut named = 0;
        for count in first..first + 6 {
            let placed = l.place(&l.current());
            let fast = what_stops(&l, placed, "standard", count);
            let slow = plain(&l, "standard", count);
            if slow.is_some() {
                assert!(fast.is_some(), "{count}");
            }
            if let (Some(f), Some(s)) = (&fast, &slow) {
                named += usize::from(f.failure.is_some());
                assert_eq!(
                    (
                        f.failure.as_ref(),
                        f.failing,
                        f.stranded_vms,
                        f.stranded_replicas
                    ),
                    (
                        s.failure.as_ref(),
                        s.failing,
                        s.stranded_vms,
                        s.stranded_replicas
                    ),
                    "{count}"
                );
                assert_eq!(f.resource, s.resource, "{count}");
                assert_eq!(f.free_share.to_bits(), s.free_share.to_bits(), "{count}");
            }
        }
        assert!(named > 0, "a failure is named");
    }
}
