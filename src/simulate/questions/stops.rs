//! What stops max clusters: its first failing count placed again (`Growth`), its failures
//! judged as the report judges them (`pruned::failing_and_worst`: only what the bounds
//! cannot settle re-placed), the failure that strands the most named with what it strands
//! (re-placed whole), how many such failures there are, and the resource left tightest
//! after it.

use super::growth::Growth;
use crate::simulate::failure::headroom;
use crate::simulate::failure::pruned;
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
    what_stops_at(l, growth.at(count), count)
}

/// `what_stops` of the placement with the `count` more clusters (`pl`).
pub(crate) fn what_stops_at(l: &Study, pl: &Placement, count: u32) -> Option<MaxClustersStop> {
    let topo = pl.topo().clone();
    let (failing, worst) =
        pruned::failing_and_worst(pl, &pruned::Failures::new(&topo, &l.headroom_spec(&topo)));
    let unplaced = (pl.stranded_vms(), pl.stranded_replicas());
    let (failure, vms, replicas, slack) = match worst {
        // Not even placed with every host up (that comes first): what is free then.
        _ if unplaced != (0, 0) => {
            let (cpu, memory, storage) = pl.utilisation();
            (
                None,
                unplaced.0,
                unplaced.1,
                headroom::Slack {
                    cpu: 1.0 - cpu,
                    memory: 1.0 - memory,
                    storage: 1.0 - storage,
                },
            )
        }
        Some(w) => (
            Some(w.name.clone()),
            w.stranded,
            w.stranded_replicas,
            w.slack,
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
        failing,
        stranded_vms: vms,
        stranded_replicas: replicas,
        resource: resource.to_string(),
        free_share: free,
    })
}

#[cfg(test)]
#[path = "stops_tests.rs"]
mod tests;
