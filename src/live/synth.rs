//! A generated running fleet in the shapes a real Harvester returns (live-state-facts.md):
//! core Nodes with zone labels, Longhorn Nodes with their disks, VirtualMachines and their
//! VMIs with the requests Harvester's overcommit webhook sets and the anti-affinity Rancher
//! adds to control planes, Longhorn Volumes with `status.actualSize` and their Replicas on
//! distinct nodes, and the Longhorn and Harvester settings. For tests, benchmarks and the
//! shipped example; never presented as a real capture.

use serde_json::{Value, json};

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    pub nodes: usize,
    pub zones: usize,
    /// Tenant clusters of `control_planes` + `workers` VMs each.
    pub clusters: usize,
    pub control_planes: usize,
    pub workers: usize,
    /// Allocatable per node: CPUs and GiB.
    pub node_cpu: u32,
    pub node_memory_gib: u32,
    pub disks_per_node: usize,
    pub disk_bytes: f64,
    /// (vCPU, memory GiB, disk GiB) of a control-plane and of a worker VM.
    pub control_plane_vm: (u32, u32, u32),
    pub worker_vm: (u32, u32, u32),
    /// Harvester overcommit-config cpu and memory percentages.
    pub overcommit: (u32, u32),
    pub replicas: usize,
    /// Data written per volume, as a share of its size.
    pub fill: f64,
    /// Nodes cordoned (by index).
    pub cordoned: Vec<usize>,
}

impl Default for Spec {
    /// The reference design's size: 27 nodes in three zones, 60 clusters of 3 + 3 VMs.
    fn default() -> Spec {
        Spec {
            nodes: 27,
            zones: 3,
            clusters: 60,
            control_planes: 3,
            workers: 3,
            node_cpu: 126,
            node_memory_gib: 500,
            disks_per_node: 4,
            disk_bytes: 3.84e12,
            control_plane_vm: (4, 8, 40),
            worker_vm: (8, 32, 100),
            overcommit: (1600, 150),
            replicas: 3,
            fill: 0.55,
            cordoned: Vec::new(),
        }
    }
}

pub(crate) fn node_name(i: usize) -> String {
    format!("hv-{:03}", i + 1)
}

fn zone_name(z: usize) -> String {
    format!("rack-{}", z + 1)
}

/// Every object, in the order `kubectl get nodes,...` would print them.
pub(crate) fn objects(s: &Spec) -> Vec<Value> {
    let mut out = Vec::new();
    each(s, &mut |v| out.push(v));
    out
}

