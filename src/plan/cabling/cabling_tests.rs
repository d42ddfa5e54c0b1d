//! Tests only (compiled under `cfg(test)`): the example site's 15 nodes (90 NICs) cabled as
//! designed in memory, then one fault at a time, with the exact finding and fix texts.

use std::path::Path;

use super::{CablingReport, cabling};
use crate::inventory::{LinkState, Lldp, LldpPeer, LldpSource};
use crate::plan::inputs::{Inputs, load_inputs};
use crate::profile::select_ports;
use crate::site::{Cabling, SwitchSide};
use crate::vocab::NetworkKind;

fn side(switches: &[&str]) -> SwitchSide {
    SwitchSide {
        switches: switches.iter().map(|s| (*s).to_string()).collect(),
        vlans: Vec::new(),
    }
}

/// The switch of each network's first and second bond member.
fn switches(net: NetworkKind) -> [&'static str; 2] {
    match net {
        NetworkKind::Management => ["mgmt-a", "mgmt-b"],
        NetworkKind::Vm => ["leaf-a", "leaf-b"],
        NetworkKind::Storage => ["st-a", "st-b"],
    }
}

/// The chassis id the switch `name` sends.
fn chassis(name: &str) -> String {
    let k = ["mgmt-a", "mgmt-b", "leaf-a", "leaf-b", "st-a", "st-b"]
        .iter()
        .position(|s| *s == name)
        .unwrap_or(9);
    format!("0c:29:ef:00:00:{k:02x}")
}

fn neighbour(switch: &str, port: String, vlans: Vec<u16>, mtu: u32) -> Lldp {
    Lldp {
        switch: Some(switch.into()),
        chassis_id: Some(chassis(switch)),
        port: Some(port),
        port_description: None,
        vlans,
        pvid: Some(1),
        mtu: Some(mtu),
        management_address: None,
        management_vlan: None,
        seen_at: "2026-12-04T10:00:00Z".into(),
        source: LldpSource::Ssh,
        others: Vec::new(),
    }
}

/// The example site with a design, every NIC cabled as designed: node k's first member of
/// each bond on port Ethernet1/k of the network's first switch, the second on the second.
pub(crate) fn rack() -> Inputs {
    let mut i = load_inputs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("inventory/example"))
        .expect("the example site loads");
    i.site.site.cabling = Some(Cabling {
        management: Some(side(&["mgmt-a", "mgmt-b"])),
        vm: Some(side(&["leaf-a", "leaf-b"])),
        storage: Some(side(&["st-a", "st-b"])),
        dedicated_storage: true,
    });
    let roles = crate::plan::roles::assign(&i.inventory, &i.profiles, &i.lock);
    for (k, node) in i.inventory.nodes.iter_mut().enumerate() {
        let p = i.profiles.get(roles[&node.id].role).unwrap().clone();
        for c in select_ports(node, &p) {
            let vlans = match c.network {
                NetworkKind::Management => vec![],
                NetworkKind::Vm => vec![412, 413, 420],
                NetworkKind::Storage => vec![100],
            };
            for (m, &n) in c.ports.iter().enumerate() {
                let sw = switches(c.network)[m % 2];
                node.nics[n].lldp = Some(neighbour(
                    sw,
                    format!("Ethernet1/{}", k + 1),
                    vlans.clone(),
                    9216,
                ));
            }
        }
        node.sources.lldp = Some("2026-12-04T10:00:00Z".into());
    }
    i
}

fn nic<'a>(i: &'a mut Inputs, node: usize, name: &str) -> &'a mut crate::inventory::Nic {
    i.inventory.nodes[node]
        .nics
        .iter_mut()
        .find(|n| n.name.as_deref() == Some(name))
        .unwrap()
}

fn verdict<'a>(r: &'a CablingReport, host: &str, nic: &str) -> &'a str {
    &r.rows
        .iter()
        .find(|x| x.node_name() == host && x.nic == nic)
        .unwrap_or_else(|| panic!("no row {host} {nic}"))
        .verdict
}

