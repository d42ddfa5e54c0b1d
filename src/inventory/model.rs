//! The node record of `nodes.yaml`.
//!
//! Every discovered fact is optional: a value the BMC or the OS did not give stays unknown
//! (`None`) rather than being guessed, and checks treat unknown as its own case. The
//! `annotations` block belongs to people; discovery never writes it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole `nodes.yaml` file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Inventory {
    #[serde(default)]
    pub nodes: Vec<Node>,
}

/// One physical server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Stable identity: the system serial number where known.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) manufacturer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmc: Option<Bmc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gib: Option<f64>,
    #[serde(default)]
    pub disks: Vec<Disk>,
    #[serde(default)]
    pub nics: Vec<Nic>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) gpus: Vec<Gpu>,
    /// BIOS settings that decide whether VMs run, read from the BMC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) bios: Option<Bios>,
    /// Firmware versions, compared across nodes of one model (the BMC's is `bmc.firmware`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) firmware: Option<Firmware>,
    #[serde(default)]
    pub sources: Sources,
    /// Set when the last discovery could not reach this node; its facts are from earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<Stale>,
    #[serde(default)]
    pub annotations: Annotations,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bmc {
    pub address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) firmware: Option<String>,
}

/// CPUs only: physical cores and hardware threads summed over sockets; never GPUs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sockets: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) threads: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Media {
    Ssd,
    Hdd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Nvme,
    Sata,
    Sas,
    Usb,
    Scsi,
    Other,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Disk {
    pub id: String,
    /// Stable OS path, `/dev/disk/by-id/...`, when the OS view is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) media: Option<Media>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) serial: Option<String>,
    /// The `/dev/disk/by-id` name udev gives this disk, derived from what the BMC said, or
    /// why none could be derived. Used only while `path` (the OS's own view) is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<DerivedPath>,
}

/// A by-id name built from a drive's Redfish identity by udev's rules, with the fields it
/// came from; or, when the BMC's data cannot name the disk without guessing, the doubt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DerivedPath {
    /// The path written into install configs while the OS view is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Other links udev makes for the same disk (the NVMe `_<nsid>` form of systemd 254
    /// and later, `wwn-0x…`): accepted in annotations, never written by rackplan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// The Redfish fields the name was built from, e.g. `Drive.Model`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<String>,
    /// Why no path was derived, and how to settle it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubt: Option<String>,
    /// A likely name Redfish cannot prove: shown to people, never written into a config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
}

/// Where a disk's device path comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathOrigin {
    /// Seen by the OS (`discover ssh`).
    Os,
    /// Derived from the BMC's drive identity.
    Derived,
}

impl Disk {
    /// The path an install config uses for this disk: the OS's own view first, else the
    /// one derived from Redfish.
    pub fn device_path(&self) -> Option<(&str, PathOrigin)> {
        if let Some(p) = &self.path {
            return Some((p.as_str(), PathOrigin::Os));
        }
        self.derived
            .as_ref()
            .and_then(|d| d.path.as_deref())
            .map(|p| (p, PathOrigin::Derived))
    }

