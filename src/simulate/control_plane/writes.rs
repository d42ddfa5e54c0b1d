//! Writes per second to the API server: the steady load of heartbeats and status updates,
//! and the storms rackplan simulates on top of it. Each rate is a period read in the
//! controller's source (or Kubernetes' documented default) per object that has it; each
//! storm counts the writes one VM restart, migration, creation or replica rebuild makes
//! (`figures`) over the time the controllers take for it.
//!
//! - Node loss: the lost host's running VMs restart elsewhere together once
//!   `vm-force-reset-policy` lets them, over the minute a VM takes to start; then its
//!   replicas rebuild, as many at once as `concurrent-replica-rebuild-per-node-limit`
//!   allows on the nodes left, each updating its Engine at every engine poll.
//! - Rack loss: the same for the worst rack.
//! - Rolling upgrade: one node drained at a time, as many live migrations at once as
//!   KubeVirt allows per node and cluster, each lasting what `place::migration` says.
//! - Delivery burst: the clusters requested in the busiest month created at once.
//!
//! A write rewrites its whole object in etcd, so the history a compaction window keeps is
//! each write times its object's size.

use serde::Serialize;

use super::figures::{
    COMPACTION_S, DISK_MONITOR_S, ENGINE_POLL_S, EVENT_BYTES, EVENTS_PER_START,
    LEADER_LEASE_WRITES, LEASE_RENEW_S, MIGRATION_WRITES, NODE_STATUS_S, OLD_INSTANCE_WRITES,
    POD_WRITES, REPLICA_WRITES_CREATE, REPLICA_WRITES_LOST, REPLICA_WRITES_REBUILT, SIZE_UPDATE_S,
    VIRT_HANDLER_HEARTBEAT_S, VM_START_S, VM_STATUS_WRITES, VMI_WRITES_PER_START,
    VOLUME_WRITES_CREATE, VOLUME_WRITES_MIGRATE, VOLUME_WRITES_MOVE,
};
use super::fleet::{Counts, Loss};
use super::objects::Objects;

/// One source of steady writes.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SteadyPart {
    pub what: String,
    pub per_s: f64,
}

/// A storm on top of the steady load.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Storm {
    /// `node loss`, `rack loss`, `rolling upgrade`, `delivery burst`.
    pub name: String,
    /// What it does, in words (which node, how many VMs).
    pub what: String,
    /// Writes it makes, and the rate of its busiest phase on top of the steady load.
    pub writes: f64,
    pub peak_per_s: f64,
    /// Its busiest phase, in words.
    pub phase: String,
    /// Bytes its writes and events put in etcd's history within one compaction window.
    #[serde(skip)]
    pub history_bytes: f64,
}

/// Writes one VM start makes besides its volumes (VM, VMI, Pod, events).
fn start_writes() -> f64 {
    VM_STATUS_WRITES + 1.0 + VMI_WRITES_PER_START + POD_WRITES + EVENTS_PER_START
}

/// Writes one new VM with `volumes` disks of `replicas` copies makes.
pub(crate) fn create_writes(volumes: f64, replicas: f64) -> f64 {
    1.0 + start_writes() + volumes * (VOLUME_WRITES_CREATE + replicas * REPLICA_WRITES_CREATE)
}

/// Writes one VM restarted elsewhere with `volumes` attached disks makes.
pub(crate) fn restart_writes(volumes: f64) -> f64 {
    OLD_INSTANCE_WRITES + start_writes() + volumes * VOLUME_WRITES_MOVE
}

/// Writes one live migration with `volumes` disks makes.
pub(crate) fn migration_writes(volumes: f64) -> f64 {
    MIGRATION_WRITES + volumes * VOLUME_WRITES_MIGRATE
}

/// Volumes whose volume-head grows: every attached one when the platform says volumes
/// are written (`platform.write_mbps_per_volume`), else none. Longhorn writes a growing
/// volume's size at most once per 30 s, so this is a ceiling.
fn growing(c: &Counts, written: bool) -> f64 {
    if written { c.attached } else { 0.0 }
}

/// The steady writes of a fleet of counts `c`, by source; `written`: its volumes take
/// writes.
pub(crate) fn steady(c: &Counts, written: bool) -> Vec<SteadyPart> {
    let part = |what: &str, per_s: f64| SteadyPart {
        what: what.to_string(),
        per_s,
    };
    vec![
        part("kubelet Lease renewals", c.nodes / LEASE_RENEW_S),
        part("kubelet Node status", c.nodes / NODE_STATUS_S),
        part(
            "virt-handler Node heartbeats",
            c.nodes / VIRT_HANDLER_HEARTBEAT_S,
        ),
        part("Longhorn Node disk status", c.nodes / DISK_MONITOR_S),
        part(
            "Longhorn Engine and Volume size of growing volumes (at most one each per 30 s)",
            2.0 * growing(c, written) / SIZE_UPDATE_S,
        ),
        part("controllers' leader-election leases", LEADER_LEASE_WRITES),
    ]
}

