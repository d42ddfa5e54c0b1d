//! Tests only (compiled under `cfg(test)`): one test per vendor quirk of redfish-facts.md §4 that inventory meets (12 to 14 are about
//! boot and virtual media, which `boot` handles). Each builds the smallest service that
//! shows the quirk, in memory, and runs the real walk and normalisation over it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::crawl::crawl;
use super::normalize;
use crate::inventory::{LinkState, Node, Protocol};
use crate::redfish::fetch::{Fetch, FetchError};

struct Mem {
    docs: HashMap<String, Value>,
    expand: AtomicBool,
    log: std::sync::Mutex<Vec<String>>,
}

impl Mem {
    fn new(docs: Vec<(&str, Value)>) -> Mem {
        Mem {
            docs: docs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            expand: AtomicBool::new(false),
            log: Default::default(),
        }
    }
}

impl Fetch for Mem {
    async fn get(&self, path: &str) -> Result<Value, FetchError> {
        self.log.lock().unwrap().push(path.to_string());
        if path.contains("$expand") {
            return Err(FetchError::Status(400, None));
        }
        self.docs
            .get(path.trim_end_matches('/'))
            .cloned()
            .ok_or(FetchError::Status(404, None))
    }
    fn expand(&self) -> bool {
        self.expand.load(Ordering::Relaxed)
    }
    fn expand_failed(&self) {
        self.expand.store(false, Ordering::Relaxed);
    }
}

pub(super) fn coll(ids: &[&str]) -> Value {
    json!({"Members": ids.iter().map(|i| json!({"@odata.id": i})).collect::<Vec<_>>()})
}

#[allow(clippy::needless_pass_by_value)] // called with json!(...) literals
pub(super) fn sys(extra: Value) -> Value {
    let mut s = json!({
        "@odata.id": "/redfish/v1/Systems/1",
        "@odata.type": "#ComputerSystem.v1_16_0.ComputerSystem",
        "Id": "1",
        "SerialNumber": "SN1",
        "ProcessorSummary": {"Count": 1},
        "MemorySummary": {"TotalSystemMemoryGiB": 64},
    });
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    s
}

pub(super) fn run(docs: Vec<(&str, Value)>) -> (Vec<Node>, Vec<String>, Vec<String>) {
    let mut all = vec![
        (
            "/redfish/v1",
            json!({"Systems": {"@odata.id": "/redfish/v1/Systems"}}),
        ),
        ("/redfish/v1/Systems", coll(&["/redfish/v1/Systems/1"])),
    ];
    for (k, v) in docs {
        all.retain(|(p, _)| *p != k);
        all.push((k, v));
    }
    let m = Mem::new(all);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let root = m.docs["/redfish/v1"].clone();
    let raw = rt.block_on(crawl(&m, root, None)).unwrap();
    let mut notes = raw.notes.clone();
    let nodes = raw
        .systems
        .iter()
        .map(|s| normalize::node(s, &raw.root, "http://x", "t", &mut notes))
        .collect();
    let log = m.log.into_inner().unwrap();
    (nodes, notes, log)
}

fn eth(id: &str, doc: Value) -> (String, Value) {
    (
        format!("/redfish/v1/Systems/1/EthernetInterfaces/{id}"),
        doc,
    )
}

#[test]
fn q3_trailing_slashes_are_one_resource() {
    let (nodes, _, log) = run(vec![
        ("/redfish/v1/Systems", coll(&["/redfish/v1/Systems/1/"])),
        (
            "/redfish/v1/Systems/1",
            sys(
                json!({"@odata.id": "/redfish/v1/Systems/1/", "Processors": {"@odata.id": "/redfish/v1/Systems/1/Processors/"}}),
            ),
        ),
        (
            "/redfish/v1/Systems/1/Processors",
            coll(&["/redfish/v1/Systems/1/Processors/1/"]),
        ),
        (
            "/redfish/v1/Systems/1/Processors/1",
            json!({"ProcessorType": "CPU", "TotalCores": 16, "TotalThreads": 32}),
        ),
    ]);
    assert_eq!(nodes[0].cores(), Some(16));
    assert!(
        log.iter().all(|p| !p.ends_with('/') && !p.contains("//")),
        "{log:?}"
    );
}

