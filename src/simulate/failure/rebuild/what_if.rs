//! The rebuild what-if: a node loaded with a given amount of replica data in the sizes of
//! the scenario's volumes, each with its other replicas placed as Longhorn would; and the
//! check that the node can hold it under Longhorn's storage rules.

use std::collections::BTreeMap;

use crate::simulate::fleet::Topology;
use crate::simulate::place::{Placement, Volume, best_disk, pick_disk};
use crate::simulate::scenario::{NodeClass, Platform, Pool, RebuildWhatIf};

use crate::units::TIB;

/// Why the what-if cannot be run on its node.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WhatIfError {
    #[error("no host `{name}` in the fleet; hosts are named like {some}")]
    NoHost { name: String, some: String },
    #[error("{0} TiB is not an amount of data")]
    NotAnAmount(f64),
    #[error(
        "{node} cannot hold {data_tib} TiB of replica data: its {disks} disk(s) total {raw_tib:.2} TiB, and Longhorn keeps {minimal_pct:.0} % of each available (storage-minimal-available-percentage), which leaves {cap_tib:.2} TiB; ask for less, or fail a node with more disk"
    )]
    MoreThanDisks {
        node: String,
        data_tib: f64,
        disks: usize,
        raw_tib: f64,
        minimal_pct: f64,
        cap_tib: f64,
    },
    #[error(
        "{node} cannot schedule volumes of {sizes_tib:.2} TiB nominal size ({data_tib} TiB of data at a data fill of {data_fill}): over-provisioning at {overcommit_pct:.0} % allows {cap_tib:.2} TiB"
    )]
    OverProvisioned {
        node: String,
        sizes_tib: f64,
        data_tib: f64,
        data_fill: f64,
        overcommit_pct: f64,
        cap_tib: f64,
    },
    #[error("the scenario has no volumes whose sizes the what-if could use")]
    NoVolumeSizes,
    #[error(
        "{node} holds no more than {tib:.2} TiB in volumes of the scenario's sizes (the storage rules apply per disk)"
    )]
    NodeFull { node: String, tib: f64 },
}

/// The scenario's largest node class: the one with the most nodes (then the biggest nodes).
pub(crate) fn largest_class(classes: &[NodeClass]) -> Option<&NodeClass> {
    classes.iter().max_by(|a, b| {
        a.count
            .cmp(&b.count)
            .then(
                (f64::from(a.threads) * a.memory_gib)
                    .total_cmp(&(f64::from(b.threads) * b.memory_gib)),
            )
            .then(b.name.cmp(&a.name))
    })
}

/// The host the what-if fails: the named one, else the first of the largest class (with a
/// site fleet: the host with the most disk).
/// `classes`: the scenario's node classes when they are the fleet, else empty.
pub(crate) fn what_if_node(topo: &Topology, w: &RebuildWhatIf, classes: &[NodeClass]) -> usize {
    if let Some(i) = w.node.as_deref().and_then(|n| topo.host_index(n)) {
        return i;
    }
    if let Some(c) = largest_class(classes)
        && let Some(i) = topo.host_index(&format!("{}-01", c.name))
    {
        return i;
    }
    (0..topo.hosts.len())
        .max_by(|&a, &b| {
            let da: f64 = topo.hosts[a].disks.iter().sum();
            let db: f64 = topo.hosts[b].disks.iter().sum();
            da.total_cmp(&db).then(b.cmp(&a))
        })
        .unwrap_or(0)
}

/// Nominal size over actual data of the scenario's volumes (1 / data_fill).
fn size_per_data(p: &Platform) -> f64 {
    1.0 / p.data_fill.max(1e-6)
}

