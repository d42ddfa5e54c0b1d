//! The words every stage shares: what a node is for ([`Role`]) and which of the reference
//! design's bonded networks a port serves ([`NetworkKind`]). A leaf module: it imports
//! nothing of ours, so the inventory, the profiles and the plan can all use it.

use std::fmt;

/// Label on every catalogue object naming the cluster shape it was rendered from (what
/// `render` writes and the request operator reads back).
pub const SHAPE_LABEL: &str = "rackplan.io/shape";

use serde::{Deserialize, Serialize};

/// What a node is for.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Management,
    Compute,
    Witness,
}

impl Role {
    pub(crate) const ALL: [Role; 3] = [Role::Management, Role::Compute, Role::Witness];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::Management => "management",
            Role::Compute => "compute",
            Role::Witness => "witness",
        }
    }

    /// The value of Harvester's `install.role`: compute nodes are `worker`, so Harvester never
    /// promotes them to the control plane; management nodes are preferred for promotion.
    pub(crate) fn harvester_role(self) -> &'static str {
        match self {
            Role::Management => "management",
            Role::Compute => "worker",
            Role::Witness => "witness",
        }
    }

    /// Letter used in generated hostnames.
    pub(crate) fn letter(self) -> char {
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
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum NetworkKind {
    Management,
    Vm,
    Storage,
}

impl NetworkKind {
    pub(crate) fn as_str(self) -> &'static str {
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
