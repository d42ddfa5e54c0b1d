//! Every duration the delivery model adds, with its range and where it comes from. A
//! published log gives a figure (the timestamps of a provisioning log, a measurement in an
//! issue); where none separates a step, the entry says "assumption" and why its range is
//! what it is, so the operator's measured phases are the first thing to replace it.
//!
//! The sources, read through their issue threads:
//! - harvester#9344: a 3.5 GB image to a 10 GB root disk takes about 1 min (host-assisted
//!   copy, 68 s Pending to Bound in the first measurement) and 1.5 min (CSI clone); a 100 GB
//!   image 15 and 5 min.
//! - harvester#6197: a 150 GB image with one copy; the first VM from it stays Starting for
//!   20+ minutes while Longhorn copies it to the replicas' disks (about 125 MB/s).
//! - harvester#1918, #1553, rancher/rancher#36520: the guest agent is active within a
//!   minute of boot, but the IP showed 5 to 7 minutes after boot on the KubeVirt of
//!   Harvester 1.0; harvester#3990: virt-launcher re-reads the guest's interfaces every
//!   120 s.
//! - harvester#7018 and the node driver (docker-machine-driver-harvester `harvester/
//!   create.go`, `waitForState` and `waitForIP`: 120 tries 5 s apart each): after ten
//!   minutes without a Running VM or an IP the machine fails, and Rancher deletes and
//!   recreates it.
//! - Provisioning logs with timestamps: harvester#4607 (node driver, first provisioning:
//!   machines to the init node's infrastructure 164 s, agent check-in 6 s, probes 86 s
//!   and more), harvester#4358 (node driver, an etcd node joining: VM to infrastructure
//!   ready 126 s, check-in 8 s, RKE2 and probes 48 s), harvester#3328 (custom RKE2 nodes:
//!   init plan to probes 70 s, to the join-URL wait 86 s, joiners' plans 10 s later) and
//!   rancher/rancher#39109 (K3s: init check-in to probes 48 s, cluster agent connected 62 s
//!   later, joiners' plans 16 s after that).
//! - harvester#10188: in 1 run of 7 the cluster agent never connected.
//! - The reference design: about ninety seconds of boot and cloud-init with a prepared
//!   image, about eight minutes with a generic one that installs packages.

use serde::Serialize;

/// One duration of the model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Constant {
    /// A stable key (`root_disk`, `rke2_init`, ...).
    pub key: &'static str,
    /// The step, in words.
    pub what: &'static str,
    pub value_s: f64,
    pub low_s: f64,
    pub high_s: f64,
    /// Where the figure and its range come from.
    pub source: &'static str,
}

/// The durations by name, in the order a delivery meets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum K {
    RancherCreate,
    ProvisionJob,
    RootDisk,
    AgentStartPrepared,
    CloudInitPrepared,
    CloudInitGeneric,
    IpReport,
    AgentCheckin,
    Rke2Init,
    ClusterAgent,
    JoinUrl,
    Rke2Join,
    Rke2Worker,
    Ready,
    Recreate,
}