    /// Every device path that may name this disk in an annotation: the OS's view, the
    /// derived path, udev's other links, and the likely name a person has confirmed by
    /// writing it (never used without that).
    pub(crate) fn known_paths(&self) -> impl Iterator<Item = &str> {
        let derived = self.derived.as_ref();
        self.path
            .as_deref()
            .into_iter()
            .chain(derived.and_then(|d| d.path.as_deref()))
            .chain(
                derived
                    .into_iter()
                    .flat_map(|d| d.also.iter().map(String::as_str)),
            )
            .chain(derived.and_then(|d| d.candidate.as_deref()))
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    Up,
    Down,
    #[default]
    Unknown,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nic {
    /// OS interface name (`ens1f0`), known from SSH discovery or an annotation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Lowercase, colon-separated.
    pub mac: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u32>,
    #[serde(default)]
    pub link: LinkState,
    /// Adapter identity (slot or Redfish NetworkAdapter id), for spreading bonds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) adapter: Option<String>,
    /// Port number on its adapter, 0-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) port: Option<u32>,
    /// The switch port at the other end of the cable, as its LLDP frames say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lldp: Option<Lldp>,
}

/// An LLDP neighbour: the switch and port a NIC is cabled to, and what that port
/// advertises. Text from the switch, relayed by the BMC or the host: checked before it is
/// kept (`discover::lldp`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Lldp {
    /// The switch: its LLDP system name, else its chassis id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) switch: Option<String>,
    /// The switch's chassis id (a MAC address on most switches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chassis_id: Option<String>,
    /// The switch port's id (`Ethernet1/7`, `swp20`, `ethernet1/1/7`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) port: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) port_description: Option<String>,
    /// VLANs the switch port names (802.1 VLAN name TLVs), ascending; empty when it names
    /// none or the source cannot say (Redfish). A native VLAN sent only as the port VLAN
    /// ID is `pvid`, not listed here; `check --cabling` shows tagged and native apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) vlans: Vec<u16>,
    /// The port's untagged (native) VLAN (802.1 port VLAN ID TLV), when advertised. It is
    /// in `vlans` only when the switch also names it in a VLAN name TLV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pvid: Option<u16>,
    /// The switch port's maximum frame size in bytes (802.3 MFS TLV): Ethernet header and
    /// FCS included, so an MTU of 9000 needs at least 9018 untagged, 9022 with a VLAN tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mtu: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) management_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) management_vlan: Option<u16>,
    /// When it was read (RFC 3339 UTC).
    pub(crate) seen_at: String,
    pub(crate) source: LldpSource,
    /// Further neighbours heard on the same port, in the order lldpd listed them (the
    /// fields above are the first). A cable ends on one switch port: more than one
    /// neighbour is a device between the NIC and the switch, a loop, a host sending LLDP,
    /// or a cable moved less than a TTL ago; `check` reports it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) others: Vec<LldpPeer>,
}

/// Another neighbour heard on a port that already has one: who it says it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LldpPeer {
    /// Its LLDP system name, else its chassis id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) switch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chassis_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) port: Option<String>,
}

/// Where an LLDP neighbour was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LldpSource {
    /// The BMC's `Port.Ethernet.LLDPReceive`.
    Redfish,
    /// The host's lldpd (`lldpcli`), over SSH.
    Ssh,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) manufacturer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory_gib: Option<f64>,
}

/// Firmware versions as the BMC reports them, compared as opaque strings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Firmware {
    /// The system's `BiosVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) bios: Option<String>,
    /// Per component (`nic <adapter>`, `drive <model>`, `gpu <model>`): its version(s),
    /// distinct values joined by `, `.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) components: BTreeMap<String, String>,
}

/// BIOS settings normalised across vendors. Each keeps the attribute it was read from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bios {
    /// The attribute registry the BIOS names (`AttributeRegistry`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) registry: Option<String>,
    /// Whether the registry was read (needed where attribute names are opaque codes).
    #[serde(default)]
    pub(crate) registry_read: bool,
    /// VT-x / AMD-V.
    #[serde(default)]
    pub(crate) virtualization: BiosSetting,
    /// VT-d / AMD-Vi.
    #[serde(default)]
    pub(crate) iommu: BiosSetting,
    #[serde(default)]
    pub(crate) sriov: BiosSetting,
    /// The firmware's boot mode (not the one-time boot override).
    #[serde(default)]
    pub(crate) boot_mode: BiosSetting,
    #[serde(default)]
    pub(crate) secure_boot: BiosSetting,
    /// Simultaneous multithreading (Hyper-Threading).
    #[serde(default)]
    pub(crate) smt: BiosSetting,
}

