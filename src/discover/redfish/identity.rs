//! Which record a discovered system is. The system serial is the id where it means
//! something, but serials repeat (a reused board, a cloned FRU, a vendor's placeholder), so
//! a serial alone never merges two machines: a system whose serial is already held, in this
//! run or in the inventory, by a machine behind another BMC with none of its MACs is kept as
//! a record of its own under its fallback id (UUID, else BMC address and system), with a
//! note; `check` then reports the duplicate serial on both.
//!
//! The other way round, two BMC entries whose systems answer with the same serial and the
//! same UUID are one machine seen twice (one BMC listed under two addresses, or a copied
//! capture): they make one record, and each later entry gets a warning naming both
//! addresses, so the run is partial rather than silently one node short.

use crate::inventory::{Inventory, Node};

/// Whether two records describe one machine: the same BMC, or a MAC in common.
pub(crate) fn same_machine(a: &Node, b: &Node) -> bool {
    let bmc = |n: &Node| n.bmc.as_ref().map(|b| b.address.clone());
    (bmc(a).is_some() && bmc(a) == bmc(b))
        || a.nics
            .iter()
            .any(|x| !x.mac.is_empty() && b.nics.iter().any(|y| y.mac == x.mac))
}

/// Give every found node an id no other machine holds. `found` pairs each node with its
/// fallback id; returns, per renamed node, its index in `found` and a note.
pub(crate) fn disambiguate(inv: &Inventory, found: &mut [(Node, String)]) -> Vec<(usize, String)> {
    let mut notes = Vec::new();
    for i in 0..found.len() {
        let (before, rest) = found.split_at_mut(i);
        let (node, alt) = &mut rest[0];
        let taken_now = before
            .iter()
            .find(|(other, _)| other.id == node.id && !same_machine(other, node));
        let taken_before = inv
            .nodes
            .iter()
            .find(|n| n.id == node.id && !same_machine(n, node));
        let holder = taken_now
            .map(|(o, _)| {
                o.bmc
                    .as_ref()
                    .map_or("another BMC", |b| b.address.as_str())
                    .to_string()
            })
            .or_else(|| {
                taken_before.map(|o| {
                    o.bmc
                        .as_ref()
                        .map_or("a record of nodes.yaml", |b| b.address.as_str())
                        .to_string()
                })
            });
        if let Some(holder) = holder
            && *alt != node.id
        {
            notes.push((i, format!(
                "serial {} is also reported by {holder}: kept as a separate node `{alt}` (two machines, one serial; see `rackplan check`)",
                node.id
            )));
            node.id.clone_from(alt);
        }
    }
    notes
}

/// Found systems that another BMC entry already reported with the same serial and the
/// same fallback id (the UUID, else address and system). `bmc` gives, per found node, the
/// index of its BMC entry and its address. Returns, per later node, its index in `found`
/// and a warning naming both addresses.
pub(crate) fn seen_twice(found: &[(Node, String)], bmc: &[(usize, &str)]) -> Vec<(usize, String)> {
    let mut first: std::collections::HashMap<(Option<&str>, &str), (usize, &str)> =
        std::collections::HashMap::new();
    let mut out = Vec::new();
    for (i, ((node, alt), (entry, address))) in found.iter().zip(bmc).enumerate() {
        let key = (node.serial.as_deref(), alt.as_str());
        match first.get(&key) {
            Some((other, other_address)) if other != entry => {
                let what = if alt.contains('/') { "system" } else { "UUID" };
                out.push((
                    i,
                    format!(
                        "{address} answers with the same serial `{}` and {what} `{alt}` as {other_address}: one BMC listed twice in bmcs.yaml, or a copied answer; kept as one record (remove one of the two entries, or check the BMC behind {address})",
                        node.serial.as_deref().unwrap_or("(none)"),
                    ),
                ));
            }
            Some(_) => {}
            None => {
                first.insert(key, (*entry, address));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Bmc, Nic};

    fn n(id: &str, bmc: &str, mac: &str) -> Node {
        Node {
            id: id.into(),
            serial: Some(id.into()),
            bmc: Some(Bmc {
                address: bmc.into(),
                ..Bmc::default()
            }),
            nics: vec![Nic {
                mac: mac.into(),
                ..Nic::default()
            }],
            ..Node::default()
        }
    }

    #[test]
    fn twenty_bmcs_with_two_serials_stay_twenty_records() {
        let mut found: Vec<(Node, String)> = (0..20)
            .map(|i| {
                (
                    n(
                        if i % 2 == 0 { "SN-A" } else { "SN-B" },
                        &format!("http://10.0.0.{i}"),
                        &format!("02:00:00:00:00:{i:02x}"),
                    ),
                    format!("uuid-{i}"),
                )
            })
            .collect();
        let notes = disambiguate(&Inventory::default(), &mut found);
        let ids: std::collections::BTreeSet<&str> =
            found.iter().map(|(n, _)| n.id.as_str()).collect();
        assert_eq!(ids.len(), 20);
        assert_eq!(notes.len(), 18);
        assert!(
            ids.contains("SN-A") && ids.contains("SN-B"),
            "the first keeps the serial"
        );
    }

    #[test]
    fn the_same_machine_rediscovered_keeps_its_id() {
        let inv = Inventory {
            nodes: vec![n("SN-A", "http://10.0.0.1", "02:00:00:00:00:01")],
        };
        // Same BMC.
        let mut found = vec![(
            n("SN-A", "http://10.0.0.1", "02:00:00:00:00:09"),
            "u".into(),
        )];
        assert!(disambiguate(&inv, &mut found).is_empty());
        assert_eq!(found[0].0.id, "SN-A");
        // New BMC address, same MAC: the BMC was re-addressed.
        let mut found = vec![(
            n("SN-A", "http://10.0.0.7", "02:00:00:00:00:01"),
            "u".into(),
        )];
        assert!(disambiguate(&inv, &mut found).is_empty());
        // Another machine with that serial.
        let mut found = vec![(
            n("SN-A", "http://10.0.0.8", "02:00:00:00:00:08"),
            "u8".into(),
        )];
        assert_eq!(disambiguate(&inv, &mut found).len(), 1);
        assert_eq!(found[0].0.id, "u8");
    }

    #[test]
    fn one_machine_behind_two_entries_is_reported_once_per_later_entry() {
        let a = n("SN-A", "http://10.0.0.1", "02:00:00:00:00:01");
        let found = vec![
            (a.clone(), "uuid-a".to_string()),
            (a.clone(), "uuid-a".to_string()),
            (
                n("SN-B", "http://10.0.0.3", "02:00:00:00:00:03"),
                "uuid-b".into(),
            ),
            // Same serial, another UUID: two machines, handled by `disambiguate`.
            (a, "uuid-c".to_string()),
        ];
        let bmc = [
            (0, "http://10.0.0.1"),
            (1, "http://10.0.0.2"),
            (2, "http://10.0.0.3"),
            (3, "http://10.0.0.4"),
        ];
        let w = seen_twice(&found, &bmc);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, 1);
        assert!(
            w[0].1.starts_with("http://10.0.0.2 answers with the same serial `SN-A` and UUID `uuid-a` as http://10.0.0.1"),
            "{}",
            w[0].1
        );
        // Two systems of one BMC are never "listed twice".
        assert!(seen_twice(&found[..2], &[(0, "x"), (0, "x")]).is_empty());
    }
}
