//! Firmware versions of one system: BIOS (`BiosVersion`), NICs (the adapter's
//! `Controllers[].FirmwarePackageVersion`), drives (`Revision`) and GPUs
//! (`FirmwareVersion` of GPU processors). The BMC's own is `bmc.firmware` (the Manager's
//! `FirmwareVersion`). Versions are opaque strings, compared only with the same field of
//! other nodes; placeholders (`N/A`, `nil`, `ff`, `-*`, `0`) are unknown.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::crawl::RawSystem;
use crate::inventory::Firmware;

fn version(v: &Value, key: &str) -> Option<String> {
    let t = v.get(key)?.as_str()?.trim();
    let lower = t.to_ascii_lowercase();
    let placeholder = t.is_empty()
        || [
            "n/a", "na", "nil", "null", "none", "ff", "-*", "0", "unknown",
        ]
        .contains(&lower.as_str());
    (!placeholder).then(|| t.chars().filter(|c| !c.is_control()).take(64).collect())
}

fn name(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().filter(|c| !c.is_control()).take(64).collect())
}

pub(crate) fn firmware(raw: &RawSystem) -> Option<Firmware> {
    let mut parts: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (adapter, _, _) in &raw.ports {
        let Some(id) = name(adapter, "Id") else {
            continue;
        };
        for c in adapter
            .get("Controllers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(v) = version(c, "FirmwarePackageVersion") {
                parts.entry(format!("nic {id}")).or_default().insert(v);
            }
        }
    }
    for d in &raw.drives {
        if let (Some(m), Some(v)) = (name(d, "Model"), version(d, "Revision")) {
            parts.entry(format!("drive {m}")).or_default().insert(v);
        }
    }
    for p in raw.processors.iter().chain(raw.accelerators.iter()) {
        if p.get("ProcessorType").and_then(Value::as_str) != Some("GPU") {
            continue;
        }
        if let (Some(m), Some(v)) = (name(p, "Model"), version(p, "FirmwareVersion")) {
            parts.entry(format!("gpu {m}")).or_default().insert(v);
        }
    }
    let fw = Firmware {
        bios: version(&raw.system, "BiosVersion"),
        components: parts
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().collect::<Vec<_>>().join(", ")))
            .collect(),
    };
    (fw.bios.is_some() || !fw.components.is_empty()).then_some(fw)
}
