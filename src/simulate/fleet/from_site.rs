//! A fleet read from a site's inventory (`fleet.site` in a scenario, or `--site`): every
//! node with its threads, memory, rack and the Longhorn data disks its role profile picks.
//! Its Longhorn zone is its `zone` annotation (rendered as `topology.kubernetes.io/zone`);
//! nodes without one share Longhorn's empty zone.

use super::topology::{Host, Topology};
use crate::plan::Inputs;
use crate::profile::select_disks;

pub(crate) fn site_topology(inputs: &Inputs, reserved_cpu: f64, reserved_mem: f64) -> Topology {
    let roles = crate::plan::roles::assign(&inputs.inventory, &inputs.profiles, &inputs.lock);
    let mut racks: Vec<String> = Vec::new();
    let mut hosts = Vec::new();
    let mut zones = Vec::new();
    let mut disk_names = Vec::new();
    for n in &inputs.inventory.nodes {
        zones.push(n.annotations.zone.clone().unwrap_or_default());
        let rack_name = n
            .annotations
            .rack
            .clone()
            .unwrap_or_else(|| "default".into());
        let rack = if let Some(i) = racks.iter().position(|r| *r == rack_name) {
            i
        } else {
            racks.push(rack_name);
            racks.len() - 1
        };
        let role = roles.get(&n.id).map(|d| d.role);
        let picked: Vec<usize> = match role.and_then(|r| inputs.profiles.get(r)) {
            Some(p) => select_disks(n, p).data,
            None => (0..n.disks.len()).collect(),
        };
        let (names, disks): (Vec<String>, Vec<f64>) = picked
            .iter()
            .filter_map(|&i| {
                let d = &n.disks[i];
                d.capacity_bytes.map(|b| (d.id.clone(), b as f64))
            })
            .unzip();
        disk_names.push(names);
        let threads = n
            .cpu
            .as_ref()
            .and_then(|c| c.threads.or(c.cores))
            .unwrap_or(0);
        hosts.push(Host {
            name: inputs
                .lock
                .get(&n.id)
                .map_or_else(|| n.id.clone(), |a| a.hostname.clone()),
            rack,
            cpu: (f64::from(threads) - reserved_cpu).max(0.0),
            mem_gib: (n.memory_gib.unwrap_or(0.0) - reserved_mem).max(0.0),
            disks,
        });
    }
    let power = vec![None; racks.len()];
    let mut topo = Topology::build(hosts, racks, &power);
    topo.set_zones(&zones);
    topo.disk_names = disk_names;
    topo
}