pub(crate) const TABLE: [Constant; 15] = [
    Constant {
        key: "rancher_create",
        what: "Rancher creates the cluster's machines",
        value_s: 10.0,
        low_s: 2.0,
        high_s: 30.0,
        source: "assumption: Rancher's provisioning controllers create the CAPI Cluster, MachineDeployments and Machines in one pass; no published log times it",
    },
    Constant {
        key: "provision_job",
        what: "machine-provision Job starts the node driver, which creates the VM",
        value_s: 15.0,
        low_s: 5.0,
        high_s: 60.0,
        source: "assumption: one Job per machine (rancher pkg/controllers/capr/machineprovision); bounded by harvester#4358 and #4607, where the whole VM creation took 126 s and 164 s",
    },
    Constant {
        key: "root_disk",
        what: "root disk from the image on its disks, VM started",
        value_s: 30.0,
        low_s: 10.0,
        high_s: 90.0,
        source: "harvester#9344 (3.5 GB image: about 1 min with a full copy, 1.5 min by CSI clone; a backing image already on the disk needs no copy); bounded by harvester#4358 and #4607",
    },
    Constant {
        key: "agent_start_prepared",
        what: "boot until the guest agent runs (prepared image)",
        value_s: 45.0,
        low_s: 30.0,
        high_s: 60.0,
        source: "harvester#1918: qemu-guest-agent active within a minute after boot",
    },
    Constant {
        key: "cloud_init_prepared",
        what: "boot and cloud-init with a prepared image",
        value_s: 90.0,
        low_s: 60.0,
        high_s: 120.0,
        source: "the reference design: about ninety seconds; range from harvester#1918 (agent within a minute) to two minutes (assumption)",
    },
    Constant {
        key: "cloud_init_generic",
        what: "boot and cloud-init installing packages (generic image)",
        value_s: 480.0,
        low_s: 300.0,
        high_s: 600.0,
        source: "the reference design: about eight minutes; harvester#1553: the IP about 6 minutes after deployment with the agent installed by cloud-init",
    },
    Constant {
        key: "ip_report",
        what: "the VM's IP reaches Harvester through the guest agent",
        value_s: 60.0,
        low_s: 0.0,
        high_s: 120.0,
        source: "harvester#3990: virt-launcher re-reads the guest's interfaces every 120 s (half of it on average); the driver polls every 5 s (create.go waitForIP); 5-7 min on Harvester 1.0 (harvester#1553, rancher/rancher#36520)",
    },
    Constant {
        key: "agent_checkin",
        what: "the system agent checks in and applies its plan",
        value_s: 8.0,
        low_s: 6.0,
        high_s: 24.0,
        source: "harvester#4358 (8 s), harvester#4607 (6 s), rancher/rancher#39109 (24 s)",
    },
    Constant {
        key: "rke2_init",
        what: "init node: RKE2 installed, etcd and control plane probes healthy",
        value_s: 80.0,
        low_s: 40.0,
        high_s: 150.0,
        source: "plan to healthy probes, check-in included: harvester#3328 (86 s), harvester#4607 (more than 92 s), rancher/rancher#39109 (48 s, K3s); upper end an assumption",
    },
    Constant {
        key: "cluster_agent",
        what: "the cluster agent connects to Rancher",
        value_s: 62.0,
        low_s: 30.0,
        high_s: 120.0,
        source: "rancher/rancher#39109 (62 s); range an assumption around the one published figure; harvester#10188: it never connected in 1 run of 7",
    },
    Constant {
        key: "join_url",
        what: "join URL published, the joiners' plans written",
        value_s: 16.0,
        low_s: 10.0,
        high_s: 20.0,
        source: "rancher/rancher#39109 (16 s), harvester#3328 (10 s)",
    },
    Constant {
        key: "rke2_join",
        what: "etcd and control-plane joiner: RKE2 joins, probes healthy",
        value_s: 50.0,
        low_s: 40.0,
        high_s: 90.0,
        source: "harvester#4358: an etcd node's plan to healthy probes within 56 s, check-in included; upper end an assumption",
    },
    Constant {
        key: "rke2_worker",
        what: "worker: RKE2 agent installed, node Ready",
        value_s: 60.0,
        low_s: 45.0,
        high_s: 90.0,
        source: "assumption: as a joiner (no published log times a worker alone)",
    },
    Constant {
        key: "ready",
        what: "Rancher marks the cluster Ready",
        value_s: 10.0,
        low_s: 5.0,
        high_s: 30.0,
        source: "assumption: the provisioning controller's next pass after the last node is healthy",
    },
    Constant {
        key: "recreate",
        what: "a machine the driver gave up on is deleted and its replacement started",
        value_s: 60.0,
        low_s: 30.0,
        high_s: 120.0,
        source: "harvester#7018 (the machine fails, is deleted and starts over); the deletion's time is an assumption",
    },
];

/// The node driver's patience: `waitForState(Running)` and then `waitForIP` each try 120
/// times 5 s apart (docker-machine-driver-harvester `harvester/create.go`).
pub(crate) const DRIVER_WAIT_S: f64 = 600.0;
/// Rounds of delete-and-recreate the model follows before it answers "never".
pub(crate) const MAX_ROUNDS: u32 = 12;
/// Longhorn `concurrent-backing-image-replenish-per-node-limit` default (longhorn-manager
/// `types/setting.go`).
pub(crate) const REPLENISH_PER_NODE: u32 = 5;
/// harvester#10188: the cluster agent did not connect in 1 run of 7.
pub(crate) const AGENT_STUCK_RUNS: (u32, u32) = (1, 7);
/// harvester#5251: of 10 VMs created together, some showed no IP after 10 minutes.
pub(crate) const BURST_VMS_IP_LOSS: u32 = 10;
/// The image size when nothing says it: the reference design's ~3.5 GB golden image, the
/// size harvester#9344 measures.
pub(crate) const DEFAULT_IMAGE_BYTES: f64 = 3.5e9;

/// Which end of every range the model runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Value,
    Low,
    High,
}

pub(crate) fn get(k: K, end: End) -> f64 {
    let c = &TABLE[k as usize];
    match end {
        End::Value => c.value_s,
        End::Low => c.low_s,
        End::High => c.high_s,
    }
}

pub(crate) fn constant(k: K) -> &'static Constant {
    &TABLE[k as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lies_in_its_range_and_every_key_is_its_own() {
        let mut keys = std::collections::BTreeSet::new();
        for c in &TABLE {
            assert!(c.low_s <= c.value_s && c.value_s <= c.high_s, "{}", c.key);
            assert!(!c.source.is_empty(), "{}", c.key);
            assert!(keys.insert(c.key), "{} twice", c.key);
        }
        assert_eq!(constant(K::Recreate).key, "recreate");
        assert_eq!(constant(K::RancherCreate).key, "rancher_create");
        assert!((get(K::IpReport, End::High) - 120.0).abs() < 1e-9);
    }
}
