//! BIOS readiness: a node's normalised BIOS settings held against its role's `bios:`
//! requirements. Harvester needs hardware virtualization (installer preflight
//! `KVMHostCheck`, pkg/preflight/checks.go, warns without `/dev/kvm`, and a warning stops an
//! automatic install) and UEFI (legacy BIOS deprecated in v1.7, refused from v1.8); PCI
//! passthrough and vGPU need the IOMMU (vfio), SR-IOV networks and vGPU need SR-IOV.
//!
//! A setting that is off is an error saying which attribute to set to what; one whose
//! value means nothing by itself (integers without a registry) or that the BMC does not
//! expose is a warning saying what to look at. Optional settings that are off or unknown
//! are told as info, so what passthrough would need is known before it is asked for. A node
//! without BIOS facts gets no finding.

use super::findings::{Finding, Severity};
use crate::inventory::{BiosSetting, BiosState, Node};
use crate::profile::Profile;

struct Need<'a> {
    key: &'static str,
    name: &'static str,
    why: &'static str,
    setting: &'a BiosSetting,
    /// Some(true): must be on (UEFI for the boot mode); Some(false): must be off; None: told.
    want: Option<bool>,
}

fn satisfied(state: BiosState, want: bool) -> Option<bool> {
    match state {
        BiosState::On | BiosState::Uefi => Some(want),
        BiosState::Off | BiosState::Legacy => Some(!want),
        BiosState::Unknown => None,
    }
}

fn finding(node: &Node, n: &Need<'_>) -> Option<Finding> {
    let s = n.setting;
    let want = n.want.unwrap_or(true);
    let ok = satisfied(s.state, want);
    if ok == Some(true) {
        return None;
    }
    let target = if n.key == "boot_mode" {
        if want { "UEFI" } else { "legacy" }
    } else if want {
        "on"
    } else {
        "off"
    };
    let attr = s.attribute.as_deref();
    let value = s.value.as_deref().unwrap_or("?");
    let (severity, code, what, fix) = match (ok, attr) {
        (Some(false), Some(a)) => (
            Severity::Error,
            "bios-setting",
            format!("{} is not {target}: BIOS attribute {a} = {value}", n.name),
            match (&s.set_to, want) {
                (Some(to), true) => format!(
                    "set BIOS attribute {a} to {to} (PATCH the system's Bios/Settings, applied at the next reset, or in BIOS setup)"
                ),
                _ => format!("set BIOS attribute {a} so that {} is {target}", n.name),
            },
        ),
        (_, Some(a)) => (
            Severity::Warning,
            "bios-unknown",
            format!(
                "{} unknown: BIOS attribute {a} = {value}, a value the BMC gives no meaning for (no attribute registry)",
                n.name
            ),
            format!(
                "check in BIOS setup that {} is {target} ({a}), then rediscover",
                n.name
            ),
        ),
        (_, None) => (
            Severity::Warning,
            "bios-unknown",
            format!(
                "{} unknown: the BMC exposes no BIOS attribute for it",
                n.name
            ),
            format!("check in BIOS setup that {} is {target}", n.name),
        ),
    };
    let severity = if n.want.is_none() {
        Severity::Info
    } else {
        severity
    };
    Some(Finding::new(&node.id, severity, code, what, n.why, fix))
}

/// Findings of one node's BIOS against the profile.
pub fn bios_findings(node: &Node, p: &Profile) -> Vec<Finding> {
    // No BIOS facts (an OS-only inventory, a BMC without attributes, a nodes.yaml from
    // before BIOS reading): nothing to hold against the profile.
    let Some(b) = &node.bios else {
        return Vec::new();
    };
    let spec = &p.bios;
    let optional = |on: bool| if on { Some(true) } else { None };
    let needs = [
        Need {
            key: "virtualization",
            name: "virtualization (VT-x/AMD-V)",
            why: "KubeVirt runs every VM on KVM; without it the installer's preflight stops and no VM starts",
            setting: &b.virtualization,
            want: optional(spec.virtualization),
        },
        Need {
            key: "boot_mode",
            name: "the boot mode",
            why: "Harvester deprecates legacy BIOS boot in v1.7 and refuses it from v1.8",
            setting: &b.boot_mode,
            want: optional(spec.uefi),
        },
        Need {
            key: "iommu",
            name: "the IOMMU (VT-d/AMD-Vi)",
            why: "PCI passthrough and vGPU bind devices to vfio-pci, which needs an active IOMMU",
            setting: &b.iommu,
            want: optional(spec.iommu),
        },
        Need {
            key: "sriov",
            name: "SR-IOV",
            why: "virtual functions of SR-IOV NICs and vGPUs exist only with SR-IOV on in the BIOS",
            setting: &b.sriov,
            want: optional(spec.sriov),
        },
    ];
    let mut out: Vec<Finding> = needs.iter().filter_map(|n| finding(node, n)).collect();
    for (key, name, why, setting, want) in [
        (
            "secure_boot",
            "Secure Boot",
            "the site's policy for Secure Boot",
            &b.secure_boot,
            spec.secure_boot,
        ),
        (
            "smt",
            "SMT (Hyper-Threading)",
            "the profile's vCPU sizing assumes it",
            &b.smt,
            spec.smt,
        ),
    ] {
        if let Some(w) = want {
            let n = Need {
                key,
                name,
                why,
                setting,
                want: Some(w),
            };
            out.extend(finding(node, &n));
        }
    }
    out
}

