//! The limits a capacity review must know are crossed.

use crate::simulate::failure::headroom::Headroom;
use crate::simulate::place::Placement;
use crate::simulate::report::{RebuildReport, Warning};
use crate::simulate::study::Study;

fn pct(x: f64) -> String {
    crate::words::percent(x, 0)
}

/// The limits a capacity review must know are crossed.
pub(crate) fn warnings(
    l: &Study,
    pl: &Placement,
    h: &Headroom,
    rb: &RebuildReport,
) -> Vec<Warning> {
    let s = &l.scenario;
    let p = &s.platform;
    let mut out = Vec::new();
    let deciding = || {
        h.scenarios
            .iter()
            .filter(|x| x.kind.decides())
            .chain(h.combined.iter().flat_map(|c| c.worst.iter()))
    };
    let base_pods = pl.pods().iter().copied().max().unwrap_or(0);
    let worst_pods = deciding().max_by_key(|x| x.vm_pods_peak);
    let (pods, at) = match worst_pods {
        Some(w) if w.vm_pods_peak > base_pods => (w.vm_pods_peak, format!("after {}", w.name)),
        _ => (base_pods, "with every host up".to_string()),
    };
    if pods + p.system_pods_per_node > p.max_pods {
        out.push(Warning {
            kind: "pods-per-node",
            message: format!(
                "a host runs {pods} virt-launcher pods {at}, plus {} system pods: over the kubelet's max-pods of {} (Harvester's default 200); VMs past it stay Pending",
                p.system_pods_per_node, p.max_pods
            ),
        });
    }
    if p.overcommit_memory_pct > 100.0 {
        let base = pl
            .topo()
            .hosts
            .iter()
            .enumerate()
            .filter(|(_, x)| x.mem_gib > 0.0)
            .map(|(n, x)| pl.mem_actual()[n] / x.mem_gib)
            .fold(0.0, f64::max);
        let worst = deciding().max_by(|a, b| a.memory_commit_peak.total_cmp(&b.memory_commit_peak));
        let (peak, at) = match worst {
            Some(w) if w.memory_commit_peak > base => {
                (w.memory_commit_peak, format!("after {}", w.name))
            }
            _ => (base, "with every host up".to_string()),
        };
        if peak > 1.0 {
            out.push(Warning {
                kind: "memory-overcommit",
                message: format!(
                    "memory overcommit {:.0} %: {at}, a host's VMs have {} of its physical memory; if they use what they were given, the host swaps or OOM-kills",
                    p.overcommit_memory_pct,
                    pct(peak)
                ),
            });
        }
    }
    let share = s.analysis.warn.rebuild_share;
    if rb.peak_link_share > share || rb.peak_disk_share > share {
        out.push(Warning {
            kind: "rebuild-share",
            message: format!(
                "at limit {}, the rebuild after losing {} takes up to {} of a node's storage link and {} of its disk throughput, above the {} share left for rebuilds (analysis.warn.rebuild_share): a rebuild storm degrades every VM on those nodes",
                rb.limit,
                rb.failed_node,
                pct(rb.peak_link_share),
                pct(rb.peak_disk_share),
                pct(share)
            ),
        });
    }
    if rb.recommendation_fell_back {
        out.push(Warning {
            kind: "rebuild-limit-fallback",
            message: format!(
                "no rebuild limit within 10 % of the fastest keeps rebuild traffic under {} of links and disks; the recommendation falls back to the smallest limit within 10 %",
                pct(share)
            ),
        });
    }
    if rb.peak_source_streams > rb.limit as usize && rb.peak_source_share > share {
        out.push(Warning {
            kind: "rebuild-source-load",
            message: format!(
                "one source node serves up to {} rebuild streams at once (the per-node limit is {}: Longhorn counts only the receiving node), taking {} of its egress or disk reads, above the {} share",
                rb.peak_source_streams,
                rb.limit,
                pct(rb.peak_source_share),
                pct(share)
            ),
        });
    }
    if rb.abort_restarts > 0 {
        out.push(Warning {
            kind: "rebuild-abort-limit",
            message: format!(
                "{} replica rebuild attempt(s) after losing {} run past Longhorn's {} h limit and start again from scratch",
                rb.abort_restarts, rb.failed_node, p.rebuild_abort_h
            ),
        });
    }
    if l.snapshots_stay_local {
        out.push(Warning {
            kind: "etcd-snapshots-local",
            message: "the site's catalogue clusters keep their etcd snapshots on their own control-plane VMs (no compliance.snapshot_target): a cluster whose VMs are lost, at expiry or in an incident, cannot be restored".into(),
        });
    }
    out
}