#[test]
fn q4_links_differing_only_in_case_are_fetched_once() {
    let (nodes, _, log) = run(vec![
        (
            "/redfish/v1/Systems/1",
            sys(
                json!({"EthernetInterfaces": {"@odata.id": "/redfish/v1/Systems/1/EthernetInterfaces"}}),
            ),
        ),
        (
            "/redfish/v1/Systems/1/EthernetInterfaces",
            coll(&[
                "/redfish/v1/Systems/1/EthernetInterfaces/1",
                "/redfish/v1/systems/1/ethernetinterfaces/1",
            ]),
        ),
        eth("1", json!({"MACAddress": "94:40:C9:5C:86:BC"})).into_pair(),
    ]);
    assert_eq!(nodes[0].nics.len(), 1);
    assert_eq!(
        log.iter()
            .filter(|p| p.to_lowercase().ends_with("ethernetinterfaces/1"))
            .count(),
        1
    );
}

trait IntoPair {
    fn into_pair(self) -> (&'static str, Value);
}

impl IntoPair for (String, Value) {
    fn into_pair(self) -> (&'static str, Value) {
        (Box::leak(self.0.into_boxed_str()), self.1)
    }
}

fn adapter_docs(ports: Vec<(&'static str, Value)>, kind: &str) -> Vec<(&'static str, Value)> {
    let mut v: Vec<(&'static str, Value)> = vec![
        (
            "/redfish/v1/Systems/1",
            sys(
                json!({"Links": {"Chassis": [{"@odata.id": "/redfish/v1/Chassis/1"}]}, "EthernetInterfaces": {"@odata.id": "/redfish/v1/Systems/1/EthernetInterfaces"}}),
            ),
        ),
        (
            "/redfish/v1/Chassis/1",
            json!({"NetworkAdapters": {"@odata.id": "/redfish/v1/Chassis/1/NetworkAdapters"}}),
        ),
        (
            "/redfish/v1/Chassis/1/NetworkAdapters",
            coll(&["/redfish/v1/Chassis/1/NetworkAdapters/A"]),
        ),
    ];
    let link = format!("/redfish/v1/Chassis/1/NetworkAdapters/A/{kind}");
    v.push((
        "/redfish/v1/Chassis/1/NetworkAdapters/A",
        json!({"Id": "A", kind: {"@odata.id": link}}),
    ));
    let ids: Vec<String> = (0..ports.len()).map(|i| format!("{link}/{i}")).collect();
    v.push((
        Box::leak(link.clone().into_boxed_str()),
        coll(&ids.iter().map(String::as_str).collect::<Vec<_>>()),
    ));
    for (i, (_, p)) in ports.into_iter().enumerate() {
        v.push((Box::leak(format!("{link}/{i}").into_boxed_str()), p));
    }
    v
}

#[test]
fn q5_nics_from_adapters_and_ethernet_interfaces_are_merged_by_mac() {
    let mut docs = adapter_docs(
        vec![(
            "",
            json!({"Ethernet": {"AssociatedMACAddresses": ["00:62:0b:4c:28:4e"]}, "CurrentSpeedGbps": 25, "LinkStatus": "LinkUp"}),
        )],
        "Ports",
    );
    docs.push((
        "/redfish/v1/Systems/1/EthernetInterfaces",
        coll(&[
            "/redfish/v1/Systems/1/EthernetInterfaces/1",
            "/redfish/v1/Systems/1/EthernetInterfaces/2",
        ]),
    ));
    docs.push(
        eth(
            "1",
            json!({"MACAddress": "00:62:0B:4C:28:4E", "SpeedMbps": 0}),
        )
        .into_pair(),
    );
    docs.push(eth("2", json!({"MACAddress": "00:62:0B:4C:28:99", "SpeedMbps": 10000, "LinkStatus": "LinkDown"})).into_pair());
    let (nodes, _, _) = run(docs);
    let n = &nodes[0].nics;
    assert_eq!(n.len(), 2);
    assert_eq!(
        (n[0].speed_mbps, n[0].link, n[0].adapter.as_deref()),
        (Some(25_000), LinkState::Up, Some("A"))
    );
    assert_eq!(
        (n[1].speed_mbps, n[1].link, n[1].adapter.as_deref()),
        (Some(10_000), LinkState::Down, None)
    );
}

#[test]
fn q6_deprecated_network_ports_are_read_when_ports_are_absent() {
    let (nodes, _, _) = run(adapter_docs(
        vec![(
            "",
            json!({"AssociatedNetworkAddresses": ["00620B4C284E"], "CurrentLinkSpeedMbps": 25000, "LinkStatus": "Up"}),
        )],
        "NetworkPorts",
    ));
    let nic = &nodes[0].nics[0];
    assert_eq!(
        (nic.mac.as_str(), nic.speed_mbps, nic.link),
        ("00:62:0b:4c:28:4e", Some(25_000), LinkState::Up)
    );
}

#[test]
fn q7_zero_or_missing_speed_is_unknown_not_zero() {
    let (nodes, _, _) = run(adapter_docs(
        vec![
            (
                "",
                json!({"AssociatedNetworkAddresses": ["70:B5:E8:F0:52:DC"], "CurrentLinkSpeedMbps": 0, "LinkStatus": ""}),
            ),
            (
                "",
                json!({"AssociatedNetworkAddresses": ["70:B5:E8:F0:52:DD"], "SupportedLinkCapabilities": [{"LinkSpeedMbps": 0}]}),
            ),
        ],
        "NetworkPorts",
    ));
    for nic in &nodes[0].nics {
        assert_eq!(nic.speed_mbps, None);
        assert_eq!(nic.link, LinkState::Unknown);
    }
}

#[test]
fn q8_mac_spellings_are_normalised_and_non_48_bit_values_skipped() {
    let (nodes, _, _) = run(adapter_docs(
        vec![
            (
                "",
                json!({"AssociatedNetworkAddresses": ["a4-bf-01-28-90-aa"]}),
            ),
            ("", json!({"AssociatedNetworkAddresses": ["00620B4C284F"]})),
            (
                "",
                json!({"AssociatedNetworkAddresses": ["80:00:00:48:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:94:45:12"]}),
            ),
            (
                "",
                json!({"AssociatedNetworkAddresses": ["B8:3F:D2:A4:1B:D3"], "ActiveLinkTechnology": "InfiniBand"}),
            ),
        ],
        "NetworkPorts",
    ));
    let macs: Vec<&str> = nodes[0].nics.iter().map(|n| n.mac.as_str()).collect();
    assert_eq!(macs, ["a4:bf:01:28:90:aa", "00:62:0b:4c:28:4f"]);
}

#[test]
fn q9_simple_storage_is_the_fallback_and_bmc_virtual_media_is_not_a_disk() {
    let (nodes, _, _) = run(vec![
        (
            "/redfish/v1/Systems/1",
            sys(
                json!({"Storage": {"@odata.id": "/redfish/v1/Systems/1/Storage"}, "SimpleStorage": {"@odata.id": "/redfish/v1/Systems/1/SimpleStorage"}}),
            ),
        ),
        ("/redfish/v1/Systems/1/Storage", json!({"Members": []})),
        (
            "/redfish/v1/Systems/1/SimpleStorage",
            coll(&["/redfish/v1/Systems/1/SimpleStorage/0"]),
        ),
        (
            "/redfish/v1/Systems/1/SimpleStorage/0",
            json!({"Devices": [
                {"Name": "NVMe_Device0_NSID1", "Model": "SAMSUNG MZ1L21T9HCLS-00A07", "CapacityBytes": 1920383410176u64, "Status": {"State": "Enabled"}},
                {"Name": "USB_Device2_PortA", "Model": "Virtual Cdrom Device", "CapacityBytes": 2048},
                {"Name": "SATA Bay 3", "Status": {"State": "Absent"}}
            ]}),
        ),
    ]);
    let d = &nodes[0].disks;
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].protocol, d[0].capacity_bytes),
        (Some(Protocol::Nvme), Some(1_920_383_410_176))
    );
}

