//! Folding a run's SSH outcomes into the inventory: each OS view joins the record of the
//! same server (the node the host was planned for, else a serial or MAC match), whose BMC
//! facts it completes; a host with no match becomes a record of its own; a planned node
//! whose host failed is kept and marked stale.

use crate::inventory::store::{self, Discovery, MergeReport};
use crate::inventory::{Inventory, Node};

use super::reconcile;
use super::run::HostOutcome;

/// What the fold did: the merge report and, per outcome (same order), the id of the
/// record it went into (`None` for a host that gave no OS view).
#[derive(Debug, Default)]
pub(crate) struct SshFold {
    pub(crate) merge: MergeReport,
    pub(crate) matched: Vec<Option<String>>,
}

/// Fold `outcomes` into `inv`; reconciliation notes are appended to each outcome.
pub(crate) fn fold(inv: &mut Inventory, outcomes: &mut [HostOutcome], now: &str) -> SshFold {
    let mut found = Discovery::default();
    let mut matched = Vec::with_capacity(outcomes.len());
    for o in outcomes.iter_mut() {
        let Some(os) = &o.node else {
            matched.push(None);
            if let Some(id) = &o.spec_node {
                found.failed.push((
                    id.clone(),
                    o.error.clone().unwrap_or_else(|| "failed".into()),
                ));
            }
            continue;
        };
        let target = o
            .spec_node
            .as_ref()
            .and_then(|id| inv.nodes.iter().find(|n| n.id == *id))
            .or_else(|| reconcile::find_match(inv, os));
        let record: Node = match target {
            Some(bmc) => {
                let (merged, notes) = reconcile::merge(bmc, os);
                o.notes.extend(notes);
                merged
            }
            None => os.clone(),
        };
        matched.push(Some(record.id.clone()));
        found.seen.push(record);
    }
    let merge = store::merge(inv, found, now);
    SshFold { merge, matched }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Nic, Sources};

    fn node(id: &str, serial: Option<&str>, mac: &str) -> Node {
        Node {
            id: id.into(),
            serial: serial.map(str::to_string),
            nics: vec![Nic {
                mac: mac.into(),
                ..Nic::default()
            }],
            sources: Sources::default(),
            ..Node::default()
        }
    }

    fn outcome(os: Option<Node>, spec_node: Option<&str>) -> HostOutcome {
        HostOutcome {
            address: "root@127.0.0.1:22".into(),
            ok: os.is_some(),
            error: os.is_none().then(|| "connection refused".to_string()),
            host_key: String::new(),
            seconds: 0.0,
            notes: Vec::new(),
            node: os,
            spec_node: spec_node.map(str::to_string),
        }
    }

    #[test]
    fn an_os_view_joins_the_bmc_record_with_the_same_mac() {
        let mut inv = Inventory {
            nodes: vec![node("SN1", Some("SN1"), "aa:bb:cc:00:00:01")],
        };
        let os = node("host-os", None, "aa:bb:cc:00:00:01");
        let mut outs = vec![outcome(Some(os), None)];
        let f = fold(&mut inv, &mut outs, "2026-12-01T00:00:00Z");
        assert_eq!(f.matched, vec![Some("SN1".to_string())]);
        assert_eq!(inv.nodes.len(), 1, "one record, not two");
        assert_eq!(f.merge.updated, vec!["SN1".to_string()]);
    }

    #[test]
    fn an_unmatched_host_becomes_its_own_record() {
        let mut inv = Inventory {
            nodes: vec![node("SN1", Some("SN1"), "aa:bb:cc:00:00:01")],
        };
        let os = node("SN2", Some("SN2"), "aa:bb:cc:00:00:02");
        let mut outs = vec![outcome(Some(os), None)];
        let f = fold(&mut inv, &mut outs, "2026-12-01T00:00:00Z");
        assert_eq!(f.merge.added, vec!["SN2".to_string()]);
        assert_eq!(inv.nodes.len(), 2);
    }

    #[test]
    fn a_planned_node_whose_host_failed_is_kept_and_marked_stale() {
        let mut inv = Inventory {
            nodes: vec![node("SN1", Some("SN1"), "aa:bb:cc:00:00:01")],
        };
        let mut outs = vec![outcome(None, Some("SN1"))];
        let f = fold(&mut inv, &mut outs, "2026-12-01T00:00:00Z");
        assert_eq!(f.matched, vec![None]);
        assert_eq!(f.merge.marked_stale, vec!["SN1".to_string()]);
        assert_eq!(inv.nodes.len(), 1, "a failed host never deletes a node");
        assert!(inv.nodes[0].stale.is_some());
    }

    #[test]
    fn the_planned_node_wins_over_a_serial_match() {
        let mut inv = Inventory {
            nodes: vec![
                node("SN1", Some("SN1"), "aa:bb:cc:00:00:01"),
                node("SN2", Some("SN2"), "aa:bb:cc:00:00:02"),
            ],
        };
        // The OS reports SN1's MAC but the host was planned as SN2's address.
        let os = node("x", None, "aa:bb:cc:00:00:01");
        let mut outs = vec![outcome(Some(os), Some("SN2"))];
        let f = fold(&mut inv, &mut outs, "2026-12-01T00:00:00Z");
        assert_eq!(f.matched, vec![Some("SN2".to_string())]);
    }
}
