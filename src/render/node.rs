//! One Harvester install config per node.

use std::collections::BTreeMap;

use super::installer::{
    HarvesterChartValues, HarvesterConfig, Install, Network, NetworkInterface, Os,
    StorageClassValues,
};
use crate::files::secrets::{self, Secret};
use crate::inventory::Node;
use crate::plan::Allocation;
use crate::profile::{NetworkKind, Profile, Role, select_disks, select_ports};
use crate::site::{Bond, BondMode, Site};

/// The header that carries a node's webhook key (see `secrets::webhook_key`).
pub(crate) const WEBHOOK_KEY_HEADER: &str = "X-Rackplan-Webhook-Key";

/// Secrets resolved for rendering; kept out of every other structure.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedSecrets {
    pub(crate) token: Secret,
    pub(crate) password: Option<Secret>,
    pub(crate) password_hash: Option<Secret>,
    pub(crate) ssh_keys: Vec<String>,
}

/// Linux bonding options as the installer passes them through (`map[string]string`).
pub(crate) fn bond_options(bond: &Bond) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("mode".to_string(), bond.mode.as_str().to_string());
    m.insert("miimon".to_string(), bond.miimon.to_string());
    if let Some(p) = bond.xmit_hash_policy
        && matches!(
            bond.mode,
            BondMode::Lacp | BondMode::BalanceXor | BondMode::BalanceTlb
        )
    {
        m.insert("xmit_hash_policy".to_string(), p.as_str().to_string());
    }
    m
}

