//! Cabling from real LLDP frames: a rack of five hosts and six switches in network
//! namespaces (`support::netns`), lldpd on both ends, the neighbours read by
//! `discover ssh` through each host's real sshd, then `check --cabling` against the site's
//! design, which names one storage switch by its chassis id. One host is cabled right; one
//! has its VM and storage cables swapped; one has both management bond members on one
//! switch, a VM port without one of the tenant VLANs and a storage port at a 1500-byte MTU;
//! one has a VM link at 1 Gb/s and a storage port taking 9010-byte frames on the tagged
//! storage VLAN; one has a hub with a rogue LLDP speaker (a look-alike name) on its first
//! management cable, LLDP switched off on a VM switch port with the link up, and one
//! storage port only.

use serde_json::Value;

use crate::support::netns::{PortSpec, Rack, available};
use crate::support::{Site, json_of, rackplan_json};
use crate::terminal_widths::{assert_fits, in_terminal};

/// The chassis id st-a sends, and the name the design gives it.
const ST_A: &str = "0c:29:ef:00:00:0a";

const DESIGN: &str = "
cabling:
  management: {switches: [mgmt-a, mgmt-b]}
  vm: {switches: [vm-a, vm-b]}
  storage: {switches: ['0c:29:ef:00:00:0a', st-b]}
";

