//! Raw Redfish documents -> the node record. Pure and lenient: each field is read on its
//! own, vendor spellings are mapped, and a value the BMC does not give stays unknown.
//!
//! Quirks handled here (redfish-facts §4): GPUs and FPGAs listed as Processors; NVMe drives
//! reported with `Protocol: "PCIe"`; MACs without separators, with dashes or upper case;
//! link speed in `CurrentSpeedGbps`, `CurrentLinkSpeedMbps` or `SpeedMbps`, where 0 means
//! unknown; `LinkUp`/`Up`; empty bays and stub drive documents; BMC virtual media listed
//! as SimpleStorage devices; host-interface NICs; trailing blanks in serials and models;
//! placeholder serials.

use std::collections::BTreeMap;

use serde_json::Value;

use super::crawl::RawSystem;
use super::walk_more::named_model;
use crate::inventory::model::normalize_mac;
use crate::inventory::{Bmc, Cpu, Disk, Gpu, LinkState, Media, Nic, Node, Protocol};

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|x| !x.is_empty())
}

fn state(v: &Value) -> Option<&str> {
    v.pointer("/Status/State").and_then(Value::as_str)
}

pub(crate) use crate::inventory::text::placeholder;

/// Is this a CPU (not a GPU, FPGA, accelerator) that is present?
fn is_cpu(p: &Value) -> bool {
    let kind = s(p, "ProcessorType");
    (kind == Some("CPU") || (kind.is_none() && p.get("TotalCores").is_some()))
        && state(p) != Some("Absent")
}

/// A CPU count a server can have (a BMC that reports 10^12 cores is wrong, not big):
/// anything above 65,536 is taken as unknown rather than stored truncated.
fn plausible(n: u64) -> Option<u32> {
    u32::try_from(n).ok().filter(|&v| v <= 65_536)
}

fn cpu(raw: &RawSystem) -> Option<Cpu> {
    let cpus: Vec<&Value> = raw.processors.iter().filter(|p| is_cpu(p)).collect();
    let summary = raw.system.get("ProcessorSummary");
    let sum = |key: &str| -> Option<u32> {
        let vals: Vec<u64> = cpus
            .iter()
            .filter_map(|p| p.get(key).and_then(Value::as_u64))
            .collect();
        (vals.len() == cpus.len() && !vals.is_empty())
            .then(|| plausible(vals.iter().sum::<u64>()))
            .flatten()
    };
    let sockets = if cpus.is_empty() {
        summary
            .and_then(|x| x.get("Count"))
            .and_then(Value::as_u64)
            .and_then(plausible)
    } else {
        Some(cpus.len() as u32)
    };
    let cores = sum("TotalCores").or_else(|| {
        summary
            .and_then(|x| x.get("CoreCount"))
            .and_then(Value::as_u64)
            .and_then(plausible)
    });
    let threads = sum("TotalThreads").or_else(|| {
        summary
            .and_then(|x| x.get("LogicalProcessorCount"))
            .and_then(Value::as_u64)
            .and_then(plausible)
    });
    let model = cpus
        .iter()
        .find_map(|p| s(p, "Model"))
        .or_else(|| summary.and_then(|x| s(x, "Model")))
        .map(str::to_string);
    let sockets = sockets.filter(|n| *n > 0);
    if sockets.is_none() && cores.is_none() {
        return None;
    }
    Some(Cpu {
        model,
        sockets,
        cores: cores.filter(|n| *n > 0),
        threads: threads.filter(|n| *n > 0),
    })
}

/// GPU memory in GiB: the linked Memory documents (HGX), else `ProcessorMemory`.
fn gpu_memory(p: &Value, memory: &[Value]) -> Option<f64> {
    let linked: Vec<&str> = p
        .pointer("/Links/Memory")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("@odata.id").and_then(Value::as_str))
        .collect();
    let from_links: f64 = memory
        .iter()
        .filter(|m| {
            m.get("@odata.id")
                .and_then(Value::as_str)
                .is_some_and(|id| linked.iter().any(|l| same_link(l, id)))
        })
        .filter_map(|m| m.get("CapacityMiB").and_then(Value::as_f64))
        .sum();
    let inline: f64 = p
        .get("ProcessorMemory")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("CapacityMiB").and_then(Value::as_f64))
        .sum();
    let mib = if from_links > 0.0 { from_links } else { inline };
    (mib > 0.0 && mib.is_finite()).then(|| (mib / 1024.0 * 10.0).round() / 10.0)
}