#[test]
fn q9_chassis_drives_when_the_system_lists_none() {
    let (nodes, _, _) = run(vec![
        (
            "/redfish/v1/Systems/1",
            sys(json!({"Links": {"Chassis": [{"@odata.id": "/redfish/v1/Chassis/1"}]}})),
        ),
        (
            "/redfish/v1/Chassis/1",
            json!({"Drives": {"@odata.id": "/redfish/v1/Chassis/1/Drives"}}),
        ),
        (
            "/redfish/v1/Chassis/1/Drives",
            coll(&["/redfish/v1/Chassis/1/Drives/0"]),
        ),
        (
            "/redfish/v1/Chassis/1/Drives/0",
            json!({"Id": "0", "CapacityBytes": 3840755982336u64, "MediaType": "SSD", "Protocol": "NVMe", "SerialNumber": "X"}),
        ),
    ]);
    assert_eq!(nodes[0].disks.len(), 1);
}

fn drives(list: Vec<Value>) -> Vec<(&'static str, Value)> {
    let ids: Vec<String> = (0..list.len())
        .map(|i| format!("/redfish/v1/Systems/1/Storage/1/Drives/{i}"))
        .collect();
    let mut v = vec![
        (
            "/redfish/v1/Systems/1",
            sys(json!({"Storage": {"@odata.id": "/redfish/v1/Systems/1/Storage"}})),
        ),
        (
            "/redfish/v1/Systems/1/Storage",
            coll(&["/redfish/v1/Systems/1/Storage/1"]),
        ),
        (
            "/redfish/v1/Systems/1/Storage/1",
            json!({"Drives": ids.iter().map(|i| json!({"@odata.id": i})).collect::<Vec<_>>()}),
        ),
    ];
    for (i, d) in list.into_iter().enumerate() {
        v.push((Box::leak(ids[i].clone().into_boxed_str()), d));
    }
    v
}

