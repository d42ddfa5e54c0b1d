//! The site's side of cabling: which design switch an LLDP neighbour is (the one lookup
//! every finding and view uses: by system name or chassis id, as the format page allows),
//! and what each network needs of a switch port (VLANs, frame size).

use crate::inventory::Lldp;
use crate::plan::inputs::Inputs;
use crate::site::Cabling;
use crate::vocab::NetworkKind;

pub(super) const NETWORKS: [NetworkKind; 3] = [
    NetworkKind::Management,
    NetworkKind::Vm,
    NetworkKind::Storage,
];

/// Ethernet header (14) and FCS (4) around every frame's payload.
pub(super) const FRAME_OVERHEAD: u32 = 18;
/// One 802.1Q tag.
pub(super) const VLAN_TAG: u32 = 4;

/// The design entry (as site.yaml writes it) naming this neighbour by its system name or
/// its chassis id, case-insensitively; `None` when the design names neither.
pub(super) fn design_switch<'d>(d: &'d Cabling, l: &Lldp) -> Option<&'d str> {
    let is = |x: &Option<String>, entry: &str| {
        x.as_deref().is_some_and(|v| v.eq_ignore_ascii_case(entry))
    };
    NETWORKS
        .into_iter()
        .filter_map(|n| d.side(n))
        .flat_map(|s| &s.switches)
        .find(|entry| is(&l.switch, entry) || is(&l.chassis_id, entry))
        .map(String::as_str)
}

/// The networks the design puts on one of its switches (`entry` as `design_switch` gave
/// it).
pub(super) fn networks_of(d: &Cabling, entry: &str) -> Vec<NetworkKind> {
    NETWORKS
        .into_iter()
        .filter(|n| {
            d.side(*n)
                .is_some_and(|s| s.switches.iter().any(|w| w.eq_ignore_ascii_case(entry)))
        })
        .collect()
}

/// The identity switches are grouped by: the design's entry, else the chassis id, else the
/// system name, without case.
pub(super) fn switch_key(
    design_switch: Option<&str>,
    chassis_id: Option<&str>,
    switch: Option<&str>,
) -> Option<String> {
    design_switch
        .or(chassis_id)
        .or(switch)
        .map(str::to_lowercase)
}

/// What the site says a network needs of its switch ports.
pub(super) struct Needs {
    pub(super) mtu: u32,
    /// VLANs the ports must carry (the management VLAN, the tenants', the storage VLAN and
    /// the design's extra ones), ascending.
    pub(super) vlans: Vec<u16>,
}

impl Needs {
    /// A network with VLANs is carried tagged: one 802.1Q tag per frame.
    pub(super) fn tagged(&self) -> bool {
        !self.vlans.is_empty()
    }

    /// The largest frame the network sends, bytes.
    pub(super) fn frame(&self) -> u32 {
        self.mtu + FRAME_OVERHEAD + if self.tagged() { VLAN_TAG } else { 0 }
    }

    /// How `frame` is made up, in words: `9000 + 18 (Ethernet header and FCS) + 4 (VLAN
    /// tag) = 9022`.
    pub(super) fn frame_sum(&self) -> String {
        let tag = if self.tagged() {
            format!(" + {VLAN_TAG} (VLAN tag)")
        } else {
            String::new()
        };
        format!(
            "{} + {FRAME_OVERHEAD} (Ethernet header and FCS){tag} = {}",
            self.mtu,
            self.frame()
        )
    }
}

pub(super) fn needs(inputs: &Inputs, net: NetworkKind) -> Needs {
    let s = &inputs.site.site;
    let extra = s
        .cabling
        .as_ref()
        .and_then(|c| c.side(net))
        .map(|d| d.vlans.iter().map(|v| v.0).collect::<Vec<_>>())
        .unwrap_or_default();
    let (mtu, mut vlans) = match net {
        NetworkKind::Management => (
            s.management.mtu.0,
            s.management.vlan.map(|v| v.0).into_iter().collect(),
        ),
        NetworkKind::Vm => (
            s.vm_network.mtu.0,
            s.vm_network
                .tenants
                .iter()
                .map(|t| t.vlan.0)
                .collect::<Vec<_>>(),
        ),
        NetworkKind::Storage => (s.storage_network.mtu.0, vec![s.storage_network.vlan.0]),
    };
    vlans.extend(extra);
    vlans.sort_unstable();
    vlans.dedup();
    Needs {
        mtu: u32::from(mtu),
        vlans,
    }
}

/// VLAN ids as ranges: `100-103,200`.
pub(crate) fn ranges(v: &[u16]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// Names joined for prose: `a`, `a or b`, `a, b or c`.
pub(super) fn either(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