/// Bytes per second the steady writes put in etcd's history.
pub(crate) fn steady_bytes(c: &Counts, o: &Objects, written: bool) -> f64 {
    let node = o.bytes_of("Node (v1)");
    c.nodes / LEASE_RENEW_S * o.bytes_of("Lease (coordination.k8s.io)")
        + c.nodes / NODE_STATUS_S * node
        + c.nodes / VIRT_HANDLER_HEARTBEAT_S * node
        + c.nodes / DISK_MONITOR_S * o.bytes_of("Node (longhorn.io)")
        + growing(c, written) / SIZE_UPDATE_S
            * (o.bytes_of("Engine (longhorn.io)") + o.bytes_of("Volume (longhorn.io)"))
        + LEADER_LEASE_WRITES * o.bytes_of("Lease (coordination.k8s.io)")
}

/// Mean etcd bytes of the objects a VM's writes rewrite.
fn mean_object(o: &Objects) -> f64 {
    let kinds = [
        "VirtualMachine (kubevirt.io)",
        "VirtualMachineInstance (kubevirt.io)",
        "Pod (v1)",
        "Volume (longhorn.io)",
        "Engine (longhorn.io)",
        "Replica (longhorn.io)",
    ];
    kinds.iter().map(|k| o.bytes_of(k)).sum::<f64>() / kinds.len() as f64
}

/// A host or rack lost: its VMs restarted, then its replicas rebuilt.
pub(crate) fn loss(name: &str, l: &Loss, rebuild_limit: f64, o: &Objects) -> Storm {
    let per_vm_volumes = if l.vms > 0.0 { l.volumes / l.vms } else { 0.0 };
    let restart = l.vms * restart_writes(per_vm_volumes) + l.replicas * REPLICA_WRITES_LOST;
    let restart_rate = restart / VM_START_S;
    let concurrent = l.replicas.min(rebuild_limit * l.receivers);
    let rebuild_rate = concurrent / ENGINE_POLL_S;
    let rebuild = l.replicas * REPLICA_WRITES_REBUILT;
    let (peak, phase) = if restart_rate >= rebuild_rate {
        (
            restart_rate,
            format!(
                "{:.0} VMs restarting elsewhere within {VM_START_S:.0} s",
                l.vms
            ),
        )
    } else {
        (
            rebuild_rate,
            format!(
                "{concurrent:.0} replicas rebuilding at once, each Engine written every {ENGINE_POLL_S:.0} s"
            ),
        )
    };
    let events = l.vms * EVENTS_PER_START;
    // The restart's writes fall in one compaction window; the rebuild's progress writes
    // go on for hours, a window's worth at a time. Events live an hour either way.
    let restart_history = (restart - events) * mean_object(o);
    let rebuild_history = rebuild_rate * COMPACTION_S * o.bytes_of("Engine (longhorn.io)");
    Storm {
        name: name.to_string(),
        what: format!(
            "{} lost: {:.0} running VMs, {:.0} replicas",
            l.name, l.vms, l.replicas
        ),
        writes: restart + rebuild,
        peak_per_s: peak,
        phase,
        history_bytes: restart_history.max(rebuild_history) + events * EVENT_BYTES,
    }
}

/// The rolling upgrade of a fleet of `running` VMs: `slots` migrations at once, each
/// `seconds` long.
pub(crate) fn upgrade(
    running: f64,
    slots: f64,
    seconds: f64,
    volumes_per_vm: f64,
    o: &Objects,
) -> Storm {
    let per = migration_writes(volumes_per_vm);
    let rate = if seconds > 0.0 && running > 0.0 {
        slots * per / seconds
    } else {
        0.0
    };
    Storm {
        name: "rolling upgrade".into(),
        what: format!(
            "every VM live-migrated, {slots:.0} at a time per draining node, {seconds:.0} s each"
        ),
        writes: per * running,
        peak_per_s: rate,
        phase: format!("{slots:.0} live migrations at once"),
        history_bytes: rate * COMPACTION_S * mean_object(o),
    }
}

/// `clusters` clusters of `d` delivered at once.
pub(crate) fn delivery(
    clusters: f64,
    shape: &str,
    d: &Counts,
    replicas: f64,
    o: &Objects,
) -> Storm {
    let volumes = if d.vms > 0.0 { d.volumes / d.vms } else { 0.0 };
    let vms = clusters * d.vms;
    let writes = vms * create_writes(volumes, replicas);
    let events = vms * EVENTS_PER_START;
    Storm {
        name: "delivery burst".into(),
        what: format!("{clusters:.0} {shape} cluster(s) created at once: {vms:.0} VMs"),
        writes,
        peak_per_s: writes / VM_START_S,
        phase: format!("{vms:.0} VMs created within {VM_START_S:.0} s"),
        history_bytes: (writes - events) * mean_object(o) + events * EVENT_BYTES,
    }
}
