//! Which ports serve which network and which disks the installer uses, for one node.
//!
//! Ports: an explicit per-node annotation (`annotations.networks.<net>: [names]`) wins.
//! Otherwise networks take ports in profile order; each takes unused ports of its speed,
//! those with link up first (a port nobody cabled is not chosen over one that is), then by
//! (port number, adapter) so that a two-port bond lands on port 0 of two different
//! adapters when it can (a bond that survives an adapter failure). When too few ports of the
//! right speed exist, faster ports are used next, then slower ones, and `check` reports it.
//!
//! Disks: the OS disk is the smallest disk that meets the OS minimum and is not needed as a
//! data disk (the M.2 boot device of a compute node); data disks are the rest that meet the
//! data spec, in id order (all of them: a fifth NVMe is Longhorn capacity too).

use super::model::{NetworkSpec, Profile};
use crate::inventory::{Disk, Nic, Node};
use crate::vocab::NetworkKind;

/// The ports chosen for one network.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PortChoice {
    pub(crate) network: NetworkKind,
    pub(crate) spec: NetworkSpec,
    /// Indexes into `node.nics`.
    pub(crate) ports: Vec<usize>,
    /// Names from an annotation that match no NIC of the node.
    pub(crate) unknown_names: Vec<String>,
    pub(crate) from_annotation: bool,
}

pub(crate) fn select_ports(node: &Node, profile: &Profile) -> Vec<PortChoice> {
    let mut used = vec![false; node.nics.len()];
    // Annotated networks reserve their ports first so the automatic choice avoids them.
    let mut out: Vec<Option<PortChoice>> = vec![None; profile.networks.len()];
    for (k, spec) in profile.networks.iter().enumerate() {
        if let Some(names) = node.annotations.networks.get(&spec.network) {
            let mut ports = Vec::new();
            let mut unknown_names = Vec::new();
            for name in names {
                match node
                    .nics
                    .iter()
                    .position(|n| n.name.as_deref() == Some(name) || n.mac == *name)
                {
                    Some(i) => {
                        used[i] = true;
                        ports.push(i);
                    }
                    None => unknown_names.push(name.clone()),
                }
            }
            out[k] = Some(PortChoice {
                network: spec.network,
                spec: spec.clone(),
                ports,
                unknown_names,
                from_annotation: true,
            });
        }
    }
    for (k, spec) in profile.networks.iter().enumerate() {
        if out[k].is_some() {
            continue;
        }
        let mut candidates: Vec<usize> = (0..node.nics.len()).filter(|&i| !used[i]).collect();
        candidates.sort_by_key(|&i| {
            let n = &node.nics[i];
            (
                speed_rank(n, spec.speed_mbps),
                link_rank(n),
                n.port,
                n.adapter.clone(),
                n.name.clone(),
                n.mac.clone(),
            )
        });
        let ports: Vec<usize> = candidates.into_iter().take(spec.ports as usize).collect();
        for &i in &ports {
            used[i] = true;
        }
        out[k] = Some(PortChoice {
            network: spec.network,
            spec: spec.clone(),
            ports,
            unknown_names: Vec::new(),
            from_annotation: false,
        });
    }
    out.into_iter().flatten().collect()
}

/// 0: exactly the wanted speed; 1: faster; 2: unknown; 3: slower.
fn speed_rank(nic: &Nic, want: u32) -> u8 {
    match nic.speed_mbps {
        Some(s) if s == want => 0,
        Some(s) if s > want => 1,
        None => 2,
        Some(_) => 3,
    }
}

/// Among ports of one speed rank, cabled ones first: up, unknown, then down.
fn link_rank(nic: &Nic) -> u8 {
    match nic.link {
        crate::inventory::LinkState::Up => 0,
        crate::inventory::LinkState::Unknown => 1,
        crate::inventory::LinkState::Down => 2,
    }
}

/// The disks the installer will use.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct DiskChoice {
    /// Index into `node.disks`.
    pub(crate) os: Option<usize>,
    pub(crate) data: Vec<usize>,
    pub(crate) from_annotation: bool,
}

fn fits(d: &Disk, min: u64, proto: Option<crate::inventory::Protocol>) -> bool {
    d.capacity_bytes.is_some_and(|c| c >= min) && proto.is_none_or(|p| d.protocol == Some(p))
}

/// The disks the profile would pick, then the annotations on top: an annotated install
/// disk takes the OS role (and leaves the data disks), an annotated data disk comes first
/// among them. Annotations name a disk by any of its known device paths; one that names
/// none leaves its role empty (the OS disk) or is skipped (data), and `check` says so.
pub(crate) fn select_disks(node: &Node, profile: &Profile) -> DiskChoice {
    let auto = auto_select(node, profile);
    let ann = &node.annotations;
    if ann.install_device.is_none() && ann.data_disk.is_none() {
        return auto;
    }
    let by_ref = |r: &str| {
        node.disks
            .iter()
            .position(|d| d.known_paths().any(|p| p == r))
    };
    let data_fits = |d: &Disk| {
        profile
            .data_disks
            .as_ref()
            .is_some_and(|s| fits(d, s.min_size.0, s.protocol))
    };
    let os = match ann.install_device.as_deref() {
        Some(r) => by_ref(r),
        None => auto.os,
    };
    let mut data: Vec<usize> = if ann.install_device.is_some() {
        let mut v: Vec<usize> = (0..node.disks.len())
            .filter(|&i| Some(i) != os && data_fits(&node.disks[i]))
            .collect();
        v.sort_by_key(|&i| node.disks[i].id.clone());
        v
    } else {
        auto.data
    };
    if let Some(k) = ann.data_disk.as_deref().and_then(by_ref)
        && Some(k) != os
    {
        data.retain(|&i| i != k);
        data.insert(0, k);
    }
    DiskChoice {
        os,
        data,
        from_annotation: true,
    }
}

