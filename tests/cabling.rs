//! Cabling from real LLDP frames: a rack of three hosts and six switches in network
//! namespaces (`support::netns`), lldpd on both ends, the neighbours read by
//! `discover ssh` through each host's real sshd, then `check --cabling` against the site's
//! design. One host is cabled right; one has its VM and storage cables swapped; one has
//! both management bond members on one switch, a VM port without one of the tenant VLANs
//! and a storage port at a 1500-byte MTU.

use serde_json::Value;

use crate::support::netns::{PortSpec, Rack, available};
use crate::support::{Site, json_of, rackplan_json};
use crate::terminal_widths::{assert_fits, in_terminal};

const DESIGN: &str = "
cabling:
  management: {switches: [mgmt-a, mgmt-b]}
  vm: {switches: [vm-a, vm-b]}
  storage: {switches: [st-a, st-b]}
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

fn rows_of<'a>(v: &'a Value, node_nic: &str) -> &'a Value {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            format!(
                "{} {}",
                r["hostname"]
                    .as_str()
                    .unwrap_or(r["node"].as_str().unwrap()),
                r["nic"].as_str().unwrap()
            ) == node_nic
                || format!(
                    "{} {}",
                    r["node"].as_str().unwrap(),
                    r["nic"].as_str().unwrap()
                ) == node_nic
        })
        .unwrap_or_else(|| panic!("no row {node_nic}: {v:#}"))
}