/// A GPU's model: its `Model`, else the linked PCIe device's `Model`, else that device's
/// `Name` (Lenovo XCC: `NVIDIA L40` there, `Model` null on the processor and `N/A` on the
/// device).
fn gpu_model(p: &Value, devices: &[Value]) -> Option<String> {
    if let Some(m) = named_model(p) {
        return Some(m.to_string());
    }
    let target = p
        .pointer("/Links/PCIeDevice/@odata.id")
        .and_then(Value::as_str)?;
    let device = devices.iter().find(|d| {
        d.get("@odata.id")
            .and_then(Value::as_str)
            .is_some_and(|id| same_link(target, id))
    })?;
    named_model(device)
        .or_else(|| s(device, "Name").map(str::trim).filter(|n| !n.is_empty()))
        .map(str::to_string)
}

fn gpus(raw: &RawSystem) -> Vec<Gpu> {
    let listed: Vec<Gpu> = raw
        .processors
        .iter()
        .chain(raw.accelerators.iter())
        .filter(|p| s(p, "ProcessorType") == Some("GPU") && state(p) != Some("Absent"))
        .map(|p| Gpu {
            model: gpu_model(p, &raw.gpu_devices),
            manufacturer: s(p, "Manufacturer").map(str::to_string),
            memory_gib: gpu_memory(p, &raw.accelerator_memory),
        })
        .collect();
    if listed.is_empty() {
        raw.oem_pci_devices.iter().filter_map(oem_gpu).collect()
    } else {
        listed
    }
}

/// A GPU from HPE iLO's Oem `PCIDevices` entry: a display controller (`ClassCode` 3) of a
/// GPU vendor in a slot (the embedded video of the server, `PCI.Emb.*`, is not one). The
/// model is its `Name` (`NVIDIA A100-SXM4-40GB`); iLO gives no GPU memory.
fn oem_gpu(d: &Value) -> Option<Gpu> {
    let vendor = match d.get("VendorID").and_then(Value::as_u64)? {
        0x10de => "NVIDIA",
        0x1002 => "AMD",
        0x8086 => "Intel",
        _ => return None,
    };
    let embedded = s(d, "StructuredName").is_some_and(|n| n.starts_with("PCI.Emb"));
    (d.get("ClassCode").and_then(Value::as_u64) == Some(3) && !embedded).then(|| Gpu {
        model: s(d, "Name")
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string),
        manufacturer: Some(vendor.to_string()),
        memory_gib: None,
    })
}

/// Memory in GiB: MemorySummary, cross-checked with the DIMMs when they were read.
fn memory(raw: &RawSystem, notes: &mut Vec<String>) -> Option<f64> {
    let summary = raw
        .system
        .pointer("/MemorySummary/TotalSystemMemoryGiB")
        .and_then(Value::as_f64)
        .filter(|g| *g > 0.0);
    let dimms = raw.memory.as_ref().map(|ds| {
        ds.iter()
            .filter(|d| state(d) != Some("Absent"))
            .filter_map(|d| d.get("CapacityMiB").and_then(Value::as_f64))
            .sum::<f64>()
            / 1024.0
    });
    match (summary, dimms) {
        (Some(s), Some(d)) if d > 0.0 => {
            if (s - d).abs() / s > 0.02 {
                notes.push(format!(
                    "memory: MemorySummary says {s} GiB but the DIMMs add up to {d:.1} GiB"
                ));
            }
            Some(s)
        }
        (Some(s), _) => Some(s),
        (None, Some(d)) if d > 0.0 => Some(d),
        _ => None,
    }
}

fn media(v: &Value) -> Option<Media> {
    match s(v, "MediaType")?.to_ascii_uppercase().as_str() {
        "SSD" | "SAS SSD" | "SATA SSD" | "NVME SSD" => Some(Media::Ssd),
        "HDD" | "SMR" => Some(Media::Hdd),
        _ => None,
    }
}