fn site_for_veths() -> Site {
    let site = Site::example();
    let dir = site.dir();
    for f in ["nodes.yaml", "allocations.yaml", "bmcs.yaml"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    // veth links run at 10 Gb/s: the profiles ask for that on every network.
    for p in ["management.yaml", "compute.yaml", "witness.yaml"] {
        let path = site.tmp.path().join("profiles").join(p);
        if let Ok(t) = std::fs::read_to_string(&path) {
            std::fs::write(&path, t.replace("speed_mbps: 25000", "speed_mbps: 10000")).unwrap();
        }
    }
    let yaml = std::fs::read_to_string(dir.join("site.yaml")).unwrap();
    std::fs::write(dir.join("site.yaml"), format!("{yaml}{DESIGN}")).unwrap();
    site
}

/// The rack: five hosts, six switches, one hub with a rogue.
fn rack() -> Rack {
    let good = PortSpec::new(&[], 9022);
    let vm = PortSpec::new(&[412, 413, 420], 9022);
    let storage = PortSpec::new(&[100], 9022);
    let mut rack = Rack::new();
    for s in ["mgmt-a", "mgmt-b", "vm-a", "vm-b", "st-a", "st-b"] {
        rack.switch(s);
    }
    rack.chassis("st-a", ST_A);
    for h in ["n1", "n2", "n3", "n4", "n5"] {
        rack.host(h);
    }
    // n1: as designed.
    rack.cable("n1", "eth0", "mgmt-a", &good);
    rack.cable("n1", "eth1", "mgmt-b", &good);
    rack.cable("n1", "eth2", "vm-a", &vm);
    rack.cable("n1", "eth3", "vm-b", &vm);
    rack.cable("n1", "eth4", "st-a", &storage);
    rack.cable("n1", "eth5", "st-b", &storage);
    // n2: a VM cable and a storage cable swapped.
    rack.cable("n2", "eth0", "mgmt-a", &good);
    rack.cable("n2", "eth1", "mgmt-b", &good);
    rack.cable("n2", "eth2", "st-a", &storage);
    rack.cable("n2", "eth3", "vm-b", &vm);
    rack.cable("n2", "eth4", "vm-a", &vm);
    rack.cable("n2", "eth5", "st-b", &storage);
    // n3: both management members on mgmt-a, VLAN 420 missing, MTU 1500 on storage.
    rack.cable("n3", "eth0", "mgmt-a", &good);
    rack.cable("n3", "eth1", "mgmt-a", &good);
    rack.cable("n3", "eth2", "vm-a", &vm);
    rack.cable("n3", "eth3", "vm-b", &PortSpec::new(&[412, 413], 9022));
    rack.cable("n3", "eth4", "st-a", &storage);
    rack.cable("n3", "eth5", "st-b", &PortSpec::new(&[100], 1522));
    // n4: cabled as designed, a VM link at 1 Gb/s, 9010-byte frames on tagged storage.
    rack.cable("n4", "eth0", "mgmt-a", &good);
    rack.cable("n4", "eth1", "mgmt-b", &good);
    rack.cable("n4", "eth2", "vm-a", &vm);
    rack.speed("n4", "eth2", 1000);
    rack.cable("n4", "eth3", "vm-b", &vm);
    rack.cable("n4", "eth4", "st-a", &storage);
    rack.cable("n4", "eth5", "st-b", &PortSpec::new(&[100], 9010));
    // n5: a hub with a rogue on eth0, LLDP off on eth3's switch port, one storage port.
    rack.cable_through_hub("n5", "eth0", "mgmt-a", &good, "mgmt-\u{430}");
    rack.cable("n5", "eth1", "mgmt-b", &good);
    rack.cable("n5", "eth2", "vm-a", &vm);
    rack.cable(
        "n5",
        "eth3",
        "vm-b",
        &PortSpec {
            lldp: false,
            ..vm.clone()
        },
    );
    rack.cable("n5", "eth4", "st-b", &storage);
    rack.start();
    rack
}

#[test]
fn lldp_from_real_frames_finds_each_cabling_fault() {
    if let Err(why) = available() {
        panic!("the cabling test needs network namespaces and lldpd: {why}");
    }
    let rack = rack();
    let site = site_for_veths();
    let dir = site.dir();
    std::fs::write(dir.join("known_hosts"), rack.known_hosts()).unwrap();
    let targets = rack.targets().join(",");
    let (code, v, err) = json_of(
        rackplan_json(&["discover", "ssh", "--site"])
            .arg(&dir)
            .args(["--hosts", &targets, "--identity"])
            .arg(rack.key.private())
            .env_remove("SSH_AUTH_SOCK"),
    );
    assert_eq!(code, 0, "{v:#}\n{err}");
    let nodes = std::fs::read_to_string(dir.join("nodes.yaml")).unwrap();
    assert!(nodes.contains("switch: vm-a"), "{nodes}");
    assert!(nodes.contains("source: ssh"), "{nodes}");
    assert!(nodes.contains("others:"), "the rogue is kept: {nodes}");
    assert!(nodes.contains("speed_mbps: 1000\n"), "{nodes}");

    // Planned first, as before an install: the table names nodes by hostname.
    let planned = site.run(&["plan", "--site", "{site}"]);
    assert!(
        planned.code == 0 || planned.code == 1,
        "{}{}",
        planned.stdout,
        planned.stderr
    );
    let (_, checked, _) = json_of(rackplan_json(&["check", "--site"]).arg(&dir));
    let (code, v, err) = json_of(rackplan_json(&["check", "--cabling", "--site"]).arg(&dir));
    assert_eq!(code, 1, "findings fail the check: {v:#}\n{err}");
    assert_eq!(v["design"], true);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 29, "six NICs on four hosts, five on one");
    // Which node is which, by a switch port only its cable ends on.
    let node_of = |sw: &str, port: &str, nic: &str| -> (String, String, String) {
        let row = rows
            .iter()
            .find(|r| r["switch"] == sw && r["port"] == port && r["nic"] == nic)
            .unwrap_or_else(|| panic!("{sw} {port} {nic}: {v:#}"));
        let id = row["node"].as_str().unwrap().to_string();
        let host = row["hostname"].as_str().unwrap().to_string();
        let role = checked["roles"][&id]["role"].as_str().unwrap().to_string();
        (id, host, role)
    };
    let (n1, _, _) = node_of("mgmt-a", "swp1", "eth0");
    let (n2, h2, _) = node_of("mgmt-a", "swp2", "eth0");
    let (n3, h3, _) = node_of("mgmt-a", "swp3", "eth0");
    let (n4, h4, r4) = node_of("mgmt-a", "swp5", "eth0");
    let (n5, h5, r5) = node_of("mgmt-b", "swp4", "eth1");
    let verdict = |node: &str, nic: &str| -> String {
        rows.iter()
            .find(|r| r["node"] == node && r["nic"] == nic)
            .unwrap_or_else(|| panic!("no row {node} {nic}: {v:#}"))["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let findings = v["findings"].as_array().unwrap();
    // (what, fix) of the one finding of `code` on `node` ("site" for a switch).
    let finding = |code: &str, node: &str| -> Vec<(String, String)> {
        findings
            .iter()
            .filter(|f| f["code"] == code && f["node"] == node)
            .map(|f| {
                (
                    f["what"].as_str().unwrap().to_string(),
                    f["fix"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let pair = |a: String, b: &str| vec![(a, b.to_string())];

    for nic in ["eth0", "eth1", "eth2", "eth3", "eth4", "eth5"] {
        assert_eq!(
            verdict(&n1, nic),
            "ok",
            "n1 {nic} is cabled as designed: {v:#}"
        );
    }
    let r = rows
        .iter()
        .find(|r| r["node"] == n1.as_str() && r["nic"] == "eth2")
        .unwrap();
    assert_eq!(r["vlans"], serde_json::json!([412, 413, 420]));
    assert_eq!(r["mtu"], 9022);
    assert_eq!(r["frame_needed"], 9022);
    // The design names st-a by its chassis id: n1's storage NIC on it is right.
    let r = rows
        .iter()
        .find(|r| r["node"] == n1.as_str() && r["nic"] == "eth4")
        .unwrap();
    assert_eq!(
        (&r["switch"], &r["design_switch"]),
        (&Value::from("st-a"), &Value::from(ST_A))
    );

    // n2: swapped cables; the VM NIC on the storage switch, never the storage NICs there.
    assert_eq!(
        verdict(&n2, "eth2"),
        "cabling-wrong-switch,storage-shares-switch"
    );
    assert_eq!(
        verdict(&n2, "eth4"),
        "cabling-wrong-switch,storage-shares-switch"
    );
    assert_eq!(verdict(&n3, "eth4"), "ok", "a storage NIC on st-a: {v:#}");
    assert_eq!(
        finding("cabling-wrong-switch", &n2),
        [
            (
                format!(
                    "{h2} eth2 (vm) is cabled to st-a port swp2, a switch of the storage network"
                ),
                "move eth2's cable from st-a port swp2 to a free port of vm-a".to_string()
            ),
            (
                format!(
                    "{h2} eth4 (storage) is cabled to vm-a port swp2, a switch of the vm network"
                ),
                format!("move eth4's cable from vm-a port swp2 to a free port of {ST_A}")
            )
        ]
    );
    assert_eq!(
        finding("storage-shares-switch", "site"),
        [
            (
                format!(
                    "switch st-a carries the storage network and the vm network: {h2} eth2 (vm) out of place there"
                ),
                format!(
                    "move {h2} eth2 (vm) to a free port of vm-a or vm-b; the storage network's switches then carry it alone"
                )
            ),
            (
                format!(
                    "switch vm-a carries the storage network and the vm network: {h2} eth4 (storage) out of place there"
                ),
                format!(
                    "move {h2} eth4 (storage) to a free port of {ST_A} or st-b; the storage network's switches then carry it alone"
                )
            )
        ]
    );

    // n3: a bond on one switch, a missing VLAN, MTU 1500.
    assert_eq!(verdict(&n3, "eth0"), "bond-one-switch");
    assert_eq!(verdict(&n3, "eth3"), "switch-vlan-missing");
    assert_eq!(verdict(&n3, "eth5"), "switch-mtu");
    assert_eq!(
        finding("bond-one-switch", &n3),
        pair(
            format!("{h3} management bond members eth0, eth1 are all on switch mgmt-a"),
            "move eth1's cable from mgmt-a port swp4 to a free port of mgmt-b"
        )
    );
    assert_eq!(
        finding("switch-vlan-missing", &n3),
        pair(
            format!(
                "{h3} eth3 (vm): vm-b port swp3 does not carry VLAN 420 (it carries 412-413 tagged)"
            ),
            "add VLAN 420 to vm-b port swp3, tagged"
        )
    );
    assert_eq!(
        finding("switch-mtu", &n3),
        pair(
            format!(
                "{h3} eth5 (storage): st-b port swp3 takes frames of at most 1522 bytes; the storage network's 9000-byte MTU, VLAN-tagged, needs frames of 9000 + 18 (Ethernet header and FCS) + 4 (VLAN tag) = 9022 bytes"
            ),
            "raise the maximum frame size (the MTU, as most switches call it) of st-b port swp3 to at least 9022 bytes, or lower `storage_network.mtu` in site.yaml to 1500"
        )
    );

    // n4: the slow link is the finding; its cables are right and stay on their networks.
    for (nic, want) in [
        ("eth0", "ok"),
        ("eth1", "ok"),
        ("eth2", "link-slow"),
        ("eth3", "ok"),
        ("eth4", "ok"),
        ("eth5", "switch-mtu"),
    ] {
        assert_eq!(verdict(&n4, nic), want, "n4 {nic}: {v:#}");
    }
    let r = rows
        .iter()
        .find(|r| r["node"] == n4.as_str() && r["nic"] == "eth2")
        .unwrap();
    assert_eq!(
        (&r["network"], &r["speed_mbps"], &r["required_mbps"]),
        (&Value::from("vm"), &Value::from(1000), &Value::from(10000))
    );
    assert_eq!(
        finding("link-slow", &n4),
        pair(
            format!(
                "{h4} eth2 (vm) links at 1 GbE on vm-a port swp4; the {r4} profile asks 10 GbE of the vm network; at that speed the port choice render builds the bonds from puts the vm network on eth3, eth4 and the storage network on eth5, eth2, off the cables the design gives them (this table keeps each network on its cables)"
            ),
            "fix eth2's link, not the cables: reseat or replace its cable or optic and the speed set on vm-a port swp4 (a 10 GbE port linking at 1 GbE has a bad cable or optic, or a fixed speed); if eth2 is a 1 GbE NIC, give the vm network a 10 GbE one; then rediscover"
        )
    );
    assert_eq!(
        finding("switch-mtu", &n4),
        pair(
            format!(
                "{h4} eth5 (storage): st-b port swp4 takes frames of at most 9010 bytes; the storage network's 9000-byte MTU, VLAN-tagged, needs frames of 9000 + 18 (Ethernet header and FCS) + 4 (VLAN tag) = 9022 bytes"
            ),
            "raise the maximum frame size (the MTU, as most switches call it) of st-b port swp4 to at least 9022 bytes, or lower `storage_network.mtu` in site.yaml to 8988"
        )
    );

    // n5: the rogue behind a hub, LLDP off on a port, a one-member storage bond.
    assert_eq!(verdict(&n5, "eth0"), "lldp-several-neighbours");
    assert_eq!(
        finding("lldp-several-neighbours", &n5),
        pair(
            format!(
                "{h5} eth0 (management) hears 2 LLDP neighbours on one port: mgmt-a port swp6, mgmt-<U+0430> port eth0"
            ),
            &format!(
                "trace eth0's cable from {h5}: take out what sits between it and the switch (or break the loop), then rediscover"
            )
        )
    );
    assert_eq!(verdict(&n5, "eth3"), "no-neighbour");
    assert_eq!(
        finding("no-neighbour", &n5),
        pair(
            format!(
                "{h5} eth3 (vm) has a link but no LLDP neighbour, though LLDP was read on the node"
            ),
            "turn LLDP on for the switch port eth3 is cabled to (the design puts it on vm-b; its bond peer eth2 is on vm-a port swp5), or turn off the NIC firmware's LLDP agent; then rediscover"
        )
    );
    assert_eq!(verdict(&n5, "eth4"), "bond-one-member");
    assert_eq!(
        finding("bond-one-member", &n5),
        pair(
            format!(
                "{h5} storage bond has one member, eth4 on st-b port swp5; the {r5} profile asks 2 ports for the storage network"
            ),
            &format!(
                "add a NIC for the storage network and cable it to a free port of {ST_A}, then rediscover"
            )
        )
    );
    // Nothing else: every finding above, and only those.
    let codes: Vec<&str> = findings
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 12, "{codes:?}");

    // The per-switch view: st-a is the design's chassis-named storage switch.
    let switch = |name: &str| {
        v["switches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["switch"] == name)
            .unwrap_or_else(|| panic!("{name}: {v:#}"))
            .clone()
    };
    assert_eq!(switch("st-a")["design"], serde_json::json!(["storage"]));
    assert_eq!(switch("st-a")["ports"].as_array().unwrap().len(), 4);
    assert_eq!(switch("mgmt-a")["ports"].as_array().unwrap().len(), 6);
    // The plain check carries the same findings; the table names them.
    let out = site.run(&["check", "--site", "{site}"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("bond members eth0, eth1 are all on"),
        "{}",
        out.stdout
    );
    let table = site.run(&["check", "--cabling", "--site", "{site}"]);
    assert!(
        table.stdout.contains(&format!(
            "switch st-a (chassis {ST_A}; storage in the design)"
        )),
        "{}",
        table.stdout
    );
    // The table a person reads, at three widths (at 80 columns still a boxed table, one
    // line per NIC); the JSON against its schema.
    for columns in [60u16, 80, 120] {
        let (code, screen) = in_terminal(&dir, columns, &["check", "--cabling", "--site", "."]);
        assert_eq!(code, 1, "{screen}");
        assert_fits("check --cabling", columns, &screen);
        if columns >= 80 {
            let nic_table: Vec<&str> = screen
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .collect();
            assert!(
                nic_table[0].starts_with('┌') && nic_table[nic_table.len() - 1].starts_with('└'),
                "{screen}"
            );
            let rows = nic_table.iter().filter(|l| l.starts_with("│ hv-")).count();
            assert_eq!(rows, 29, "one boxed row per NIC: {screen}");
        }
        insta::assert_snapshot!(format!("cabling_table_{columns}"), screen);
    }
    crate::output_schemas::assert_valid("check-cabling", &v);
}

/// A host whose lldpcli answers with more than the 8 MiB a probe answer may hold (a flood
/// of LLDP speakers): the LLDP section is dropped with a note, the rest of the host's
/// inventory is kept. This machine over real sshd, with lldpcli in front on its PATH.
#[test]
fn an_lldp_answer_over_8_mib_drops_only_the_lldp_section() {
    use crate::support::sshd::{Sshd, UserKey};
    let bin = tempfile::tempdir().unwrap();
    let lldpcli = bin.path().join("lldpcli");
    std::fs::write(
        &lldpcli,
        "#!/bin/sh\ncase \"$*\" in *neighbors*) ;; *) echo '{\"lldp\": {}}'; exit 0 ;; esac\n\
         printf '{\"lldp\": {\"interface\": ['\nhead -c 9000000 /dev/zero | tr '\\0' ' '\nprintf ']}}'\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["755"])
        .arg(&lldpcli)
        .status()
        .unwrap();
    let key = UserKey::new();
    let server = Sshd::start(
        "127.0.0.1",
        &key,
        &format!(
            "ForceCommand PATH={}:$PATH sh -c \"$SSH_ORIGINAL_COMMAND\"",
            bin.path().display()
        ),
    );
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("known_hosts"), server.known_hosts_line()).unwrap();
    let (code, v, err) = json_of(
        rackplan_json(&["discover", "ssh", "--site"])
            .arg(site.path())
            .args(["--hosts", &server.target(), "--identity"])
            .arg(key.private())
            .env_remove("SSH_AUTH_SOCK"),
    );
    assert_eq!(code, 0, "{v:#}\n{err}");
    let host = &v["hosts"][0];
    assert_eq!(host["ok"], true, "{v:#}");
    let notes = host["notes"].to_string();
    assert!(
        notes.contains("the host's answer passed 8 MiB inside its LLDP section (lldpcli's JSON): that section was dropped and no LLDP neighbours read; the rest of the inventory is complete"),
        "{notes}"
    );
    let nodes: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(site.path().join("nodes.yaml")).unwrap())
            .unwrap();
    let node = &nodes["nodes"][0];
    assert!(node["cpu"]["threads"].as_u64().unwrap() > 0, "{node:#}");
    assert!(node["memory_gib"].as_f64().unwrap() > 0.0, "{node:#}");
    assert!(
        node["sources"].get("lldp").is_none(),
        "LLDP was not read: {node:#}"
    );
}

/// The Dell R750 (iDRAC 7.10) capture, copied, with `LLDPReceive` filled on two ports as
/// iDRAC fills it (one honest, one hostile), served by sushy-tools.
#[test]
fn redfish_lldp_receive_is_read_and_hostile_values_are_refused() {
    use crate::support::sushy::{Sushy, mockup};
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("mockup");
    crate::support::copy_dir(&mockup("dell-poweredge-r750-idrac9-7.10-bluefield3"), &copy);
    let adapters = copy.join("redfish/v1/Chassis/System.Embedded.1/NetworkAdapters");
    let fill = |adapter: &str, port: &str, lldp: Value| {
        let p = adapters
            .join(adapter)
            .join("Ports")
            .join(port)
            .join("index.json");
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        v["Ethernet"]["LLDPReceive"] = lldp;
        v["LinkStatus"] = Value::from("LinkUp");
        std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    };
    fill(
        "NIC.Slot.2",
        "NIC.Slot.2-1",
        serde_json::json!({
            "ChassisId": "3c:2c:30:aa:bb:cc", "ChassisIdSubtype": "MacAddr",
            "PortId": "ethernet1/1/7", "PortIdSubtype": "IfName",
            "SystemName": "leaf-a", "ManagementAddressIPv4": "10.0.0.2",
            "ManagementAddressIPv6": null, "ManagementAddressMAC": "3c:2c:30:aa:bb:cc",
            "ManagementVlanId": 10
        }),
    );
    fill(
        "NIC.Slot.5",
        "NIC.Slot.5-1",
        serde_json::json!({
            "SystemName": "leaf\u{1b}]0;owned\u{7}", "PortId": "x".repeat(1_000_000),
            "ChassisId": 42
        }),
    );
    // Dell's Oem switch connection view for a port whose LLDPReceive stays empty.
    let conns = copy.join(
        "redfish/v1/Systems/System.Embedded.1/NetworkPorts/Oem/Dell/DellSwitchConnections/index.json",
    );
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&conns).unwrap()).unwrap();
    for m in c["Members"].as_array_mut().unwrap() {
        if m["FQDD"] == "NIC.Embedded.1-1-1" {
            m["SwitchConnectionID"] = Value::from("74:86:e2:00:00:01");
            m["SwitchPortConnectionID"] = Value::from("swp3");
        }
    }
    std::fs::write(&conns, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    let s = Sushy::start(&copy, None);
    let site = tempfile::tempdir().unwrap();
    std::fs::write(
        site.path().join("bmcs.yaml"),
        format!("bmcs:\n  - address: \"{}\"\n", s.url()),
    )
    .unwrap();
    let (code, v, err) =
        json_of(rackplan_json(&["discover", "redfish", "--site"]).arg(site.path()));
    assert_eq!(code, 0, "{v:#}\n{err}");
    let nodes = std::fs::read_to_string(site.path().join("nodes.yaml")).unwrap();
    let inv: Value = serde_saphyr::from_str(&nodes).unwrap();
    let nics = inv["nodes"][0]["nics"].as_array().unwrap();
    let by_mac = |m: &str| {
        nics.iter()
            .find(|n| n["mac"] == m)
            .unwrap_or_else(|| panic!("{m}: {nodes}"))
    };
    let good = &by_mac("a0:88:c2:0c:b8:04")["lldp"];
    assert_eq!(good["switch"], "leaf-a");
    assert_eq!(good["chassis_id"], "3c:2c:30:aa:bb:cc");
    assert_eq!(good["port"], "ethernet1/1/7");
    assert_eq!(good["management_address"], "10.0.0.2");
    assert_eq!(good["management_vlan"], 10);
    assert_eq!(good["source"], "redfish");
    assert!(
        inv["nodes"][0]["sources"]["lldp"].is_string(),
        "the BMC reports LLDP"
    );
    let oem = &by_mac("c8:4b:d6:7b:ab:92")["lldp"];
    assert_eq!(oem["switch"], "74:86:e2:00:00:01", "{nodes}");
    assert_eq!(oem["port"], "swp3");
    assert!(
        by_mac("c8:4b:d6:7b:ab:93").get("lldp").is_none(),
        "No Link: {nodes}"
    );
    // The hostile port: nothing of it kept, each value named.
    assert!(by_mac("a0:88:c2:08:54:5c").get("lldp").is_none(), "{nodes}");
    let all = v.to_string();
    assert!(
        all.contains("LLDPReceive.SystemName: holds a control or script character"),
        "{all}"
    );
    assert!(
        all.contains("1000000 characters, more than an LLDP TLV holds"),
        "{all}"
    );
    assert!(
        all.contains("LLDPReceive.ChassisId: not a string (a number)"),
        "{all}"
    );
    assert!(!nodes.contains('\u{1b}'));
}
