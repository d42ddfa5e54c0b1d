//! `SUMMARY.md`: what was generated for which node, and what to do with it. Every value it
//! shows of a node (install and data disk, bond mode) is read off the install config and
//! the manifests just built, never worked out a second time, so the two cannot disagree.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::bundles;
use super::installer::HarvesterConfig;
use super::ipxe::config_url;
use super::manifests::ManifestFile;
use super::node::uplink_names;
use crate::inventory::Node;
use crate::plan::{Allocation, Finding, Inputs};
use crate::profile::{NetworkKind, Profile, select_disks};
use crate::site::ImageKind;

/// What a node's install config says, as SUMMARY.md shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Installed {
    pub(crate) device: Option<String>,
    pub(crate) data_disk: Option<String>,
    /// The management bond's `mode` in the config's `bond_options`.
    pub(crate) bond_mode: Option<String>,
}

impl Installed {
    pub(crate) fn of(cfg: &HarvesterConfig) -> Installed {
        let install = cfg.install.as_ref();
        Installed {
            device: install.and_then(|i| i.device.clone()),
            data_disk: install.and_then(|i| i.data_disk.clone()),
            bond_mode: install
                .and_then(|i| i.management_interface.as_ref())
                .and_then(|m| m.bond_options.as_ref())
                .and_then(|o| o.get("mode").cloned()),
        }
    }
}

/// Everything a render made that SUMMARY.md describes.
pub(crate) struct Rendered<'a> {
    /// The planned nodes, in the order the configs were built.
    pub(crate) planned: &'a [(&'a Node, &'a Profile, &'a Allocation)],
    /// Each planned node's config, in the same order.
    pub(crate) installed: &'a [Installed],
    pub(crate) manifests: &'a [ManifestFile],
    pub(crate) catalogue: &'a [String],
    /// Findings people acknowledged in nodes.yaml, rendered in spite of.
    pub(crate) acknowledged: &'a [Finding],
}

/// The bond mode of each cluster network's VlanConfigs (`spec.uplink.bondOptions.mode`).
fn vlan_bond_modes(manifests: &[ManifestFile]) -> BTreeMap<String, String> {
    manifests
        .iter()
        .flat_map(|m| &m.docs)
        .filter(|d| d["kind"] == "VlanConfig")
        .filter_map(|d| {
            Some((
                d.pointer("/spec/clusterNetwork")?.as_str()?.to_string(),
                d.pointer("/spec/uplink/bondOptions/mode")?
                    .as_str()?
                    .to_string(),
            ))
        })
        .collect()
}