#[test]
fn q10_drive_fields_are_read_leniently() {
    let (nodes, _, _) = run(drives(vec![
        json!({"Id": "a", "CapacityBytes": 1920383410176u64, "MediaType": "SSD", "Protocol": "PCIe", "SerialNumber": "S1"}),
        json!({"Id": "b", "CapacityBytes": 2013667524608u64, "Model": "SAMSUNG MZ7LH1T9HMLT-00005", "SerialNumber": "S2     "}),
        json!({"Id": "c", "CapacityBytes": null, "MediaType": null}),
        json!({"Id": "d", "CapacityBytes": 960197124096u64, "MediaType": "SAS SSD", "Protocol": "SAS", "SerialNumber": "S3"}),
        json!({"Id": "e", "CapacityBytes": "N/A"}),
    ]));
    let d = &nodes[0].disks;
    assert_eq!(d.len(), 3, "empty bay and N/A are not disks");
    assert_eq!(d[0].protocol, Some(Protocol::Nvme), "PCIe SSD is NVMe");
    assert_eq!(
        (d[1].protocol, d[1].media),
        (None, None),
        "unknown stays unknown"
    );
    assert_eq!(
        d[1].serial.as_deref(),
        Some("S2"),
        "trailing blanks trimmed"
    );
    assert_eq!(
        d[2].media,
        Some(crate::inventory::Media::Ssd),
        "non-enum `SAS SSD`"
    );
}

