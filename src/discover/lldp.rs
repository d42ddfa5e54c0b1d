//! LLDP neighbours per NIC: which switch and port each cable ends on, with the VLANs and
//! the maximum frame size the switch port advertises.
//!
//! Two sources, each untrusted text from a switch relayed by a BMC or a host:
//! - **Redfish**: the `Port` resource's `Ethernet.LLDPReceive` (DMTF `Port` schema,
//!   v1_4_0 on): `ChassisId`/`ChassisIdSubtype`, `PortId`/`PortIdSubtype`, `SystemName`,
//!   `ManagementAddressIPv4`/`IPv6`/`MAC`, `ManagementVlanId`. The standard carries no
//!   VLAN list and no frame size, so a Redfish neighbour names the switch and port only.
//!   An `LLDPReceive` that is present but empty (`{}`) means the BMC reports LLDP and saw
//!   no neighbour (Dell iDRAC 7.x on a port whose link is down); absent, the BMC does not
//!   report LLDP at all. Where it gives nothing, Dell's Oem switch connection view
//!   (`DellSwitchConnection`: switch chassis MAC and port, no name) is read instead. HPE
//!   iLO 5's Oem `HpeLLDP` (`NetworkPorts/{id}/HpeLLDP`) is not read yet.
//! - **lldpd** on the host, `lldpcli -f json show neighbors details` (lldpd's
//!   `src/client/display.c` and its JSON writer): one entry per local interface with
//!   `chassis` (keyed by the system name when the switch sends one), `port` (`id`
//!   `{type, value}`, `descr`, `mfs`: the 802.3 maximum frame size TLV), and `vlan` (the
//!   802.1 VLAN name TLVs: `vlan-id`, `pvid`). lldpcli's JSON writer collapses a list of
//!   one into the object itself, so every list is read as "an object or an array of them".
//!   `networkctl lldp` is not used: it shows neither the VLAN nor the frame-size TLVs.
//!   lldpcli writes one `interface` entry per neighbour (`display_interfaces`), so a port
//!   that hears two speakers appears twice under one name: every neighbour of a port is
//!   kept (the first as the neighbour, the rest in `others`) and `check` reports the port.
//!   A port VLAN ID with no VLAN name TLV for it is written as a `vlan` entry with `pvid`
//!   and no name (`display_vlans`): that is the native VLAN, not a VLAN the port names.
//!
//! An answer is bounded: at most 512 neighbour entries and 4094 VLANs per port are read,
//! and a note says how many more there were.
//!
//! Every string is at most 255 characters (the longest an LLDP TLV can carry) and free of
//! control and shell characters; a value that is not is refused (the neighbour field is
//! left empty) and named in a discovery note, as BMC text is.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::inventory::text::{shown, unsafe_char};
use crate::inventory::{Lldp, LldpPeer, LldpSource};

/// The longest text an LLDP TLV carries (a 9-bit length, less the subtype octet).
pub(crate) const MAX_TEXT: usize = 255;
/// Most VLANs kept per port (802.1Q has 4094).
const MAX_VLANS: usize = 4094;
/// Most neighbour entries read from one lldpcli answer.
const MAX_INTERFACES: usize = 512;

/// An lldpcli answer that says nothing about the host's neighbours: its lldpd state is
/// unknown, which is not "no neighbours".
#[derive(Debug, thiserror::Error)]
pub(crate) enum LldpcliError {
    #[error("not lldpcli's JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    #[error("no `lldp` object in lldpcli's answer")]
    NoLldp,
}