/// NIC names a node bonds for one network, in bond order.
pub(crate) fn uplink_names(node: &Node, profile: &Profile, net: NetworkKind) -> Vec<String> {
    select_ports(node, profile)
        .into_iter()
        .find(|c| c.network == net)
        .map(|c| {
            c.ports
                .iter()
                .map(|&i| {
                    node.nics[i]
                        .name
                        .clone()
                        .unwrap_or_else(|| node.nics[i].mac.clone())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A short, stable id for a node's VM + storage uplink layout: nodes sharing it share one
/// VlanConfig per cluster network. FNV-1a, so it never changes between releases.
pub(crate) fn uplink_layout(node: &Node, profile: &Profile) -> Option<String> {
    if profile.role == Role::Witness {
        return None;
    }
    let text = format!(
        "vm={};storage={}",
        uplink_names(node, profile, NetworkKind::Vm).join(","),
        uplink_names(node, profile, NetworkKind::Storage).join(",")
    );
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    Some(format!("{h:08x}"))
}

pub(crate) const UPLINK_LABEL: &str = "rackplan.io/uplinks";
pub(crate) const RACK_LABEL: &str = "rackplan.io/rack";

/// Device path for the installer: the annotation (which `check` holds to the node's known
/// paths), else the OS's by-id path, else the one derived from the BMC's data.
fn disk_path(node: &Node, idx: Option<usize>, annotated: Option<&String>) -> Option<String> {
    annotated.cloned().or_else(|| {
        idx.and_then(|i| node.disks[i].device_path())
            .map(|(p, _)| p.to_string())
    })
}

pub(crate) struct NodeContext<'a> {
    pub(crate) site: &'a Site,
    pub(crate) node: &'a Node,
    pub(crate) alloc: &'a Allocation,
    pub(crate) profile: &'a Profile,
    pub(crate) create: bool,
    pub(crate) secrets: &'a ResolvedSecrets,
}

pub(crate) fn build(cx: &NodeContext<'_>) -> HarvesterConfig {
    let site = cx.site;
    let node = cx.node;
    let m = &site.management;
    let ports = select_ports(node, cx.profile);
    let mgmt = ports
        .iter()
        .find(|c| c.network == NetworkKind::Management)
        .map(|c| c.ports.clone())
        .unwrap_or_default();
    let interfaces = mgmt
        .iter()
        .map(|&i| NetworkInterface {
            name: node.nics[i].name.clone(),
            hw_addr: Some(node.nics[i].mac.clone()),
        })
        .collect();
    let disks = select_disks(node, cx.profile);
    let device = disk_path(node, disks.os, node.annotations.install_device.as_ref());
    let data_disk = if cx.profile.role == Role::Witness {
        None
    } else {
        disk_path(
            node,
            disks.data.first().copied(),
            node.annotations.data_disk.as_ref(),
        )
        .filter(|d| Some(d) != device.as_ref())
    };

    let mut labels: BTreeMap<String, String> = node.annotations.labels.clone();
    if let Some(zone) = &node.annotations.zone {
        labels.insert("topology.kubernetes.io/zone".into(), zone.clone());
    }
    if let Some(rack) = &node.annotations.rack {
        labels.insert(RACK_LABEL.into(), rack.clone());
    }
    if let Some(layout) = uplink_layout(node, cx.profile) {
        labels.insert(UPLINK_LABEL.into(), layout);
    }

    let password = match (&cx.secrets.password, &cx.secrets.password_hash) {
        (Some(pw), _) => Some(secrets::sha512_crypt(pw.expose(), &cx.alloc.password_salt)),
        (None, Some(h)) => Some(h.expose().to_string()),
        (None, None) => None,
    };
    let os = Os {
        ssh_authorized_keys: (!cx.secrets.ssh_keys.is_empty()).then(|| cx.secrets.ssh_keys.clone()),
        password,
        hostname: Some(cx.alloc.hostname.clone()),
        ntp_servers: Some(m.ntp.clone()),
        dns_nameservers: Some(m.dns.iter().map(ToString::to_string).collect()),
        labels: (!labels.is_empty()).then_some(labels),
        ..Os::default()
    };

    let mut install = Install {
        mode: Some(if cx.create { "create" } else { "join" }.into()),
        role: Some(cx.profile.role.harvester_role().into()),
        management_interface: Some(Network {
            interfaces,
            method: Some("static".into()),
            ip: Some(cx.alloc.management_ip.to_string()),
            subnet_mask: Some(m.cidr.netmask().to_string()),
            gateway: Some(m.gateway.to_string()),
            bond_options: Some(bond_options(&m.bond)),
            mtu: Some(u32::from(m.mtu.0)),
            vlan_id: m.vlan.map(|v| u32::from(v.0)),
            default_route: None,
        }),
        device,
        data_disk,
        iso_url: Some(site.harvester.iso_url.clone()),
        tty: site.harvester.console.clone(),
        // Install progress reaches `rackplan serve`, which shows it per node.
        webhooks: Some(
            ["STARTED", "SUCCEEDED", "FAILED"]
                .iter()
                .map(|ev| super::installer::Webhook {
                    event: (*ev).to_string(),
                    method: "POST".into(),
                    // `serve` accepts a node's webhooks only with this node's key.
                    headers: Some(BTreeMap::from([(
                        WEBHOOK_KEY_HEADER.to_string(),
                        vec![secrets::webhook_key(&cx.secrets.token, &cx.alloc.hostname)],
                    )])),
                    url: format!(
                        "{}/webhook/{}/{ev}",
                        site.harvester.pxe_base_url.trim_end_matches('/'),
                        cx.alloc.hostname
                    ),
                    payload: None,
                    insecure: None,
                    basic_auth: None,
                })
                .collect(),
        ),
        skipchecks: site.harvester.skip_preflight_checks.then_some(true),
        ..Install::default()
    };
    if cx.create {
        install.vip = Some(m.vip.to_string());
        install.vip_mode = Some("static".into());
        install.cluster_pod_cidr = Some(site.cluster.pod_cidr.to_string());
        install.cluster_service_cidr = Some(site.cluster.service_cidr.to_string());
        install.cluster_dns = Some(site.cluster.cluster_dns.to_string());
        install.harvester = Some(HarvesterChartValues {
            storage_class: Some(StorageClassValues {
                replica_count: Some(site.longhorn.replica_count),
            }),
            longhorn: None,
        });
    }
    HarvesterConfig {
        scheme_version: Some(1),
        server_url: (!cx.create).then(|| format!("https://{}:443", m.vip)),
        token: Some(cx.secrets.token.expose().to_string()),
        sans: None,
        os: Some(os),
        install: Some(install),
        system_settings: None,
    }
}
