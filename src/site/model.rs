//! The model of `site.yaml`: serde types with their defaults and per-value checks, and
//! loading the file (unknown keys rejected, every error located).

use super::types::{ClusterNetworkName, DnsLabel, Mtu, Vlan};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use serde::{Deserialize, Serialize};

use crate::files::secrets::SecretRef;

/// The whole `site.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// Site name; output goes to `iso-config/<name>/`.
    pub(crate) name: DnsLabel,
    /// Where the role profiles are, relative to the site directory.
    #[serde(default = "default_profiles_dir")]
    pub(crate) profiles_dir: String,
    pub(crate) harvester: HarvesterSpec,
    pub(crate) management: ManagementNetwork,
    #[serde(default)]
    pub(crate) cluster: ClusterCidrs,
    pub(crate) vm_network: VmNetwork,
    pub(crate) storage_network: StorageNetwork,
    #[serde(default)]
    pub(crate) longhorn: LonghornSpec,
    pub(crate) secrets: Secrets,
    /// Where `rackplan serve` listens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) serve: Option<ServeSpec>,
    /// Golden VM images, rendered as `VirtualMachineImage` objects Harvester downloads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) images: Vec<Image>,
    /// Rancher cluster templates rendered from a scenario's shapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) catalogue: Option<Catalogue>,
    /// What every catalogue cluster keeps: audit policy, snapshot target, versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) compliance: Option<super::compliance::Compliance>,
    /// Firmware levels pinned per server model (`<manufacturer> <model>` as in nodes.yaml,
    /// e.g. `Dell Inc. PowerEdge R750`) and component (`BIOS`, `BMC`, `nic <adapter>`,
    /// `drive <model>`, `gpu <model>`): nodes on another level are findings, even when they
    /// all agree.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) firmware_baseline: BTreeMap<String, BTreeMap<String, String>>,
    /// The switch side of the three networks, held against each NIC's LLDP neighbour by
    /// `check` (and shown by `check --cabling`). Without it, `check` still finds bond
    /// members on one switch, one-member bonds, two nodes on one switch port, several LLDP
    /// neighbours on one port, links slower than the profile and switch frame sizes below
    /// what the site's MTUs need (MTU + 18, + 4 on a VLAN-tagged network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cabling: Option<Cabling>,
}

/// The network design: which switches each network's ports land on and what those ports
/// must carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cabling {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) management: Option<SwitchSide>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vm: Option<SwitchSide>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) storage: Option<SwitchSide>,
    /// The storage network on switches no other network uses (the reference design's
    /// dedicated Longhorn network). Default: true.
    #[serde(default = "dedicated_default")]
    pub(crate) dedicated_storage: bool,
}

fn dedicated_default() -> bool {
    true
}

/// One network's switches and the VLANs its switch ports must carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchSide {
    /// The switches (LLDP system names, or chassis ids; either matches, without case)
    /// this network's ports must be cabled to; an MLAG pair is its two members. A bond's
    /// members go to two of them when there are two.
    pub(crate) switches: Vec<String>,
    /// VLANs the switch ports must carry besides the ones site.yaml already names for the
    /// network (the management VLAN, the tenants' VLANs, the storage VLAN).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) vlans: Vec<Vlan>,
}

impl Cabling {
    pub(crate) fn side(&self, n: crate::vocab::NetworkKind) -> Option<&SwitchSide> {
        match n {
            crate::vocab::NetworkKind::Management => self.management.as_ref(),
            crate::vocab::NetworkKind::Vm => self.vm.as_ref(),
            crate::vocab::NetworkKind::Storage => self.storage.as_ref(),
        }
    }
}