/// Text people wrote, as one Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// What a bond mode asks of the switch ports, and (for the management bond) of the first
/// boot, which PXE-boots over one member before the bond exists.
fn bond_advice(mode: &str) -> (&'static str, &'static str) {
    match mode {
        "802.3ad" => (
            "each bond's two switch ports form one LACP port channel (MLAG across two switches)",
            "the management port channel needs LACP fallback (individual mode), or the node's first boot stalls",
        ),
        "active-backup" => (
            "one member carries the traffic and the other takes over: the switch needs no port channel and no LACP; give both ports the same VLANs",
            "give the install VLAN untagged on both management ports, since PXE boots over whichever one the firmware picks",
        ),
        "balance-rr" | "balance-xor" | "broadcast" => (
            "each bond's switch ports form a static port channel (no LACP)",
            "a static channel may not forward PXE over one member: give the install VLAN untagged to the first management port, or boot from virtual media (`rackplan boot`)",
        ),
        "balance-tlb" | "balance-alb" => (
            "the bond balances by itself: the switch needs no port channel; give both ports the same VLANs",
            "give the install VLAN untagged on both management ports",
        ),
        _ => (
            "see the Linux bonding documentation for what the switch ports need",
            "",
        ),
    }
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

pub(crate) fn render(inputs: &Inputs, r: &Rendered<'_>) -> String {
    let site = &inputs.site.site;
    let lock = &inputs.lock;
    let manifests = r.manifests;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Site `{}`: Harvester {} install plan\n",
        site.name, site.harvester.version
    );
    let mgmt_modes: std::collections::BTreeSet<&str> = r
        .installed
        .iter()
        .filter_map(|i| i.bond_mode.as_deref())
        .collect();
    let mgmt_mode = mgmt_modes.into_iter().collect::<Vec<_>>().join(", ");
    let vlan_modes = vlan_bond_modes(manifests);
    let _ = writeln!(
        s,
        "Cluster VIP `{}` (server_url `https://{}:443`), management `{}` gateway `{}`, MTU {}, management bond {}.\n",
        site.management.vip,
        site.management.vip,
        site.management.cidr,
        site.management.gateway,
        site.management.mtu,
        if mgmt_mode.is_empty() {
            "-"
        } else {
            mgmt_mode.as_str()
        }
    );
    let _ = writeln!(s, "## Nodes\n");
    let _ = writeln!(
        s,
        "| hostname | node | role | mode | address | rack | management bond | VM bond | storage bond | install disk | data disk |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
    let mut extra_disks = Vec::new();
    for ((node, profile, a), inst) in r.planned.iter().zip(r.installed) {
        let create = lock.cluster_init.as_deref() == Some(a.id.as_str());
        let nets = |k| {
            let v = uplink_names(node, profile, k);
            if v.is_empty() {
                "-".to_string()
            } else {
                v.join(" + ")
            }
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} |",
            a.hostname,
            a.id,
            a.role,
            profile.role.harvester_role(),
            if create { "create" } else { "join" },
            a.management_ip,
            node.annotations.rack.as_deref().unwrap_or("-"),
            nets(NetworkKind::Management),
            nets(NetworkKind::Vm),
            nets(NetworkKind::Storage),
            inst.device.as_deref().unwrap_or("-"),
            inst.data_disk.as_deref().unwrap_or("-"),
        );
        // The data disks past the one the installer takes, by the path the config would
        // give them.
        let disks = select_disks(node, profile);
        let more: Vec<String> = disks
            .data
            .iter()
            .filter_map(|&i| node.disks[i].device_path().map(|(p, _)| p.to_string()))
            .filter(|p| Some(p) != inst.data_disk.as_ref() && Some(p) != inst.device.as_ref())
            .collect();
        if !more.is_empty() {
            extra_disks.push(format!("- {}: {}", a.hostname, more.join(", ")));
        }
    }
    let _ = writeln!(
        s,
        "\nEach node boots `nodes/<hostname>/boot.ipxe`, which fetches `{}`.\n",
        config_url(site, "<hostname>")
    );
    let _ = writeln!(s, "## Install order\n");
    let _ = writeln!(
        s,
        "1. Install the `create` node first and wait until the VIP answers."
    );
    let _ = writeln!(
        s,
        "2. Install the other nodes (any order); Harvester promotes the management nodes."
    );
    let _ = writeln!(
        s,
        "3. Stop here until the cluster is ready and **no VM runs**: the storage-network setting (day 0) is accepted only while every VM is stopped and every volume detached.\n"
    );
    let _ = writeln!(
        s,
        "4. Apply the manifests, either with kubectl (kubectl 1.27 or later; `sortOptions: fifo` keeps the order below):\n\n   ```\n   kubectl apply -k manifests/\n   ```\n\n   The storage-network setting is refused until the storage VlanConfigs are ready on every node; if it is, wait a minute and run the same command again (applying twice changes nothing).\n"
    );
    let _ = writeln!(
        s,
        "   One bundle alone: `kubectl apply -k manifests/<bundle>` (each folder is a kustomization of its own), in the order below.\n"
    );
    let _ = writeln!(
        s,
        "   Or with Fleet, from a Git repository holding this folder: one bundle per folder, each waiting for the one before (`dependsOn` by label, because Helm sorts custom resources by kind inside a bundle). Apply a GitRepo like this one on the Harvester cluster (its embedded Fleet deploys `fleet-local` GitRepos to the cluster itself; set `repo` and `branch` to yours):\n\n   ```yaml\n   apiVersion: fleet.cattle.io/v1alpha1\n   kind: GitRepo\n   metadata:\n     name: {}-manifests\n     namespace: fleet-local\n   spec:\n     repo: https://git.example.com/infra/{}.git\n     branch: main\n     paths:",
        inputs.site.site.name, inputs.site.site.name
    );
    for b in bundles::present(manifests) {
        let _ = writeln!(s, "       - manifests/{}", b.dir());
    }
    let _ = writeln!(
        s,
        "   ```\n\n   Every bundle takes ownership of objects that already exist (`mgmt`, the settings); namespaces, `mgmt` and the settings carry `helm.sh/resource-policy: keep`, so removing a bundle never deletes them.\n"
    );
    let _ = writeln!(s, "   Apply order:\n");
    for b in bundles::present(manifests) {
        let wait = b
            .depends_on()
            .map(|(d, why)| format!(" (after `{}`: {why})", d.dir()))
            .unwrap_or_default();
        let _ = writeln!(s, "   - bundle `{}`{wait}", b.dir());
        for m in manifests.iter().filter(|m| m.bundle == b) {
            let _ = writeln!(s, "     - `manifests/{}`: {}", m.path(), m.title);
        }
    }
    let catalogue = r.catalogue;
    if !catalogue.is_empty() {
        catalogue_steps(&mut s, inputs, catalogue);
    }
    let _ = writeln!(s, "\n## Notes\n");
    let _ = writeln!(
        s,
        "- Config files hold the cluster token and a password hash: they are written with mode 0600; serve them only to the node they belong to."
    );
    // Each bond mode in use, with the networks using it, and what it asks of the switch.
    let mut by_mode: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    if !mgmt_mode.is_empty() {
        by_mode
            .entry(mgmt_mode.as_str())
            .or_default()
            .push("management".into());
    }
    for (net, cn) in [
        ("VM", &site.vm_network.cluster_network.0),
        ("storage", &site.storage_network.cluster_network.0),
    ] {
        if let Some(m) = vlan_modes.get(cn) {
            by_mode
                .entry(m.as_str())
                .or_default()
                .push(format!("{net} (`{cn}`)"));
        }
    }
    for (mode, nets) in &by_mode {
        let (switch, pxe) = bond_advice(mode);
        let _ = writeln!(
            s,
            "- The {} bond{} use{} {mode}: {switch}.{}",
            and_list(nets),
            if nets.len() > 1 { "s" } else { "" },
            if nets.len() > 1 { "" } else { "s" },
            if nets[0] == "management" && !pxe.is_empty() {
                format!(" PXE boots over one member before the bond exists: {pxe}.")
            } else {
                String::new()
            }
        );
    }
    if site.management.vlan.is_some() {
        let _ = writeln!(
            s,
            "- The management network is tagged (VLAN {}): PXE needs the install VLAN untagged (native) on the node's switch ports.",
            site.management.vlan.map_or(0, |v| v.0)
        );
    }
    if !extra_disks.is_empty() {
        let _ = writeln!(
            s,
            "- The installer takes one data disk. Add these to Longhorn afterwards (Hosts > Edit Config > Disks, or the `auto-disk-provision-paths` setting):"
        );
        for l in extra_disks {
            let _ = writeln!(s, "  {l}");
        }
    }
    if !r.acknowledged.is_empty() {
        let _ = writeln!(s, "\n## Acknowledged findings\n");
        let _ = writeln!(
            s,
            "Rendered in spite of these findings, which people acknowledged in nodes.yaml (`annotations.acknowledged`); `rackplan check` lists them too.\n"
        );
        let _ = writeln!(s, "| node | severity | finding | reason | until |");
        let _ = writeln!(s, "|---|---|---|---|---|");
        for f in r.acknowledged {
            let a = f.acknowledged.as_ref().expect("acknowledged findings");
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                cell(&f.node),
                f.severity,
                cell(&f.what),
                cell(&a.reason),
                cell(a.until.as_deref().unwrap_or("-"))
            );
        }
    }
    s
}

