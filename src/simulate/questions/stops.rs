//! What stops max clusters: its first failing count placed again (`Growth`) and every
//! failure re-placed whole (`headroom::analyse_with`), the failure that strands the most
//! named with what it strands, how many such failures there are, and the resource left
//! tightest after it.

use super::growth::Growth;
use crate::simulate::failure::headroom::{self, ScenarioResult};
use crate::simulate::place::Placement;
use crate::simulate::report::MaxClustersStop;
use crate::simulate::study::Study;

/// Why `count` more clusters of `shape` fail, or `None` when they do not (or the shape is
/// unknown); `placed` is the study's fleet placed (`l.place(&l.current())`).
pub fn what_stops(
    l: &Study,
    placed: Placement,
    shape: &str,
    count: u32,
) -> Option<MaxClustersStop> {
    let pools = l.shapes.get(shape)?.as_slice();
    let base = l.current();
    let mut growth = Growth::on(l, placed, &base, pools);
    let pl = growth.at(count);
    let topo = pl.topo().clone();
    let h = headroom::analyse_with(pl, &l.headroom_spec(&topo));
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
    let unplaced = (pl.stranded_vms(), pl.stranded_replicas());
    let worst = failing
        .iter()
        .max_by_key(|s| {
            (
                s.stranded + s.stranded_replicas,
                std::cmp::Reverse(s.name.clone()),
            )
        })
        .copied();
    let (failure, vms, replicas, slack) = match worst {
        // Not even placed with every host up (that comes first): what is free then.
        _ if unplaced != (0, 0) => (
            None,
            unplaced.0,
            unplaced.1,
            headroom::Slack {
                cpu: 1.0 - h.utilisation.cpu,
                memory: 1.0 - h.utilisation.memory,
                storage: 1.0 - h.utilisation.storage,
            },
        ),
        Some(w) => (
            Some(w.name.clone()),
            w.stranded,
            w.stranded_replicas,
            w.slack.clone(),
        ),
        None => return None,
    };
    // The tightest resource of what strands: storage when only replicas do, else the
    // scarcer of CPU and memory.
    let (resource, free) = if vms == 0 {
        ("storage", slack.storage)
    } else if slack.cpu < slack.memory {
        ("cpu", slack.cpu)
    } else {
        ("memory", slack.memory)
    };
    Some(MaxClustersStop {
        count,
        failure,
        failing: failing.len(),
        stranded_vms: vms,
        stranded_replicas: replicas,
        resource: resource.to_string(),
        free_share: free,
    })
}