fn only(r: &CablingReport, code: &str) -> (String, String) {
    let f: Vec<_> = r.findings.iter().filter(|f| f.code == code).collect();
    assert_eq!(f.len(), 1, "{code}: {:#?}", r.findings);
    (f[0].what.clone(), f[0].fix.clone())
}

/// Which network each NIC of the first node serves, by name.
fn first_node_ports(i: &Inputs) -> Vec<(NetworkKind, String)> {
    let node = &i.inventory.nodes[0];
    let roles = crate::plan::roles::assign(&i.inventory, &i.profiles, &i.lock);
    let p = i.profiles.get(roles[&node.id].role).unwrap();
    select_ports(node, p)
        .into_iter()
        .flat_map(|c| {
            c.ports
                .iter()
                .map(|&n| (c.network, node.nics[n].name.clone().unwrap()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The first NIC the first node gives `net`.
fn first_nic(i: &Inputs, net: NetworkKind) -> String {
    first_node_ports(i)
        .into_iter()
        .find(|(n, _)| *n == net)
        .unwrap()
        .1
}

#[test]
fn a_rack_cabled_as_designed_is_all_ok() {
    let r = cabling(&rack());
    assert_eq!(r.rows.len(), 90);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(r.rows.iter().all(|x| x.verdict == "ok"));
    // The native VLAN is apart from the tagged ones.
    let vm = r
        .rows
        .iter()
        .find(|x| x.network == NetworkKind::Vm)
        .unwrap();
    assert_eq!(
        (vm.vlans.as_slice(), vm.native_vlan),
        (&[412, 413, 420][..], Some(1))
    );
    assert_eq!(r.switches.len(), 6);
    assert!(r.switches.iter().all(|s| s.ports.len() == 15));
}

#[test]
fn the_design_may_name_a_switch_by_chassis_id() {
    let mut i = rack();
    let st_a = chassis("st-a").to_uppercase();
    i.site.site.cabling.as_mut().unwrap().storage = Some(side(&[&st_a, "st-b"]));
    assert!(
        cabling(&i).findings.is_empty(),
        "the same rack, still right"
    );
    // hv-m01's first VM NIC swapped onto a free port of st-a.
    let vm0 = first_nic(&i, NetworkKind::Vm);
    nic(&mut i, 0, &vm0).lldp = Some(neighbour("st-a", "Ethernet1/40".into(), vec![100], 9216));
    let r = cabling(&i);
    let bad: Vec<(&str, &str, &str)> = r
        .rows
        .iter()
        .filter(|x| x.verdict != "ok")
        .map(|x| (x.node_name(), x.nic.as_str(), x.verdict.as_str()))
        .collect();
    assert_eq!(
        bad,
        [(
            "hv-m01",
            vm0.as_str(),
            "cabling-wrong-switch,storage-shares-switch"
        )],
        "only the VM NIC, never the storage NICs that are right"
    );
    let (what, fix) = only(&r, "storage-shares-switch");
    assert_eq!(
        what,
        format!(
            "switch st-a carries the storage network and the vm network: hv-m01 {vm0} (vm) out of place there"
        )
    );
    assert_eq!(
        fix,
        format!(
            "move hv-m01 {vm0} (vm) to a free port of leaf-a or leaf-b; the storage network's switches then carry it alone"
        )
    );
    let (what, fix) = only(&r, "cabling-wrong-switch");
    assert_eq!(
        what,
        format!(
            "hv-m01 {vm0} (vm) is cabled to st-a port Ethernet1/40, a switch of the storage network"
        )
    );
    assert_eq!(
        fix,
        format!("move {vm0}'s cable from st-a port Ethernet1/40 to a free port of leaf-a"),
        "leaf-b holds the bond's other member"
    );
    let view = r.switches.iter().find(|s| s.switch == "st-a").unwrap();
    assert_eq!(view.design, [NetworkKind::Storage]);
    assert_eq!(view.design_switch.as_deref(), Some(st_a.as_str()));
}

#[test]
fn a_slow_link_is_its_own_finding_and_never_blames_the_cables() {
    let mut i = rack();
    let vm0 = first_nic(&i, NetworkKind::Vm);
    nic(&mut i, 0, &vm0).speed_mbps = Some(1000);
    let r = cabling(&i);
    let bad: Vec<(&str, &str)> = r
        .rows
        .iter()
        .filter(|x| x.verdict != "ok")
        .map(|x| (x.nic.as_str(), x.verdict.as_str()))
        .collect();
    assert_eq!(bad, [(vm0.as_str(), "link-slow")], "{:#?}", r.findings);
    let row = r.rows.iter().find(|x| x.nic == vm0).unwrap();
    assert_eq!(
        (row.network, row.speed_mbps, row.required_mbps),
        (NetworkKind::Vm, Some(1000), 25_000)
    );
    let (what, fix) = only(&r, "link-slow");
    assert!(
        what.starts_with(&format!("hv-m01 {vm0} (vm) links at 1 GbE on leaf-a port Ethernet1/1; the management profile asks 25 GbE of the vm network; at that speed the port choice render builds the bonds from puts the vm network on ")),
        "{what}"
    );
    assert!(
        what.ends_with(
            "off the cables the design gives them (this table keeps each network on its cables)"
        ),
        "{what}"
    );
    assert_eq!(
        fix,
        format!(
            "fix {vm0}'s link, not the cables: reseat or replace its cable or optic and the speed set on leaf-a port Ethernet1/1 (a 25 GbE port linking at 1 GbE has a bad cable or optic, or a fixed speed); if {vm0} is a 1 GbE NIC, give the vm network a 25 GbE one; then rediscover"
        )
    );
}

#[test]
fn frame_sizes_count_the_header_and_the_vlan_tag() {
    let mut i = rack();
    let (st0, mg0) = (
        first_nic(&i, NetworkKind::Storage),
        first_nic(&i, NetworkKind::Management),
    );
    nic(&mut i, 0, &st0).lldp.as_mut().unwrap().mtu = Some(9010);
    // Management is untagged here: 9018 is enough, 9017 is not.
    nic(&mut i, 0, &mg0).lldp.as_mut().unwrap().mtu = Some(9018);
    let r = cabling(&i);
    let (what, fix) = only(&r, "switch-mtu");
    assert_eq!(
        what,
        format!(
            "hv-m01 {st0} (storage): st-a port Ethernet1/1 takes frames of at most 9010 bytes; the storage network's 9000-byte MTU, VLAN-tagged, needs frames of 9000 + 18 (Ethernet header and FCS) + 4 (VLAN tag) = 9022 bytes"
        )
    );
    assert_eq!(
        fix,
        "raise the maximum frame size (the MTU, as most switches call it) of st-a port Ethernet1/1 to at least 9022 bytes, or lower `storage_network.mtu` in site.yaml to 8988"
    );
    nic(&mut i, 0, &mg0).lldp.as_mut().unwrap().mtu = Some(9017);
    let r = cabling(&i);
    assert!(
        r.findings.iter().any(|f| f
            .what
            .ends_with("9000 + 18 (Ethernet header and FCS) = 9018 bytes")),
        "{:#?}",
        r.findings
    );
}

#[test]
fn no_lldp_no_neighbour_and_a_one_member_bond_say_what_to_do() {
    let mut i = rack();
    let m02 = i
        .lock
        .nodes
        .iter()
        .find(|a| a.hostname == "hv-m02")
        .unwrap()
        .id
        .clone();
    let k = i.inventory.nodes.iter().position(|n| n.id == m02).unwrap();
    i.inventory.nodes[k].sources.lldp = None;
    for n in &mut i.inventory.nodes[k].nics {
        n.lldp = None;
    }
    let ports = first_node_ports(&i);
    let vm: Vec<String> = ports
        .iter()
        .filter(|(n, _)| *n == NetworkKind::Vm)
        .map(|x| x.1.clone())
        .collect();
    nic(&mut i, 0, &vm[1]).lldp = None;
    nic(&mut i, 0, &vm[1]).link = LinkState::Up;
    let r = cabling(&i);
    assert!(
        r.rows
            .iter()
            .filter(|x| x.node_name() == "hv-m02")
            .all(|x| x.verdict == "no-lldp")
    );
    let (what, fix) = only(&r, "no-lldp");
    assert_eq!(
        what,
        "LLDP was never read for hv-m02: where its 6 NICs' cables end is unchecked"
    );
    assert!(fix.starts_with("run `rackplan discover ssh`"), "{fix}");
    let (what, fix) = only(&r, "no-neighbour");
    assert_eq!(
        what,
        format!(
            "hv-m01 {} (vm) has a link but no LLDP neighbour, though LLDP was read on the node",
            vm[1]
        )
    );
    assert_eq!(
        fix,
        format!(
            "turn LLDP on for the switch port {} is cabled to (the design puts it on leaf-b; its bond peer {} is on leaf-a port Ethernet1/1), or turn off the NIC firmware's LLDP agent; then rediscover",
            vm[1], vm[0]
        )
    );
    // A node left with one storage port.
    let mut i = rack();
    let st: Vec<String> = first_node_ports(&i)
        .into_iter()
        .filter(|(n, _)| *n == NetworkKind::Storage)
        .map(|x| x.1)
        .collect();
    i.inventory.nodes[0]
        .nics
        .retain(|n| n.name.as_deref() != Some(st[1].as_str()));
    let r = cabling(&i);
    let (what, fix) = only(&r, "bond-one-member");
    assert_eq!(
        what,
        format!(
            "hv-m01 storage bond has one member, {} on st-a port Ethernet1/1; the management profile asks 2 ports for the storage network",
            st[0]
        )
    );
    assert_eq!(
        fix,
        "add a NIC for the storage network and cable it to a free port of st-b, then rediscover"
    );
}

#[test]
fn two_speakers_on_one_port_and_look_alike_names_are_shown() {
    let mut i = rack();
    let mg0 = first_nic(&i, NetworkKind::Management);
    nic(&mut i, 0, &mg0)
        .lldp
        .as_mut()
        .unwrap()
        .others
        .push(LldpPeer {
            switch: Some("mgmt-\u{430}".into()),
            chassis_id: Some("02:00:00:00:00:99".into()),
            port: Some("eth0".into()),
        });
    let r = cabling(&i);
    let (what, fix) = only(&r, "lldp-several-neighbours");
    assert_eq!(
        what,
        format!(
            "hv-m01 {mg0} (management) hears 2 LLDP neighbours on one port: mgmt-a port Ethernet1/1, mgmt-<U+0430> port eth0"
        )
    );
    assert_eq!(
        fix,
        format!(
            "trace {mg0}'s cable from hv-m01: take out what sits between it and the switch (or break the loop), then rediscover"
        )
    );
    assert_eq!(verdict(&r, "hv-m01", &mg0), "lldp-several-neighbours");
    // A switch whose name hides a zero-width space is not the design's switch, and says so.
    nic(&mut i, 0, &mg0).lldp = Some(neighbour(
        "mgmt-a\u{200b}",
        "Ethernet1/1".into(),
        vec![],
        9216,
    ));
    nic(&mut i, 0, &mg0).lldp.as_mut().unwrap().chassis_id = Some("02:00:00:00:00:98".into());
    let r = cabling(&i);
    let (what, _) = only(&r, "cabling-wrong-switch");
    assert_eq!(
        what,
        format!(
            "hv-m01 {mg0} (management) is cabled to mgmt-a<U+200B> port Ethernet1/1, a switch the design does not name"
        )
    );
}

#[test]
fn vlan_ranges() {
    use super::ranges;
    assert_eq!(ranges(&[]), "");
    assert_eq!(ranges(&[5]), "5");
    assert_eq!(
        ranges(&[100, 101, 102, 103, 200, 202, 203]),
        "100-103,200,202-203"
    );
}