#[test]
fn q11_dangling_links_and_stub_documents_cost_only_themselves() {
    let mut docs = drives(vec![
        json!({"@odata.id": "/x", "@odata.type": "#Drive.v1_0_0.Drive"}),
    ]);
    docs.push((
        "/redfish/v1/Systems/1",
        sys(json!({
            "Storage": {"@odata.id": "/redfish/v1/Systems/1/Storage"},
            "Processors": {"@odata.id": "/redfish/v1/Systems/1/Processors"}
        })),
    ));
    docs.push((
        "/redfish/v1/Systems/1/Processors",
        coll(&[
            "/redfish/v1/Systems/1/Processors/gone",
            "/redfish/v1/Systems/1/Processors/1",
        ]),
    ));
    docs.push((
        "/redfish/v1/Systems/1/Processors/1",
        json!({"ProcessorType": "CPU", "TotalCores": 8, "TotalThreads": 8}),
    ));
    let (nodes, notes, _) = run(docs);
    assert_eq!(nodes[0].cores(), Some(8));
    assert!(nodes[0].disks.is_empty());
    assert!(
        notes
            .iter()
            .any(|n| n.contains("Processors/gone: HTTP 404")),
        "{notes:?}"
    );
}

#[test]
fn q16_expand_is_used_when_advertised_and_dropped_when_refused() {
    let m = Mem::new(vec![
        (
            "/redfish/v1",
            json!({"Systems": {"@odata.id": "/redfish/v1/Systems"}}),
        ),
        ("/redfish/v1/Systems", coll(&["/redfish/v1/Systems/1"])),
        ("/redfish/v1/Systems/1", sys(json!({}))),
    ]);
    m.expand.store(true, Ordering::Relaxed);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let raw = rt
        .block_on(crawl(&m, m.docs["/redfish/v1"].clone(), None))
        .unwrap();
    assert_eq!(raw.systems.len(), 1);
    let log = m.log.lock().unwrap().clone();
    assert_eq!(
        log.iter().filter(|p| p.contains("$expand")).count(),
        1,
        "{log:?}"
    );
    assert!(!m.expand());
}

#[test]
fn q16_paged_collections_follow_next_link() {
    let (nodes, _, _) = run(vec![
        (
            "/redfish/v1/Systems/1",
            sys(json!({"Processors": {"@odata.id": "/redfish/v1/Systems/1/Processors"}})),
        ),
        (
            "/redfish/v1/Systems/1/Processors",
            json!({"Members": [{"@odata.id": "/redfish/v1/Systems/1/Processors/1"}], "Members@odata.nextLink": "/redfish/v1/Systems/1/Processors?$skip=1"}),
        ),
        (
            "/redfish/v1/Systems/1/Processors?$skip=1",
            coll(&["/redfish/v1/Systems/1/Processors/2"]),
        ),
        (
            "/redfish/v1/Systems/1/Processors/1",
            json!({"ProcessorType": "CPU", "TotalCores": 8, "TotalThreads": 16}),
        ),
        (
            "/redfish/v1/Systems/1/Processors/2",
            json!({"ProcessorType": "CPU", "TotalCores": 8, "TotalThreads": 16}),
        ),
    ]);
    assert_eq!(nodes[0].cores(), Some(16), "both pages read");
}

