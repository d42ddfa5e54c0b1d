//! Role profiles (`profiles/*.yaml`) and holding a node against one.
//!
//! A profile states minima (cores, memory, disks) and which NIC ports serve which network.
//! Matching is pure: [`select_ports`] and [`select_disks`] say which ports and disks a node
//! would use, and `plan::check` turns the gaps into findings.

mod bytesize;
mod select;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use bytesize::ByteSize;
pub use select::{DiskChoice, PortChoice, select_disks, select_ports};

use crate::files::yaml::{self, InputError, Source};
use crate::inventory::Protocol;

/// What a node is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Management,
    Compute,
    Witness,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Management, Role::Compute, Role::Witness];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Management => "management",
            Role::Compute => "compute",
            Role::Witness => "witness",
        }
    }

    /// The value of Harvester's `install.role`: compute nodes are `worker`, so Harvester never
    /// promotes them to the control plane; management nodes are preferred for promotion.
    pub fn harvester_role(self) -> &'static str {
        match self {
            Role::Management => "management",
            Role::Compute => "worker",
            Role::Witness => "witness",
        }
    }

    /// Letter used in generated hostnames.
    pub fn letter(self) -> char {
        match self {
            Role::Management => 'm',
            Role::Compute => 'c',
            Role::Witness => 'w',
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The three bonded networks of the reference design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkKind {
    Management,
    Vm,
    Storage,
}

impl NetworkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkKind::Management => "management",
            NetworkKind::Vm => "vm",
            NetworkKind::Storage => "storage",
        }
    }
}

impl fmt::Display for NetworkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `profiles/<role>.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub role: Role,
    #[serde(default)]
    pub description: String,
    pub cpu: CpuSpec,
    pub memory: MemorySpec,
    pub os_disk: DiskSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_disks: Option<DataDisks>,
    /// Networks in the order their ports are chosen.
    pub networks: Vec<NetworkSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    pub min_cores: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_threads: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    pub min_gib: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    pub min_size: ByteSize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataDisks {
    pub count: u32,
    pub min_size: ByteSize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    pub network: NetworkKind,
    /// Bond members needed.
    pub ports: u32,
    pub speed_mbps: u32,
}

/// The profiles a site uses, by role.
#[derive(Debug, Clone, Default)]
pub struct Profiles {
    pub by_role: BTreeMap<Role, Profile>,
}

impl Profiles {
    /// Load `<dir>/<role>.yaml` for every role; a role whose file is absent has no profile.
    pub fn load_dir(dir: &Path) -> Result<Profiles, InputError> {
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

    pub fn get(&self, role: Role) -> Option<&Profile> {
        self.by_role.get(&role)
    }
}
