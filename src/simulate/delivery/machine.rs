//! One machine of a delivery, from its Machine object to a VM whose IP Harvester reports
//! and whose system agent runs: what the node driver waits for, in the order it waits.
//!
//! The node driver (docker-machine-driver-harvester `harvester/create.go`, `Create`) creates
//! the VM, then `waitForReady`: `waitForState(Running)` and `waitForIP`, each 120 tries 5 s
//! apart. The VM runs once its root volume is attached; Longhorn starts a replica only
//! when the image's backing file is ready on the replica's disk, and asks for a copy when
//! it is not (longhorn-manager `controller/replica_controller.go`,
//! `GetBackingImagePathForReplicaStarting`). The replica scheduler does not prefer disks
//! that hold the file (`scheduler/replica_scheduler.go`, `getDiskCandidates`: only the
//! backing image's node and disk selectors), so a volume's replicas land on disks without
//! it as often as those disks are. The IP is the VMI's first interface as the guest agent
//! reports it (`harvester/harvester.go`, `GetIP`). Rancher merges its system-agent install
//! script into the machine's user-data (rancher `pkg/controllers/capr/bootstrap/
//! controller.go`), so the agent comes up at the end of cloud-init.
//!
//! When the VM does not run, or shows no IP, within the driver's ten minutes the machine
//! fails and Rancher deletes and recreates it (harvester#7018). A backing-image copy goes
//! on across that: the next VM finds more of it done. A slow boot does not: every round
//! boots again, so a boot past the limit never ends.

use super::constants::{self, DRIVER_WAIT_S, End, K, MAX_ROUNDS, REPLENISH_PER_NODE};
use super::model::{DeliveryInputs, ImageKind, Step};

/// A moment of the delivery and the steps that lead to it, from admission.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ev {
    pub(crate) t: f64,
    pub(crate) path: Vec<Step>,
}

impl Ev {
    pub(crate) fn zero() -> Ev {
        Ev {
            t: 0.0,
            path: Vec::new(),
        }
    }

    /// This moment followed by a step of `dur` seconds.
    pub(crate) fn then(&self, what: &str, machine: Option<&str>, dur: f64, source: &str) -> Ev {
        let mut path = self.path.clone();
        path.push(Step {
            what: what.to_string(),
            machine: machine.map(str::to_string),
            start_s: self.t,
            end_s: self.t + dur,
            source: source.to_string(),
        });
        Ev {
            t: self.t + dur,
            path,
        }
    }

    /// This moment followed by the step constant `k` times, at the `end` of its range.
    pub(crate) fn after(&self, what: &str, machine: Option<&str>, k: K, end: End) -> Ev {
        self.then(
            what,
            machine,
            constants::get(k, end),
            constants::constant(k).key,
        )
    }

    /// The later of two moments (the first on a tie), with its own path.
    pub(crate) fn later(a: &Ev, b: &Ev) -> Ev {
        if b.t > a.t + 1e-9 {
            b.clone()
        } else {
            a.clone()
        }
    }

    pub(crate) fn latest<'a>(evs: impl IntoIterator<Item = &'a Ev>) -> Option<Ev> {
        evs.into_iter().fold(None, |acc: Option<Ev>, e| match acc {
            None => Some(e.clone()),
            Some(a) => Some(Ev::later(&a, e)),
        })
    }
}

/// The backing-image copies these deliveries wait for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Copies {
    /// Probability that at least one of the deliveries' root volumes has a replica on a
    /// disk without the file.
    pub(crate) p_any: f64,
    /// Disks expected to need the file.
    pub(crate) disks: f64,
    /// Seconds until the last of those copies is ready.
    pub(crate) wait_s: f64,
    /// Whether the prediction waits for them (more likely than not).
    pub(crate) waited: bool,
}

/// `n choose r` as a float (r small).
fn choose(n: f64, r: u32) -> f64 {
    (0..r).fold(1.0, |acc, i| acc * (n - f64::from(i)) / f64::from(i + 1))
}

