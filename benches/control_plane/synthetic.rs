//! The objects of one Harvester VM that no licensed real capture exists for (the reference
//! data's `live-objects/SOURCE.txt` says so for VirtualMachine and VirtualMachineInstance):
//! written here with the fields Harvester's VM webhook, KubeVirt's controllers and
//! Longhorn's engine controller set (`live-state-facts.md` §3 and §5), at their usual
//! lengths: a Rancher-made VM of 4 vCPU and 8 GiB with one image-backed disk, a cloud-init
//! disk and one bridge NIC on a VLAN network. Their sizes in etcd are what the model's
//! per-object figures for these kinds come from; the figures say so.

use serde_json::{Value, json};

const T: &str = "2026-07-02T15:10:14Z";

fn labels(ns: &str) -> Value {
    json!({
        "harvesterhci.io/creator": "docker-machine-driver-harvester",
        "harvesterhci.io/machineSetName": format!("{ns}-team-1-pool-workers"),
        "harvesterhci.io/vmName": "team-1-pool-workers-7d9f6c5b8-x2kqn",
        "guestcluster.harvesterhci.io/name": "team-1",
    })
}

fn domain() -> Value {
    json!({
        "cpu": {"cores": 4, "sockets": 1, "threads": 1, "maxSockets": 1, "model": "host-model"},
        "devices": {
            "disks": [
                {"name": "disk-0", "bootOrder": 1, "disk": {"bus": "virtio"}},
                {"name": "cloudinitdisk", "disk": {"bus": "virtio"}},
            ],
            "interfaces": [
                {"name": "nic-0", "bridge": {}, "model": "virtio", "macAddress": "52:54:00:3b:5e:a1"},
            ],
            "inputs": [{"bus": "usb", "name": "tablet", "type": "tablet"}],
        },
        "features": {"acpi": {"enabled": true}},
        "firmware": {"bootloader": {"efi": {"secureBoot": false}}, "serial": "8c1f0f6e-3c1d-4b7e-9a55-0f2d3e4a5b6c", "uuid": "0b5d7e2a-9c4f-5a1e-8d3b-6f7a8b9c0d1e"},
        "machine": {"type": "q35"},
        "memory": {"guest": "8Gi"},
        "resources": {"limits": {"cpu": "4", "memory": "8Gi"}, "requests": {"cpu": "250m", "memory": "5461Mi"}},
    })
}

fn vm_spec(ns: &str) -> Value {
    json!({
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "network.harvesterhci.io/mgmt", "operator": "In", "values": ["true"]}]},
            ]}},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"harvesterhci.io/machineSetName": format!("{ns}-team-1-pool-workers")}},
                    "topologyKey": "kubernetes.io/hostname",
                }},
            ]},
        },
        "domain": domain(),
        "evictionStrategy": "LiveMigrateIfPossible",
        "hostname": "team-1-pool-workers-7d9f6c5b8-x2kqn",
        "networks": [{"name": "nic-0", "multus": {"networkName": "default/vlan-100"}}],
        "terminationGracePeriodSeconds": 120,
        "volumes": [
            {"name": "disk-0", "persistentVolumeClaim": {"claimName": "team-1-pool-workers-7d9f6c5b8-x2kqn-disk-0-l4xqz"}},
            {"name": "cloudinitdisk", "cloudInitNoCloud": {
                "secretRef": {"name": "team-1-pool-workers-7d9f6c5b8-x2kqn-cloudinit"},
                "networkDataSecretRef": {"name": "team-1-pool-workers-7d9f6c5b8-x2kqn-cloudinit"},
            }},
        ],
    })
}

fn condition(kind: &str, status: &str) -> Value {
    json!({"type": kind, "status": status, "lastProbeTime": null, "lastTransitionTime": T})
}