/// Steps 5 and 6: the cluster templates with the promises they carry, and the operator.
fn catalogue_steps(s: &mut String, inputs: &Inputs, catalogue: &[String]) {
    let site = &inputs.site.site;
    let _ = writeln!(
        s,
        "\n5. On the Rancher server, the cluster templates (one per shape the capacity review checked): {}. Each is a `Cluster` with one `HarvesterConfig` per machine pool; apply one to create that cluster, or copy it per team. `rackplan check --catalogue` lists the promises each keeps.",
        catalogue
            .iter()
            .map(|c| format!("`catalogue/{c}.yaml`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        s,
        "   - Audit: every control-plane node logs by {} (`audit-policy-file` of `machineGlobalConfig`: Rancher writes it to each control-plane node before kube-apiserver starts).",
        inputs.site.compliance.audit_policy_origin
    );
    match site
        .compliance
        .as_ref()
        .and_then(|c| c.snapshot_target.as_ref())
    {
        Some(t) => {
            let _ = writeln!(
                s,
                "   - etcd snapshots: also sent to bucket `{}` at {} with the cloud credential `{}` (create that S3 credential in Rancher first).",
                t.bucket,
                t.endpoint.as_deref().unwrap_or("s3.amazonaws.com"),
                t.cloud_credential
            );
        }
        None => {
            let _ = writeln!(
                s,
                "   - etcd snapshots: **stay on each cluster's control-plane VMs**, lost at expiry and with the VMs; name a `compliance.snapshot_target` to send them off the cluster."
            );
        }
    }
    let image = site
        .catalogue
        .as_ref()
        .and_then(|c| c.image.as_ref())
        .and_then(|n| site.images.iter().find(|i| i.name.0 == *n))
        .or_else(|| site.images.first());
    if let Some(img) = image {
        let _ = match img.kind {
            ImageKind::Prepared => writeln!(
                s,
                "   - Boot: image `{}` is prepared; its VMs get no user-data and install nothing at boot.",
                img.name
            ),
            ImageKind::Generic => writeln!(
                s,
                "   - Boot: image `{}` is generic, so every VM refreshes its package index and installs qemu-guest-agent at first boot (the Rancher machine driver reads the VM's address from it): these shapes boot minutes slower than from a prepared image (the reference design: about 8 minutes against about 90 seconds) and need a reachable package mirror.",
                img.name
            ),
        };
    }
    let _ = writeln!(
        s,
        "\n6. The request operator, in Rancher's cluster: `kubectl apply -k operator/` (its CRD, RBAC, the catalogue and scenario as a ConfigMap, a two-replica Deployment, its PodDisruptionBudget and metrics Service), or `kubectl apply -k operator/with-monitoring/` to add the Prometheus Operator ServiceMonitor and alerts. On a management host instead: `operator/systemd/rackplan-operator.service`."
    );
}