/// Whether the what-if fits its node under Longhorn's storage rules; the reason if not.
pub(crate) fn check(
    topo: &Topology,
    w: &RebuildWhatIf,
    classes: &[NodeClass],
    p: &Platform,
    shapes: &BTreeMap<String, Vec<Pool>>,
) -> Result<(), WhatIfError> {
    if let Some(name) = &w.node
        && topo.host_index(name).is_none()
    {
        let some: Vec<&str> = topo.hosts.iter().take(4).map(|h| h.name.as_str()).collect();
        return Err(WhatIfError::NoHost {
            name: name.clone(),
            some: some.join(", "),
        });
    }
    if !(w.data_tib.is_finite() && w.data_tib > 0.0) {
        return Err(WhatIfError::NotAnAmount(w.data_tib));
    }
    let node = what_if_node(topo, w, classes);
    let h = &topo.hosts[node];
    let min = p.minimal_available_pct / 100.0;
    let raw: f64 = h.disks.iter().sum();
    let data_cap = raw * (1.0 - min);
    let want = w.data_tib * TIB;
    if want >= data_cap {
        return Err(WhatIfError::MoreThanDisks {
            node: h.name.clone(),
            data_tib: w.data_tib,
            disks: h.disks.len(),
            raw_tib: raw / TIB,
            minimal_pct: p.minimal_available_pct,
            cap_tib: data_cap / TIB,
        });
    }
    let sched_cap = raw * p.overcommit_storage_pct / 100.0;
    let sizes = want * size_per_data(p);
    if sizes > sched_cap {
        return Err(WhatIfError::OverProvisioned {
            node: h.name.clone(),
            sizes_tib: sizes / TIB,
            data_tib: w.data_tib,
            data_fill: p.data_fill,
            overcommit_pct: p.overcommit_storage_pct,
            cap_tib: sched_cap / TIB,
        });
    }
    if shapes
        .values()
        .flatten()
        .all(|pool| pool.disks_gib.is_empty())
    {
        return Err(WhatIfError::NoVolumeSizes);
    }
    Ok(())
}

/// The placement with `node` holding `data_tib` of replica data: its own replicas are
/// replaced by new volumes in the sizes of the scenario's volumes (cycled, the last one cut
/// to the remainder), each with its other replicas placed as Longhorn would.
pub(crate) fn load_node(
    p: &Platform,
    shapes: &BTreeMap<String, Vec<Pool>>,
    pl: &Placement,
    node: usize,
    data_tib: f64,
) -> Result<Placement, WhatIfError> {
    let mut pl = pl.clone();
    pl.drop_replicas_on(node);
    let mut templates: Vec<(f64, f64, usize)> = pl
        .volumes()
        .iter()
        .filter(|v| v.attached && v.data > 0.0)
        .map(|v| (v.size, v.data, v.vm))
        .collect();
    if templates.is_empty() {
        templates = shapes
            .values()
            .flatten()
            .flat_map(|pool| pool.disks_gib.iter())
            .map(|g| (g * 1024f64.powi(3), g * 1024f64.powi(3) * p.data_fill, 0))
            .filter(|t| t.1 > 0.0)
            .collect();
    }
    if templates.is_empty() {
        return Err(WhatIfError::NoVolumeSizes);
    }
    let target = data_tib * TIB;
    let alive = vec![true; pl.topo().hosts.len()];
    let r = p.replicas as usize;
    let mut loaded = 0.0;
    let mut i = 0usize;
    while loaded < target - 1.0 {
        let (size, data, vm) = templates[i % templates.len()];
        let (size, data) = if loaded + data > target {
            let d = target - loaded;
            (size * d / data, d)
        } else {
            (size, data)
        };
        let mut vol = Volume {
            vm: vm.min(pl.vms().len().saturating_sub(1)),
            size,
            data,
            replicas: Vec::new(),
            attached: true,
            selector: 0,
        };
        let disk = best_disk(pl.topo(), pl.free(), pl.rules(), node, (size, data, 0)).ok_or_else(
            || WhatIfError::NodeFull {
                node: pl.topo().hosts[node].name.clone(),
                tib: loaded / TIB,
            },
        )?;
        pl.add_replica(node, disk, &vol);
        vol.replicas.push((node, disk));
        for k in 1..r {
            let draw = (0xFEED_0000_0000u64 + i as u64) << 8 | k as u64;
            if let Some((n, d)) = pick_disk(&vol, pl.free(), pl.topo(), pl.rules(), &alive, draw) {
                pl.add_replica(n, d, &vol);
                vol.replicas.push((n, d));
            }
        }
        pl.push_volume(vol);
        loaded += data;
        i += 1;
    }
    Ok(pl)
}