/// A VirtualMachine as Rancher's Harvester machine driver makes it, with its status.
pub fn vm(ns: &str) -> Value {
    json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {
            "labels": labels(ns),
            "annotations": {
                "harvesterhci.io/vmRunStrategy": "RerunOnFailure",
                "harvesterhci.io/volumeClaimTemplates": "[{\"metadata\":{\"name\":\"team-1-pool-workers-7d9f6c5b8-x2kqn-disk-0-l4xqz\",\"annotations\":{\"harvesterhci.io/imageId\":\"default/image-ubuntu-2404\"}},\"spec\":{\"accessModes\":[\"ReadWriteMany\"],\"resources\":{\"requests\":{\"storage\":\"100Gi\"}},\"volumeMode\":\"Block\",\"storageClassName\":\"longhorn-image-ubuntu-2404\"}}]",
                "network.harvesterhci.io/ips": "[]",
                "kubevirt.io/latest-observed-api-version": "v1",
                "kubevirt.io/storage-observed-api-version": "v1",
            },
        },
        "spec": {
            "runStrategy": "RerunOnFailure",
            "template": {
                "metadata": {
                    "labels": labels(ns),
                    "annotations": {"harvesterhci.io/sshNames": "[]", "harvesterhci.io/waitForLeaseInterfaceNames": "[]"},
                },
                "spec": vm_spec(ns),
            },
        },
        "status": {
            "conditions": [condition("Ready", "True"), condition("LiveMigratable", "True"), condition("AgentConnected", "True")],
            "created": true,
            "desiredGeneration": 1,
            "observedGeneration": 1,
            "printableStatus": "Running",
            "ready": true,
            "runStrategy": "RerunOnFailure",
            "volumeSnapshotStatuses": [
                {"name": "disk-0", "enabled": true},
                {"name": "cloudinitdisk", "enabled": false, "reason": "Snapshot is not supported for this volumeSource type [cloudinitdisk]"},
            ],
        },
    })
}

/// Its VirtualMachineInstance, running, with what virt-handler reports.
pub fn vmi(ns: &str) -> Value {
    let mut spec = vm_spec(ns);
    spec["domain"]["devices"]["disks"][0]["disk"]["bus"] = json!("virtio");
    spec["domain"]["features"] = json!({"acpi": {"enabled": true}, "smm": {"enabled": true}});
    json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {
            "labels": {
                "harvesterhci.io/creator": "docker-machine-driver-harvester",
                "harvesterhci.io/vmName": "team-1-pool-workers-7d9f6c5b8-x2kqn",
                "guestcluster.harvesterhci.io/name": "team-1",
                "kubevirt.io/nodeName": "hv-014",
            },
            "annotations": {
                "harvesterhci.io/sshNames": "[]",
                "kubevirt.io/latest-observed-api-version": "v1",
                "kubevirt.io/storage-observed-api-version": "v1",
                "kubevirt.io/vm-generation": "1",
            },
            "finalizers": ["kubevirt.io/virtualMachineControllerFinalize", "foregroundDeleteVirtualMachine"],
        },
        "spec": spec,
        "status": {
            "activePods": {"3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8": "hv-014"},
            "conditions": [condition("Ready", "True"), condition("LiveMigratable", "True"), condition("AgentConnected", "True"), condition("StorageLiveMigratable", "True")],
            "currentCPUTopology": {"cores": 4, "sockets": 1, "threads": 1},
            "guestOSInfo": {"id": "ubuntu", "kernelRelease": "6.8.0-45-generic", "kernelVersion": "#45-Ubuntu SMP PREEMPT_DYNAMIC", "name": "Ubuntu", "prettyName": "Ubuntu 24.04.1 LTS", "version": "24.04", "versionId": "24.04"},
            "interfaces": [{"infoSource": "domain, guest-agent, multus-status", "interfaceName": "enp1s0", "ipAddress": "10.100.4.37", "ipAddresses": ["10.100.4.37", "fe80::5054:ff:fe3b:5ea1"], "mac": "52:54:00:3b:5e:a1", "name": "nic-0", "queueCount": 1}],
            "launcherContainerImageVersion": "registry.suse.com/suse/sles/15.6/virt-launcher:1.6.3-150600.5.21.1",
            "machine": {"type": "pc-q35-8.2"},
            "memory": {"guestAtBoot": "8Gi", "guestCurrent": "8Gi", "guestRequested": "8Gi"},
            "migrationMethod": "BlockMigration",
            "migrationTransport": "Unix",
            "nodeName": "hv-014",
            "phase": "Running",
            "phaseTransitionTimestamps": [
                {"phase": "Pending", "phaseTransitionTimestamp": T},
                {"phase": "Scheduling", "phaseTransitionTimestamp": T},
                {"phase": "Scheduled", "phaseTransitionTimestamp": T},
                {"phase": "Running", "phaseTransitionTimestamp": T},
            ],
            "qosClass": "Burstable",
            "selinuxContext": "none",
            "virtualMachineRevisionName": "revision-start-vm-0b5d7e2a-9c4f-5a1e-8d3b-6f7a8b9c0d1e-1",
            "volumeStatus": [
                {"name": "cloudinitdisk", "size": 1048576, "target": "vdb"},
                {"name": "disk-0", "target": "vda", "persistentVolumeClaimInfo": {
                    "accessModes": ["ReadWriteMany"], "capacity": {"storage": "100Gi"},
                    "claimName": "team-1-pool-workers-7d9f6c5b8-x2kqn-disk-0-l4xqz",
                    "filesystemOverhead": "0", "requests": {"storage": "100Gi"}, "volumeMode": "Block",
                }},
            ],
        },
    })
}

