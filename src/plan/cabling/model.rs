//! What `check --cabling` reports: one row per NIC of a network, the ports of each switch
//! for the person at the rack, and the findings.

use serde::Serialize;

use crate::inventory::LinkState;
use crate::plan::findings::Finding;
use crate::vocab::NetworkKind;

/// One NIC of one network, and its switch port.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CablingRow {
    /// Node id.
    pub node: String,
    /// The node's hostname in the lock, when it has one (findings name the node by it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// OS interface name, else MAC.
    pub nic: String,
    pub mac: String,
    /// The network this NIC serves: the profile's port choice, kept on the NIC's cable
    /// where only a slow link would move it (then `link-slow` says so).
    pub network: NetworkKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u32>,
    /// The speed the node's profile asks of the network per link, Mb/s.
    pub required_mbps: u32,
    pub link: LinkState,
    /// The switch: its LLDP system name, else its chassis id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chassis_id: Option<String>,
    /// The design's entry for that switch, as site.yaml writes it (a system name or a
    /// chassis id), when the neighbour is one of the design's switches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub design_switch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// VLANs the switch port names (802.1 VLAN name TLVs), tagged: the native VLAN is
    /// `native_vlan`, never listed here.
    pub vlans: Vec<u16>,
    /// The switch port's native (untagged) VLAN (802.1 port VLAN ID TLV).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_vlan: Option<u16>,
    /// The switch port's maximum frame size (802.3 MFS TLV), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// The frame size the network needs, bytes: its MTU + 18 (Ethernet header and FCS)
    /// + 4 when it is carried in a VLAN tag.
    pub frame_needed: u32,
    /// Further LLDP neighbours heard on the same port (`switch port`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<String>,
    /// Where the neighbour was read (`redfish`, `ssh`), and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_at: Option<String>,
    /// `ok` (a neighbour was read and passed every check), or the codes of this NIC's
    /// findings, comma-separated: `no-lldp` when LLDP was never read for the node,
    /// `no-neighbour` when it was read and this port had none.
    pub verdict: String,
}

impl CablingRow {
    /// The name the table gives the node: its hostname, else its id.
    pub fn node_name(&self) -> &str {
        self.hostname.as_deref().unwrap_or(&self.node)
    }
}

/// What the person at the rack sees of one switch: its ports in order.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SwitchView {
    /// Its LLDP system name, else its chassis id.
    pub switch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chassis_id: Option<String>,
    /// The design's entry for it (a system name or a chassis id), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub design_switch: Option<String>,
    /// The networks the design puts on it.
    pub design: Vec<NetworkKind>,
    pub ports: Vec<SwitchPort>,
}

/// One port of a switch, and what the NIC at the other end needs of it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SwitchPort {
    pub port: String,
    /// The node's hostname, else its id.
    pub node: String,
    pub nic: String,
    pub network: NetworkKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u32>,
    /// Tagged VLANs the port names.
    pub vlans: Vec<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_vlan: Option<u16>,
    /// The port's maximum frame size, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

/// The cabling of a site.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CablingReport {
    /// True when site.yaml has a `cabling:` design (without one, only what needs none is
    /// checked).
    pub design: bool,
    pub rows: Vec<CablingRow>,
    pub switches: Vec<SwitchView>,
    pub findings: Vec<Finding>,
}
