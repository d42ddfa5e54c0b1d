//! BIOS readiness from a system's `Bios` resource: virtualization (VT-x/AMD-V), IOMMU
//! (VT-d/AMD-Vi), SR-IOV, the firmware boot mode (not the one-time boot override), Secure
//! Boot and SMT, normalised across vendors.
//!
//! Attributes are found by name: the vendors' `AttributeName`s where they are
//! self-describing (Dell `ProcVirtualization`, HPE `ProcAmdIoVt`, Lenovo
//! `Processors_IntelVirtualizationTechnology`, AMI `ProcessorVmxEnable`, ...), else through
//! the attribute registry's `DisplayName` (Gigabyte's `Rome0565` is "SVM Mode"). Values are
//! read by their meaning (`Enabled`, `Enable`, `UEFIMode`); a value that says nothing by
//! itself (Intel's integers, with no registry to give them meaning) is `unknown`, never
//! guessed. Each setting keeps the attribute it came from, its value and, where the
//! vocabulary is known, the value that turns it on, so a finding can say what to set.

use serde_json::Value;

use crate::inventory::{Bios, BiosSetting, BiosState};

/// Which setting, the attribute names that hold it, and registry display names.
struct Known {
    names: &'static [&'static str],
    display: &'static [&'static str],
}

const VIRTUALIZATION: Known = Known {
    names: &[
        "ProcVirtualization",
        "Processors_IntelVirtualizationTechnology",
        "ProcessorVmxEnable",
        "IntelVirtualizationTechnology",
        "ProcAmdVirtualization",
    ],
    display: &[
        "SVM Mode",
        "VMX",
        "Intel Virtualization Technology",
        "Virtualization Technology",
    ],
};

const IOMMU: Known = Known {
    // Dell's ProcVirtualization enables VT-x and the DMAR table (VT-d) together.
    names: &[
        "ProcAmdIoVt",
        "DevicesandIOPorts_IntelVTforDirectedIOVTd",
        "VTdSupport",
        "IntelVTd",
        "ProcVirtualization",
    ],
    display: &["IOMMU", "Intel VT for Directed I/O (VT-d)", "VT-d"],
};

const SRIOV: Known = Known {
    names: &[
        "SriovGlobalEnable",
        "Sriov",
        "DevicesandIOPorts_SRIOV",
        "SRIOVEnable",
        "SriovSupport",
    ],
    display: &["SR-IOV Support", "SR-IOV"],
};

const BOOT_MODE: Known = Known {
    names: &["BootMode", "BootModes_SystemBootMode"],
    display: &["Boot mode select", "Boot Mode"],
};

const SECURE_BOOT: Known = Known {
    names: &[
        "SecureBoot",
        "SecureBootStatus",
        "SecureBootConfiguration_SecureBootSetting",
        "SecureBootSupport",
        "SecureBootEnableFlag",
    ],
    display: &["Secure Boot"],
};

const SMT: Known = Known {
    names: &[
        "LogicalProc",
        "ProcSMT",
        "Processors_HyperThreading",
        "ProcHyperthreading",
        "ProcessorHyperThreadingDisable",
    ],
    display: &["SMT Control", "Hyper-Threading", "Hyper Threading"],
};

/// Does the BIOS name any setting by a known attribute name? If not, the registry's
/// display names are needed (opaque AMI codes).
pub(crate) fn needs_registry(bios: &Value) -> bool {
    let Some(attrs) = bios.get("Attributes").and_then(Value::as_object) else {
        return false;
    };
    !attrs.is_empty()
        && ![
            &VIRTUALIZATION,
            &IOMMU,
            &SRIOV,
            &BOOT_MODE,
            &SECURE_BOOT,
            &SMT,
        ]
        .iter()
        .any(|k| k.names.iter().any(|n| attrs.contains_key(*n)))
}

/// The registry's attribute entries.
fn entries(registry: Option<&Value>) -> &[Value] {
    registry
        .and_then(|r| r.pointer("/RegistryEntries/Attributes"))
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Switch,
    Smt,
    Boot,
}