/// The virt-launcher Pod KubeVirt renders for it (`pkg/virt-controller/services/template.go`),
/// running.
pub fn pod(ns: &str) -> Value {
    let mounts = [
        ("private", "/var/run/kubevirt-private"),
        ("public", "/var/run/kubevirt"),
        ("ephemeral-disks", "/var/run/kubevirt-ephemeral-disks"),
        ("container-disks", "/var/run/kubevirt/container-disks"),
        ("libvirt-runtime", "/var/run/libvirt"),
        ("sockets", "/var/run/kubevirt/sockets"),
        ("hotplug-disks", "/var/run/kubevirt/hotplug-disks"),
        (
            "cloudinitdisk-udata",
            "/var/run/kubevirt-private/secret/cloudinitdisk/userdata",
        ),
        (
            "cloudinitdisk-ndata",
            "/var/run/kubevirt-private/secret/cloudinitdisk/networkdata",
        ),
    ];
    let volume_mounts: Vec<Value> = mounts
        .iter()
        .map(|(n, p)| json!({"name": n, "mountPath": p}))
        .collect();
    let mut volumes: Vec<Value> = mounts
        .iter()
        .filter(|(n, _)| !n.starts_with("cloudinitdisk"))
        .map(|(n, _)| json!({"name": n, "emptyDir": {}}))
        .collect();
    volumes.push(json!({"name": "disk-0", "persistentVolumeClaim": {"claimName": "team-1-pool-workers-7d9f6c5b8-x2kqn-disk-0-l4xqz"}}));
    volumes.push(json!({"name": "cloudinitdisk-udata", "secret": {"secretName": "team-1-pool-workers-7d9f6c5b8-x2kqn-cloudinit"}}));
    volumes.push(json!({"name": "cloudinitdisk-ndata", "secret": {"secretName": "team-1-pool-workers-7d9f6c5b8-x2kqn-cloudinit"}}));
    let mut l = labels(ns);
    l["kubevirt.io"] = json!("virt-launcher");
    l["kubevirt.io/created-by"] = json!("3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8");
    l["vm.kubevirt.io/name"] = json!("team-1-pool-workers-7d9f6c5b8-x2kqn");
    l["kubevirt.io/nodeName"] = json!("hv-014");
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "labels": l,
            "annotations": {
                "kubevirt.io/domain": "team-1-pool-workers-7d9f6c5b8-x2kqn",
                "kubevirt.io/migrationTransportUnix": "true",
                "kubectl.kubernetes.io/default-container": "compute",
                "post.hook.backup.velero.io/command": "[\"/usr/bin/virt-freezer\", \"--unfreeze\", \"--name\", \"team-1-pool-workers-7d9f6c5b8-x2kqn\", \"--namespace\", \"default\"]",
                "pre.hook.backup.velero.io/command": "[\"/usr/bin/virt-freezer\", \"--freeze\", \"--name\", \"team-1-pool-workers-7d9f6c5b8-x2kqn\", \"--namespace\", \"default\"]",
                "k8s.v1.cni.cncf.io/networks": "[{\"interface\":\"pod1c6d2f8a4b3\",\"mac\":\"52:54:00:3b:5e:a1\",\"name\":\"vlan-100\",\"namespace\":\"default\"}]",
                "k8s.v1.cni.cncf.io/network-status": "[{\"name\":\"k8s-pod-network\",\"ips\":[\"10.52.3.118\"],\"default\":true,\"dns\":{}},{\"name\":\"default/vlan-100\",\"interface\":\"pod1c6d2f8a4b3\",\"mac\":\"52:54:00:3b:5e:a1\",\"dns\":{}}]",
            },
        },
        "spec": {
            "automountServiceAccountToken": false,
            "containers": [{
                "name": "compute",
                "image": "registry.suse.com/suse/sles/15.6/virt-launcher:1.6.3-150600.5.21.1",
                "imagePullPolicy": "IfNotPresent",
                "command": ["/usr/bin/virt-launcher-monitor", "--qemu-timeout", "288s", "--name", "team-1-pool-workers-7d9f6c5b8-x2kqn", "--uid", "3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8", "--namespace", "default", "--kubevirt-share-dir", "/var/run/kubevirt", "--ephemeral-disk-dir", "/var/run/kubevirt-ephemeral-disks", "--container-disk-dir", "/var/run/kubevirt/container-disks", "--grace-period-seconds", "135", "--hook-sidecars", "0", "--ovmf-path", "/usr/share/OVMF", "--run-as-nonroot"],
                "env": [{"name": "XDG_CACHE_HOME", "value": "/var/run/kubevirt-private"}, {"name": "XDG_CONFIG_HOME", "value": "/var/run/kubevirt-private"}, {"name": "XDG_RUNTIME_DIR", "value": "/var/run"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "resources": {
                    "limits": {"cpu": "4", "memory": "8542Mi", "devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1", "devices.kubevirt.io/vhost-net": "1"},
                    "requests": {"cpu": "250m", "memory": "5995Mi", "ephemeral-storage": "50M", "devices.kubevirt.io/kvm": "1", "devices.kubevirt.io/tun": "1", "devices.kubevirt.io/vhost-net": "1"},
                },
                "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "SYS_NICE"], "drop": ["NET_RAW"]}, "privileged": false, "runAsGroup": 107, "runAsNonRoot": true, "runAsUser": 107},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeDevices": [{"name": "disk-0", "devicePath": "/dev/disk-0"}],
                "volumeMounts": volume_mounts,
            }],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": false,
            "hostname": "team-1-pool-workers-7d9f6c5b8-x2kqn",
            "nodeName": "hv-014",
            "nodeSelector": {"kubevirt.io/schedulable": "true", "cpu-model.node.kubevirt.io/EPYC-Genoa": "true"},
            "priority": 0,
            "readinessGates": [{"conditionType": "kubevirt.io/virtual-machine-unpaused"}],
            "restartPolicy": "Never",
            "schedulerName": "default-scheduler",
            "securityContext": {"fsGroup": 107, "runAsGroup": 107, "runAsNonRoot": true, "runAsUser": 107},
            "terminationGracePeriodSeconds": 150,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
            ],
            "volumes": volumes,
        },
        "status": {
            "conditions": [
                {"type": "kubevirt.io/virtual-machine-unpaused", "status": "True", "lastProbeTime": null, "lastTransitionTime": T, "reason": "NotPaused", "message": "the virtual machine is not paused"},
                {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": T},
                {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": T},
                {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": T},
                {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": T},
            ],
            "containerStatuses": [{
                "name": "compute", "ready": true, "restartCount": 0, "started": true,
                "image": "registry.suse.com/suse/sles/15.6/virt-launcher:1.6.3-150600.5.21.1",
                "imageID": "registry.suse.com/suse/sles/15.6/virt-launcher@sha256:4f1c2a7e9b8d6c5f4e3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e",
                "containerID": "containerd://9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
                "lastState": {}, "state": {"running": {"startedAt": T}},
            }],
            "hostIP": "10.0.1.14",
            "phase": "Running",
            "podIP": "10.52.3.118",
            "podIPs": [{"ip": "10.52.3.118"}],
            "qosClass": "Burstable",
            "startTime": T,
        },
    })
}

/// The PersistentVolumeClaim Harvester creates from the VM's volume claim template, bound.
pub fn pvc(ns: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "annotations": {
                "harvesterhci.io/imageId": "default/image-ubuntu-2404",
                "harvesterhci.io/owned-by": format!("[{{\"schema\":\"kubevirt.io.virtualmachine\",\"refs\":[\"{ns}/team-1-pool-workers-7d9f6c5b8-x2kqn\"]}}]"),
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
                "volume.beta.kubernetes.io/storage-provisioner": "driver.longhorn.io",
                "volume.kubernetes.io/storage-provisioner": "driver.longhorn.io",
            },
        },
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": "100Gi"}},
            "storageClassName": "longhorn-image-ubuntu-2404",
            "volumeMode": "Block",
        },
        "status": {"accessModes": ["ReadWriteMany"], "capacity": {"storage": "100Gi"}, "phase": "Bound"},
    })
}

