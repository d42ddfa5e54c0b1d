//! Every constant of the control-plane model, each with where it comes from: a published
//! limit or guideline, the upstream source that sets it, a published figure of another
//! distribution used as an analogue, this project's calibration on a real kube-apiserver
//! and etcd (`cargo bench --bench control_plane`, machine named), the real objects of the
//! reference data, or a count of a controller's state transitions (an estimate). The
//! review lists them all (`figures()`), so a reader can challenge each one.

use serde::Serialize;

/// Where a figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// A limit or guideline the project itself publishes (etcd, Kubernetes, Harvester).
    Published,
    /// Read in the upstream source, file and constant named.
    Source,
    /// A published figure of another distribution or cluster, used as an analogue.
    Analogue,
    /// Fitted by `cargo bench --bench control_plane` on the machine named.
    Calibrated,
    /// Measured on a real object of the reference data.
    Reference,
    /// Counted from a controller's state transitions or assumed: an estimate.
    Estimate,
}

impl Origin {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Origin::Published => "published",
            Origin::Source => "upstream source",
            Origin::Analogue => "analogue",
            Origin::Calibrated => "calibrated",
            Origin::Reference => "reference object",
            Origin::Estimate => "estimate",
        }
    }
}

/// One constant of the model.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Figure {
    pub name: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub origin: Origin,
    pub source: &'static str,
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The machine the calibration ran on (`cargo bench --bench control_plane`).
pub(crate) const CALIBRATION_MACHINE: &str = "kube-apiserver v1.20.2 and etcd 3.4.23 (Debian) on 127.0.0.1 of a VM with 2 AMD EPYC vCPUs (shared with the load generator and other builds: 1-minute load 3.2 to 4.3 during the rate steps), 23 GiB, etcd on ext4 on a virtio disk";

macro_rules! figures {
    ($($id:ident = $value:expr, $unit:expr, $origin:ident, $name:expr, $source:expr;)*) => {
        $(pub(crate) const $id: f64 = $value;)*
        /// Every constant, in the order the model uses them.
        pub fn figures() -> Vec<Figure> {
            vec![$(Figure {
                name: $name,
                value: $id,
                unit: $unit,
                origin: Origin::$origin,
                source: $source,
            }),*]
        }
    };
}

