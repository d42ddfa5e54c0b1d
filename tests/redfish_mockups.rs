//! Every mockup inventoried through a real Redfish server (sushy-static), compared with the
//! values written down by hand from the JSON (tests/data/redfish-mockups.yaml).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::support::sushy::{Sushy, mockup, mockup_names};
use crate::support::{json_of, rackplan_json, repo, shared};

#[derive(Debug, Deserialize, PartialEq, Clone)]
struct Drive {
    capacity_bytes: u64,
    media: Option<String>,
    protocol: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq, Clone)]
struct Port {
    mac: String,
    speed_mbps: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct Expected {
    cores: Option<u32>,
    threads: Option<u32>,
    memory_gib: Option<f64>,
    drives: Vec<Drive>,
    ports: Vec<Port>,
}

fn expected() -> BTreeMap<String, Expected> {
    let text = std::fs::read_to_string(repo().join("tests/data/redfish-mockups.yaml")).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

pub fn run_discovery(dir: &std::path::Path, extra: &[&str]) -> (i32, Value, String) {
    json_of(
        rackplan_json(&["discover", "redfish", "--site"])
            .arg(dir)
            .args(extra),
    )
}

fn actual_drives(n: &Value) -> Vec<Drive> {
    let mut v: Vec<Drive> = n["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| Drive {
            capacity_bytes: d["capacity_bytes"].as_u64().unwrap(),
            media: d["media"].as_str().map(str::to_string),
            protocol: d["protocol"].as_str().map(str::to_string),
        })
        .collect();
    v.sort_by_key(|d| (d.capacity_bytes, format!("{:?}", d.protocol)));
    v
}

fn actual_ports(n: &Value) -> Vec<Port> {
    let mut v: Vec<Port> = n["nics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Port {
            mac: p["mac"].as_str().unwrap().to_string(),
            speed_mbps: p["speed_mbps"].as_u64().map(|s| s as u32),
        })
        .collect();
    v.sort_by(|a, b| a.mac.cmp(&b.mac));
    v
}

#[test]
fn every_mockup_inventories_correctly_through_sushy_static() {
    let names = mockup_names();
    assert_eq!(names.len(), 11, "mockups under {}", shared().display());
    let expected = expected();
    let servers: Vec<(String, Sushy)> = names
        .iter()
        .map(|n| (n.clone(), Sushy::start(&mockup(n), None)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut yaml = String::from("bmcs:\n");
    for (_, s) in &servers {
        yaml.push_str(&format!("  - address: \"{}\"\n", s.url()));
    }
    std::fs::write(dir.path().join("bmcs.yaml"), yaml).unwrap();
    let (code, v, stderr) = run_discovery(dir.path(), &[]);
    assert_eq!(code, 0, "{stderr}\n{v:#}");
    let bmcs = v["bmcs"].as_array().unwrap();
    for (name, server) in &servers {
        let b = bmcs.iter().find(|b| b["url"] == server.url()).unwrap();
        assert_eq!(b["ok"], true, "{name}: {b:#}");
        let ids = b["nodes"].as_array().unwrap();
        assert_eq!(ids.len(), 1, "{name}: one host system");
        let node = v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == ids[0])
            .unwrap();
        let e = &expected[name];
        assert_eq!(
            node["cpu"]["cores"].as_u64().map(|x| x as u32),
            e.cores,
            "{name} cores"
        );
        assert_eq!(
            node["cpu"]["threads"].as_u64().map(|x| x as u32),
            e.threads,
            "{name} threads"
        );
        assert_eq!(node["memory_gib"].as_f64(), e.memory_gib, "{name} memory");
        assert_eq!(actual_drives(node), e.drives, "{name} drives");
        assert_eq!(actual_ports(node), e.ports, "{name} ports");
        assert_eq!(node["bmc"]["address"], server.url());
        assert!(node["sources"]["redfish"].is_string());
    }
    // GPUs and FPGAs are never counted as CPUs, but GPUs are listed.
    let dell = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == "CNIVC0014M0388")
        .unwrap();
    assert_eq!(dell["gpus"][0]["model"], "NVIDIA H100 PCIe");
    // Lenovo's GPU processors name no model: it comes from the linked PCIe device's Name.
    let (_, xcc) = servers
        .iter()
        .find(|(n, _)| n.starts_with("lenovo-"))
        .unwrap();
    let lenovo = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["bmc"]["address"] == xcc.url())
        .unwrap();
    let models: Vec<&str> = lenovo["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["model"].as_str())
        .collect();
    assert_eq!(models, vec!["NVIDIA L40"; 8], "{:#}", lenovo["gpus"]);
    // HPE iLO lists the XL675d's GPUs only in its Oem PCIDevices.
    let (_, ilo) = servers
        .iter()
        .find(|(n, _)| n.starts_with("hpe-proliant-xl675d"))
        .unwrap();
    let hpe = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["bmc"]["address"] == ilo.url())
        .unwrap();
    let models: Vec<&str> = hpe["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["model"].as_str())
        .collect();
    assert_eq!(
        models,
        vec!["NVIDIA A100-SXM4-40GB"; 8],
        "{:#}",
        hpe["gpus"]
    );
    // The nodes.yaml written uses the same field names as the JSON.
    let (inv, _) = rackplan::inventory::store::load(&dir.path().join("nodes.yaml")).unwrap();
    assert_eq!(inv.nodes.len(), 11);
}