fn snapshot(name: &str, parent: &str, children: &Value, size: &str) -> Value {
    json!({
        "children": children, "created": T, "labels": {}, "name": name, "parent": parent,
        "removed": false, "size": size, "usercreated": false,
    })
}

/// The Longhorn Engine of an attached 3-replica v1 volume, running, as the engine monitor
/// writes its status (`controller/engine_controller.go` `refresh`).
pub fn engine() -> Value {
    let replicas = |v: &str| {
        json!({
            "pvc-r-0b1c2d3e": v, "pvc-r-4f5a6b7c": v, "pvc-r-8d9e0f1a": v,
        })
    };
    let addresses = json!({
        "pvc-r-0b1c2d3e": "10.52.1.21:10010", "pvc-r-4f5a6b7c": "10.52.2.33:10010", "pvc-r-8d9e0f1a": "10.52.3.45:10010",
    });
    json!({
        "apiVersion": "longhorn.io/v1beta2",
        "kind": "Engine",
        "metadata": {
            "labels": {"longhornnode": "hv-014", "longhornvolume": "pvc"},
        },
        "spec": {
            "active": true, "backupVolume": "", "dataEngine": "v1", "desireState": "running",
            "disableFrontend": false, "frontend": "blockdev",
            "image": "longhornio/longhorn-engine:v1.10.1", "logRequested": false, "nodeID": "hv-014",
            "replicaAddressMap": addresses, "requestedBackupRestore": "", "requestedDataSource": "",
            "revisionCounterDisabled": true, "salvageRequested": false, "snapshotMaxCount": 250,
            "snapshotMaxSize": "0", "unmapMarkSnapChainRemovedEnabled": false,
            "upgradedReplicaAddressMap": {}, "volumeName": "pvc", "volumeSize": "107374182400",
        },
        "status": {
            "backupStatus": null, "cloneStatus": {},
            "conditions": [
                {"lastProbeTime": "", "lastTransitionTime": T, "message": "", "reason": "", "status": "True", "type": "InstanceCreation"},
                {"lastProbeTime": "", "lastTransitionTime": T, "message": "", "reason": "", "status": "False", "type": "FilesystemReadOnly"},
            ],
            "currentImage": "longhornio/longhorn-engine:v1.10.1",
            "currentReplicaAddressMap": addresses,
            "currentSize": "107374182400", "currentState": "running",
            "endpoint": "/dev/longhorn/pvc",
            "instanceManagerName": "instance-manager-5a68587acda90c389c94963bf62e6636",
            "ip": "10.52.3.45", "isExpanding": false, "lastExpansionError": "", "lastExpansionFailedAt": "",
            "lastRestoredBackup": "", "logFetched": false, "ownerID": "hv-014", "port": 10000,
            "purgeStatus": {
                "tcp://10.52.1.21:10010": {"error": "", "isPurging": false, "progress": 0, "state": ""},
                "tcp://10.52.2.33:10010": {"error": "", "isPurging": false, "progress": 0, "state": ""},
                "tcp://10.52.3.45:10010": {"error": "", "isPurging": false, "progress": 0, "state": ""},
            },
            "rebuildStatus": {},
            "replicaModeMap": replicas("RW"),
            "replicaTransitionTimeMap": replicas(T),
            "restoreStatus": {},
            "salvageExecuted": false, "snapshotMaxCount": 250, "snapshotMaxSize": "0",
            "snapshots": {
                "volume-head": snapshot("volume-head", "snap-0f3e", &json!({}), "1073741824"),
                "snap-0f3e": snapshot("snap-0f3e", "", &json!({"volume-head": true}), "20466663424"),
            },
            "snapshotsError": "", "started": true, "storageIP": "10.52.3.45", "ublkID": 0,
            "unmapMarkSnapChainRemovedEnabled": false,
        },
    })
}