/// The copies: which disks the deliveries' replicas land on (random among the disks, as
/// Longhorn's scheduler is blind to the file), how long one copy takes at the rebuild
/// stream rate with the node's rebuilds sharing its link, in waves of Longhorn's
/// per-node replenish limit, and no faster than the disks that hold the file can serve
/// them (a lower bound: copies that finish serve others too).
pub(crate) fn copies(inp: &DeliveryInputs) -> Copies {
    let on = inp.image.on_disks.value;
    let (n, k) = (
        f64::from(on.disks.max(1)),
        f64::from(on.ready.min(on.disks)),
    );
    let r = inp.storage.replicas.max(1);
    let none = Copies {
        p_any: 0.0,
        disks: 0.0,
        wait_s: 0.0,
        waited: false,
    };
    if k >= n {
        return none;
    }
    let per_delivery: u32 = inp.pools.iter().map(|p| p.count).sum();
    let volumes = f64::from(per_delivery) * f64::from(inp.concurrent.max(1))
        + f64::from(inp.load.vms_in_flight);
    let p_ok = if n >= f64::from(r) {
        (choose(k, r) / choose(n, r)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let p_any = 1.0 - p_ok.powf(volumes);
    let hit = 1.0 - (1.0 - (f64::from(r) / n).min(1.0)).powf(volumes);
    let disks = (n - k) * hit;
    let st = &inp.storage;
    let size_mb = inp.image.size_bytes.value / 1e6;
    let nodes = f64::from(st.nodes.max(1));
    let per_node = (disks / nodes).ceil().max(1.0);
    let at_once = per_node.min(f64::from(REPLENISH_PER_NODE));
    let share = st.node_link_mbps / (at_once + st.rebuild_streams_per_node.value);
    let rate = st.stream_mbps.min(share).max(1e-3);
    let waves = (per_node / f64::from(REPLENISH_PER_NODE)).ceil();
    let served = disks * size_mb / (k.max(1.0) * st.disk_read_mbps.max(1e-3));
    Copies {
        p_any,
        disks,
        wait_s: (waves * size_mb / rate).max(served),
        waited: p_any >= 0.5,
    }
}

/// Whether the boot installs packages (a generic image, or user-data that installs
/// them), and so takes the generic boot.
pub(crate) fn boots_generic(inp: &DeliveryInputs) -> bool {
    inp.image.kind.value == ImageKind::Generic || inp.image.installs_packages.value
}

/// Why a delivery never finishes, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Never(pub(crate) String);

/// The moments of one machine.
#[derive(Debug, Clone)]
pub(crate) struct MachineTimes {
    /// Its infrastructure ready: the driver saw its IP.
    pub(crate) infra: Ev,
    /// Cloud-init done: the system agent runs.
    pub(crate) agent: Ev,
}

/// One machine from its creation (`created`), named `label`; `Err` says why it never
/// comes up.
pub(crate) fn machine(
    inp: &DeliveryInputs,
    end: End,
    copies: &Copies,
    created: &Ev,
    label: &str,
) -> Result<MachineTimes, Never> {
    let c = |k| constants::get(k, end);
    let m = Some(label);
    let vm = created.after(
        "machine-provision job creates the VM",
        m,
        K::ProvisionJob,
        end,
    );
    // Until the VM runs: the copy (when waited for), then the volume and the VM start.
    // Each round of the driver gets ten minutes; the copy goes on between rounds.
    let mut at = vm.clone();
    let mut left = if copies.waited { copies.wait_s } else { 0.0 };
    let mut rounds = 0;
    while c(K::RootDisk) + left > DRIVER_WAIT_S {
        rounds += 1;
        if rounds > MAX_ROUNDS {
            return Err(Never(format!(
                "the backing-image copy ({:.0} min) outlasts {MAX_ROUNDS} rounds of the node driver's ten minutes",
                copies.wait_s / 60.0
            )));
        }
        let round = DRIVER_WAIT_S + c(K::Recreate);
        at = at
            .then(
                "VM not Running in the driver's 10 min; the copy goes on",
                m,
                DRIVER_WAIT_S,
                "copy",
            )
            .after(
                "Rancher deletes and recreates the machine",
                m,
                K::Recreate,
                end,
            );
        left = (left - round).max(0.0);
    }
    if left > 0.0 {
        at = at.then(
            "backing image copied to the replicas' disks",
            m,
            left,
            "copy",
        );
    }
    let disk = at.after("root disk from the image, VM starts", m, K::RootDisk, end);
    if !inp.image.guest_agent.value {
        return Err(Never(
            "the VMs never report an IP: no guest agent in the image and none installed by the user-data; the node driver deletes and recreates each machine every ten minutes (harvester#7018)"
                .into(),
        ));
    }
    let agent_start = if inp.image.kind.value == ImageKind::Prepared {
        ("boot until the guest agent runs", K::AgentStartPrepared)
    } else {
        (
            "boot and cloud-init install the guest agent",
            K::CloudInitGeneric,
        )
    };
    let boot_to_ip = c(agent_start.1) + c(K::IpReport);
    if boot_to_ip > DRIVER_WAIT_S {
        return Err(Never(format!(
            "boot to IP takes {:.0} min, past the node driver's ten minutes (create.go waitForIP): every recreated VM boots again",
            boot_to_ip / 60.0
        )));
    }
    let infra = disk.after(agent_start.0, m, agent_start.1, end).after(
        "IP reported through the guest agent",
        m,
        K::IpReport,
        end,
    );
    let agent = if boots_generic(inp) {
        disk.after(
            "boot and cloud-init (packages installed)",
            m,
            K::CloudInitGeneric,
            end,
        )
    } else {
        disk.after("boot and cloud-init", m, K::CloudInitPrepared, end)
    };
    Ok(MachineTimes { infra, agent })
}
