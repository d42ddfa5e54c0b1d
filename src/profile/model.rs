//! The model of a role profile (`profiles/*.yaml`): minima for cores, memory, GPUs and disks,
//! BIOS settings, which NIC ports serve which network; and loading a folder of them.

use super::bytesize::ByteSize;
use crate::vocab::{NetworkKind, Role};
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::files::yaml::{self, InputError, Source};
use crate::inventory::Protocol;

/// One `profiles/<role>.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub(crate) role: Role,
    #[serde(default)]
    pub(crate) description: String,
    pub(crate) cpu: CpuSpec,
    pub(crate) memory: MemorySpec,
    pub(crate) os_disk: DiskSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) data_disks: Option<DataDisks>,
    /// Networks in the order their ports are chosen.
    pub(crate) networks: Vec<NetworkSpec>,
    /// BIOS settings the role needs; by default what Harvester needs (virtualization on,
    /// UEFI).
    #[serde(default, skip_serializing_if = "BiosSpec::is_default")]
    pub(crate) bios: BiosSpec,
    /// GPUs the role needs (passthrough or vGPU nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<GpuSpec>,
}

/// At least `count` GPUs whose model contains `model` (case-insensitive), when given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// BIOS requirements of a role. `true` requires the setting on, `false` (for `secure_boot`
/// and `smt`) requires it off; an absent `secure_boot`/`smt` is not checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BiosSpec {
    /// VT-x / AMD-V: KubeVirt runs VMs on KVM (installer preflight `KVMHostCheck`).
    #[serde(default = "yes")]
    pub(crate) virtualization: bool,
    /// UEFI boot: legacy BIOS is deprecated in Harvester v1.7 and refused from v1.8.
    #[serde(default = "yes")]
    pub(crate) uefi: bool,
    /// VT-d / AMD-Vi, for PCI passthrough and vGPU.
    #[serde(default)]
    pub(crate) iommu: bool,
    /// SR-IOV, for virtual functions of NICs and GPUs.
    #[serde(default)]
    pub(crate) sriov: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) secure_boot: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) smt: Option<bool>,
}

fn yes() -> bool {
    true
}

impl Default for BiosSpec {
    fn default() -> Self {
        BiosSpec {
            virtualization: true,
            uefi: true,
            iommu: false,
            sriov: false,
            secure_boot: None,
            smt: None,
        }
    }
}

impl BiosSpec {
    pub(crate) fn is_default(&self) -> bool {
        *self == BiosSpec::default()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    pub(crate) min_cores: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) min_threads: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    pub(crate) min_gib: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    pub(crate) min_size: ByteSize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) protocol: Option<Protocol>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataDisks {
    pub(crate) count: u32,
    pub(crate) min_size: ByteSize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) protocol: Option<Protocol>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub(crate) network: NetworkKind,
    /// Bond members needed.
    pub(crate) ports: u32,
    pub(crate) speed_mbps: u32,
}

/// The profiles a site uses, by role.
#[derive(Debug, Clone, Default)]
pub struct Profiles {
    pub(crate) by_role: BTreeMap<Role, Profile>,
}

impl Profiles {
    /// Load `<dir>/<role>.yaml` for every role; a role whose file is absent has no profile.
    pub(crate) fn load_dir(dir: &Path) -> Result<Profiles, InputError> {
        let mut by_role = BTreeMap::new();
        for role in Role::ALL {
            let path = dir.join(format!("{}.yaml", role.as_str()));
            if !path.exists() {
                continue;
            }
            let (p, src): (Profile, Source) = yaml::load(&path)?;
            if p.role != role {
                return Err(src.error_at(
                    &crate::path!["role"],
                    format!("this file is {}.yaml but says role `{}`", role, p.role),
                    Some(format!("set `role: {role}` or rename the file")),
                ));
            }
            by_role.insert(role, p);
        }
        Ok(Profiles { by_role })
    }

    pub(crate) fn get(&self, role: Role) -> Option<&Profile> {
        self.by_role.get(&role)
    }
}
