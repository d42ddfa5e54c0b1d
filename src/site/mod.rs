//! `site.yaml`: what the site decides (networks, install source, secrets, settings).
//!
//! Parsing checks each value on its own (a VLAN in 1..4094, an MTU in 576..9000, a CIDR that
//! parses); [`validate`] then checks the values against each other (a VIP inside the
//! management subnet, no two site networks overlapping, a storage range Harvester accepts) and
//! points every error at the key that is wrong.

pub(crate) mod audit;
pub(crate) mod base_url;
pub(crate) mod compliance;
mod load;
mod model;
pub(crate) mod rke;
pub(crate) mod types;
mod validate;

pub(crate) use load::{LoadedSite, load};
pub(crate) use model::{
    Bond, BondMode, Cabling, Catalogue, Image, ImageKind, ManagementNetwork, Pool, Site,
    SwitchSide, Tenant, VmNetwork,
};
pub(crate) use types::{ClusterNetworkName, Mtu};