/// A VM image Harvester downloads from a URL and checks against its SHA-512.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Image {
    /// Object name (`metadata.name`); machine configs refer to `<namespace>/<name>`.
    pub(crate) name: DnsLabel,
    /// Name shown in Harvester's UI; unique per namespace and immutable once created.
    pub(crate) display_name: String,
    /// Where Harvester downloads the image from (`http://` or `https://`).
    pub(crate) url: String,
    /// `sha512:<128 lowercase hex digits>`: Longhorn accepts SHA-512 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) checksum: Option<String>,
    /// Defaults to `harvester-public`, which every project can read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) namespace: Option<DnsLabel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// A Longhorn StorageClass whose parameters (replicas, selectors) the image takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) storage_class: Option<String>,
    /// UI hint, e.g. `ubuntu`, `sles`, `linux`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) os_type: Option<String>,
    /// `prepared`: built for the catalogue, with everything a boot needs installed and
    /// enabled (qemu-guest-agent, which the Rancher machine driver reads the VM's address
    /// from); its VMs install nothing at boot. `generic` (the default): a stock cloud
    /// image; cloud-init installs qemu-guest-agent at each VM's first boot, which takes
    /// minutes and a reachable package mirror.
    #[serde(default)]
    pub(crate) kind: ImageKind,
}

/// What an image carries; decides what its VMs do at first boot.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ImageKind {
    /// Everything the boot needs is in the image: nothing is installed at boot.
    Prepared,
    /// A stock cloud image: the guest agent is installed at first boot.
    #[default]
    Generic,
}

impl ImageKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ImageKind::Prepared => "prepared",
            ImageKind::Generic => "generic",
        }
    }
}

impl Image {
    pub(crate) fn namespace(&self) -> &str {
        self.namespace
            .as_ref()
            .map_or("harvester-public", |n| n.0.as_str())
    }

    /// The checksum's hex digits, as Harvester passes them to Longhorn.
    pub(crate) fn sha512(&self) -> Option<&str> {
        self.checksum
            .as_deref()
            .and_then(|c| c.strip_prefix("sha512:"))
    }
}

/// `catalogue:`: which scenario's shapes become Rancher cluster templates, and the
/// settings every template shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// The scenario whose `shapes:` are offered, relative to site.yaml.
    pub(crate) scenario: String,
    /// Shapes to offer; all of the scenario's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shapes: Option<Vec<String>>,
    /// The image (`images[].name`) the VMs boot from; the first image when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) image: Option<String>,
    /// The tenant network (`vm_network.tenants[].name`) the VMs attach to; the first when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) network: Option<String>,
    /// Rancher namespace of the Cluster and HarvesterConfig objects.
    #[serde(default = "default_catalogue_namespace")]
    pub(crate) namespace: String,
    /// Harvester namespace the VMs are created in.
    #[serde(default = "default_vm_namespace")]
    pub(crate) vm_namespace: String,
    pub(crate) kubernetes_version: String,
    /// `<namespace>:<name>` of the Harvester cloud credential in Rancher.
    pub(crate) cloud_credential: String,
    /// The image's login user (the Rancher machine driver connects as it).
    #[serde(default = "default_ssh_user")]
    pub(crate) ssh_user: String,
    /// Keys merged over the compliance defaults of `rkeConfig.machineGlobalConfig`; a
    /// `null` value removes a default.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) machine_global_config: BTreeMap<String, serde_json::Value>,
    /// Keys merged over the defaults of `rkeConfig.upgradeStrategy`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) upgrade_strategy: BTreeMap<String, serde_json::Value>,
    /// How the request operator runs in Rancher's cluster (its Deployment).
    #[serde(default)]
    pub(crate) operator: OperatorDeployment,
}

/// `catalogue.operator`: the request operator's Deployment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorDeployment {
    /// The container image (built from the repository's `Containerfile`); default
    /// `rackplan:<this rackplan's version>`, so the manifest names the binary whose flags
    /// it was written for.
    #[serde(default = "default_operator_image")]
    pub(crate) image: String,
    /// A Secret in the catalogue's namespace whose key `kubeconfig` reaches the Harvester
    /// cluster, when Harvester is not Rancher's own cluster; absent: the fleet is read
    /// with the operator's service account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) harvester_kubeconfig_secret: Option<String>,
}

impl Default for OperatorDeployment {
    fn default() -> Self {
        OperatorDeployment {
            image: default_operator_image(),
            harvester_kubeconfig_secret: None,
        }
    }
}