#[test]
fn lldp_from_real_frames_finds_each_cabling_fault() {
    if let Err(why) = available() {
        panic!("the cabling test needs network namespaces and lldpd: {why}");
    }
    let good = PortSpec {
        vlans: vec![],
        mfs: 9022,
    };
    let vm = PortSpec {
        vlans: vec![412, 413, 420],
        mfs: 9022,
    };
    let storage = PortSpec {
        vlans: vec![100],
        mfs: 9022,
    };
    let mut rack = Rack::new();
    for s in ["mgmt-a", "mgmt-b", "vm-a", "vm-b", "st-a", "st-b"] {
        rack.switch(s);
    }
    for h in ["n1", "n2", "n3"] {
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
    rack.cable(
        "n3",
        "eth3",
        "vm-b",
        &PortSpec {
            vlans: vec![412, 413],
            mfs: 9022,
        },
    );
    rack.cable("n3", "eth4", "st-a", &storage);
    rack.cable(
        "n3",
        "eth5",
        "st-b",
        &PortSpec {
            vlans: vec![100],
            mfs: 1522,
        },
    );
    rack.start();

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
    assert!(nodes.contains("lldp:"), "{nodes}");
    assert!(nodes.contains("switch: vm-a"), "{nodes}");
    assert!(nodes.contains("source: ssh"), "{nodes}");

    // Planned first, as before an install: the table names nodes by hostname.
    let planned = site.run(&["plan", "--site", "{site}"]);
    assert!(
        planned.code == 0 || planned.code == 1,
        "{}{}",
        planned.stdout,
        planned.stderr
    );
    let (code, v, err) = json_of(rackplan_json(&["check", "--cabling", "--site"]).arg(&dir));
    assert_eq!(code, 1, "findings fail the check: {v:#}\n{err}");
    assert_eq!(v["design"], true);
    let ids: Vec<String> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["node"].as_str().unwrap().to_string())
        .collect();
    let mut nodes_seen = ids.clone();
    nodes_seen.dedup();
    assert_eq!(nodes_seen.len(), 3, "three hosts, three nodes: {v:#}");
    assert_eq!(ids.len(), 18, "six NICs each");
    // Which node is which: by the switch port descriptions' order (n1 cabled first).
    let node_of = |host_nic: &str| -> String {
        let (_, nic) = host_nic.split_once(' ').unwrap();
        let sw_port = match host_nic {
            "n1 eth0" => ("mgmt-a", "swp1"),
            "n2 eth0" => ("mgmt-a", "swp2"),
            "n3 eth0" => ("mgmt-a", "swp3"),
            _ => unreachable!(),
        };
        let row = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["switch"] == sw_port.0 && r["port"] == sw_port.1 && r["nic"] == nic)
            .unwrap_or_else(|| panic!("{host_nic}: {v:#}"));
        row["node"].as_str().unwrap().to_string()
    };
    let (n1, n2, n3) = (node_of("n1 eth0"), node_of("n2 eth0"), node_of("n3 eth0"));
    let verdict = |node: &str, nic: &str| {
        rows_of(&v, &format!("{node} {nic}"))["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for nic in ["eth0", "eth1", "eth2", "eth3", "eth4", "eth5"] {
        assert_eq!(
            verdict(&n1, nic),
            "ok",
            "n1 {nic} is cabled as designed: {v:#}"
        );
    }
    let r = rows_of(&v, &format!("{n1} eth2"));
    assert_eq!(r["vlans"], serde_json::json!([412, 413, 420]));
    assert_eq!(r["mtu"], 9022);
    assert_eq!(r["port"], "swp1");
    // n2: swapped cables.
    assert!(
        verdict(&n2, "eth2").contains("cabling-wrong-switch"),
        "{v:#}"
    );
    assert!(
        verdict(&n2, "eth4").contains("cabling-wrong-switch"),
        "{v:#}"
    );
    assert!(
        verdict(&n2, "eth4").contains("storage-shares-switch"),
        "{v:#}"
    );
    // n3: a bond on one switch, a missing VLAN, MTU 1500.
    assert!(verdict(&n3, "eth0").contains("bond-one-switch"), "{v:#}");
    assert!(verdict(&n3, "eth1").contains("bond-one-switch"), "{v:#}");
    assert_eq!(verdict(&n3, "eth3"), "switch-vlan-missing", "{v:#}");
    assert_eq!(verdict(&n3, "eth5"), "switch-mtu", "{v:#}");
    assert_eq!(verdict(&n3, "eth4"), "ok");
    let findings = v["findings"].as_array().unwrap();
    let what = |code: &str| -> Vec<String> {
        findings
            .iter()
            .filter(|f| f["code"] == code)
            .map(|f| f["what"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        what("cabling-wrong-switch"),
        [
            "eth2 (vm) is cabled to st-a port swp2, a switch of the storage network",
            "eth4 (storage) is cabled to vm-a port swp2, a switch of the vm network"
        ]
    );
    assert_eq!(
        what("bond-one-switch"),
        ["management bond members eth0, eth1 are all on switch mgmt-a"]
    );
    assert_eq!(
        what("switch-vlan-missing"),
        ["eth3 (vm): switch vm-b port swp3 does not carry VLAN 420 (it carries 412,413)"]
    );
    assert_eq!(
        what("switch-mtu"),
        [
            "eth5 (storage): switch st-b port swp3 takes frames of at most 1522 bytes, the storage network's MTU is 9000"
        ]
    );
    assert_eq!(
        what("storage-shares-switch").len(),
        2,
        "st-a and vm-a: {v:#}"
    );
    // The per-switch view: mgmt-a has four cables, n3's two among them.
    let mgmt_a = v["switches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["switch"] == "mgmt-a")
        .unwrap();
    assert_eq!(mgmt_a["ports"].as_array().unwrap().len(), 4);
    assert_eq!(mgmt_a["design"], serde_json::json!(["management"]));
    // The plain check carries the same findings; the table names them.
    let out = site.run(&["check", "--site", "{site}"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("bond members eth0, eth1 are all on switch mgmt-a"),
        "{}",
        out.stdout
    );
    let table = site.run(&["check", "--cabling", "--site", "{site}"]);
    assert!(
        table
            .stdout
            .contains("switch mgmt-a (management in the design)"),
        "{}",
        table.stdout
    );
    // The table a person reads, at three widths; the JSON against its schema.
    for columns in [60u16, 80, 120] {
        let (code, screen) = in_terminal(&dir, columns, &["check", "--cabling", "--site", "."]);
        assert_eq!(code, 1, "{screen}");
        assert_fits("check --cabling", columns, &screen);
        insta::assert_snapshot!(format!("cabling_table_{columns}"), screen);
    }
    crate::output_schemas::assert_valid("check-cabling", &v);
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