fn protocol(v: &Value, media: Option<Media>) -> Option<Protocol> {
    let named_nvme = ["Model", "Name"]
        .iter()
        .any(|k| s(v, k).is_some_and(|x| x.to_ascii_lowercase().contains("nvme")));
    match s(v, "Protocol").map(str::to_ascii_uppercase).as_deref() {
        Some("NVME") => Some(Protocol::Nvme),
        Some("PCIE") if media == Some(Media::Ssd) || named_nvme => Some(Protocol::Nvme),
        Some("SATA") => Some(Protocol::Sata),
        Some("SAS") => Some(Protocol::Sas),
        Some("USB") => Some(Protocol::Usb),
        Some(_) => Some(Protocol::Other),
        None if named_nvme => Some(Protocol::Nvme),
        None => None,
    }
}

fn last_segment(v: &Value) -> String {
    v.get("@odata.id")
        .and_then(Value::as_str)
        .map(|p| {
            p.trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .filter(|x| !x.is_empty())
        .unwrap_or_default()
}

fn same_link(a: &str, b: &str) -> bool {
    a.trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim_end_matches('/'))
}

fn links_of<'a>(v: &'a Value, pointer: &str) -> Vec<&'a str> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("@odata.id").and_then(Value::as_str))
        .collect()
}

/// Where a drive sits: the Storage that lists it and the volumes it links to.
fn drive_context<'a>(raw: &'a RawSystem, d: &Value) -> super::byid::Context<'a> {
    let id = d.get("@odata.id").and_then(Value::as_str).unwrap_or("");
    let storage = raw
        .storages
        .iter()
        .find(|s| links_of(s, "/Drives").iter().any(|l| same_link(l, id)));
    let mine = links_of(d, "/Links/Volumes");
    let volumes = raw
        .volumes
        .iter()
        .filter(|v| {
            let vid = v.get("@odata.id").and_then(Value::as_str).unwrap_or("");
            mine.iter().any(|l| same_link(l, vid))
        })
        .collect();
    super::byid::Context { storage, volumes }
}

fn disks(raw: &RawSystem) -> Vec<Disk> {
    let mut out: Vec<Disk> = Vec::new();
    let mut serials = std::collections::BTreeSet::new();
    for d in &raw.drives {
        let Some(cap) = d
            .get("CapacityBytes")
            .and_then(Value::as_u64)
            .filter(|c| *c > 0)
        else {
            continue; // empty bay, stub document
        };
        if state(d) == Some("Absent") {
            continue;
        }
        let serial = s(d, "SerialNumber").map(str::to_string);
        if let Some(sn) = &serial
            && !serials.insert(sn.clone())
        {
            continue;
        }
        let m = media(d);
        out.push(Disk {
            id: s(d, "Id").map_or_else(|| last_segment(d), str::to_string),
            path: None,
            capacity_bytes: Some(cap),
            media: m,
            protocol: protocol(d, m),
            model: s(d, "Model").map(str::to_string),
            serial,
            derived: Some(super::byid::derive(d, &drive_context(raw, d))),
        });
    }
    if !out.is_empty() {
        return out;
    }
    for ss in &raw.simple_storage {
        for (i, dev) in ss
            .get("Devices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let Some(cap) = dev
                .get("CapacityBytes")
                .and_then(Value::as_u64)
                .filter(|c| *c > 0)
            else {
                continue;
            };
            if state(dev) == Some("Absent") {
                continue;
            }
            let model = s(dev, "Model").map(str::to_string);
            let name = s(dev, "Name").unwrap_or("");
            // BMC virtual media shows up as USB "Virtual Cdrom/HDisk" devices.
            if model
                .as_deref()
                .is_some_and(|m| m.to_ascii_lowercase().starts_with("virtual "))
            {
                continue;
            }
            let m = media(dev);
            out.push(Disk {
                id: if name.is_empty() {
                    format!("{}-{i}", last_segment(ss))
                } else {
                    name.to_string()
                },
                path: None,
                capacity_bytes: Some(cap),
                media: m,
                protocol: protocol(dev, m),
                model,
                serial: None,
                derived: Some(crate::inventory::DerivedPath {
                    doubt: Some("the BMC lists this disk only under SimpleStorage, which gives no serial number or protocol to name it by; run `rackplan discover ssh` once an OS runs, or write the path `ls -l /dev/disk/by-id` shows in the installer's shell as this disk's `path` in nodes.yaml".into()),
                    from: vec!["SimpleStorage.Devices".into()],
                    ..Default::default()
                }),
            });
        }
    }
    out
}

