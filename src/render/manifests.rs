//! Cluster manifests applied after the first node is up: cluster networks and their uplinks,
//! tenant VLAN networks, the storage network, Longhorn's rebuild limit.
//!
//! Shapes follow the CRDs in the reference folder; tests validate every document against
//! them. Harvester's own rules the CRDs do not hold (name lengths, one MTU per cluster
//! network, NAD MTU equal to its cluster network's) hold by construction: one site value
//! feeds every place that must agree.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::node::{UPLINK_LABEL, bond_options, uplink_layout, uplink_names};
use crate::inventory::Node;
use crate::profile::{NetworkKind, Profile};
use crate::site::{Bond, ClusterNetworkName, Mtu, Site};

const CN_LABEL: &str = "network.harvesterhci.io/clusternetwork";

/// One manifest file: its name under `manifests/` and its documents.
pub struct ManifestFile {
    pub name: &'static str,
    pub title: &'static str,
    pub docs: Vec<Value>,
}

fn vlan_bond(bond: &Bond) -> Value {
    // The VlanConfig CRD knows only mode and miimon; xmit_hash_policy cannot be set here.
    let opts = bond_options(bond);
    json!({"mode": opts["mode"], "miimon": bond.miimon})
}

fn cluster_network(name: &ClusterNetworkName) -> Value {
    json!({
        "apiVersion": "network.harvesterhci.io/v1beta1",
        "kind": "ClusterNetwork",
        "metadata": {"name": name.0},
    })
}

/// Nodes grouped by uplink layout: layout id -> (NIC names of the network, hostnames).
fn layouts(
    nodes: &[(&Node, &Profile, &str)],
    net: NetworkKind,
) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let mut out: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (node, profile, hostname) in nodes {
        let Some(layout) = uplink_layout(node, profile) else {
            continue;
        };
        let entry = out
            .entry(layout)
            .or_insert_with(|| (uplink_names(node, profile, net), Vec::new()));
        entry.1.push((*hostname).to_string());
    }
    out
}

fn vlan_configs(
    cn: &ClusterNetworkName,
    mtu: Mtu,
    bond: &Bond,
    groups: &BTreeMap<String, (Vec<String>, Vec<String>)>,
    purpose: &str,
) -> Vec<Value> {
    groups
        .iter()
        .map(|(layout, (nics, hosts))| {
            json!({
                "apiVersion": "network.harvesterhci.io/v1beta1",
                "kind": "VlanConfig",
                "metadata": {
                    "name": format!("{}-{layout}", cn.0),
                    "labels": {CN_LABEL: cn.0},
                },
                "spec": {
                    "clusterNetwork": cn.0,
                    "description": format!("{purpose} uplinks of {}", hosts.join(", ")),
                    "nodeSelector": {UPLINK_LABEL: layout},
                    "uplink": {
                        "nics": nics,
                        "linkAttributes": {"mtu": mtu.0},
                        "bondOptions": vlan_bond(bond),
                    },
                },
            })
        })
        .collect()
}

/// The storage-network setting value: minified JSON with the controller's key order, since
/// Harvester hashes the raw string.
pub fn storage_network_value(site: &Site) -> String {
    let s = &site.storage_network;
    let mut v = json!({
        "vlan": s.vlan.0,
        "clusterNetwork": s.cluster_network.0,
        "range": s.cidr.to_string(),
    });
    if !s.exclude.is_empty() {
        v["exclude"] = json!(
            s.exclude
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        );
    }
    serde_json::to_string(&v).expect("plain JSON")
}

pub fn build(site: &Site, nodes: &[(&Node, &Profile, &str)]) -> Vec<ManifestFile> {
    let mut files = Vec::new();
    let m = &site.management;
    if m.mtu.0 != 1500 {
        files.push(ManifestFile {
            name: "00-mgmt-clusternetwork.yaml",
            title: "MTU annotation of the built-in mgmt cluster network",
            docs: vec![json!({
                "apiVersion": "network.harvesterhci.io/v1beta1",
                "kind": "ClusterNetwork",
                "metadata": {
                    "name": "mgmt",
                    "annotations": {"network.harvesterhci.io/uplink-mtu": m.mtu.0.to_string()},
                },
            })],
        });
    }
    let vm = &site.vm_network;
    let sn = &site.storage_network;
    files.push(ManifestFile {
        name: "10-cluster-networks.yaml",
        title: "ClusterNetworks for the VM and storage networks",
        docs: vec![
            cluster_network(&vm.cluster_network),
            cluster_network(&sn.cluster_network),
        ],
    });
    let mut vcs = vlan_configs(
        &vm.cluster_network,
        vm.mtu,
        &vm.bond,
        &layouts(nodes, NetworkKind::Vm),
        "VM network",
    );
    vcs.extend(vlan_configs(
        &sn.cluster_network,
        sn.mtu,
        &sn.bond,
        &layouts(nodes, NetworkKind::Storage),
        "storage network",
    ));
    files.push(ManifestFile {
        name: "20-vlanconfigs.yaml",
        title: "VlanConfigs: bonded uplinks per node layout",
        docs: vcs,
    });
    let nads: Vec<Value> = vm
        .tenants
        .iter()
        .map(|t| {
            let config = json!({
                "cniVersion": "0.3.1",
                "name": t.name.0,
                "type": "bridge",
                "bridge": format!("{}-br", vm.cluster_network.0),
                "promiscMode": true,
                "vlan": t.vlan.0,
                "ipam": {},
                "mtu": vm.mtu.0,
            });
            json!({
                "apiVersion": "k8s.cni.cncf.io/v1",
                "kind": "NetworkAttachmentDefinition",
                "metadata": {
                    "name": t.name.0,
                    "namespace": t.namespace(),
                    "labels": {
                        CN_LABEL: vm.cluster_network.0,
                        "network.harvesterhci.io/type": "L2VlanNetwork",
                        "network.harvesterhci.io/vlan-id": t.vlan.0.to_string(),
                    },
                    "annotations": {
                        "network.harvesterhci.io/route": r#"{"mode":"auto","serverIPAddr":"","cidr":"","gateway":""}"#,
                    },
                },
                "spec": {"config": serde_json::to_string(&config).expect("plain JSON")},
            })
        })
        .collect();
    if !nads.is_empty() {
        files.push(ManifestFile {
            name: "30-tenant-networks.yaml",
            title: "one VLAN NetworkAttachmentDefinition per tenant",
            docs: nads,
        });
    }
    files.push(ManifestFile {
        name: "40-storage-network.yaml",
        title: "Harvester storage-network setting (stop all VMs before applying)",
        docs: vec![json!({
            "apiVersion": "harvesterhci.io/v1beta1",
            "kind": "Setting",
            "metadata": {"name": "storage-network"},
            "value": storage_network_value(site),
        })],
    });
    files.push(ManifestFile {
        name: "50-longhorn-settings.yaml",
        title: "Longhorn replica rebuild concurrency",
        docs: vec![json!({
            "apiVersion": "longhorn.io/v1beta2",
            "kind": "Setting",
            "metadata": {"name": "concurrent-replica-rebuild-per-node-limit", "namespace": "longhorn-system"},
            "value": site.longhorn.concurrent_replica_rebuild_per_node_limit.to_string(),
        })],
    });
    files
}

/// A multi-document YAML file.
pub fn to_yaml(file: &ManifestFile) -> String {
    let mut out = format!(
        "# {}\n# Generated by rackplan from site.yaml; re-render instead of editing.\n",
        file.title
    );
    for (i, doc) in file.docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&crate::files::yaml::to_string(doc));
    }
    out
}