/// A checked text value: trimmed, non-empty, short, without control or shell characters.
/// A refused value becomes a note naming `what`.
fn text(v: Option<&Value>, what: &str, notes: &mut Vec<String>) -> Option<String> {
    let v = v?;
    let Some(s) = v.as_str() else {
        if !v.is_null() {
            notes.push(format!("{what}: not a string ({}), ignored", kind(v)));
        }
        return None;
    };
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.chars().count() > MAX_TEXT {
        notes.push(format!(
            "{what}: {} characters, more than an LLDP TLV holds ({MAX_TEXT}); refused",
            s.chars().count()
        ));
        return None;
    }
    if s.chars().any(unsafe_char) {
        notes.push(format!(
            "{what}: holds a control or script character (\"{}\"); refused",
            shown(s)
        ));
        return None;
    }
    Some(s.to_string())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Does this Redfish port report LLDP at all (`Ethernet.LLDPReceive` present)?
pub(crate) fn redfish_reports(port: &Value) -> bool {
    port.pointer("/Ethernet/LLDPReceive")
        .is_some_and(Value::is_object)
}

/// The neighbour a Redfish `Port` reports, if any. `nic` names the port in notes.
pub(crate) fn from_redfish(
    port: &Value,
    nic: &str,
    seen_at: &str,
    notes: &mut Vec<String>,
) -> Option<Lldp> {
    let r = port.pointer("/Ethernet/LLDPReceive")?;
    if !r.is_object() {
        notes.push(format!(
            "NIC {nic}: Ethernet.LLDPReceive is {}, not an object; ignored",
            kind(r)
        ));
        return None;
    }
    let at = |k: &str| format!("NIC {nic}: LLDPReceive.{k}");
    let system = text(r.get("SystemName"), &at("SystemName"), notes);
    let chassis = text(r.get("ChassisId"), &at("ChassisId"), notes);
    let port_id = text(r.get("PortId"), &at("PortId"), notes);
    if system.is_none() && chassis.is_none() && port_id.is_none() {
        return None;
    }
    let management = ["ManagementAddressIPv4", "ManagementAddressIPv6"]
        .iter()
        .find_map(|k| text(r.get(*k), &at(k), notes));
    let vlan = r.get("ManagementVlanId").and_then(Value::as_u64);
    Some(Lldp {
        switch: system.clone().or_else(|| chassis.clone()),
        chassis_id: chassis,
        port: port_id,
        port_description: None,
        vlans: Vec::new(),
        pvid: None,
        mtu: None,
        management_address: management,
        management_vlan: vlan
            .and_then(|v| u16::try_from(v).ok())
            .filter(|v| *v <= 4095),
        seen_at: seen_at.to_string(),
        source: LldpSource::Redfish,
        others: Vec::new(),
    })
}

/// Dell iDRAC's Oem view of the switch a NIC port is cabled to (`DellSwitchConnection`:
/// `SwitchConnectionID`, the switch's chassis MAC; `SwitchPortConnectionID`, its port), for
/// the port whose `Id` (`NIC.Slot.2-1`) is the FQDD less its partition (`NIC.Slot.2-1-1`).
/// "No Link" is no neighbour; `StaleData: Stale` is not used. Source: the R750 iDRAC 6.00
/// and 7.10 captures, `dell/iDRAC-Redfish-Scripting` `DellSwitchConnectionCollectionREDFISH.py`.
pub(crate) fn from_dell_switch_connection(
    connections: &[Value],
    port_id: &str,
    seen_at: &str,
    notes: &mut Vec<String>,
) -> Option<Lldp> {
    let c = connections.iter().find(|c| {
        c.get("FQDD")
            .and_then(Value::as_str)
            .and_then(|f| f.rsplit_once('-'))
            .is_some_and(|(port, part)| port == port_id && part.chars().all(|x| x.is_ascii_digit()))
    })?;
    if c.get("StaleData").and_then(Value::as_str) == Some("Stale") {
        return None;
    }
    let at = |k: &str| format!("NIC {port_id}: DellSwitchConnection.{k}");
    let linked = |v: &Option<String>| {
        v.as_deref()
            .filter(|x| !x.eq_ignore_ascii_case("No Link"))
            .map(str::to_string)
    };
    let switch = linked(&text(
        c.get("SwitchConnectionID"),
        &at("SwitchConnectionID"),
        notes,
    ))?;
    let port = linked(&text(
        c.get("SwitchPortConnectionID"),
        &at("SwitchPortConnectionID"),
        notes,
    ));
    Some(Lldp {
        switch: Some(switch.clone()),
        chassis_id: Some(switch),
        port,
        port_description: None,
        vlans: Vec::new(),
        pvid: None,
        mtu: None,
        management_address: None,
        management_vlan: None,
        seen_at: seen_at.to_string(),
        source: LldpSource::Redfish,
        others: Vec::new(),
    })
}

/// `x` as a list: an array's items, or the one object lldpcli wrote in its place.
fn list(x: Option<&Value>) -> Vec<&Value> {
    match x {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(v @ Value::Object(_)) => vec![v],
        _ => Vec::new(),
    }
}

/// A `{name: {...}}` entry of lldpcli's collapsed JSON, or a json0-style `{name, ...}`.
fn named(v: &Value) -> Option<(String, &Value)> {
    let o = v.as_object()?;
    if let Some(Value::String(n)) = o.get("name") {
        return Some((n.clone(), v));
    }
    if o.len() == 1 {
        let (k, inner) = o.iter().next()?;
        if inner.is_object() {
            return Some((k.clone(), inner));
        }
    }
    None
}

/// `{type, value}` or `{value}` or a bare string.
fn value_of(v: Option<&Value>) -> Option<&Value> {
    let v = v?;
    match v {
        Value::Object(o) => o.get("value"),
        Value::Array(a) => a.first().and_then(|x| value_of(Some(x))),
        _ => Some(v),
    }
}

fn number(v: Option<&Value>) -> Option<u64> {
    match value_of(v)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// What one lldpcli answer says: the neighbour per local interface name.
#[derive(Debug, Default)]
pub(crate) struct LldpdView {
    pub(crate) neighbours: BTreeMap<String, Lldp>,
    pub(crate) notes: Vec<String>,
}

/// Parse `lldpcli -f json show neighbors details`. An answer that is not lldpcli's JSON
/// is an error (the host's lldpd state is then unknown, not "no neighbours").
pub(crate) fn from_lldpcli(out: &str, seen_at: &str) -> Result<LldpdView, LldpcliError> {
    let v: Value = serde_json::from_str(out.trim()).map_err(LldpcliError::NotJson)?;
    let lldp = match v.get("lldp") {
        Some(Value::Array(a)) => a.first().cloned().unwrap_or(Value::Null),
        Some(x) => x.clone(),
        None => return Err(LldpcliError::NoLldp),
    };
    let mut view = LldpdView::default();
    let entries = list(lldp.get("interface"));
    if entries.len() > MAX_INTERFACES {
        view.notes.push(format!(
            "lldpcli listed {} neighbour entries; only the first {MAX_INTERFACES} were read (a port hears one switch: so many is a flood of LLDP speakers or a loop)",
            entries.len()
        ));
    }
    for entry in entries.into_iter().take(MAX_INTERFACES) {
        let Some((iface, body)) = named(entry) else {
            continue;
        };
        let iface_ok = text(
            Some(&Value::String(iface.clone())),
            "lldpcli interface name",
            &mut view.notes,
        );
        let Some(iface) = iface_ok else { continue };
        let Some(n) = neighbour(&iface, body, seen_at, &mut view.notes) else {
            continue;
        };
        match view.neighbours.get_mut(&iface) {
            Some(first) => {
                let peer = LldpPeer {
                    switch: n.switch,
                    chassis_id: n.chassis_id,
                    port: n.port,
                };
                let same = first.switch == peer.switch
                    && first.chassis_id == peer.chassis_id
                    && first.port == peer.port;
                if !same && !first.others.contains(&peer) {
                    first.others.push(peer);
                }
            }
            None => {
                view.neighbours.insert(iface, n);
            }
        }
    }
    Ok(view)
}

/// The interfaces the host's lldpd runs LLDP on (`lldpcli -f json show interfaces`), at
/// most 512, names checked: each is a port a switch should answer on, so one that is up
/// and hears nobody is a port whose switch sends no LLDP. Anything else reads as none.
pub(crate) fn served_interfaces(out: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(out.trim()) else {
        return Vec::new();
    };
    let lldp = match v.get("lldp") {
        Some(Value::Array(a)) => a.first().cloned().unwrap_or(Value::Null),
        Some(x) => x.clone(),
        None => return Vec::new(),
    };
    let mut ignored = Vec::new();
    list(lldp.get("interface"))
        .into_iter()
        .take(MAX_INTERFACES)
        .filter_map(named)
        .filter_map(|(name, _)| text(Some(&Value::String(name)), "interface", &mut ignored))
        .collect()
}

/// One neighbour entry of lldpcli's answer, heard on `iface`.
fn neighbour(iface: &str, body: &Value, seen_at: &str, notes: &mut Vec<String>) -> Option<Lldp> {
    let at = |k: &str| format!("{iface}: LLDP {k}");
    let chassis = list(body.get("chassis")).into_iter().next();
    let (system, chassis) = match chassis.and_then(named) {
        // Keyed by the system name, unless the key is one of the chassis's own fields.
        Some((k, inner)) if !matches!(k.as_str(), "id" | "descr" | "name") => (Some(k), inner),
        _ => (None, chassis.unwrap_or(&Value::Null)),
    };
    let system = match system {
        Some(s) => text(Some(&Value::String(s)), &at("system name"), notes),
        None => text(value_of(chassis.get("name")), &at("system name"), notes),
    };
    let chassis_id = text(value_of(chassis.get("id")), &at("chassis id"), notes);
    let port = list(body.get("port"))
        .into_iter()
        .next()
        .unwrap_or(&Value::Null);
    let port_id = text(value_of(port.get("id")), &at("port id"), notes);
    let port_descr = text(value_of(port.get("descr")), &at("port description"), notes);
    let mtu = number(port.get("mfs")).and_then(|m| u32::try_from(m).ok());
    let (vlans, mut pvid) = vlans(iface, body, notes);
    if let Some(Value::String(p)) = body.get("pvid")
        && let Ok(p) = p.trim().parse::<u16>()
    {
        pvid = pvid.or(Some(p));
    }
    if system.is_none() && chassis_id.is_none() && port_id.is_none() {
        return None;
    }
    let management = text(
        value_of(chassis.get("mgmt-ip")),
        &at("management address"),
        notes,
    );
    Some(Lldp {
        switch: system.or_else(|| chassis_id.clone()),
        chassis_id,
        port: port_id,
        port_description: port_descr,
        vlans,
        pvid,
        mtu,
        management_address: management,
        management_vlan: None,
        seen_at: seen_at.to_string(),
        source: LldpSource::Ssh,
        others: Vec::new(),
    })
}

/// The VLANs a port names (VLAN name TLVs), ascending, and its native VLAN. An entry with
/// `pvid` and no name is lldpcli's rendering of the port VLAN ID TLV alone: native only.
fn vlans(iface: &str, body: &Value, notes: &mut Vec<String>) -> (Vec<u16>, Option<u16>) {
    let entries = list(body.get("vlan"));
    if entries.len() > MAX_VLANS {
        notes.push(format!(
            "{iface}: LLDP lists {} VLANs; only the first {MAX_VLANS} were read",
            entries.len()
        ));
    }
    let mut vlans = Vec::new();
    let mut pvid = None;
    for vl in entries.into_iter().take(MAX_VLANS) {
        let Some(id) = number(vl.get("vlan-id")).filter(|id| (1..=4094).contains(id)) else {
            continue;
        };
        let id = id as u16;
        let is_pvid = match vl.get("pvid") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s == "yes" || s == "true",
            _ => false,
        };
        if is_pvid {
            pvid = Some(id);
        }
        let named = vl.get("value").is_some_and(|n| !n.is_null());
        if (named || !is_pvid) && !vlans.contains(&id) {
            vlans.push(id);
        }
    }
    vlans.sort_unstable();
    (vlans, pvid)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// lldpcli 1.0.16's answer for one neighbour with two VLANs (captured from lldpd
    /// talking to lldpd across a veth pair), and its collapsed single-VLAN form.
    const TWO_VLANS: &str = r#"{"lldp": {"interface": {"veth-b": {"via": "LLDP", "rid": "1",
      "age": "0 day, 00:00:04",
      "chassis": {"leaf-a": {"id": {"type": "mac", "value": "06:24:af:be:2d:e8"},
        "descr": "Debian GNU/Linux 12", "mgmt-ip": "fe80::424:afff:febe:2de8", "mgmt-iface": "6",
        "capability": [{"type": "Bridge", "enabled": true}]}},
      "port": {"id": {"type": "ifname", "value": "veth-a"}, "descr": "Ethernet1/7", "ttl": "4",
        "mfs": "9000"},
      "vlan": [{"vlan-id": "100", "pvid": true, "value": "tenanta"},
               {"vlan-id": "200", "pvid": false, "value": "tenantb"}]}}}}"#;

    #[test]
    fn lldpcli_json_gives_switch_port_vlans_and_frame_size() {
        let v = from_lldpcli(TWO_VLANS, "2026-12-04T10:00:00Z").unwrap();
        let n = &v.neighbours["veth-b"];
        assert_eq!(n.switch.as_deref(), Some("leaf-a"));
        assert_eq!(n.chassis_id.as_deref(), Some("06:24:af:be:2d:e8"));
        assert_eq!(n.port.as_deref(), Some("veth-a"));
        assert_eq!(n.port_description.as_deref(), Some("Ethernet1/7"));
        assert_eq!(n.vlans, [100, 200]);
        assert_eq!(n.pvid, Some(100));
        assert_eq!(n.mtu, Some(9000));
        assert_eq!(n.source, LldpSource::Ssh);
        assert!(v.notes.is_empty(), "{:?}", v.notes);
    }

    #[test]
    fn collapsed_lists_json0_lists_and_a_switch_without_a_name() {
        // Two interfaces (a list of one-key objects), one VLAN (an object), no system name.
        let text = r#"{"lldp": {"interface": [
          {"eno1": {"chassis": {"id": {"type": "mac", "value": "aa:bb:cc:00:00:01"}},
                    "port": {"id": {"type": "ifname", "value": "Eth1/1"}},
                    "vlan": {"vlan-id": "30", "pvid": "yes"}}},
          {"eno2": {"chassis": {"sw-b": {"id": {"type": "mac", "value": "aa:bb:cc:00:00:02"}}},
                    "port": {"id": {"type": "ifname", "value": "Eth1/1"}}}}]}}"#;
        let v = from_lldpcli(text, "t").unwrap();
        assert_eq!(
            v.neighbours["eno1"].switch.as_deref(),
            Some("aa:bb:cc:00:00:01")
        );
        // A port VLAN ID without a VLAN name: the native VLAN, not a VLAN the port names.
        assert!(v.neighbours["eno1"].vlans.is_empty());
        assert_eq!(v.neighbours["eno1"].pvid, Some(30));
        assert_eq!(v.neighbours["eno2"].switch.as_deref(), Some("sw-b"));
        // json0: every value a list, names as fields.
        let json0 = r#"{"lldp": [{"interface": [{"name": "eno3", "chassis": [{"id": [{"type": "mac", "value": "x"}],
            "name": [{"value": "leaf-c"}]}], "port": [{"id": [{"type": "ifname", "value": "Eth9"}],
            "mfs": [{"value": "1522"}]}]}]}]}"#;
        let v = from_lldpcli(json0, "t").unwrap();
        assert_eq!(v.neighbours["eno3"].switch.as_deref(), Some("leaf-c"));
        assert_eq!(v.neighbours["eno3"].mtu, Some(1522));
        // No neighbours at all.
        let v = from_lldpcli(r#"{"lldp": {}}"#, "t").unwrap();
        assert!(v.neighbours.is_empty());
        assert!(matches!(
            from_lldpcli("lldpcli: command not found", "t"),
            Err(LldpcliError::NotJson(_))
        ));
        let e = from_lldpcli(r#"{"neighbours": []}"#, "t").unwrap_err();
        assert!(matches!(e, LldpcliError::NoLldp));
        assert_eq!(e.to_string(), "no `lldp` object in lldpcli's answer");
    }

    /// lldpcli 1.0.16's answer for a port that hears its switch and a second speaker (a
    /// host on an unmanaged switch between), as `display_interfaces` writes it: the
    /// interface twice.
    #[test]
    fn two_neighbours_on_one_port_are_both_kept() {
        let text = r#"{"lldp": {"interface": [
          {"eth0": {"chassis": {"mgmt-a": {"id": {"type": "local", "value": "0c:29:ef:00:00:01"}}},
                    "port": {"id": {"type": "ifname", "value": "swp5"}, "mfs": "9022"},
                    "vlan": {"vlan-id": "1", "pvid": "yes"}}},
          {"eth0": {"chassis": {"mgmt-а": {"id": {"type": "mac", "value": "02:00:00:00:00:99"}}},
                    "port": {"id": {"type": "ifname", "value": "eth0"}}}},
          {"eth0": {"chassis": {"mgmt-a": {"id": {"type": "local", "value": "0c:29:ef:00:00:01"}}},
                    "port": {"id": {"type": "ifname", "value": "swp5"}}}},
          {"eth1": {"chassis": {"mgmt-b": {"id": {"type": "mac", "value": "0c:29:ef:00:00:02"}}},
                    "port": {"id": {"type": "ifname", "value": "swp5"}}}}]}}"#;
        let v = from_lldpcli(text, "t").unwrap();
        let n = &v.neighbours["eth0"];
        assert_eq!(n.switch.as_deref(), Some("mgmt-a"));
        assert_eq!((n.vlans.len(), n.pvid), (0, Some(1)), "native VLAN 1 apart");
        assert_eq!(
            n.others,
            [LldpPeer {
                switch: Some("mgmt-\u{430}".into()),
                chassis_id: Some("02:00:00:00:00:99".into()),
                port: Some("eth0".into()),
            }],
            "the look-alike kept, the repeated first one not"
        );
        assert!(v.neighbours["eth1"].others.is_empty());
    }

    #[test]
    fn the_interfaces_lldpd_serves() {
        // lldpcli 1.0.16 `-f json show interfaces`, two ports (a list) and one (collapsed).
        let two = r#"{"lldp": {"interface": [{"eth0": {"status": "RX and TX",
            "chassis": {"n5": {"id": {"type": "mac", "value": "aa"}}}, "port": {"id": {"type": "mac", "value": "bb"}}}},
            {"eth3": {"status": "RX and TX"}}]}}"#;
        assert_eq!(served_interfaces(two), ["eth0", "eth3"]);
        assert_eq!(
            served_interfaces(r#"{"lldp": {"interface": {"eth1": {}}}}"#),
            ["eth1"]
        );
        assert!(served_interfaces("lldpcli: not found").is_empty());
        assert!(served_interfaces(r#"{"lldp": {"interface": {"e$(x)": {}}}}"#).is_empty());
    }

    #[test]
    fn more_entries_than_the_bound_are_cut_with_a_note() {
        let entry = |i: usize| {
            json!({format!("eth{i}"): {"chassis": {"sw": {"id": {"value": "aa"}}},
                "port": {"id": {"value": format!("p{i}")}},
                "vlan": (1..=4095).map(|v| json!({"vlan-id": v.to_string(), "value": "v"})).take(if i == 0 { 4095 } else { 1 }).collect::<Vec<_>>()}})
        };
        let all: Vec<Value> = (0..600).map(entry).collect();
        let text = json!({"lldp": {"interface": all}}).to_string();
        let v = from_lldpcli(&text, "t").unwrap();
        assert_eq!(v.neighbours.len(), 512);
        assert_eq!(v.neighbours["eth0"].vlans.len(), 4094);
        assert_eq!(
            v.notes,
            [
                "lldpcli listed 600 neighbour entries; only the first 512 were read (a port hears one switch: so many is a flood of LLDP speakers or a loop)",
                "eth0: LLDP lists 4095 VLANs; only the first 4094 were read"
            ]
        );
    }

    #[test]
    fn hostile_neighbour_text_is_refused_and_named() {
        let long = "x".repeat(1_000_000);
        let text = json!({"lldp": {"interface": {"eno1": {
            "chassis": {"evil\u{1b}[2Jswitch": {"id": {"value": "aa"}}},
            "port": {"id": {"value": long}, "descr": ["$(reboot)"], "mfs": "lots"},
            "vlan": [{"vlan-id": "99999"}, {"vlan-id": "0"}, {"vlan-id": 12}]}}}})
        .to_string();
        let v = from_lldpcli(&text, "t").unwrap();
        let n = &v.neighbours["eno1"];
        assert_eq!(n.switch.as_deref(), Some("aa"), "the chassis id stands in");
        assert_eq!(n.port, None);
        assert_eq!(n.port_description, None);
        assert_eq!(n.mtu, None);
        assert_eq!(n.vlans, [12]);
        let notes = v.notes.join("\n");
        assert!(
            notes.contains("eno1: LLDP system name: holds a control"),
            "{notes}"
        );
        assert!(notes.contains("1000000 characters"), "{notes}");
        assert!(
            notes.contains("eno1: LLDP port description: holds a control"),
            "{notes}"
        );
    }

    #[test]
    fn dell_switch_connection_view() {
        let conns = vec![
            json!({"FQDD": "iDRAC.Embedded.1", "SwitchConnectionID": "74:86:e2:bb:cc:20", "SwitchPortConnectionID": "swp7", "StaleData": "NotStale"}),
            json!({"FQDD": "NIC.Slot.2-1-1", "SwitchConnectionID": "3c:2c:30:aa:bb:cc", "SwitchPortConnectionID": "ethernet1/1/7", "StaleData": "NotStale"}),
            json!({"FQDD": "NIC.Embedded.1-1-1", "SwitchConnectionID": "No Link", "SwitchPortConnectionID": "No Link", "StaleData": "NotStale"}),
            json!({"FQDD": "NIC.Slot.5-1-1", "SwitchConnectionID": "3c:2c:30:aa:bb:cd", "SwitchPortConnectionID": "ethernet1/1/9", "StaleData": "Stale"}),
        ];
        let mut notes = Vec::new();
        let n = from_dell_switch_connection(&conns, "NIC.Slot.2-1", "t", &mut notes).unwrap();
        assert_eq!(n.switch.as_deref(), Some("3c:2c:30:aa:bb:cc"));
        assert_eq!(n.port.as_deref(), Some("ethernet1/1/7"));
        assert!(from_dell_switch_connection(&conns, "NIC.Embedded.1-1", "t", &mut notes).is_none());
        assert!(
            from_dell_switch_connection(&conns, "NIC.Slot.5-1", "t", &mut notes).is_none(),
            "stale"
        );
        assert!(from_dell_switch_connection(&conns, "NIC.Slot.9-1", "t", &mut notes).is_none());
        assert!(notes.is_empty());
    }

    #[test]
    fn redfish_lldp_receive_filled_empty_absent_and_wrong() {
        let port = json!({"Ethernet": {"LLDPReceive": {
            "ChassisId": "3c:2c:30:aa:bb:cc", "ChassisIdSubtype": "MacAddr",
            "PortId": "ethernet1/1/7", "PortIdSubtype": "IfName", "SystemName": "leaf-a",
            "ManagementAddressIPv4": "10.0.0.2", "ManagementVlanId": 10}}});
        let mut notes = Vec::new();
        let n = from_redfish(&port, "NIC.Slot.2-1", "t", &mut notes).unwrap();
        assert_eq!(n.switch.as_deref(), Some("leaf-a"));
        assert_eq!(n.port.as_deref(), Some("ethernet1/1/7"));
        assert_eq!(n.management_address.as_deref(), Some("10.0.0.2"));
        assert_eq!(n.management_vlan, Some(10));
        assert_eq!((n.mtu, n.vlans.len()), (None, 0), "Redfish carries neither");
        assert_eq!(n.source, LldpSource::Redfish);
        let empty = json!({"Ethernet": {"LLDPReceive": {}}});
        assert!(redfish_reports(&empty));
        assert!(from_redfish(&empty, "p", "t", &mut notes).is_none());
        let absent = json!({"Ethernet": {"AssociatedMACAddresses": []}});
        assert!(!redfish_reports(&absent));
        let wrong = json!({"Ethernet": {"LLDPReceive": {"SystemName": 7, "PortId": ["a"],
            "ChassisId": "ok\nbad"}}});
        notes.clear();
        assert!(from_redfish(&wrong, "p", "t", &mut notes).is_none());
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].contains("SystemName: not a string (a number)"),
            "{notes:?}"
        );
        let bad = json!({"Ethernet": {"LLDPReceive": "yes"}});
        notes.clear();
        assert!(from_redfish(&bad, "p", "t", &mut notes).is_none());
        assert!(notes[0].contains("not an object"), "{notes:?}");
    }
}
