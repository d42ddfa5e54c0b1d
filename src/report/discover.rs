//! `discover redfish` and `discover ssh`: what was found, per BMC or host, and what the
//! merge into nodes.yaml did.

use std::collections::BTreeMap;

use serde::Serialize;

use super::grid::table;
use crate::discover::redfish::BmcOutcome;
use crate::discover::ssh::HostOutcome;
use crate::discover::ssh::fold::SshFold;
use crate::inventory::store::MergeReport;
use crate::inventory::{Inventory, Node, Protocol};

fn ports_by_speed(n: &Node) -> String {
    let mut by: BTreeMap<Option<u32>, usize> = BTreeMap::new();
    for nic in &n.nics {
        *by.entry(nic.speed_mbps).or_default() += 1;
    }
    by.iter()
        .rev()
        .map(|(s, c)| match s {
            Some(s) if s % 1000 == 0 => format!("{c}x{}G", s / 1000),
            Some(s) => format!("{c}x{s}M"),
            None => format!("{c}x?"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn discovery_table(outcomes: &[BmcOutcome], merge: &MergeReport) -> String {
    let mut t = table(&[
        "node", "BMC", "model", "cores", "memory", "NVMe", "ports", "status",
    ]);
    for o in outcomes {
        if o.found.is_empty() {
            t.add_row(vec![
                "-".to_string(),
                o.address.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                if o.ok {
                    "no system".to_string()
                } else {
                    "FAILED".to_string()
                },
            ]);
        }
        for n in &o.found {
            let nvme = n
                .disks
                .iter()
                .filter(|d| d.protocol == Some(Protocol::Nvme))
                .count();
            let status = if merge.added.contains(&n.id) {
                "new"
            } else {
                "updated"
            };
            t.add_row(vec![
                n.id.clone(),
                o.address.clone(),
                n.model.clone().unwrap_or_else(|| "?".into()),
                n.cores().map_or("?".into(), |c| c.to_string()),
                n.memory_gib.map_or("?".into(), |m| format!("{m:.0} GiB")),
                nvme.to_string(),
                ports_by_speed(n),
                status.to_string(),
            ]);
        }
    }
    let ok = outcomes.iter().filter(|o| o.ok).count();
    let requests: usize = outcomes.iter().map(|o| o.requests).sum();
    let mut out = format!(
        "{t}\n{ok} of {} BMC(s) inventoried, {requests} requests",
        outcomes.len()
    );
    if !merge.marked_stale.is_empty() {
        out.push_str(&format!(
            "; {} node(s) kept from earlier and marked stale",
            merge.marked_stale.len()
        ));
    }
    out.push('\n');
    if !merge.orphaned.is_empty() {
        out.push_str(&format!(
            "{} node(s) kept whose BMC is no longer in bmcs.yaml: {}; remove them from nodes.yaml if they are retired\n",
            merge.orphaned.len(),
            merge.orphaned.join(", ")
        ));
    }
    let disks: Vec<&crate::inventory::Disk> = outcomes
        .iter()
        .flat_map(|o| &o.found)
        .flat_map(|n| &n.disks)
        .collect();
    let named = disks.iter().filter(|d| d.device_path().is_some()).count();
    if !disks.is_empty() {
        out.push_str(&format!(
            "disk paths: {named} of {} disk(s) named from the BMC's data{}\n",
            disks.len(),
            if named < disks.len() {
                "; the rest cannot be named without guessing (why: `rackplan check`)"
            } else {
                ""
            }
        ));
    }
    for n in outcomes.iter().flat_map(|o| &o.found) {
        if n.gpus.is_empty() {
            continue;
        }
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for g in &n.gpus {
            let mut k = g.model.clone().unwrap_or_else(|| "model unknown".into());
            if let Some(m) = g.memory_gib {
                k.push_str(&format!(" ({m} GiB)"));
            }
            *kinds.entry(k).or_default() += 1;
        }
        let list: Vec<String> = kinds.iter().map(|(k, c)| format!("{c} x {k}")).collect();
        out.push_str(&format!("GPUs of {}: {}\n", n.id, list.join(", ")));
    }
    let failed: Vec<_> = outcomes.iter().filter(|o| !o.ok).collect();
    if !failed.is_empty() {
        out.push_str("\nerrors:\n");
        for o in failed {
            out.push_str(&format!(
                "  {}: {}\n",
                o.address,
                o.error.as_deref().unwrap_or("failed")
            ));
        }
    }
    for o in outcomes {
        for r in &o.refused {
            out.push_str(&format!("  {}: {r}\n", o.address));
        }
        for k in &o.kept_from_earlier {
            out.push_str(&format!("  {}: {k}\n", o.address));
        }
        for w in o.seen_twice.iter().chain(&o.distrusted) {
            out.push_str(&format!("  warning: {w}\n"));
        }
    }
    for o in outcomes.iter().filter(|o| o.recorded_pin.is_some()) {
        out.push_str(&format!(
            "recorded the certificate pin of {} in bmcs.yaml (trust on first use): {}\n",
            o.address,
            o.recorded_pin.as_deref().unwrap_or("")
        ));
    }
    out
}

/// The merge of a discovery into nodes.yaml, for JSON.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct MergeJson<'a> {
    pub(crate) added: &'a [String],
    pub(crate) updated: &'a [String],
    pub(crate) marked_stale: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untouched: Option<&'a [String]>,
    /// Nodes kept whose BMC is no longer in bmcs.yaml (Redfish discovery only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orphaned: Option<&'a [String]>,
}

/// The line a BMC leaves on the terminal when its crawl ends: what it gave, or why not
/// (the summary after the run has the details).
pub fn progress_line(o: &BmcOutcome) -> String {
    if o.ok {
        format!(
            "done    {}: {} system(s), {} requests, {:.1} s",
            o.address,
            o.found.len(),
            o.requests,
            o.seconds
        )
    } else {
        format!(
            "FAILED  {}: {}",
            o.address,
            o.error.as_deref().unwrap_or("failed")
        )
    }
}

/// `discover redfish --output json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct RedfishJson<'a> {
    pub(crate) nodes: Vec<&'a Node>,
    pub(crate) bmcs: &'a [BmcOutcome],
    pub(crate) merge: MergeJson<'a>,
}

impl<'a> RedfishJson<'a> {
    pub(crate) fn new(outcomes: &'a [BmcOutcome], merge: &'a MergeReport) -> RedfishJson<'a> {
        RedfishJson {
            nodes: outcomes.iter().flat_map(|o| o.found.iter()).collect(),
            bmcs: outcomes,
            merge: MergeJson {
                added: &merge.added,
                updated: &merge.updated,
                marked_stale: &merge.marked_stale,
                untouched: Some(&merge.untouched),
                orphaned: Some(&merge.orphaned),
            },
        }
    }
}

/// `discover ssh --output json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct SshJson<'a> {
    pub(crate) nodes: Vec<&'a Node>,
    pub(crate) hosts: &'a [HostOutcome],
    pub(crate) merge: MergeJson<'a>,
}