/// One normalised BIOS setting.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BiosSetting {
    #[serde(default)]
    pub(crate) state: BiosState,
    /// The vendor's attribute name it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) attribute: Option<String>,
    /// Its value, as the BMC gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) value: Option<String>,
    /// The value that turns it on (or selects UEFI), where the vocabulary is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) set_to: Option<String>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum BiosState {
    On,
    Off,
    Uefi,
    Legacy,
    /// Not exposed, or a value whose meaning the BMC does not give.
    #[default]
    Unknown,
}

/// When each discovery source last saw the node (RFC 3339 UTC).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sources {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redfish: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<String>,
    /// When LLDP neighbours were last read for this node (by either source): a NIC without
    /// a neighbour since then has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lldp: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stale {
    pub since: String,
    pub error: String,
}

/// What people say about a node. Discovery never writes here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Overrides role assignment: `management`, `compute` or `witness`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<crate::vocab::Role>,
    /// Extra Kubernetes node labels, written into the install config.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) labels: BTreeMap<String, String>,
    /// Explicit NIC names per network (`management`, `vm`, `storage`), overriding the
    /// profile's port selection.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub networks: BTreeMap<crate::vocab::NetworkKind, Vec<String>>,
    /// Explicit install disks, overriding the profile's disk selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_disk: Option<String>,
    /// Free text for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Findings of this node people have seen and accept for now ("cables come
    /// tomorrow"): `check` shows them as acknowledged, with the reason, and they no longer
    /// stop `plan`, `render` or `boot`. A finding that would make the install fail (a disk
    /// path the installer cannot find, Harvester's own minima, a BIOS setting the
    /// installer needs) cannot be acknowledged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub acknowledged: Vec<Acknowledged>,
}

/// One acknowledged finding (`annotations.acknowledged[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Acknowledged {
    /// The finding's code, as `check --output json` gives it (`code`), e.g. `link-down`.
    pub finding: String,
    /// Only the findings whose text holds this (a MAC, a port or disk name); every finding
    /// of that code on the node when absent.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub matching: Option<String>,
    /// Why it is acceptable for now; `check` and SUMMARY.md show it.
    pub reason: String,
    /// The last day it holds (`YYYY-MM-DD`, UTC); from the next day the finding counts
    /// again and `check` says the acknowledgement expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

impl Acknowledged {
    /// The first second after `until` (seconds since the epoch), when it has one that reads.
    pub(crate) fn expires_at(&self) -> Option<i64> {
        self.until
            .as_deref()
            .and_then(|u| crate::clock::parse_at(u).ok())
            .map(|t| t - t.rem_euclid(86_400) + 86_400)
    }
}

impl Node {
    /// Physical CPU cores, when known.
    pub fn cores(&self) -> Option<u32> {
        self.cpu.as_ref().and_then(|c| c.cores)
    }

    /// The rack or, failing that, the zone: the failure domain used to spread roles.
    pub(crate) fn failure_domain(&self) -> Option<&str> {
        self.annotations
            .zone
            .as_deref()
            .or(self.annotations.rack.as_deref())
    }
}

/// Normalise a MAC address to lowercase, colon-separated form; `None` if it is not one.
pub(crate) fn normalize_mac(raw: &str) -> Option<String> {
    let hex: String = raw
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let seps = raw.chars().filter(|c| !c.is_ascii_hexdigit()).count();
    if hex.len() != 12 || seps > 5 {
        return None;
    }
    let parts: Vec<&str> = (0..6).map(|i| &hex[i * 2..i * 2 + 2]).collect();
    Some(parts.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_are_normalised() {
        assert_eq!(
            normalize_mac("B8:CA:3A:6A:64:7C").as_deref(),
            Some("b8:ca:3a:6a:64:7c")
        );
        assert_eq!(
            normalize_mac("b8-ca-3a-6a-64-7c").as_deref(),
            Some("b8:ca:3a:6a:64:7c")
        );
        assert_eq!(
            normalize_mac("b8ca.3a6a.647c").as_deref(),
            Some("b8:ca:3a:6a:64:7c")
        );
        assert_eq!(normalize_mac("not a mac"), None);
        assert_eq!(normalize_mac("b8:ca:3a:6a:64"), None);
    }
}