#[test]
fn request_counts_on_dell_and_lenovo_are_under_half_of_the_peer() {
    // rf_sys_inventory (DMTF) needs 91 and 130 requests on these (redfish-facts.md §3.2).
    for (name, peer) in [
        ("dell-poweredge-r750-idrac9-6.00", 91),
        ("lenovo-thinksystem-sr670v2-xcc", 130),
    ] {
        let s = Sushy::start(&mockup(name), None);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("bmcs.yaml"),
            format!("bmcs: [{{address: \"{}\"}}]\n", s.url()),
        )
        .unwrap();
        let (code, v, _) = run_discovery(dir.path(), &[]);
        assert_eq!(code, 0);
        let requests = v["bmcs"][0]["requests"].as_u64().unwrap();
        assert!(
            requests * 2 <= peer,
            "{name}: {requests} requests, peer {peer}"
        );
        eprintln!("{name}: {requests} requests (rf_sys_inventory: {peer})");
    }
}

#[test]
fn rediscovery_keeps_annotations_and_a_failed_bmc_keeps_its_record_as_stale() {
    let dell = Sushy::start(&mockup("dell-poweredge-r750-idrac9-6.00"), None);
    let lenovo = Sushy::start(&mockup("lenovo-thinksystem-sr670v2-xcc"), None);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bmcs.yaml"),
        format!(
            "bmcs:\n  - address: \"{}\"\n    rack: r07\n  - address: \"{}\"\n",
            dell.url(),
            lenovo.url()
        ),
    )
    .unwrap();
    let (code, _, _) = run_discovery(dir.path(), &[]);
    assert_eq!(code, 0);
    let nodes = dir.path().join("nodes.yaml");
    let mut inv = rackplan::inventory::store::load(&nodes).unwrap().0;
    let d = inv.nodes.iter().find(|n| n.id == "CNIVC0014M0388").unwrap();
    assert_eq!(
        d.annotations.rack.as_deref(),
        Some("r07"),
        "rack from bmcs.yaml"
    );
    // People annotate; rediscovery must keep it.
    for n in &mut inv.nodes {
        n.annotations.zone = Some("zone-a".into());
        n.annotations.note = Some("racked by hand".into());
    }
    rackplan::inventory::store::save(&nodes, &inv).unwrap();
    drop(lenovo); // this BMC is gone now
    let (code, v, _) = run_discovery(dir.path(), &["--request-timeout", "2", "--retries", "0"]);
    assert_eq!(code, 3, "partial success");
    assert_eq!(v["merge"]["marked_stale"][0], "J105958B");
    let inv = rackplan::inventory::store::load(&nodes).unwrap().0;
    assert_eq!(inv.nodes.len(), 2, "nothing is dropped");
    for n in &inv.nodes {
        assert_eq!(n.annotations.zone.as_deref(), Some("zone-a"));
        assert_eq!(n.annotations.note.as_deref(), Some("racked by hand"));
    }
    let l = inv.nodes.iter().find(|n| n.id == "J105958B").unwrap();
    let stale = l.stale.as_ref().expect("marked stale");
    assert!(stale.error.contains("ServiceRoot"), "{}", stale.error);
    assert_eq!(l.memory_gib, Some(1024.0), "previous facts kept");
    assert!(
        inv.nodes
            .iter()
            .find(|n| n.id == "CNIVC0014M0388")
            .unwrap()
            .stale
            .is_none()
    );
}