fn link_state(v: &Value) -> LinkState {
    match s(v, "LinkStatus") {
        Some("LinkUp" | "Up") => LinkState::Up,
        Some("LinkDown" | "Down" | "NoLink") => LinkState::Down,
        _ => LinkState::Unknown,
    }
}

fn positive_mbps(x: Option<f64>) -> Option<u32> {
    x.filter(|v| *v > 0.0).map(|v| v.round() as u32)
}

fn is_infiniband(port: &Value) -> bool {
    [
        "PortProtocol",
        "ActiveLinkTechnology",
        "LinkNetworkTechnology",
    ]
    .iter()
    .any(|k| s(port, k) == Some("InfiniBand"))
}

/// The system's NICs, and whether any of its ports reports LLDP (`LLDPReceive` present).
fn nics(raw: &RawSystem, now: &str, notes: &mut Vec<String>) -> (Vec<Nic>, bool) {
    let mut lldp_reported = false;
    let mut by_mac: BTreeMap<String, Nic> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut per_adapter: BTreeMap<String, u32> = BTreeMap::new();
    for (adapter, port, old) in &raw.ports {
        if is_infiniband(port) {
            continue;
        }
        let mac_raw = if *old {
            port.pointer("/AssociatedNetworkAddresses/0")
                .and_then(Value::as_str)
        } else {
            port.pointer("/Ethernet/AssociatedMACAddresses/0")
                .and_then(Value::as_str)
        };
        let Some(mac) = mac_raw.and_then(normalize_mac) else {
            continue;
        };
        let speed = if *old {
            positive_mbps(port.get("CurrentLinkSpeedMbps").and_then(Value::as_f64))
        } else {
            positive_mbps(
                port.get("CurrentSpeedGbps")
                    .and_then(Value::as_f64)
                    .map(|g| g * 1000.0),
            )
        };
        let adapter_id = s(adapter, "Id").map_or_else(|| last_segment(adapter), str::to_string);
        let idx = per_adapter.entry(adapter_id.clone()).or_default();
        let lldp = if *old {
            None
        } else {
            lldp_reported |= super::super::lldp::redfish_reports(port);
            let label = s(port, "Id").map_or_else(|| mac.clone(), str::to_string);
            super::super::lldp::from_redfish(port, &label, now, notes)
        };
        // Dell's Oem switch connection view where the standard property gives nothing.
        let lldp = lldp.or_else(|| {
            let id = s(port, "Id")?;
            super::super::lldp::from_dell_switch_connection(&raw.switch_connections, id, now, notes)
        });
        let nic = Nic {
            name: None,
            mac,
            speed_mbps: speed,
            link: link_state(port),
            adapter: Some(adapter_id),
            port: Some(*idx),
            lldp,
        };
        if merge_nic(&mut by_mac, &mut order, nic) {
            *idx += 1;
        }
    }
    for e in &raw.ethernet {
        let id = s(e, "Id").unwrap_or("");
        let host_interface = id.eq_ignore_ascii_case("ToManager")
            || s(e, "Name").is_some_and(|n| n.contains("Host Interface") || n.contains("Manager"))
            || e.pointer("/IPv4Addresses/0/Address")
                .and_then(Value::as_str)
                .is_some_and(|a| a.starts_with("169.254."));
        if host_interface {
            continue;
        }
        let Some(mac) = s(e, "MACAddress")
            .or_else(|| s(e, "PermanentMACAddress"))
            .and_then(normalize_mac)
        else {
            continue;
        };
        let nic = Nic {
            name: None,
            mac,
            speed_mbps: positive_mbps(e.get("SpeedMbps").and_then(Value::as_f64)),
            link: link_state(e),
            adapter: None,
            port: None,
            lldp: None,
        };
        merge_nic(&mut by_mac, &mut order, nic);
    }
    let nics = order
        .into_iter()
        .filter_map(|m| by_mac.remove(&m))
        .collect();
    (nics, lldp_reported || !raw.switch_connections.is_empty())
}

