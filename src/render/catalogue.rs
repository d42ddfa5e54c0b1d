//! The Rancher catalogue: for each cluster shape of the scenario named in `catalogue:`, a
//! `provisioning.cattle.io/v1` `Cluster` and one `rke-machine-config.cattle.io/v1`
//! `HarvesterConfig` per machine pool, so that what self-service offers is exactly what the
//! capacity review checked (the simulator's importer reads these files back to the same
//! shapes; a test holds it to that).
//!
//! Encodings follow what Rancher's UI writes: integer driver flags as decimal strings
//! (`cpuCount`, `memorySize` in GiB), `diskInfo` and `networkInfo` as plain JSON strings,
//! `vmAffinity` and `userData` as base64. What every shape shares (the compliance settings
//! of `rkeConfig`) comes from `site::rke`; a prepared image's machine configs carry no
//! user-data, a generic one's install the guest agent. Pools with required anti-affinity are the
//! control plane (etcd + control-plane roles); the others are workers. A shape without an
//! anti-affinity pool gets the control-plane roles on its first pool; a one-pool shape
//! carries all three roles.

use base64::Engine as _;
use serde_json::{Value, json};

use super::images;
use super::manifests::SITE_LABEL;
use crate::simulate::scenario::Pool;
use crate::site::compliance::Resolved;
use crate::site::{Catalogue, ImageKind, Site};

pub(crate) use crate::vocab::SHAPE_LABEL;

/// Harvester's default Longhorn StorageClass, for the blank data disks after the boot disk.
const DATA_STORAGE_CLASS: &str = "harvester-longhorn";

/// cloud-init for a generic cloud image: the Rancher machine driver reads the VM's address
/// from the guest agent, which stock cloud images neither carry nor start. A prepared
/// image has it: its VMs get no user-data, and install nothing at boot.
pub(crate) const GENERIC_USER_DATA: &str = "#cloud-config\npackage_update: true\npackages:\n  - qemu-guest-agent\nruncmd:\n  - - systemctl\n    - enable\n    - '--now'\n    - qemu-guest-agent.service\n";

/// Why a shape cannot be offered as rendered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShapeProblem {
    pub(crate) shape: String,
    pub(crate) message: String,
}

fn whole(x: f64, what: &str, shape: &str, pool: &str) -> Result<u64, ShapeProblem> {
    if x >= 1.0 && x.fract() == 0.0 && x < 1e9 {
        Ok(x as u64)
    } else {
        Err(ShapeProblem {
            shape: shape.into(),
            message: format!(
                "pool `{pool}`: {what} {x} is not a whole number of at least 1 (the Rancher machine driver takes integers)"
            ),
        })
    }
}

/// `Cluster` name for a shape: the shape name, which must be a DNS label.
fn cluster_name(shape: &str) -> Result<String, ShapeProblem> {
    if crate::site::types::is_dns_label(shape, 63) {
        Ok(shape.to_string())
    } else {
        Err(ShapeProblem {
            shape: shape.into(),
            message: format!(
                "`{shape}` is not a valid cluster name (lowercase letters, digits and `-`, at most 63)"
            ),
        })
    }
}

/// Control-plane roles per pool: (etcd, control plane, worker), by the rule the delivery
/// model shares (`simulate::delivery::machine_pools`).
fn roles(pools: &[Pool]) -> Vec<(bool, bool, bool)> {
    crate::simulate::delivery::machine_pools(pools)
        .iter()
        .map(|p| (p.roles.etcd, p.roles.control_plane, p.roles.worker))
        .collect()
}

/// The Affinity that keeps a pool's VMs on different Harvester hosts. The driver labels
/// each VM `harvesterhci.io/machineSetName: <vmNamespace>-<cluster>-<pool>`.
pub(crate) fn anti_affinity(vm_namespace: &str, cluster: &str, pool: &str) -> Value {
    json!({
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {
                    "matchLabels": {
                        "harvesterhci.io/machineSetName": format!("{vm_namespace}-{cluster}-{pool}"),
                    },
                },
                "topologyKey": "kubernetes.io/hostname",
            }],
        },
    })
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