/// The node's GPUs, told (info), and held against the profile's `gpus:`.
pub fn gpu_findings(node: &Node, p: &Profile) -> Vec<Finding> {
    let mut out = Vec::new();
    if !node.gpus.is_empty() {
        let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
        for g in &node.gpus {
            let mut k = g.model.clone().unwrap_or_else(|| "model unknown".into());
            if let Some(m) = g.memory_gib {
                k.push_str(&format!(" ({m} GiB)"));
            }
            *kinds.entry(k).or_default() += 1;
        }
        let list: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} x {k}")).collect();
        out.push(Finding::new(
            &node.id,
            Severity::Info,
            "gpus",
            format!("{} GPU(s): {}", node.gpus.len(), list.join(", ")),
            "GPUs are passed through to VMs (pcidevices) or shared as vGPUs; both need the IOMMU",
            "ask for them in the role profile (`gpus: {count, model}`) and `bios: {iommu: true}`",
        ));
    }
    if let Some(spec) = &p.gpus {
        let want = spec.model.as_deref().map(str::to_ascii_lowercase);
        let have = node
            .gpus
            .iter()
            .filter(|g| {
                want.as_deref().is_none_or(|w| {
                    g.model
                        .as_deref()
                        .is_some_and(|m| m.to_ascii_lowercase().contains(w))
                })
            })
            .count();
        if have < spec.count as usize {
            let what = spec
                .model
                .as_deref()
                .map(|m| format!(" matching `{m}`"))
                .unwrap_or_default();
            out.push(Finding::new(
                &node.id,
                Severity::Error,
                "gpus-missing",
                format!(
                    "{have} GPU(s){what}, the {} profile needs {}",
                    p.role, spec.count
                ),
                "VMs of this role are planned with these GPUs",
                "install the GPUs, check that the BMC lists them (an accelerator board may be its own system), or give this node another role",
            ));
        }
    }
    out
}
/// One BIOS attribute to write so that a setting the profile asks for holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BiosChange {
    /// `virtualization`, `boot_mode`, `iommu`, `sriov`, `secure_boot`, `smt`.
    pub setting: &'static str,
    pub attribute: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub to: String,
}

/// What `boot --bios` writes on one node: each setting the profile requires on (UEFI for
/// the boot mode) that is off, where discovery knows the attribute and the value that
/// turns it on; and, for the rest that are off, why nothing can be written (the setting
/// then stays `check`'s finding).
pub fn bios_changes(node: &Node, p: &Profile) -> (Vec<BiosChange>, Vec<String>) {
    let Some(b) = &node.bios else {
        return (
            Vec::new(),
            vec!["no BIOS facts in nodes.yaml (rediscover over Redfish)".into()],
        );
    };
    let spec = &p.bios;
    let wanted = [
        ("virtualization", &b.virtualization, spec.virtualization),
        ("boot_mode", &b.boot_mode, spec.uefi),
        ("iommu", &b.iommu, spec.iommu),
        ("sriov", &b.sriov, spec.sriov),
        (
            "secure_boot",
            &b.secure_boot,
            spec.secure_boot == Some(true),
        ),
        ("smt", &b.smt, spec.smt == Some(true)),
    ];
    let mut changes = Vec::new();
    let mut cannot = Vec::new();
    for (setting, s, required) in wanted {
        if !required || !matches!(s.state, BiosState::Off | BiosState::Legacy) {
            continue;
        }
        match (&s.attribute, &s.set_to) {
            (Some(a), Some(to)) => changes.push(BiosChange {
                setting,
                attribute: a.clone(),
                from: s.value.clone(),
                to: to.clone(),
            }),
            (Some(a), None) => cannot.push(format!(
                "{setting}: attribute {a} has no value known to turn it on, or is read-only: set it in BIOS setup"
            )),
            (None, _) => cannot.push(format!("{setting}: the BMC exposes no attribute for it")),
        }
    }
    (changes, cannot)
}