fn auto_select(node: &Node, profile: &Profile) -> DiskChoice {
    let data_fits = |d: &Disk| {
        profile
            .data_disks
            .as_ref()
            .is_some_and(|s| fits(d, s.min_size.0, s.protocol))
    };
    let want_data = profile.data_disks.as_ref().map_or(0, |s| s.count as usize);
    let data_candidates = node.disks.iter().filter(|d| data_fits(d)).count();
    // A disk that could be data is used for the OS only when there are more of them than the
    // profile needs (or the profile wants no data disk).
    let spare_data = data_candidates > want_data;
    let mut os_candidates: Vec<usize> = (0..node.disks.len())
        .filter(|&i| {
            let d = &node.disks[i];
            fits(d, profile.os_disk.min_size.0, profile.os_disk.protocol)
                && (!data_fits(d) || spare_data)
        })
        .collect();
    os_candidates.sort_by_key(|&i| {
        let d = &node.disks[i];
        (data_fits(d), d.capacity_bytes, d.id.clone())
    });
    let os = os_candidates.first().copied();
    let mut data: Vec<usize> = (0..node.disks.len())
        .filter(|&i| Some(i) != os && data_fits(&node.disks[i]))
        .collect();
    data.sort_by_key(|&i| node.disks[i].id.clone());
    DiskChoice {
        os,
        data,
        from_annotation: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{LinkState, Protocol};
    use crate::profile::{ByteSize, CpuSpec, DataDisks, DiskSpec, MemorySpec, Role};

    fn nic(name: &str, adapter: &str, port: u32, speed: u32) -> Nic {
        Nic {
            name: Some(name.into()),
            mac: format!("02:00:00:00:{:02x}:{:02x}", adapter.len(), port),
            speed_mbps: Some(speed),
            link: LinkState::Up,
            adapter: Some(adapter.into()),
            port: Some(port),
            lldp: None,
        }
    }

    fn profile() -> Profile {
        Profile {
            role: Role::Compute,
            description: String::new(),
            cpu: CpuSpec {
                min_cores: 64,
                min_threads: None,
            },
            memory: MemorySpec { min_gib: 512.0 },
            os_disk: DiskSpec {
                min_size: ByteSize(240_000_000_000),
                protocol: None,
            },
            data_disks: Some(DataDisks {
                count: 4,
                min_size: ByteSize(3_840_000_000_000),
                protocol: Some(Protocol::Nvme),
            }),
            networks: vec![
                NetworkSpec {
                    network: NetworkKind::Management,
                    ports: 2,
                    speed_mbps: 10_000,
                },
                NetworkSpec {
                    network: NetworkKind::Vm,
                    ports: 2,
                    speed_mbps: 25_000,
                },
                NetworkSpec {
                    network: NetworkKind::Storage,
                    ports: 2,
                    speed_mbps: 25_000,
                },
            ],
            bios: Default::default(),
            gpus: None,
        }
    }

    #[test]
    fn bonds_spread_across_adapters() {
        let node = Node {
            id: "n".into(),
            nics: vec![
                nic("eno1", "lom", 0, 10_000),
                nic("eno2", "lom", 1, 10_000),
                nic("ens1f0", "slot1", 0, 25_000),
                nic("ens1f1", "slot1", 1, 25_000),
                nic("ens2f0", "slot2", 0, 25_000),
                nic("ens2f1", "slot2", 1, 25_000),
            ],
            ..Node::default()
        };
        let names = |c: &PortChoice| -> Vec<String> {
            c.ports
                .iter()
                .map(|&i| node.nics[i].name.clone().unwrap())
                .collect()
        };
        let choice = select_ports(&node, &profile());
        assert_eq!(names(&choice[0]), ["eno1", "eno2"]);
        assert_eq!(names(&choice[1]), ["ens1f0", "ens2f0"]);
        assert_eq!(names(&choice[2]), ["ens1f1", "ens2f1"]);
    }

    #[test]
    fn annotation_overrides_and_reports_unknown_names() {
        let mut node = Node {
            id: "n".into(),
            nics: vec![
                nic("eno1", "lom", 0, 10_000),
                nic("eno2", "lom", 1, 10_000),
                nic("ens1f0", "slot1", 0, 25_000),
            ],
            ..Node::default()
        };
        node.annotations
            .networks
            .insert(NetworkKind::Vm, vec!["eno1".into(), "nope0".into()]);
        let choice = select_ports(&node, &profile());
        assert_eq!(choice[1].ports, vec![0]);
        assert_eq!(choice[1].unknown_names, vec!["nope0".to_string()]);
        // management could not take eno1 any more
        assert_eq!(choice[0].ports, vec![1, 2]);
    }

    #[test]
    fn os_disk_is_the_boot_device_not_a_data_disk() {
        let disk = |id: &str, size: u64, p: Protocol| Disk {
            id: id.into(),
            capacity_bytes: Some(size),
            protocol: Some(p),
            ..Disk::default()
        };
        let node = Node {
            id: "n".into(),
            disks: vec![
                disk("nvme0", 3_840_000_000_000, Protocol::Nvme),
                disk("nvme1", 3_840_000_000_000, Protocol::Nvme),
                disk("m2", 480_000_000_000, Protocol::Sata),
                disk("nvme2", 3_840_000_000_000, Protocol::Nvme),
                disk("nvme3", 3_840_000_000_000, Protocol::Nvme),
            ],
            ..Node::default()
        };
        let c = select_disks(&node, &profile());
        assert_eq!(c.os, Some(2));
        assert_eq!(c.data, vec![0, 1, 3, 4]);
    }
}