fn default_operator_image() -> String {
    format!("rackplan:{}", env!("CARGO_PKG_VERSION"))
}

fn default_catalogue_namespace() -> String {
    "fleet-default".into()
}
fn default_vm_namespace() -> String {
    "default".into()
}
fn default_ssh_user() -> String {
    "ubuntu".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeSpec {
    /// `address:port`; the default is 127.0.0.1:8080 (loopback only).
    pub(crate) listen: std::net::SocketAddr,
}

fn default_profiles_dir() -> String {
    "../../profiles".to_string()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HarvesterSpec {
    /// Release to install, e.g. `v1.6.1`; names the PXE artefacts.
    pub(crate) version: String,
    /// The installer ISO; required by automatic installs.
    pub(crate) iso_url: String,
    /// Base URL under which `serve` (or any web server) publishes artefacts and configs. Its
    /// path is literal: no segment may start with `:` or `*` or hold `{` or `}`.
    pub(crate) pxe_base_url: String,
    /// Kernel console, e.g. `ttyS1,115200n8` for serial-only machines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) console: Option<String>,
    /// Let dracut fetch the live root over HTTPS without verifying TLS (`rd.noverifyssl`).
    /// Off by default; turning it on is recorded in every iPXE script.
    #[serde(default)]
    pub(crate) insecure_live_fetch: bool,
    /// Pass `harvester.install.skipchecks=true` (proceed despite preflight warnings).
    #[serde(default)]
    pub(crate) skip_preflight_checks: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManagementNetwork {
    pub(crate) cidr: Ipv4Net,
    pub(crate) gateway: Ipv4Addr,
    pub(crate) vip: Ipv4Addr,
    /// Addresses handed to nodes, in order.
    pub(crate) pool: Pool,
    pub(crate) dns: Vec<Ipv4Addr>,
    pub(crate) ntp: Vec<String>,
    /// Tagged management VLAN; absent means untagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vlan: Option<Vlan>,
    #[serde(default)]
    pub(crate) mtu: Mtu,
    #[serde(default)]
    pub(crate) bond: Bond,
    /// Hostnames are `<prefix>-<m|c|w><NN>`.
    pub(crate) hostname_prefix: DnsLabel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    pub(crate) start: Ipv4Addr,
    pub(crate) end: Ipv4Addr,
}

/// Linux bonding options; the reference design bonds everything with LACP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bond {
    #[serde(default = "default_bond_mode")]
    pub(crate) mode: BondMode,
    #[serde(default = "default_miimon")]
    pub(crate) miimon: u32,
    /// Only meaningful for 802.3ad and balance-xor; `layer3+4` spreads flows of one host pair
    /// over both links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) xmit_hash_policy: Option<XmitHashPolicy>,
}

impl Default for Bond {
    fn default() -> Self {
        Bond {
            mode: default_bond_mode(),
            miimon: default_miimon(),
            xmit_hash_policy: Some(XmitHashPolicy::Layer34),
        }
    }
}

fn default_bond_mode() -> BondMode {
    BondMode::Lacp
}

fn default_miimon() -> u32 {
    100
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum BondMode {
    #[serde(rename = "balance-rr")]
    BalanceRr,
    #[serde(rename = "active-backup")]
    ActiveBackup,
    #[serde(rename = "balance-xor")]
    BalanceXor,
    #[serde(rename = "broadcast")]
    Broadcast,
    #[serde(rename = "802.3ad")]
    Lacp,
    #[serde(rename = "balance-tlb")]
    BalanceTlb,
    #[serde(rename = "balance-alb")]
    BalanceAlb,
}

impl BondMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BondMode::BalanceRr => "balance-rr",
            BondMode::ActiveBackup => "active-backup",
            BondMode::BalanceXor => "balance-xor",
            BondMode::Broadcast => "broadcast",
            BondMode::Lacp => "802.3ad",
            BondMode::BalanceTlb => "balance-tlb",
            BondMode::BalanceAlb => "balance-alb",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum XmitHashPolicy {
    #[serde(rename = "layer2")]
    Layer2,
    #[serde(rename = "layer2+3")]
    Layer23,
    #[serde(rename = "layer3+4")]
    Layer34,
    #[serde(rename = "encap2+3")]
    Encap23,
    #[serde(rename = "encap3+4")]
    Encap34,
}

impl XmitHashPolicy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            XmitHashPolicy::Layer2 => "layer2",
            XmitHashPolicy::Layer23 => "layer2+3",
            XmitHashPolicy::Layer34 => "layer3+4",
            XmitHashPolicy::Encap23 => "encap2+3",
            XmitHashPolicy::Encap34 => "encap3+4",
        }
    }
}