/// Every object handed to `out` as it is made (a large fleet never sits in memory).
#[allow(clippy::too_many_lines)] // one block per kind
pub(crate) fn each(s: &Spec, out: &mut dyn FnMut(Value)) {
    let nodes = s.nodes.max(1);
    for i in 0..nodes {
        let name = node_name(i);
        let mut labels = json!({
            "kubernetes.io/hostname": name,
            "harvesterhci.io/managed": "true",
            "kubevirt.io/schedulable": "true",
            "topology.kubernetes.io/zone": zone_name(i % s.zones.max(1)),
        });
        if i < 3 {
            labels["node-role.kubernetes.io/control-plane"] = json!("true");
        }
        out(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": if s.cordoned.contains(&i) { json!({"unschedulable": true}) } else { json!({}) },
            "status": {
                "allocatable": {"cpu": s.node_cpu.to_string(), "memory": format!("{}Gi", s.node_memory_gib), "pods": "200"},
                "capacity": {"cpu": (s.node_cpu + 2).to_string(), "memory": format!("{}Gi", s.node_memory_gib + 12), "pods": "200"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            },
        }));
    }
    for i in 0..nodes {
        let name = node_name(i);
        let mut disks = serde_json::Map::new();
        let mut status = serde_json::Map::new();
        for d in 0..s.disks_per_node {
            let disk = format!("nvme{d}");
            disks.insert(
                disk.clone(),
                json!({"path": format!("/var/lib/harvester/extra-disks/{name}-{d}"), "allowScheduling": true,
                       "storageReserved": 0, "diskType": "filesystem", "tags": []}),
            );
            status.insert(
                disk,
                json!({"diskUUID": format!("{name}-disk-{d}"), "storageMaximum": s.disk_bytes,
                       "storageAvailable": s.disk_bytes, "storageScheduled": 0,
                       "conditions": [{"type": "Schedulable", "status": "True"}, {"type": "Ready", "status": "True"}]}),
            );
        }
        out(json!({
            "apiVersion": "longhorn.io/v1beta2", "kind": "Node",
            "metadata": {"name": name, "namespace": "longhorn-system"},
            "spec": {"allowScheduling": true, "disks": disks},
            "status": {"diskStatus": status, "zone": zone_name(i % s.zones.max(1)),
                       "conditions": [{"type": "Ready", "status": "True"}, {"type": "Schedulable", "status": "True"}]},
        }));
    }
    let per = s.control_planes + s.workers;
    let (oc_cpu, oc_mem) = (f64::from(s.overcommit.0), f64::from(s.overcommit.1));
    for c in 0..s.clusters {
        let cluster = format!("tenant-{:02}", c + 1);
        let ns = format!("team-{}", (c % 4) + 1);
        for k in 0..per {
            let cp = k < s.control_planes;
            let (pool, (vcpu, mem, disk)) = if cp {
                ("cp", s.control_plane_vm)
            } else {
                ("workers", s.worker_vm)
            };
            let vm = format!("{cluster}-{pool}-{k}");
            let node = (c * per + k) % nodes;
            let claim = format!("{vm}-disk-0");
            let cpu_req = f64::from(vcpu) * 1000.0 * 100.0 / oc_cpu;
            let mem_req_mi = f64::from(mem) * 1024.0 * 100.0 / oc_mem;
            let machine_set = format!("{ns}-{cluster}-{pool}");
            let labels = json!({
                "harvesterhci.io/creator": "docker-machine-driver-harvester",
                "guestcluster.harvesterhci.io/name": cluster,
                "harvesterhci.io/machineSetName": machine_set,
            });
            // As docker-machine-driver-harvester creates them: a virtio root disk booted
            // first, a cloud-init disk, one bridge interface on the team's VLAN network.
            let mac = format!(
                "52:54:00:{:02x}:{:02x}:{:02x}",
                c / 256 % 256,
                c % 256,
                k % 256
            );
            let domain = json!({
                "cpu": {"cores": vcpu, "sockets": 1, "threads": 1},
                "devices": {
                    "disks": [
                        {"name": "disk-0", "bootOrder": 1, "disk": {"bus": "virtio"}},
                        {"name": "cloudinitdisk", "disk": {"bus": "virtio"}},
                    ],
                    "interfaces": [{"name": "nic-0", "bridge": {}, "model": "virtio", "macAddress": mac}],
                },
                "features": {"acpi": {"enabled": true}},
                "machine": {"type": "q35"},
                "memory": {"guest": format!("{}Mi", mem * 1024 - 100)},
                "resources": {
                    "limits": {"cpu": vcpu.to_string(), "memory": format!("{mem}Gi")},
                    "requests": {"cpu": format!("{cpu_req:.0}m"), "memory": format!("{mem_req_mi:.0}Mi")},
                },
            });
            let mut spec = json!({
                "domain": domain,
                "evictionStrategy": "LiveMigrateIfPossible",
                "networks": [{"name": "nic-0", "multus": {"networkName": format!("{ns}/vlan-{ns}")}}],
                "volumes": [
                    {"name": "disk-0", "persistentVolumeClaim": {"claimName": claim}},
                    {"name": "cloudinitdisk", "cloudInitNoCloud": {"secretRef": {"name": format!("{vm}-cloudinit")}}},
                ],
            });
            if cp {
                spec["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"harvesterhci.io/machineSetName": machine_set}},
                     "topologyKey": "kubernetes.io/hostname"}]}});
            }
            out(json!({
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                "metadata": {"name": vm, "namespace": ns, "labels": labels},
                "spec": {"runStrategy": "RerunOnFailure", "template": {"metadata": {"labels": labels}, "spec": spec}},
                "status": {"printableStatus": "Running", "ready": true},
            }));
            out(json!({
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                "metadata": {"name": vm, "namespace": ns, "labels": labels},
                "spec": spec,
                "status": {"phase": "Running", "nodeName": node_name(node), "qosClass": "Burstable",
                           "migrationMethod": "LiveMigration",
                           "interfaces": [{"name": "nic-0", "mac": mac, "interfaceName": "eth0"}],
                           "conditions": [{"type": "Ready", "status": "True"}, {"type": "LiveMigratable", "status": "True"}]},
            }));
            let size = f64::from(disk) * 1024f64.powi(3);
            let vol = format!("pvc-{:08x}-{c:03}-{k}", c * 131 + k * 17);
            out(json!({
                "apiVersion": "longhorn.io/v1beta2", "kind": "Volume",
                "metadata": {"name": vol, "namespace": "longhorn-system"},
                "spec": {"size": format!("{size:.0}"), "numberOfReplicas": s.replicas, "dataEngine": "v1"},
                "status": {"state": "attached", "robustness": "healthy", "currentNodeID": node_name(node),
                           "actualSize": (size * s.fill).round(),
                           "kubernetesStatus": {"pvcName": claim, "namespace": ns}},
            }));
            for r in 0..s.replicas {
                let rn = (node + r) % nodes;
                out(json!({
                    "apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
                    "metadata": {"name": format!("{vol}-r-{r:x}"), "namespace": "longhorn-system"},
                    "spec": {"volumeName": vol, "nodeID": node_name(rn),
                             "diskID": format!("{}-disk-{}", node_name(rn), (c + k) % s.disks_per_node.max(1))},
                    "status": {"currentState": "running"},
                }));
            }
        }
    }
    let lh = |name: &str, value: &str| {
        json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Setting",
               "metadata": {"name": name, "namespace": "longhorn-system"},
               "value": value, "status": {"applied": true}})
    };
    out(lh("storage-over-provisioning-percentage", "200"));
    out(lh("storage-minimal-available-percentage", "25"));
    out(lh(
        "default-replica-count",
        &format!("{{\"v1\":\"{0}\",\"v2\":\"{0}\"}}", s.replicas),
    ));
    out(lh("concurrent-replica-rebuild-per-node-limit", "5"));
    out(lh("replica-replenishment-wait-interval", "600"));
    out(lh("node-drain-policy", "block-if-contains-last-replica"));
    out(lh("replica-soft-anti-affinity", "false"));
    let hv = |name: &str, value: &str, default: &str| {
        json!({"apiVersion": "harvesterhci.io/v1beta1", "kind": "Setting",
               "metadata": {"name": name}, "value": value, "default": default})
    };
    out(hv(
        "overcommit-config",
        &format!(
            "{{\"cpu\":{},\"memory\":{},\"storage\":200}}",
            s.overcommit.0, s.overcommit.1
        ),
        "{\"cpu\":1600,\"memory\":150,\"storage\":200}",
    ));
    out(hv(
        "vm-force-reset-policy",
        "",
        "{\"enable\":true,\"period\":15,\"vmMigrationTimeout\":180}",
    ));
    out(hv("server-version", "v1.7.0", ""));
}