figures! {
    ETCD_QUOTA_DEFAULT = 2.0 * GIB, "bytes", Published, "etcd storage quota, default",
        "etcd.io docs v3.4, dev-guide/limit (System limits): default 2 GiB, --quota-backend-bytes; etcd server/etcdserver/quota.go DefaultQuotaBytes, checked against the database file size (backendQuota.Available uses backend Size())";
    ETCD_SUGGESTED_MAX = 8.0 * GIB, "bytes", Published, "etcd suggested maximum database",
        "etcd.io docs v3.4, dev-guide/limit: 8 GiB is a suggested maximum for normal environments, etcd warns at startup above it (quota.go MaxQuotaBytes)";
    OBJECTS_PER_TYPE = 60_000.0, "objects of one type", Analogue, "objects of one type before trouble",
        "Rancher Manager docs, best practices, Tips for Scaling Rancher: performance issues usually seen once a single resource type passes 60k objects (observed on Rancher's local cluster; Harvester's etcd and API server are the same software)";
    COMPACTION_S = 300.0, "s", Source, "history kept between compactions",
        "kube-apiserver --etcd-compaction-interval, default 5m (k8s.io/apiserver pkg/server/options/etcd.go): every revision written in that window stays in etcd";
    EVENT_TTL_S = 3600.0, "s", Source, "event lifetime",
        "kube-apiserver --event-ttl, default 1h: the events of a storm stay in etcd an hour";
    LEASE_RENEW_S = 10.0, "s", Published, "kubelet Lease renewal, per node",
        "Kubernetes docs, Nodes, Heartbeats: the kubelet updates its Lease every 10 s (KEP-0009 efficient node heartbeat)";
    NODE_STATUS_S = 300.0, "s", Published, "kubelet Node status, per node",
        "kubelet configuration nodeStatusReportFrequency, default 5m, when nothing changed";
    VIRT_HANDLER_HEARTBEAT_S = 60.0, "s", Source, "virt-handler Node heartbeat, per node",
        "kubevirt pkg/virt-handler/vm.go heartBeatInterval 1 min; pkg/virt-handler/heartbeat/heartbeat.go do() patches the Node";
    DISK_MONITOR_S = 30.0, "s", Source, "Longhorn Node disk status, per node",
        "longhorn-manager controller/monitor/disk_monitor.go DiskMonitorSyncPeriod 30 s; written when storageAvailable changes";
    SIZE_UPDATE_S = 30.0, "s", Source, "Longhorn Engine and Volume size status, per growing volume",
        "longhorn-manager controller/engine_controller.go: EnginePollInterval 5 s, needStatusUpdate rate-limits volume-head size changes to one per sizeUpdateLimit 30 s (burst 3); the Volume's actualSize follows (volume_controller.go)";
    ENGINE_POLL_S = 5.0, "s", Source, "Engine status during a rebuild, per rebuilding replica",
        "longhorn-manager controller/engine_controller.go EnginePollInterval 5 s: rebuildStatus progress changes at every poll";
    LEADER_LEASE_WRITES = 7.5, "writes/s", Estimate, "controllers' leader-election leases",
        "about 15 leader-elected controllers (kube-controller-manager, scheduler, KubeVirt, Harvester, Rancher agents) renewing every 2 s (client-go leaderelection RetryPeriod default); the count is assumed";
    VMI_WRITES_PER_START = 12.0, "writes", Source, "VMI updates and patches per VM start",
        "kubevirt tests/performance/density.go: CI holds UPDATE-vmis to 10 and PATCH-vmis to 2 per virt-launcher pod created (updateVMICountToPodCreateCountThreshold, patchVMICountToPodCreateCountThreshold): an upper bound";
    VM_START_S = 60.0, "s", Source, "a VM from created to Running",
        "kubevirt tests/performance/density.go vmiCreationToRunningSecondsP95Threshold 60 s (P50 45 s): the window a burst of VM starts spreads over";
    POD_WRITES = 6.0, "writes", Estimate, "virt-launcher Pod writes per start",
        "create, binding, three kubelet status updates (Pending, ContainerCreating, Running and Ready), one KubeVirt label patch";
    VM_STATUS_WRITES = 3.0, "writes", Estimate, "VirtualMachine status writes per start",
        "printableStatus Provisioning, Starting, Running (kubevirt virt-controller VM status)";
    EVENTS_PER_START = 8.0, "events", Estimate, "events per VM start",
        "VMI and Pod created, Scheduled, image Pulled, Created, Started, volume attached, VMI started";
    VOLUME_WRITES_CREATE = 18.0, "writes", Estimate, "writes per new volume, besides its replicas",
        "PVC create and 2 updates (bind), PV create and status, Longhorn Volume create and 4 status (creating, detached, attaching, attached), Engine create and 3 status (stopped, starting, running), VolumeAttachment create and status, Longhorn VolumeAttachment create and update";
    REPLICA_WRITES_CREATE = 4.0, "writes", Estimate, "writes per new replica",
        "create and 3 status (stopped, starting, running)";
    VOLUME_WRITES_MOVE = 14.0, "writes", Estimate, "writes per volume of a VM restarted elsewhere",
        "Longhorn Volume 4 status (detaching, detached, attaching, attached), Engine 3 status and its nodeID, VolumeAttachment deleted and created (2 each), Longhorn VolumeAttachment 2 updates";
    OLD_INSTANCE_WRITES = 4.0, "writes", Estimate, "writes removing the failed host's VMI and Pod",
        "force delete and finalizer removal of each";
    REPLICA_WRITES_LOST = 3.0, "writes", Estimate, "writes per replica lost with its node",
        "Replica status to error, Engine replicaModeMap ERR, Volume robustness degraded";
    REPLICA_WRITES_REBUILT = 6.0, "writes", Estimate, "writes per replica rebuilt, besides progress",
        "new Replica create and 3 status, Engine replicaModeMap WO to RW, Volume robustness healthy";
    MIGRATION_WRITES = 27.0, "writes", Estimate, "writes per live migration, besides volumes",
        "VirtualMachineInstanceMigration create and 7 phases (Pending to Succeeded), 6 VMI migrationState updates, target Pod create, binding and 3 status, source Pod delete and finalize, 6 events";
    VOLUME_WRITES_MIGRATE = 16.0, "writes", Estimate, "writes per volume of a live migration",
        "Longhorn Volume migrationNodeID and 3 status, the second Engine created, 3 status and deleted (2), Longhorn VolumeAttachment 2 updates, VolumeAttachment for the target created and the source's deleted (2 each)";
    OCP_VCPU_PER_1000 = 9.0, "vCPU per 1,000 requests/s", Analogue, "control plane CPU per request rate",
        "OpenShift hosted control planes sizing guidance (load-based limit, measured on the KubeVirt platform): +1,000 QPS adds 9 vCPU";
    OCP_GIB_PER_1000 = 2.5, "GB per 1,000 requests/s", Analogue, "control plane memory per request rate",
        "OpenShift hosted control planes sizing guidance: +1,000 QPS adds 2.5 GB";
    OCP_IDLE_VCPU = 2.9, "vCPU", Analogue, "control plane at rest, CPU",
        "OpenShift hosted control planes sizing guidance, API rate table: under 50 QPS, 2.9 vCPU";
    OCP_IDLE_GIB = 11.1, "GiB", Analogue, "control plane at rest, memory",
        "OpenShift hosted control planes sizing guidance, API rate table: under 50 QPS, 11.1 GiB";
    MANAGERS_DOWN = 1.0, "management nodes", Analogue, "management nodes the control plane must survive losing",
        "OpenShift control plane node sizing: when one of three control plane nodes fails, the other two must handle its load (the budget is the nodes left after the largest is lost)";
    IM_CPU_SHARE = 0.12, "share of a node's CPU", Source, "Longhorn instance manager CPU reservation",
        "longhorn-manager types/setting.go guaranteed-instance-manager-cpu default 12 (%); the dump's setting when it has one";
    IM_GIB_PER_VOLUME = 20.0 / 149.0, "GiB per volume", Published, "Longhorn instance manager memory per volume",
        "harvester/harvester PR #10526 (benchmark policy HEP), user story: instance-manager at about 20 GiB with 149 volumes; one observation, not a benchmark";
    MANAGEMENT_NODES = 3.0, "nodes", Source, "management nodes of a planned fleet",
        "harvester pkg/controller/master/node/promote_controller.go defaultSpecManagementNumber 3: the first three nodes are promoted";
    FSYNC_MINIMUM_PER_S = 50.0, "fsyncs/s", Published, "etcd disk: the minimum",
        "etcd.io op-guide/hardware: 50 sequential IOPS (a 7200 RPM disk) typically required; OpenShift etcd practices: 50 IOPS of 8 KB with fdatasync under 10 ms";
    FSYNC_HEAVY_PER_S = 500.0, "fsyncs/s", Published, "etcd disk: heavily loaded clusters",
        "etcd.io op-guide/hardware: 500 sequential IOPS (a local SSD) recommended for heavily loaded clusters (2 ms each, OpenShift etcd practices)";
    WAL_FSYNC_P99_LIMIT_S = 0.010, "s", Published, "etcd WAL fsync p99 to stay under",
        "OpenShift recommended etcd practices: a block device that writes 8 KB with fdatasync in under 10 ms; slower disks make etcd miss heartbeats";
    WRITE_SLO_S = 1.0, "s", Published, "API write latency objective (p99)",
        "Kubernetes SIG Scalability SLOs, API call latency: p99 of mutating calls on single objects at most 1 s";
    EVENT_BYTES = 1000.0, "bytes in etcd", Estimate, "one event",
        "an Event of a VM start, about 700 bytes of JSON with managedFields";
    LEASE_BYTES = 450.0, "bytes in etcd", Estimate, "one Lease",
        "a node Lease, about 300 bytes of protobuf with managedFields";
    CAL_VM = 5856.0, "bytes in etcd", Calibrated, "VirtualMachine",
        "a synthetic Rancher-made VM (benches/control_plane/synthetic.rs), read back from etcd: key and value";
    CAL_VMI = 6803.0, "bytes in etcd", Calibrated, "VirtualMachineInstance",
        "a synthetic running VMI with virt-handler's status, read back from etcd";
    CAL_POD = 9246.0, "bytes in etcd", Calibrated, "virt-launcher Pod",
        "a synthetic virt-launcher Pod, running, read back from etcd (protobuf); also stands in for system pods";
    CAL_PVC = 1480.0, "bytes in etcd", Calibrated, "PersistentVolumeClaim",
        "a synthetic bound Harvester PVC, read back from etcd";
    CAL_PV = 1567.0, "bytes in etcd", Calibrated, "PersistentVolume",
        "the support bundle sample's Longhorn PV (reference data), read back from etcd";
    CAL_VOLUME = 5682.0, "bytes in etcd", Calibrated, "Longhorn Volume",
        "the real Longhorn v1.10.1 Volume capture of the reference data, read back from etcd";
    CAL_ENGINE = 5293.0, "bytes in etcd", Calibrated, "Longhorn Engine",
        "a synthetic running Engine of a 3-replica volume, read back from etcd";
    CAL_REPLICA = 3298.0, "bytes in etcd", Calibrated, "Longhorn Replica",
        "a real Longhorn v1.10.1 Replica capture of the reference data, read back from etcd";
    CAL_ATTACHMENT = 671.0, "bytes in etcd", Calibrated, "VolumeAttachment",
        "the support bundle sample's VolumeAttachment (reference data), read back from etcd";
    CAL_CR_PER_JSON = 1.60, "etcd bytes per JSON byte", Calibrated, "custom resources, stored per JSON byte",
        "mean key and value bytes per compact JSON byte over the calibrated custom resources (VM, VMI, Volume, Engine, Replica: 1.51 to 1.81): etcd keeps JSON with managedFields, the census measures JSON without them";
    CAL_CORE_PER_JSON = 1.45, "etcd bytes per JSON byte", Calibrated, "built-in kinds, stored per JSON byte",
        "mean over the calibrated built-in kinds (Pod, PVC, PV, VolumeAttachment: 1.40 to 1.51), stored as protobuf with managedFields";
    CAL_DB_PER_BYTE = 1.43, "database bytes per byte written", Calibrated, "etcd database per key and value byte",
        "growth of etcd_mvcc_db_total_size_in_use_in_bytes per key and value byte of every revision written (1.43 to 1.44 at 75, 150 and 300 VMs); applied to live objects and to the history alike";
    CAL_FSYNC_PER_WRITE = 0.97, "WAL fsyncs per write", Calibrated, "etcd WAL fsyncs per API write",
        "etcd_disk_wal_fsync_duration_seconds count per status patch, mean of the steps up to the knee (1.00 to 0.94; batching takes it to 0.62 at 150 writes/s and 0.21 at 300)";
    CAL_KNEE = 100.0, "writes/s", Calibrated, "writes served in full with p99 under 1 s",
        "the knee of the calibration run's latency curve: 100 writes/s served with a client p99 of 0.29 s, 150 with 1.12 s, about 195 at most (2 CPUs: 20 vCPU per 1,000 writes/s, against OpenShift's 9)";
    NODE_JSON = 13878.0, "JSON bytes", Reference, "Node, as JSON",
        "the support bundle sample's Node (reference data) as compact JSON, without managedFields; times the built-in factor";
    LONGHORN_NODE_JSON = 1855.0, "JSON bytes", Reference, "Longhorn Node, as JSON",
        "the support bundle sample's Longhorn Node (one disk) as compact JSON; times the custom-resource factor";
}