/// RKE2's pod and service networks; defaults as Harvester's installer (v1.5+).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterCidrs {
    #[serde(default = "default_pod_cidr")]
    pub(crate) pod_cidr: Ipv4Net,
    #[serde(default = "default_service_cidr")]
    pub(crate) service_cidr: Ipv4Net,
    #[serde(default = "default_cluster_dns")]
    pub(crate) cluster_dns: Ipv4Addr,
}

impl Default for ClusterCidrs {
    fn default() -> Self {
        ClusterCidrs {
            pod_cidr: default_pod_cidr(),
            service_cidr: default_service_cidr(),
            cluster_dns: default_cluster_dns(),
        }
    }
}

fn default_pod_cidr() -> Ipv4Net {
    "10.52.0.0/16".parse().expect("constant")
}
fn default_service_cidr() -> Ipv4Net {
    "10.53.0.0/16".parse().expect("constant")
}
fn default_cluster_dns() -> Ipv4Addr {
    Ipv4Addr::new(10, 53, 0, 10)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VmNetwork {
    pub(crate) cluster_network: ClusterNetworkName,
    #[serde(default)]
    pub(crate) mtu: Mtu,
    #[serde(default)]
    pub(crate) bond: Bond,
    #[serde(default)]
    pub(crate) tenants: Vec<Tenant>,
}

/// A tenant's VM network: one VLAN NetworkAttachmentDefinition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tenant {
    pub(crate) name: DnsLabel,
    pub(crate) vlan: Vlan,
    /// Namespace of the NetworkAttachmentDefinition; defaults to the tenant name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) namespace: Option<DnsLabel>,
}

impl Tenant {
    pub(crate) fn namespace(&self) -> &str {
        self.namespace.as_ref().unwrap_or(&self.name).0.as_str()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageNetwork {
    pub(crate) cluster_network: ClusterNetworkName,
    pub(crate) vlan: Vlan,
    /// The range Harvester's whereabouts IPAM hands to Longhorn pods.
    pub(crate) cidr: Ipv4Net,
    #[serde(default)]
    pub(crate) exclude: Vec<Ipv4Net>,
    #[serde(default)]
    pub(crate) mtu: Mtu,
    #[serde(default)]
    pub(crate) bond: Bond,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LonghornSpec {
    #[serde(default = "default_replicas")]
    pub(crate) replica_count: u32,
    /// Longhorn `concurrent-replica-rebuild-per-node-limit`, rendered as a Setting; unset:
    /// 2, the reference design's recommendation (Longhorn's own default is 5).
    #[serde(default = "default_rebuild_limit")]
    pub(crate) concurrent_replica_rebuild_per_node_limit: u32,
}

impl Default for LonghornSpec {
    fn default() -> Self {
        LonghornSpec {
            replica_count: default_replicas(),
            concurrent_replica_rebuild_per_node_limit: default_rebuild_limit(),
        }
    }
}

fn default_replicas() -> u32 {
    3
}
fn default_rebuild_limit() -> u32 {
    2
}

/// References to secrets; their values never appear in site files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Secrets {
    /// The cluster token shared by every node.
    pub(crate) token: SecretRef,
    /// A clear-text password for user `rancher`, hashed to `$6$` before it is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) password: Option<SecretRef>,
    /// An existing crypt hash (`$6$...`), written as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) password_hash: Option<SecretRef>,
    /// A file or variable with one SSH public key per line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ssh_authorized_keys: Option<SecretRef>,
}
