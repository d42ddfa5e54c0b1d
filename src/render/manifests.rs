//! Cluster manifests applied after the first node is up: cluster networks and their uplinks,
//! the storage network and Longhorn's rebuild limit (day 0), tenant namespaces and their VLAN
//! networks, the golden images.
//!
//! Shapes follow the CRDs in the reference folder; tests validate every document against
//! them. Harvester's own rules the CRDs do not hold (name lengths, one MTU per cluster
//! network, NAD MTU equal to its cluster network's) hold by construction: one site value
//! feeds every place that must agree.
//!
//! The files are grouped in [`Bundle`]s, one folder each, in apply order. Fleet installs a
//! bundle as one Helm release, and Helm creates custom resources sorted by kind name, so an
//! order across kinds holds only where the kinds sort that way (ClusterNetwork before
//! VlanConfig, Namespace before anything) or where bundles wait for each other
//! (`dependsOn`). [`super::bundles`] writes the `kustomization.yaml` and `fleet.yaml` files.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::node::{UPLINK_LABEL, bond_options, uplink_layout, uplink_names};
use crate::inventory::Node;
use crate::profile::{NetworkKind, Profile};
use crate::site::{Bond, ClusterNetworkName, Mtu, Site};

const CN_LABEL: &str = "network.harvesterhci.io/clusternetwork";

/// Annotation that keeps an object when Helm (Fleet) uninstalls the bundle holding it.
pub(crate) const KEEP: (&str, &str) = ("helm.sh/resource-policy", "keep");
/// Label naming the site on every object rackplan creates (namespaces) and every bundle.
pub(crate) const SITE_LABEL: &str = "rackplan.io/site";

/// A group of manifests applied together, in this order. Each waits for the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Bundle {
    /// Cluster networks and their uplinks (VlanConfigs).
    Networks,
    /// The storage network and Longhorn settings: applied once, with every VM stopped.
    Day0,
    /// Tenant namespaces and their VLAN networks.
    Tenants,
    /// Golden VM images.
    Images,
}

impl Bundle {
    pub(crate) const ALL: [Bundle; 4] = [
        Bundle::Networks,
        Bundle::Day0,
        Bundle::Tenants,
        Bundle::Images,
    ];

    /// Folder under `manifests/`, also the bundle's label value.
    pub(crate) fn dir(self) -> &'static str {
        match self {
            Bundle::Networks => "networks",
            Bundle::Day0 => "day0",
            Bundle::Tenants => "tenants",
            Bundle::Images => "images",
        }
    }

    /// The bundle this one waits for, and why.
    pub(crate) fn depends_on(self) -> Option<(Bundle, &'static str)> {
        match self {
            Bundle::Networks => None,
            Bundle::Day0 => Some((
                Bundle::Networks,
                "the storage-network setting is refused until its cluster network's VlanConfigs cover every node and are ready",
            )),
            Bundle::Tenants => Some((
                Bundle::Day0,
                "tenant VMs would block the storage-network change, which needs every VM stopped",
            )),
            Bundle::Images => Some((
                Bundle::Day0,
                "the storage-network change waits for image downloads, so images come after it",
            )),
        }
    }
}

/// One manifest file: its bundle, its name in the bundle's folder and its documents.
pub(crate) struct ManifestFile {
    pub(crate) bundle: Bundle,
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) docs: Vec<Value>,
}

impl ManifestFile {
    /// Path under `manifests/`.
    pub(crate) fn path(&self) -> String {
        format!("{}/{}", self.bundle.dir(), self.name)
    }
}

/// Namespaces that exist in every Harvester cluster: never created, never owned.
const BUILT_IN_NAMESPACES: [&str; 8] = [
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "harvester-public",
    "harvester-system",
    "longhorn-system",
    "cattle-system",
];