fn meaning(v: &Value, kind: Kind) -> BiosState {
    let Some(s) = v.as_str() else {
        return match v.as_bool() {
            Some(true) if kind != Kind::Boot => BiosState::On,
            Some(false) if kind != Kind::Boot => BiosState::Off,
            _ => BiosState::Unknown,
        };
    };
    match (kind, s.trim().to_ascii_lowercase().as_str()) {
        (Kind::Boot, "uefi" | "uefimode" | "uefi mode") => BiosState::Uefi,
        (Kind::Boot, "bios" | "legacy" | "legacybios" | "legacymode" | "legacy mode") => {
            BiosState::Legacy
        }
        // AMI's SMT Control offers `Disable` and `Auto`: Auto is on.
        (Kind::Switch | Kind::Smt, "enabled" | "enable" | "on" | "true") | (Kind::Smt, "auto") => {
            BiosState::On
        }
        (Kind::Switch | Kind::Smt, "disabled" | "disable" | "off" | "false") => BiosState::Off,
        _ => BiosState::Unknown,
    }
}

/// The value that turns the setting on (or selects UEFI), in the attribute's vocabulary.
/// Attributes that report a state and cannot be written (HPE's `SecureBootStatus`:
/// Secure Boot is switched through the system's `SecureBoot` resource). The registry's
/// `ReadOnly` says the same where it is read.
pub(crate) const READ_ONLY: [&str; 1] = ["SecureBootStatus"];

fn on_value(name: &str, current: &Value, kind: Kind, registry: Option<&Value>) -> Option<String> {
    let want = |s: BiosState| s == BiosState::On || s == BiosState::Uefi;
    if READ_ONLY.contains(&name) {
        return None;
    }
    if let Some(e) = entries(registry)
        .iter()
        .find(|e| e.get("AttributeName").and_then(Value::as_str) == Some(name))
    {
        if e.get("ReadOnly").and_then(Value::as_bool) == Some(true) {
            return None;
        }
        return e
            .get("Value")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("ValueName").and_then(Value::as_str))
            .find(|v| want(meaning(&Value::from(*v), kind)))
            .map(str::to_string);
    }
    let s = current.as_str()?;
    if want(meaning(current, kind)) {
        return Some(s.to_string());
    }
    let pairs: &[(&str, &str)] = match kind {
        Kind::Boot => &[
            ("Bios", "Uefi"),
            ("LegacyBios", "Uefi"),
            ("LEGACY", "UEFI"),
            ("Legacy", "UEFI"),
            ("LegacyMode", "UEFIMode"),
        ],
        Kind::Switch | Kind::Smt => &[
            ("Disabled", "Enabled"),
            ("Disable", "Enable"),
            ("disabled", "enabled"),
            ("Off", "On"),
        ],
    };
    pairs
        .iter()
        .find(|(from, _)| *from == s.trim())
        .map(|(_, to)| (*to).to_string())
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One setting: every attribute that holds it (by name, else by display name); off wins
/// over on when two disagree (DGX has two SR-IOV switches, both must be on).
fn setting(
    attrs: &serde_json::Map<String, Value>,
    registry: Option<&Value>,
    known: &Known,
    kind: Kind,
) -> BiosSetting {
    let mut found: Vec<(&str, &Value)> = known
        .names
        .iter()
        .filter_map(|n| attrs.get_key_value(*n).map(|(k, v)| (k.as_str(), v)))
        .collect();
    if found.is_empty() {
        for e in entries(registry) {
            let display = e.get("DisplayName").and_then(Value::as_str).unwrap_or("");
            if known
                .display
                .iter()
                .any(|d| d.eq_ignore_ascii_case(display.trim()))
                && let Some(name) = e.get("AttributeName").and_then(Value::as_str)
                && let Some((k, v)) = attrs.get_key_value(name)
            {
                found.push((k.as_str(), v));
            }
        }
    }
    // Dell's one switch covers VT-x and VT-d; another vendor's own IOMMU attribute wins.
    if found.len() > 1 {
        found.retain(|(n, _)| *n != "ProcVirtualization" || known.names[0] == "ProcVirtualization");
    }
    let pick = found
        .iter()
        .find(|(_, v)| matches!(meaning(v, kind), BiosState::Off | BiosState::Legacy))
        .or_else(|| {
            found
                .iter()
                .find(|(_, v)| meaning(v, kind) == BiosState::Unknown)
        })
        .or(found.first());
    match pick {
        None => BiosSetting::default(),
        Some((name, v)) => BiosSetting {
            state: meaning(v, kind),
            attribute: Some((*name).to_string()),
            value: Some(shown(v)),
            set_to: on_value(name, v, kind, registry),
        },
    }
}

