//! Which nodes a `boot` run acts on, and the BMC entry of each: named by node id or planned
//! hostname (or all nodes with a BMC), matched to bmcs.yaml by base URL.

use crate::inventory::Inventory;
use crate::plan::Lock;
use crate::redfish::config::{BmcEntry, BmcsFile, entry_for};

/// One node to boot: its display name (the planned hostname, else the id) and its BMC.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Target {
    pub(crate) name: String,
    pub(crate) node: String,
    pub(crate) entry: BmcEntry,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TargetError {
    #[error("node {0} has no BMC address in nodes.yaml")]
    NoBmc(String),
    #[error("no node `{0}` in the inventory (give a node id or a planned hostname)")]
    Unknown(String),
}

/// The targets for `names` (ids or hostnames), or every node with a BMC when `all`.
pub(crate) fn select(
    inv: &Inventory,
    lock: &Lock,
    bmcs: &BmcsFile,
    names: &[String],
    all: bool,
) -> Result<Vec<Target>, TargetError> {
    let mut targets = Vec::new();
    for n in &inv.nodes {
        let hostname = lock.get(&n.id).map(|a| a.hostname.clone());
        let wanted = all
            || names
                .iter()
                .any(|w| *w == n.id || Some(w) == hostname.as_ref());
        if !wanted {
            continue;
        }
        let Some(b) = &n.bmc else {
            if !all {
                return Err(TargetError::NoBmc(n.id.clone()));
            }
            continue;
        };
        targets.push(Target {
            name: hostname.unwrap_or_else(|| n.id.clone()),
            node: n.id.clone(),
            entry: entry_for(bmcs, &b.address),
        });
    }
    for w in names {
        if !targets.iter().any(|t| t.name == *w || t.node == *w)
            && !inv.nodes.iter().any(|n| n.id == *w)
        {
            return Err(TargetError::Unknown(w.clone()));
        }
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Bmc, Node};
    use crate::redfish::config::AuthMode;

    fn inv() -> Inventory {
        let node = |id: &str, bmc: Option<&str>| Node {
            id: id.into(),
            bmc: bmc.map(|a| Bmc {
                address: a.into(),
                ..Bmc::default()
            }),
            ..Node::default()
        };
        Inventory {
            nodes: vec![
                node("SN1", Some("https://10.20.0.11")),
                node("SN2", Some("http://127.0.0.1:8001")),
                node("SN3", None),
            ],
        }
    }

    fn lock() -> Lock {
        crate::files::yaml::parse::<Lock>(
            std::path::Path::new("allocations.yaml"),
            "nodes:\n  - {id: SN1, role: management, hostname: hv-m01, management_ip: 10.10.0.11, password_salt: abcdefghijklmnop}\n",
        )
        .unwrap()
        .0
    }

    #[test]
    fn a_node_is_named_by_id_or_hostname_and_gets_its_bmcs_yaml_entry() {
        let bmcs: BmcsFile = crate::files::yaml::parse(
            std::path::Path::new("bmcs.yaml"),
            "bmcs:\n  - {address: 10.20.0.11, auth: basic}\n",
        )
        .unwrap()
        .0;
        let t = select(&inv(), &lock(), &bmcs, &["hv-m01".into()], false).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].name.as_str(), t[0].node.as_str()), ("hv-m01", "SN1"));
        assert_eq!(
            t[0].entry.auth,
            AuthMode::Basic,
            "the bmcs.yaml entry, matched by base URL"
        );
        let t = select(&inv(), &lock(), &bmcs, &["SN2".into()], false).unwrap();
        assert_eq!(t[0].name, "SN2");
        assert_eq!(
            t[0].entry.credentials, None,
            "an unlisted BMC gets no credentials"
        );
    }

    #[test]
    fn all_skips_nodes_without_a_bmc_but_naming_one_is_an_error() {
        let t = select(&inv(), &lock(), &BmcsFile::default(), &[], true).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            select(
                &inv(),
                &lock(),
                &BmcsFile::default(),
                &["SN3".into()],
                false
            ),
            Err(TargetError::NoBmc("SN3".into()))
        );
        assert_eq!(
            select(
                &inv(),
                &lock(),
                &BmcsFile::default(),
                &["nope".into()],
                false
            ),
            Err(TargetError::Unknown("nope".into()))
        );
    }
}