/// Add `nic` unless its MAC is already known, in which case the known one only gains the
/// speed and link state it lacked (ports and EthernetInterfaces describe the same NICs).
/// True when the NIC is new.
fn merge_nic(by_mac: &mut BTreeMap<String, Nic>, order: &mut Vec<String>, nic: Nic) -> bool {
    if let Some(existing) = by_mac.get_mut(&nic.mac) {
        existing.speed_mbps = existing.speed_mbps.or(nic.speed_mbps);
        if existing.link == LinkState::Unknown {
            existing.link = nic.link;
        }
        false
    } else {
        order.push(nic.mac.clone());
        by_mac.insert(nic.mac.clone(), nic);
        true
    }
}

/// Vendor name for the BMC, lowercase: from ServiceRoot `Vendor`, else the manufacturer.
fn vendor(root: &Value, system: &Value) -> Option<String> {
    let v = s(root, "Vendor").or_else(|| s(system, "Manufacturer"))?;
    let l = v.to_ascii_lowercase();
    Some(
        if l.contains("dell") {
            "dell"
        } else if l.contains("hpe") || l.contains("hewlett") {
            "hpe"
        } else if l.contains("lenovo") {
            "lenovo"
        } else if l.contains("supermicro") {
            "supermicro"
        } else if l == "ami" {
            "ami"
        } else {
            return Some(l);
        }
        .to_string(),
    )
}

/// The node id: the system serial where it means something, else [`fallback_id`].
fn node_id(system: &Value, address: &str) -> String {
    if let Some(sn) = s(system, "SerialNumber").filter(|x| !placeholder(x)) {
        return sn.to_string();
    }
    fallback_id(system, address)
}

/// The id of a system without a usable serial, or whose serial another server also
/// reports: its UUID (unless a placeholder), else the BMC address with the system's id.
pub(crate) fn fallback_id(system: &Value, address: &str) -> String {
    if let Some(u) = s(system, "UUID").filter(|u| {
        !u.chars()
            .all(|c| c == '0' || c == '-' || c.eq_ignore_ascii_case(&'f'))
    }) {
        return u.to_ascii_lowercase();
    }
    let host = address.split("://").nth(1).unwrap_or(address);
    format!("{host}/{}", last_segment(system))
}

/// One node per host system.
pub fn node(
    raw: &RawSystem,
    root: &Value,
    address: &str,
    now: &str,
    notes: &mut Vec<String>,
) -> Node {
    let sys = &raw.system;
    let (nics, lldp_reported) = nics(raw, now, notes);
    let manager = raw
        .managers
        .iter()
        .find(|m| s(m, "ManagerType") == Some("BMC"))
        .or(raw.managers.first());
    Node {
        id: node_id(sys, address),
        serial: s(sys, "SerialNumber")
            .filter(|x| !placeholder(x))
            .map(str::to_string),
        manufacturer: s(sys, "Manufacturer").map(str::to_string),
        model: s(sys, "Model").map(str::to_string),
        bmc: Some(Bmc {
            address: address.to_string(),
            vendor: vendor(root, sys),
            firmware: manager
                .and_then(|m| s(m, "FirmwareVersion"))
                .map(str::to_string),
        }),
        cpu: cpu(raw),
        memory_gib: memory(raw, notes),
        disks: disks(raw),
        nics,
        gpus: gpus(raw),
        firmware: super::firmware::firmware(raw),
        bios: raw
            .bios
            .as_ref()
            .and_then(|b| super::bios::normalize(b, raw.bios_registry.as_ref())),
        sources: crate::inventory::Sources {
            redfish: Some(now.to_string()),
            ssh: None,
            lldp: lldp_reported.then(|| now.to_string()),
        },
        stale: None,
        annotations: Default::default(),
    }
}