/// The objects as `kubectl get ... -o json` prints them, written as they are made.
pub fn write_json(s: &Spec, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    w.write_all(b"{\"apiVersion\":\"v1\",\"items\":[")?;
    let mut first = true;
    let mut err = None;
    each(s, &mut |v| {
        if err.is_some() {
            return;
        }
        let sep: &[u8] = if first { b"" } else { b"," };
        first = false;
        if let Err(e) = w
            .write_all(sep)
            .and_then(|()| serde_json::to_writer(&mut *w, &v).map_err(std::io::Error::other))
        {
            err = Some(e);
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    w.write_all(b"],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}")
}

/// The objects as `kubectl get ... -o json` prints them: one `kind: List`.
pub fn list(s: &Spec) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": objects(s)})
}

/// The shipped example (`simulations/live-fleet.yaml`): nine nodes in three racks running
/// ten tenant clusters of 3 + 3 VMs.
pub fn example() -> Spec {
    Spec {
        nodes: 9,
        zones: 3,
        clusters: 10,
        node_cpu: 62,
        node_memory_gib: 250,
        disks_per_node: 2,
        ..Spec::default()
    }
}

/// The objects as `kubectl get ... -o yaml` prints them.
pub fn list_yaml(s: &Spec) -> String {
    let header = "# A generated fleet in the shape `kubectl get nodes,vm,vmi,nodes.longhorn.io,volumes.longhorn.io,\n# replicas.longhorn.io,settings.longhorn.io,settings.harvesterhci.io -A -o yaml` prints (not a capture).\n# Regenerate: RACKPLAN_UPDATE_EXAMPLES=1 cargo test --test integration live_review\n";
    format!(
        "{header}{}",
        serde_saphyr::to_string(&list(s)).unwrap_or_default()
    )
}