/// The documents of one shape's template: the Cluster first, then its machine configs.
pub(crate) fn shape_docs(
    site: &Site,
    compliance: &Resolved,
    c: &Catalogue,
    scenario: &str,
    shape: &str,
    pools: &[Pool],
) -> Result<Vec<Value>, ShapeProblem> {
    let name = cluster_name(shape)?;
    if let Some(p) = pools.iter().find(|p| !p.running) {
        return Err(ShapeProblem {
            shape: shape.into(),
            message: format!(
                "pool `{}` is stopped (`running: false`); a template cannot offer stopped machines",
                p.name
            ),
        });
    }
    let image = match &c.image {
        Some(n) => site.images.iter().find(|i| i.name.0 == *n),
        None => site.images.first(),
    }
    .expect("site validation checked the image");
    let tenant = match &c.network {
        Some(n) => site.vm_network.tenants.iter().find(|t| t.name.0 == *n),
        None => site.vm_network.tenants.first(),
    }
    .expect("site validation checked the network");
    let network = format!("{}/{}", tenant.namespace(), tenant.name);
    let labels = json!({SITE_LABEL: site.name.0, SHAPE_LABEL: shape});
    let mut configs = Vec::new();
    let mut machine_pools = Vec::new();
    for (p, (etcd, cp, worker)) in pools.iter().zip(roles(pools)) {
        let cpu = whole(p.vcpu, "vcpu", shape, &p.name)?;
        let mem = whole(p.memory_gib, "memory_gib", shape, &p.name)?;
        let mut disks = Vec::new();
        for (i, &d) in p.disks_gib.iter().enumerate() {
            let size = whole(d, "disk size (GiB)", shape, &p.name)?;
            let mut disk = if i == 0 {
                json!({"imageName": images::reference(image)})
            } else {
                json!({"storageClassName": DATA_STORAGE_CLASS})
            };
            disk["size"] = json!(size);
            disk["bootOrder"] = json!(i + 1);
            disks.push(disk);
        }
        if disks.is_empty() {
            return Err(ShapeProblem {
                shape: shape.into(),
                message: format!(
                    "pool `{}` has no disks; the first disk is the boot disk from the image",
                    p.name
                ),
            });
        }
        let cfg_name = format!("{name}-{}", p.name);
        let mut cfg = json!({
            "apiVersion": "rke-machine-config.cattle.io/v1",
            "kind": "HarvesterConfig",
            "metadata": {"name": cfg_name, "namespace": c.namespace, "labels": labels},
            "vmNamespace": c.vm_namespace,
            "cpuCount": cpu.to_string(),
            "memorySize": mem.to_string(),
            "diskInfo": serde_json::to_string(&json!({"disks": disks})).expect("plain JSON"),
            "networkInfo": serde_json::to_string(&json!({"interfaces": [{"networkName": network}]})).expect("plain JSON"),
            "sshUser": c.ssh_user,
        });
        if image.kind == ImageKind::Generic {
            cfg["userData"] = json!(b64(GENERIC_USER_DATA));
        }
        if p.anti_affinity {
            let a = anti_affinity(&c.vm_namespace, &name, &p.name);
            cfg["vmAffinity"] = json!(b64(&serde_json::to_string(&a).expect("plain JSON")));
        }
        configs.push(cfg);
        machine_pools.push(json!({
            "name": p.name,
            "quantity": p.count,
            "etcdRole": etcd,
            "controlPlaneRole": cp,
            "workerRole": worker,
            "drainBeforeDelete": true,
            "machineConfigRef": {"kind": "HarvesterConfig", "name": cfg_name},
        }));
    }
    let mut spec = crate::site::rke::shared_spec(site, c, compliance);
    spec["rkeConfig"]["machinePools"] = json!(machine_pools);
    let cluster = json!({
        "apiVersion": "provisioning.cattle.io/v1",
        "kind": "Cluster",
        "metadata": {
            "name": name,
            "namespace": c.namespace,
            "labels": labels,
            "annotations": {"rackplan.io/scenario": scenario},
        },
        "spec": spec,
    });
    let mut docs = vec![cluster];
    docs.extend(configs);
    Ok(docs)
}
