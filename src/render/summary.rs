//! `SUMMARY.md`: what was generated for which node, and what to do with it.

use std::fmt::Write as _;

use super::bundles;
use super::ipxe::config_url;
use super::manifests::ManifestFile;
use super::node::uplink_names;
use crate::inventory::Node;
use crate::plan::{Allocation, Inputs};
use crate::profile::{NetworkKind, Profile, select_disks};
use crate::site::ImageKind;

fn disk_label(node: &Node, i: Option<usize>) -> String {
    i.map_or("-".into(), |i| {
        let d = &node.disks[i];
        d.path.clone().unwrap_or_else(|| d.id.clone())
    })
}

pub(crate) fn render(
    inputs: &Inputs,
    planned: &[(&Node, &Profile, &Allocation)],
    manifests: &[ManifestFile],
    catalogue: &[String],
) -> String {
    let site = &inputs.site.site;
    let lock = &inputs.lock;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Site `{}`: Harvester {} install plan\n",
        site.name, site.harvester.version
    );
    let _ = writeln!(
        s,
        "Cluster VIP `{}` (server_url `https://{}:443`), management `{}` gateway `{}`, MTU {}, bond {}.\n",
        site.management.vip,
        site.management.vip,
        site.management.cidr,
        site.management.gateway,
        site.management.mtu,
        site.management.bond.mode.as_str()
    );
    let _ = writeln!(s, "## Nodes\n");
    let _ = writeln!(
        s,
        "| hostname | node | role | mode | address | rack | management bond | VM bond | storage bond | install disk | data disk |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
    let mut extra_disks = Vec::new();
    for (node, profile, a) in planned {
        let create = lock.cluster_init.as_deref() == Some(a.id.as_str());
        let disks = select_disks(node, profile);
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
            disk_label(node, disks.os),
            disk_label(node, disks.data.first().copied()),
        );
        if disks.data.len() > 1 {
            extra_disks.push(format!(
                "- {}: {}",
                a.hostname,
                disks.data[1..]
                    .iter()
                    .map(|&i| disk_label(node, Some(i)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
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
    if !catalogue.is_empty() {
        catalogue_steps(&mut s, inputs, catalogue);
    }
    let _ = writeln!(s, "\n## Notes\n");
    let _ = writeln!(
        s,
        "- Config files hold the cluster token and a password hash: they are written with mode 0600; serve them only to the node they belong to."
    );
    let _ = writeln!(
        s,
        "- The management bond uses {}; PXE boots over one member before the bond exists, so the switch ports need LACP fallback (individual mode) or the node's first boot stalls.",
        site.management.bond.mode.as_str()
    );
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
