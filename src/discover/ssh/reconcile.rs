//! Reconciling what the OS sees with what the BMC said about the same server.
//!
//! The server is matched by system serial, then by any shared MAC. The OS fills what
//! Redfish rarely knows (NIC names, `/dev/disk/by-id` paths) and live link state;
//! hardware totals stay the BMC's where it gave them. Every disagreement becomes a note:
//! a different number of NVMe drives, memory that differs by more than 5 %, a port speed
//! that differs, a different core count.

use crate::inventory::{Inventory, LinkState, LldpSource, Node, Protocol};

/// The inventory record this OS view belongs to, if any.
pub(crate) fn find_match<'a>(inv: &'a Inventory, os: &Node) -> Option<&'a Node> {
    if let Some(sn) = &os.serial
        && let Some(n) = inv.nodes.iter().find(|n| {
            n.serial
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case(sn))
        })
    {
        return Some(n);
    }
    inv.nodes.iter().find(|n| {
        n.nics
            .iter()
            .any(|a| os.nics.iter().any(|b| a.mac == b.mac))
    })
}

/// Merge the OS view into the BMC view; returns the merged record and the disagreements.
pub(crate) fn merge(bmc: &Node, os: &Node) -> (Node, Vec<String>) {
    let mut out = bmc.clone();
    let mut notes = Vec::new();
    // NICs: names and live state from the OS, matched by MAC; ports only the OS sees added.
    for o in &os.nics {
        match out.nics.iter_mut().find(|n| n.mac == o.mac) {
            Some(n) => {
                n.name = o.name.clone().or(n.name.take());
                match (n.speed_mbps, o.speed_mbps) {
                    (Some(a), Some(b)) if a != b => {
                        notes.push(format!(
                            "{}: BMC says {a} Mb/s, the OS sees {b} Mb/s",
                            o.name.as_deref().unwrap_or(&o.mac)
                        ));
                        n.speed_mbps = Some(b);
                    }
                    (None, Some(b)) => n.speed_mbps = Some(b),
                    _ => {}
                }
                if o.link != LinkState::Unknown {
                    n.link = o.link;
                }
                // The host's neighbour wins; where the host read LLDP and saw none, only a
                // neighbour it had reported itself goes (a BMC's reading stays).
                if o.lldp.is_some() {
                    n.lldp.clone_from(&o.lldp);
                } else if os.sources.lldp.is_some()
                    && n.lldp.as_ref().is_some_and(|l| l.source == LldpSource::Ssh)
                {
                    n.lldp = None;
                }
            }
            None => out.nics.push(o.clone()),
        }
    }
    if os.sources.lldp.is_some() {
        out.sources.lldp.clone_from(&os.sources.lldp);
    }
    // Disks: paths from the OS, matched by serial, else by size and model when unique.
    for o in &os.disks {
        let idx = out
            .disks
            .iter()
            .position(|d| {
                d.serial.is_some()
                    && d.serial.as_deref().map(str::trim) == o.serial.as_deref().map(str::trim)
            })
            .or_else(|| {
                let same: Vec<usize> = (0..out.disks.len())
                    .filter(|&i| {
                        out.disks[i].path.is_none()
                            && out.disks[i].capacity_bytes == o.capacity_bytes
                            && out.disks[i].model == o.model
                    })
                    .collect();
                (same.len() == 1).then(|| same[0])
            });
        match idx {
            Some(i) => {
                let d = &mut out.disks[i];
                if let (Some(seen), Some(derived)) = (
                    o.path.as_deref(),
                    d.derived.as_ref().and_then(|x| x.path.as_deref()),
                ) && seen != derived
                    && !d
                        .derived
                        .as_ref()
                        .is_some_and(|x| x.also.iter().any(|a| a == seen))
                {
                    notes.push(format!(
                        "disk {}: the OS names it {seen}, the BMC's data gave {derived}; the OS's name is used",
                        d.id
                    ));
                }
                d.path = o.path.clone().or(d.path.take());
                d.protocol = d.protocol.or(o.protocol);
                d.media = d.media.or(o.media);
            }
            None => out.disks.push(o.clone()),
        }
    }
    let nvme = |n: &Node| {
        n.disks
            .iter()
            .filter(|d| d.protocol == Some(Protocol::Nvme))
            .count()
    };
    if !bmc.disks.is_empty() && nvme(bmc) != nvme(os) {
        notes.push(format!(
            "BMC reports {} NVMe drive(s), the OS sees {}",
            nvme(bmc),
            nvme(os)
        ));
    }
    match (bmc.memory_gib, os.memory_gib) {
        (Some(a), Some(b)) if (a - b).abs() / a > 0.05 => notes.push(format!(
            "BMC reports {a:.0} GiB of memory, the OS sees {b:.0} GiB"
        )),
        (None, Some(b)) => out.memory_gib = Some(b),
        _ => {}
    }
    match (bmc.cores(), os.cores()) {
        (Some(a), Some(b)) if a != b => {
            notes.push(format!("BMC reports {a} CPU cores, the OS sees {b}"));
        }
        (None, Some(_)) => out.cpu.clone_from(&os.cpu),
        _ => {}
    }
    out.manufacturer = out.manufacturer.or(os.manufacturer.clone());
    out.model = out.model.or(os.model.clone());
    out.sources.ssh.clone_from(&os.sources.ssh);
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::redfish::{crawl, normalize};
    use crate::inventory::{Disk, Media, Nic};

    /// The Lenovo SR670 V2 mockup as the BMC sees it, paired with OS outputs of the same
    /// machine (MACs and drive serials from the mockup, names and paths as Linux shows them).
    #[test]
    fn lenovo_mockup_with_matching_os_view() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/reference/redfish-mockups/lenovo-thinksystem-sr670v2-xcc");
        let f = crawl::MockupDir::new(&dir);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let root = rt
            .block_on(crate::redfish::fetch::Fetch::get(&f, "/redfish/v1"))
            .unwrap();
        let raw = rt.block_on(crawl::crawl(&f, root, None)).unwrap();
        let mut notes = Vec::new();
        let bmc = normalize::node(&raw.systems[0], &raw.root, "https://bmc", "t0", &mut notes);
        let mut inv = Inventory {
            nodes: vec![bmc.clone()],
        };
        let os = Node {
            id: "J105958B".into(),
            serial: Some("J105958B".into()),
            memory_gib: Some(1007.5),
            cpu: bmc.cpu.clone(),
            nics: vec![
                Nic {
                    name: Some("eno1".into()),
                    mac: "00:62:0b:4c:28:4e".into(),
                    speed_mbps: Some(1000),
                    link: LinkState::Up,
                    adapter: None,
                    port: None,
                    lldp: None,
                },
                Nic {
                    name: Some("eno2".into()),
                    mac: "00:62:0b:4c:28:4f".into(),
                    speed_mbps: None,
                    link: LinkState::Down,
                    adapter: None,
                    port: None,
                    lldp: None,
                },
            ],
            disks: vec![
                Disk {
                    id: "nvme0n1".into(),
                    path: Some(
                        "/dev/disk/by-id/nvme-Micron_7450_MTFDKBA960TFR_233442ABA3AB".into(),
                    ),
                    capacity_bytes: Some(960_197_124_096),
                    media: Some(Media::Ssd),
                    protocol: Some(Protocol::Nvme),
                    model: Some("Micron_7450_MTFDKBA960TFR".into()),
                    serial: Some("233442ABA3AB".into()),
                    derived: None,
                },
                Disk {
                    id: "nvme2n1".into(),
                    path: Some(
                        "/dev/disk/by-id/nvme-Micron_7450_MTFDKBZ7T6TFR_233242BE0C46".into(),
                    ),
                    capacity_bytes: Some(7_681_501_126_656),
                    media: Some(Media::Ssd),
                    protocol: Some(Protocol::Nvme),
                    model: Some("Micron_7450_MTFDKBZ7T6TFR".into()),
                    serial: Some("233242BE0C46".into()),
                    derived: None,
                },
            ],
            sources: crate::inventory::Sources {
                redfish: None,
                ssh: Some("t1".into()),
                lldp: None,
            },
            ..Node::default()
        };
        assert_eq!(
            find_match(&inv, &os).map(|n| n.id.as_str()),
            Some("J105958B")
        );
        let (m, notes) = merge(&bmc, &os);
        let eno1 = m
            .nics
            .iter()
            .find(|n| n.mac == "00:62:0b:4c:28:4e")
            .unwrap();
        assert_eq!(
            (eno1.name.as_deref(), eno1.speed_mbps, eno1.link),
            (Some("eno1"), Some(1000), LinkState::Up)
        );
        let d = m
            .disks
            .iter()
            .find(|d| d.serial.as_deref() == Some("233442ABA3AB"))
            .unwrap();
        assert_eq!(
            d.path.as_deref(),
            Some("/dev/disk/by-id/nvme-Micron_7450_MTFDKBA960TFR_233442ABA3AB")
        );
        assert_eq!(m.disks.len(), 4, "no duplicate disks");
        assert!(
            notes
                .iter()
                .any(|n| n == "BMC reports 4 NVMe drive(s), the OS sees 2"),
            "{notes:?}"
        );
        assert!(
            !notes.iter().any(|n| n.contains("memory")),
            "1007.5 vs 1024 GiB is within 5 %"
        );
        assert_eq!(m.sources.redfish.as_deref(), Some("t0"));
        assert_eq!(m.sources.ssh.as_deref(), Some("t1"));
        // Match by MAC when the OS cannot read the serial (not root).
        inv.nodes[0].serial = None;
        let mut anon = os.clone();
        anon.serial = None;
        assert!(find_match(&inv, &anon).is_some());
    }
}