#[test]
fn gpus_fpgas_and_absent_sockets_are_not_cpus() {
    let (nodes, _, _) = run(vec![
        (
            "/redfish/v1/Systems/1",
            sys(json!({"Processors": {"@odata.id": "/redfish/v1/Systems/1/Processors"}})),
        ),
        (
            "/redfish/v1/Systems/1/Processors",
            coll(&["/p/1", "/p/2", "/p/3", "/p/4"]),
        ),
        (
            "/p/1",
            json!({"ProcessorType": "CPU", "TotalCores": 18, "TotalThreads": 36, "Model": "Xeon  "}),
        ),
        (
            "/p/2",
            json!({"ProcessorType": "CPU", "Status": {"State": "Absent"}}),
        ),
        (
            "/p/3",
            json!({"ProcessorType": "GPU", "Model": "NVIDIA H100 PCIe"}),
        ),
        (
            "/p/4",
            json!({"ProcessorType": "FPGA", "Model": "Stratix 10"}),
        ),
    ]);
    let cpu = nodes[0].cpu.clone().unwrap();
    assert_eq!(
        (cpu.sockets, cpu.cores, cpu.threads, cpu.model.as_deref()),
        (Some(1), Some(18), Some(36), Some("Xeon"))
    );
    assert_eq!(nodes[0].gpus.len(), 1);
}

#[test]
fn non_system_members_and_gpu_baseboards_are_skipped() {
    let (nodes, notes, _) = run(vec![
        (
            "/redfish/v1/Systems",
            coll(&[
                "/redfish/v1/Systems/1",
                "/redfish/v1/Systems/Capabilities",
                "/redfish/v1/Systems/HGX",
            ]),
        ),
        ("/redfish/v1/Systems/1", sys(json!({}))),
        (
            "/redfish/v1/Systems/Capabilities",
            json!({"@odata.id": "/redfish/v1/Systems/Capabilities", "@odata.type": "#AMIComputerSystem.v1_0_0.Capabilities"}),
        ),
        (
            "/redfish/v1/Systems/HGX",
            json!({"@odata.type": "#ComputerSystem.v1_17_0.ComputerSystem", "@odata.id": "/redfish/v1/Systems/HGX", "ProcessorSummary": {}}),
        ),
    ]);
    assert_eq!(nodes.len(), 1);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("Capabilities: not a ComputerSystem")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("HGX: a system without CPUs")),
        "{notes:?}"
    );
}

#[test]
fn host_interface_nics_are_not_host_ports() {
    let (nodes, _, _) = run(vec![
        (
            "/redfish/v1/Systems/1",
            sys(
                json!({"EthernetInterfaces": {"@odata.id": "/redfish/v1/Systems/1/EthernetInterfaces"}}),
            ),
        ),
        (
            "/redfish/v1/Systems/1/EthernetInterfaces",
            coll(&["/e/ToManager", "/e/1", "/e/2"]),
        ),
        (
            "/e/ToManager",
            json!({"Id": "ToManager", "MACAddress": "0a:8f:c3:a5:8a:71"}),
        ),
        (
            "/e/1",
            json!({"Id": "1", "MACAddress": "aa:bb:cc:dd:ee:01", "IPv4Addresses": [{"Address": "169.254.0.2"}]}),
        ),
        (
            "/e/2",
            json!({"Id": "2", "MACAddress": "aa:bb:cc:dd:ee:02", "SpeedMbps": 25000}),
        ),
    ]);
    assert_eq!(nodes[0].nics.len(), 1);
}

#[test]
fn placeholder_serials_are_not_identities() {
    let (nodes, _, _) = run(vec![(
        "/redfish/v1/Systems/1",
        sys(
            json!({"SerialNumber": "....................", "UUID": "00000000-0000-0000-0000-000000000000"}),
        ),
    )]);
    assert_eq!(
        nodes[0].id, "x/1",
        "falls back to the BMC address and system id"
    );
    assert_eq!(nodes[0].serial, None);
}

#[test]
fn unknown_memory_and_cpus_stay_unknown() {
    let (nodes, _, _) = run(vec![(
        "/redfish/v1/Systems/1",
        sys(
            json!({"ProcessorSummary": {"Count": 0}, "MemorySummary": {"TotalSystemMemoryGiB": 0.0}}),
        ),
    )]);
    assert_eq!(nodes[0].memory_gib, None);
    assert_eq!(nodes[0].cpu, None);
}
