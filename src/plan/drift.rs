//! Firmware drift: nodes of one model (manufacturer and model) whose BIOS, BMC, NIC, drive
//! or GPU firmware differs from the others'. One finding per model and component, naming
//! every version group and its nodes, the largest group first (the fleet's majority, when
//! there is one). A baseline pinned in site.yaml (`firmware_baseline`) replaces the
//! majority: every node of that model and component on another level is named, even when
//! they all agree. Versions are opaque strings: equal or not, never ordered.

use std::collections::BTreeMap;

use super::findings::{Finding, Severity};
use crate::inventory::{Inventory, Node};

/// (component, version) pairs of one node.
fn versions(n: &Node) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(v) = n.bmc.as_ref().and_then(|b| b.firmware.clone()) {
        out.push(("BMC".to_string(), v));
    }
    if let Some(fw) = &n.firmware {
        if let Some(v) = &fw.bios {
            out.push(("BIOS".to_string(), v.clone()));
        }
        for (k, v) in &fw.components {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}

pub fn drift(
    inv: &Inventory,
    baseline: &BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<Finding> {
    // model -> component -> version -> node ids
    type Groups<'a> = BTreeMap<String, BTreeMap<String, BTreeMap<String, Vec<&'a str>>>>;
    let mut by_model: Groups<'_> = BTreeMap::new();
    for n in &inv.nodes {
        let Some(model) = &n.model else { continue };
        let key = format!("{} {model}", n.manufacturer.as_deref().unwrap_or("").trim())
            .trim()
            .to_string();
        for (component, version) in versions(n) {
            by_model
                .entry(key.clone())
                .or_default()
                .entry(component)
                .or_default()
                .entry(version)
                .or_default()
                .push(&n.id);
        }
    }
    let mut out = Vec::new();
    for (model, components) in &by_model {
        for (component, groups) in components {
            let pinned = baseline.get(model).and_then(|b| b.get(component));
            if let Some(want) = pinned {
                let off: Vec<String> = groups
                    .iter()
                    .filter(|(v, _)| *v != want)
                    .map(|(v, ids)| format!("{v} on {} node(s): {}", ids.len(), ids.join(", ")))
                    .collect();
                if !off.is_empty() {
                    out.push(Finding::new(
                        "site",
                        Severity::Warning,
                        "firmware-drift",
                        format!(
                            "{model}: {component} firmware is not the pinned {want}; {}",
                            off.join("; ")
                        ),
                        "site.yaml pins this level in `firmware_baseline`",
                        format!(
                            "update those nodes' {component} firmware to {want}, or change the pin"
                        ),
                    ));
                }
                continue;
            }
            if groups.len() < 2 {
                continue;
            }
            let mut list: Vec<(&String, &Vec<&str>)> = groups.iter().collect();
            list.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
            let majority = (list[0].1.len() > list[1].1.len()).then_some(list[0].0);
            let rows: Vec<String> = list
                .iter()
                .map(|(v, ids)| format!("{v} on {} node(s): {}", ids.len(), ids.join(", ")))
                .collect();
            out.push(Finding::new(
                "site",
                Severity::Warning,
                "firmware-drift",
                format!("{model}: {component} firmware differs; {}", rows.join("; ")),
                "nodes of one model on different firmware behave differently (and Harvester's upgrade and support matrix assume one level)",
                match majority {
                    Some(v) => format!("update the other nodes' {component} firmware to {v}, the fleet's majority, or pin the level you want"),
                    None => format!("choose one {component} firmware level for every {model} and update the others"),
                },
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::Firmware;

    fn node(id: &str, bios: &str) -> Node {
        Node {
            id: id.into(),
            manufacturer: Some("Dell Inc.".into()),
            model: Some("PowerEdge R750".into()),
            firmware: Some(Firmware {
                bios: Some(bios.into()),
                ..Firmware::default()
            }),
            ..Node::default()
        }
    }

    #[test]
    fn one_finding_per_component_with_every_group() {
        let inv = Inventory {
            nodes: vec![node("a", "1.8.2"), node("b", "1.8.2"), node("c", "1.9.0")],
        };
        let none = BTreeMap::new();
        let f = drift(&inv, &none);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].what
                .contains("1.8.2 on 2 node(s): a, b; 1.9.0 on 1 node(s): c")
        );
        assert!(f[0].fix.contains("to 1.8.2, the fleet's majority"));
        let same = Inventory {
            nodes: vec![node("a", "1.8.2"), node("b", "1.8.2")],
        };
        assert!(drift(&same, &none).is_empty());
        // Pinned: the agreeing nodes are on the wrong level.
        let pin = BTreeMap::from([(
            "Dell Inc. PowerEdge R750".to_string(),
            BTreeMap::from([("BIOS".to_string(), "1.9.0".to_string())]),
        )]);
        let f = drift(&same, &pin);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].what
                .contains("is not the pinned 1.9.0; 1.8.2 on 2 node(s): a, b")
        );
        assert!(
            drift(&inv, &pin)[0]
                .what
                .contains("1.8.2 on 2 node(s): a, b")
        );
        assert!(!drift(&inv, &pin)[0].what.contains("1.9.0 on"));
    }
}