/// The normalised settings, or `None` when the BIOS resource lists no attributes.
pub(crate) fn normalize(bios: &Value, registry: Option<&Value>) -> Option<Bios> {
    let attrs = bios.get("Attributes").and_then(Value::as_object)?;
    if attrs.is_empty() {
        return None;
    }
    let registry = registry.filter(|r| r.pointer("/RegistryEntries/Attributes").is_some());
    Some(Bios {
        registry: bios
            .get("AttributeRegistry")
            .and_then(Value::as_str)
            .map(str::to_string),
        registry_read: registry.is_some(),
        virtualization: setting(attrs, registry, &VIRTUALIZATION, Kind::Switch),
        iommu: setting(attrs, registry, &IOMMU, Kind::Switch),
        sriov: setting(attrs, registry, &SRIOV, Kind::Switch),
        boot_mode: setting(attrs, registry, &BOOT_MODE, Kind::Boot),
        secure_boot: setting(attrs, registry, &SECURE_BOOT, Kind::Switch),
        smt: setting(attrs, registry, &SMT, Kind::Smt),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_without_a_registry_are_unknown() {
        let b = normalize(
            &json!({"Attributes": {"ProcessorVmxEnable": 0, "VTdSupport": 0, "BootMode": 1}}),
            None,
        )
        .unwrap();
        assert_eq!(b.virtualization.state, BiosState::Unknown);
        assert_eq!(
            b.virtualization.attribute.as_deref(),
            Some("ProcessorVmxEnable")
        );
        assert_eq!(b.virtualization.value.as_deref(), Some("0"));
        assert_eq!(b.virtualization.set_to, None);
        assert_eq!(b.iommu.attribute.as_deref(), Some("VTdSupport"));
        assert_eq!(b.boot_mode.state, BiosState::Unknown);
    }

    #[test]
    fn opaque_codes_through_display_names() {
        let registry = json!({"RegistryEntries": {"Attributes": [
            {"AttributeName": "Rome0565", "DisplayName": "SVM Mode",
             "Value": [{"ValueName": "Disabled"}, {"ValueName": "Enabled"}]},
            {"AttributeName": "FBO001", "DisplayName": "Boot mode select",
             "Value": [{"ValueName": "LEGACY"}, {"ValueName": "UEFI"}]},
            {"AttributeName": "Rome0059", "DisplayName": "SMT Control",
             "Value": [{"ValueName": "Disable"}, {"ValueName": "Auto"}]}
        ]}});
        let bios =
            json!({"Attributes": {"Rome0565": "Disabled", "FBO001": "LEGACY", "Rome0059": "Auto"}});
        assert!(needs_registry(&bios));
        let b = normalize(&bios, Some(&registry)).unwrap();
        assert_eq!(b.virtualization.state, BiosState::Off);
        assert_eq!(b.virtualization.set_to.as_deref(), Some("Enabled"));
        assert_eq!(b.boot_mode.state, BiosState::Legacy);
        assert_eq!(b.boot_mode.set_to.as_deref(), Some("UEFI"));
        assert_eq!(b.smt.state, BiosState::On);
        // Without the registry nothing is guessed from the codes.
        let b = normalize(&bios, None).unwrap();
        assert_eq!(b.virtualization.state, BiosState::Unknown);
        assert_eq!(b.virtualization.attribute, None);
    }

    #[test]
    fn a_read_only_attribute_gets_no_value_to_set() {
        // HPE iLO 5's registry marks SecureBootStatus ReadOnly; ProcAmdIoVt is writable.
        let registry = json!({"RegistryEntries": {"Attributes": [
            {"AttributeName": "SecureBootStatus", "ReadOnly": true,
             "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}]},
            {"AttributeName": "ProcAmdIoVt", "ReadOnly": false,
             "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}]}
        ]}});
        let bios =
            json!({"Attributes": {"SecureBootStatus": "Disabled", "ProcAmdIoVt": "Disabled"}});
        let b = normalize(&bios, Some(&registry)).unwrap();
        assert_eq!(b.secure_boot.state, BiosState::Off);
        assert_eq!(b.secure_boot.set_to, None, "read-only: nothing to set");
        assert_eq!(b.iommu.set_to.as_deref(), Some("Enabled"));
        // Without the registry too.
        let b = normalize(&bios, None).unwrap();
        assert_eq!(b.secure_boot.set_to, None);
    }

    #[test]
    fn two_switches_both_must_be_on() {
        let b = normalize(
            &json!({"Attributes": {"SRIOVEnable": "Enable", "SriovSupport": "Disabled"}}),
            None,
        )
        .unwrap();
        assert_eq!(b.sriov.state, BiosState::Off);
        assert_eq!(b.sriov.attribute.as_deref(), Some("SriovSupport"));
        assert_eq!(b.sriov.set_to.as_deref(), Some("Enabled"));
    }
}