/// The calibration run's latency curve: offered writes per second against the client's
/// p99 in seconds, in the order measured (`cargo bench --bench control_plane`).
pub(crate) const CAL_CURVE: &[(f64, f64)] = &[
    (25.0, 0.0722),
    (50.0, 0.0438),
    (75.0, 0.0801),
    (100.0, 0.2895),
];

/// The p99 this machine showed at `share` of its knee (interpolated between the measured
/// steps); `None` past the last step served in full.
pub(crate) fn p99_at_share(share: f64) -> Option<f64> {
    if !share.is_finite() || share < 0.0 {
        return None;
    }
    let rate = share * CAL_KNEE;
    let first = CAL_CURVE.first()?;
    if rate <= first.0 {
        return Some(first.1);
    }
    CAL_CURVE
        .windows(2)
        .find(|w| rate <= w[1].0)
        .map(|w| w[0].1 + (w[1].1 - w[0].1) * (rate - w[0].0) / (w[1].0 - w[0].0))
        .or_else(|| {
            CAL_CURVE
                .last()
                .filter(|l| rate <= l.0 * 1.0001)
                .map(|l| l.1)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_names_its_source_and_the_curve_reads_between_steps() {
        let f = figures();
        assert!(f.len() > 40);
        for x in &f {
            assert!(!x.source.is_empty() && x.value.is_finite(), "{x:?}");
        }
        assert!(f.iter().any(|x| x.origin == Origin::Calibrated));
        assert!(f.iter().any(|x| x.origin == Origin::Analogue));
        assert!(CAL_CURVE.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(p99_at_share(0.0), Some(CAL_CURVE[0].1));
        assert_eq!(p99_at_share(-1.0), None);
        assert_eq!(p99_at_share(1e9), None);
    }
}
