//! `site.yaml`: what the site decides (networks, install source, secrets, settings).
//!
//! Parsing checks each value on its own (a VLAN in 1..4094, an MTU in 576..9000, a CIDR that
//! parses); [`validate`] then checks the values against each other (a VIP inside the
//! management subnet, no two site networks overlapping, a storage range Harvester accepts) and
//! points every error at the key that is wrong.

pub mod base_url;
mod load;
mod model;
pub mod types;
mod validate;

pub use load::{LoadedSite, load};
pub use model::{
    Bond, BondMode, Catalogue, ClusterCidrs, HarvesterSpec, Image, LonghornSpec, ManagementNetwork,
    Pool, Secrets, ServeSpec, Site, StorageNetwork, Tenant, VmNetwork, XmitHashPolicy,
};
pub use types::{ClusterNetworkName, DnsLabel, Mtu, Vlan};
pub use validate::validate;