/// A Namespace object for each namespace that is not built in, labelled as the site's and
/// kept when the bundle is removed (deleting it would delete every VM in it).
fn namespaces<'a>(
    site: &Site,
    names: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Vec<Value> {
    let mut by_ns: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (ns, tenant) in names {
        let e = by_ns.entry(ns).or_default();
        e.extend(tenant);
    }
    by_ns
        .into_iter()
        .filter(|(ns, _)| !BUILT_IN_NAMESPACES.contains(ns))
        .map(|(ns, tenants)| {
            let mut labels = json!({SITE_LABEL: site.name.0});
            if let [t] = tenants.as_slice() {
                labels["rackplan.io/tenant"] = json!(t);
            }
            json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": ns,
                    "labels": labels,
                    "annotations": {KEEP.0: KEEP.1},
                },
            })
        })
        .collect()
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
pub(crate) fn storage_network_value(site: &Site) -> String {
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

pub(crate) fn build(site: &Site, nodes: &[(&Node, &Profile, &str)]) -> Vec<ManifestFile> {
    let mut files = Vec::new();
    let m = &site.management;
    if m.mtu.0 != 1500 {
        files.push(ManifestFile {
            bundle: Bundle::Networks,
            name: "00-mgmt-clusternetwork.yaml",
            title: "MTU annotation of the built-in mgmt cluster network",
            docs: vec![json!({
                "apiVersion": "network.harvesterhci.io/v1beta1",
                "kind": "ClusterNetwork",
                "metadata": {
                    "name": "mgmt",
                    "annotations": {
                        "network.harvesterhci.io/uplink-mtu": m.mtu.0.to_string(),
                        KEEP.0: KEEP.1,
                    },
                },
            })],
        });
    }
    let vm = &site.vm_network;
    let sn = &site.storage_network;
    files.push(ManifestFile {
        bundle: Bundle::Networks,
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
        bundle: Bundle::Networks,
        name: "20-vlanconfigs.yaml",
        title: "VlanConfigs: bonded uplinks per node layout",
        docs: vcs,
    });
    files.push(ManifestFile {
        bundle: Bundle::Day0,
        name: "30-storage-network.yaml",
        title: "Harvester storage-network setting (day 0: every VM stopped)",
        docs: vec![json!({
            "apiVersion": "harvesterhci.io/v1beta1",
            "kind": "Setting",
            "metadata": {"name": "storage-network", "annotations": {KEEP.0: KEEP.1}},
            "value": storage_network_value(site),
        })],
    });
    files.push(ManifestFile {
        bundle: Bundle::Day0,
        name: "40-longhorn-settings.yaml",
        title: "Longhorn replica rebuild concurrency",
        docs: vec![json!({
            "apiVersion": "longhorn.io/v1beta2",
            "kind": "Setting",
            "metadata": {
                "name": "concurrent-replica-rebuild-per-node-limit",
                "namespace": "longhorn-system",
                "annotations": {KEEP.0: KEEP.1},
            },
            "value": site.longhorn.concurrent_replica_rebuild_per_node_limit.to_string(),
        })],
    });
    let ns = namespaces(
        site,
        vm.tenants
            .iter()
            .map(|t| (t.namespace(), Some(t.name.0.as_str()))),
    );
    if !ns.is_empty() {
        files.push(ManifestFile {
            bundle: Bundle::Tenants,
            name: "50-namespaces.yaml",
            title: "tenant namespaces (kept when the bundle is removed)",
            docs: ns,
        });
    }
    let nads: Vec<Value> = vm.tenants.iter().map(|t| tenant_nad(vm, t)).collect();
    if !nads.is_empty() {
        files.push(ManifestFile {
            bundle: Bundle::Tenants,
            name: "60-tenant-networks.yaml",
            title: "one VLAN NetworkAttachmentDefinition per tenant",
            docs: nads,
        });
    }
    if !site.images.is_empty() {
        let ns = namespaces(site, site.images.iter().map(|i| (i.namespace(), None)));
        let mut docs = ns;
        docs.extend(site.images.iter().map(super::images::manifest));
        files.push(ManifestFile {
            bundle: Bundle::Images,
            name: "70-images.yaml",
            title: "golden VM images (VirtualMachineImage, downloaded and checked by SHA-512)",
            docs,
        });
    }
    files
}

fn tenant_nad(vm: &crate::site::VmNetwork, t: &crate::site::Tenant) -> Value {
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
}

/// A multi-document YAML file.
pub(crate) fn to_yaml(file: &ManifestFile) -> String {
    let header = format!(
        "# {}\n# Generated by rackplan from site.yaml; re-render instead of editing.\n",
        file.title
    );
    yaml_stream(&header, &file.docs)
}

/// A YAML stream: the header (comment lines), then the documents separated by `---`.
pub(crate) fn yaml_stream(header: &str, docs: &[Value]) -> String {
    let mut out = header.to_string();
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&crate::files::yaml::to_string(doc));
    }
    out
}