impl<'a> SshJson<'a> {
    pub(crate) fn new(
        inv: &'a Inventory,
        outcomes: &'a [HostOutcome],
        fold: &'a SshFold,
    ) -> SshJson<'a> {
        SshJson {
            nodes: fold
                .matched
                .iter()
                .flatten()
                .filter_map(|id| inv.nodes.iter().find(|n| n.id == *id))
                .collect(),
            hosts: outcomes,
            merge: MergeJson {
                added: &fold.merge.added,
                updated: &fold.merge.updated,
                marked_stale: &fold.merge.marked_stale,
                untouched: None,
                orphaned: None,
            },
        }
    }
}

/// `discover ssh`: one row per host, then its errors and reconciliation notes.
pub(crate) fn ssh_table(inv: &Inventory, outcomes: &[HostOutcome], fold: &SshFold) -> String {
    let mut t = table(&[
        "host",
        "node",
        "cores",
        "memory",
        "disks (by-id)",
        "ports",
        "status",
    ]);
    for (o, id) in outcomes.iter().zip(&fold.matched) {
        let n = id
            .as_ref()
            .and_then(|id| inv.nodes.iter().find(|n| n.id == *id));
        t.add_row(vec![
            o.address.clone(),
            id.clone().unwrap_or_else(|| "-".into()),
            n.and_then(Node::cores)
                .map_or("?".into(), |c| c.to_string()),
            n.and_then(|n| n.memory_gib)
                .map_or("?".into(), |m| format!("{m:.0} GiB")),
            n.map_or("-".into(), |n| {
                format!(
                    "{} ({})",
                    n.disks.len(),
                    n.disks.iter().filter(|d| d.path.is_some()).count()
                )
            }),
            n.map_or("-".into(), |n| n.nics.len().to_string()),
            if o.ok {
                format!("ok, host key {}", o.host_key)
            } else {
                "FAILED".into()
            },
        ]);
    }
    let mut out = format!("{t}\n");
    for o in outcomes {
        if let Some(e) = &o.error {
            out.push_str(&format!("  {}: {e}\n", o.address));
        }
        for n in &o.notes {
            out.push_str(&format!("  {}: note: {n}\n", o.address));
        }
    }
    out
}
