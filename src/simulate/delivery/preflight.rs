//! The pre-flight: the known causes of a stalled delivery that the inputs show, each with
//! its source, and the checks the inputs do not allow.

use super::constants::{self, AGENT_STUCK_RUNS, BURST_VMS_IP_LOSS, DRIVER_WAIT_S, End, K};
use super::machine::copies;
use super::model::{DeliveryInputs, ImageKind, Prediction, Preflight, Severity, Stall};
use crate::simulate::failure::risk::wilson;

fn stall(kind: &'static str, severity: Severity, message: String, source: &str) -> Stall {
    Stall {
        kind,
        severity,
        message,
        source: source.into(),
    }
}

/// The stall causes visible in `inp`, most serious first; `p` is the prediction made from
/// the same inputs.
pub fn preflight(inp: &DeliveryInputs, p: &Prediction) -> Preflight {
    let mut stalls = Vec::new();
    let mut not_checked = Vec::new();
    let img = &inp.image;
    let vms: u32 = inp.pools.iter().map(|p| p.count).sum::<u32>() * inp.concurrent.max(1);
    if !img.guest_agent.value {
        stalls.push(stall(
            "no-guest-agent",
            Severity::Blocks,
            format!(
                "{} image and its user-data installs no qemu-guest-agent: the VMs never report an IP, and the node driver deletes and recreates each machine every ten minutes",
                match img.kind.value {
                    ImageKind::Generic => "a generic",
                    ImageKind::Prepared => "a prepared",
                }
            ),
            "harvester docs node-driver (the agent is no longer injected since driver v0.6.3); harvester#7018",
        ));
    }
    let agent_start = |end| {
        if img.kind.value == ImageKind::Prepared {
            constants::get(K::AgentStartPrepared, end)
        } else {
            constants::get(K::CloudInitGeneric, end)
        }
    };
    let to_ip = |end| agent_start(end) + constants::get(K::IpReport, end);
    if img.guest_agent.value && to_ip(End::Value) > DRIVER_WAIT_S {
        stalls.push(stall(
            "boot-past-driver-limit",
            Severity::Blocks,
            format!(
                "boot to IP takes {:.0} min, past the node driver's ten minutes: every recreated VM boots again",
                to_ip(End::Value) / 60.0
            ),
            "docker-machine-driver-harvester create.go waitForIP; harvester#7018",
        ));
    } else if img.guest_agent.value && to_ip(End::High) > DRIVER_WAIT_S {
        stalls.push(stall(
            "boot-past-driver-limit",
            Severity::Risk,
            format!(
                "boot to IP takes {:.0} min here, {:.0} min at the slow end: past the node driver's ten minutes a machine is deleted and recreated, and boots again",
                to_ip(End::Value) / 60.0,
                to_ip(End::High) / 60.0
            ),
            "docker-machine-driver-harvester create.go waitForIP; harvester#7018; the reference design (a prepared image boots in about ninety seconds)",
        ));
    }
    let cp = copies(inp);
    if cp.disks > 0.0 {
        let on = img.on_disks.value;
        let size = img.size_bytes.value / 1e9;
        let over = constants::get(K::RootDisk, End::Value) + cp.wait_s > DRIVER_WAIT_S;
        stalls.push(stall(
            "backing-image-missing",
            if cp.waited {
                Severity::Delays
            } else {
                Severity::Risk
            },
            format!(
                "the image's backing file is ready on {} of {} disks: about {:.0} disk(s) need a {size:.1} GB copy first ({:.0} s; {}{})",
                on.ready,
                on.disks,
                cp.disks.ceil(),
                cp.wait_s,
                if cp.p_any >= 0.995 {
                    "a copy is certain".to_string()
                } else {
                    format!("a copy is {:.0} % likely", cp.p_any * 100.0)
                },
                if over {
                    "; past the node driver's ten minutes, so machines are recreated while it runs"
                } else {
                    ""
                }
            ),
            &format!(
                "longhorn-manager replica_controller.go GetBackingImagePathForReplicaStarting; harvester#6197; {}",
                img.on_disks.from
            ),
        ));
    }
    if let Some(n) = inp.replicas_without_room.filter(|n| *n > 0) {
        stalls.push(stall(
            "longhorn-space",
            Severity::Blocks,
            format!(
                "Longhorn has no room for {n} replica(s) of these volumes even with every node up: they stay unscheduled and the VMs never start"
            ),
            "the simulator's placement (Longhorn's replica scheduler)",
        ));
    }
    match inp.network.dhcp {
        Some(false) => stalls.push(stall(
            "vm-network",
            Severity::Blocks,
            "the tenant network has no DHCP: the VMs get no address to report".into(),
            "harvester docs rke2-cluster (the VLAN network needs DHCP)",
        )),
        Some(true) => {}
        None => not_checked.push(
            "DHCP on the tenant VM network: the site does not say (Harvester's node driver needs it)".into(),
        ),
    }
    match inp.network.free_addresses {
        Some(free) if free < vms => stalls.push(stall(
            "vm-network",
            Severity::Blocks,
            format!("the tenant network's pool has {free} free address(es) for {vms} VMs"),
            "site",
        )),
        Some(_) => {}
        None => not_checked
            .push("free addresses in the tenant network's pool: the site does not say".into()),
    }
    let in_flight = inp.load.vms_in_flight + vms;
    if in_flight >= BURST_VMS_IP_LOSS {
        stalls.push(stall(
            "many-in-flight",
            Severity::Risk,
            format!(
                "{in_flight} VMs created at once{}: of 10 VMs created together some showed no IP after 10 minutes",
                match inp.load.deliveries_in_flight.value {
                    0 => String::new(),
                    n => format!(" ({n} delivery(ies) under way besides these)"),
                }
            ),
            "harvester#5251",
        ));
    }
    let (k, n) = AGENT_STUCK_RUNS;
    let [lo, hi] = wilson(u64::from(k), u64::from(n));
    stalls.push(stall(
        "cluster-agent",
        Severity::Risk,
        format!(
            "the cluster agent never connected in {k} run of {n} of a guest cluster (95 % interval {:.0}-{:.0} %): the delivery then waits forever at \"waiting for cluster agent to connect\"",
            lo * 100.0,
            hi * 100.0
        ),
        "harvester#10188",
    ));
    if inp.concurrent > 1 && crate::simulate::delivery::machine::boots_generic(inp) {
        not_checked.push(
            "the package mirror a generic boot installs from, shared by the burst: no published figure, not modelled".into(),
        );
    }
    if p.never.is_some() && !stalls.iter().any(|s| s.severity == Severity::Blocks) {
        stalls.insert(
            0,
            stall(
                "never",
                Severity::Blocks,
                p.never.clone().unwrap_or_default(),
                "the model",
            ),
        );
    }
    stalls.sort_by_key(|s| match s.severity {
        Severity::Blocks => 0,
        Severity::Delays => 1,
        Severity::Risk => 2,
    });
    Preflight {
        stalls,
        not_checked,
    }
}
