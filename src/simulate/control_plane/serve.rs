//! What the management nodes can serve: the API server and etcd run on them beside
//! Harvester's own pods, Longhorn's instance managers and whatever VMs were placed there.
//! Each node's machine, less the system reservation, the instance manager's guaranteed CPU
//! (and the memory its volumes take) and the requests of the VMs placed there, is what it
//! has for the control plane; the control plane must survive losing one management node,
//! so the budget is what the others have, less the control plane at rest. That budget, at
//! the published cost per request rate of a control plane of another distribution
//! (OpenShift's hosted control planes on KubeVirt), is the write rate served. VM requests
//! count because the scheduler guarantees them: a management node full of VMs leaves the
//! control plane its reservation only.

use serde::Serialize;

use super::figures::{
    IM_GIB_PER_VOLUME, MANAGERS_DOWN, OCP_GIB_PER_1000, OCP_IDLE_GIB, OCP_IDLE_VCPU,
    OCP_VCPU_PER_1000,
};
use super::fleet::Manager;

/// GB (decimal, the guide's unit) in GiB.
const GB_IN_GIB: f64 = 1e9 / (1024.0 * 1024.0 * 1024.0);

/// The management nodes' budget for the control plane and the writes it serves.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Capacity {
    /// The management nodes and how they were chosen.
    pub nodes: Vec<String>,
    pub nodes_from: String,
    /// CPUs and GiB left for the control plane beyond its load at rest.
    pub cpu_left: f64,
    pub memory_left_gib: f64,
    /// Writes per second that budget serves, and which resource binds (`cpu`, `memory`).
    pub writes_per_s: f64,
    pub bound_by: String,
    /// How the budget was made, in words.
    pub derivation: String,
}

/// The budget of `managers` with `im_cpu_share` of each node kept for Longhorn's
/// instance manager and `reserved` (CPUs, GiB) for the system.
pub(crate) fn capacity(
    managers: &[Manager],
    nodes_from: &str,
    im_cpu_share: f64,
    reserved: (f64, f64),
) -> Capacity {
    let spare: Vec<(f64, f64)> = managers
        .iter()
        .map(|m| spare(m, im_cpu_share, reserved))
        .collect();
    let sum = spare.iter().fold((0.0, 0.0), |a, s| (a.0 + s.0, a.1 + s.1));
    // The node whose loss takes most: the others must carry the control plane.
    let lost = spare
        .iter()
        .copied()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|_| spare.len() as f64 > MANAGERS_DOWN)
        .unwrap_or((0.0, 0.0));
    let cpu = sum.0 - lost.0 - OCP_IDLE_VCPU;
    let mem = sum.1 - lost.1 - OCP_IDLE_GIB;
    let by_cpu = (cpu / OCP_VCPU_PER_1000 * 1000.0).max(0.0);
    let by_mem = (mem / (OCP_GIB_PER_1000 * GB_IN_GIB) * 1000.0).max(0.0);
    let n = managers.len() as f64;
    let threads: f64 = managers.iter().map(|m| m.threads).sum();
    let gib: f64 = managers.iter().map(|m| m.memory_gib).sum();
    let vm_cpu: f64 = managers.iter().map(|m| m.vm_cpu).sum();
    let vm_mem: f64 = managers.iter().map(|m| m.vm_memory_gib).sum();
    let im_mem: f64 = managers.iter().map(|m| m.volumes * IM_GIB_PER_VOLUME).sum();
    Capacity {
        nodes: managers.iter().map(|m| m.name.clone()).collect(),
        nodes_from: nodes_from.to_string(),
        cpu_left: cpu,
        memory_left_gib: mem,
        writes_per_s: by_cpu.min(by_mem),
        bound_by: if by_cpu <= by_mem { "cpu" } else { "memory" }.into(),
        derivation: format!(
            "{n:.0} management node(s), {threads:.0} CPUs and {gib:.0} GiB; less {:.0} CPUs and {:.0} GiB of system reservation, {:.0} % of CPUs for Longhorn's instance managers and {im_mem:.1} GiB for their volumes, and {vm_cpu:.1} CPUs and {vm_mem:.0} GiB requested by the VMs placed there, they have {:.1} CPUs and {:.0} GiB for the control plane; {}less the control plane at rest ({OCP_IDLE_VCPU} CPUs, {OCP_IDLE_GIB} GiB), {cpu:.1} CPUs and {mem:.0} GiB; at {OCP_VCPU_PER_1000} CPUs and {OCP_GIB_PER_1000} GB per 1,000 requests/s that serves {} writes/s ({} binds)",
            reserved.0 * n,
            reserved.1 * n,
            im_cpu_share * 100.0,
            sum.0,
            sum.1,
            if managers.len() as f64 > MANAGERS_DOWN {
                "without the one whose loss takes most, and "
            } else {
                "with no other to take over, "
            },
            crate::words::round_count(by_cpu.min(by_mem)),
            if by_cpu <= by_mem { "CPU" } else { "memory" },
        ),
    }
}

/// What one management node has for the control plane: (CPUs, GiB).
fn spare(m: &Manager, im_cpu_share: f64, reserved: (f64, f64)) -> (f64, f64) {
    (
        m.threads * (1.0 - im_cpu_share) - reserved.0 - m.vm_cpu,
        m.memory_gib - reserved.1 - m.vm_memory_gib - m.volumes * IM_GIB_PER_VOLUME,
    )
}

/// CPUs and GiB each management node needs to serve `rate` writes/s with one of them
/// lost, the VMs, volumes and reservations of `managers` staying where they are (the most
/// any one of them holds, on every node).
pub(crate) fn needed_per_node(
    managers: &[Manager],
    rate: f64,
    im_cpu_share: f64,
    reserved: (f64, f64),
) -> (f64, f64) {
    let left = (managers.len() as f64 - MANAGERS_DOWN).max(1.0);
    let cpu_need = (rate / 1000.0 * OCP_VCPU_PER_1000 + OCP_IDLE_VCPU) / left;
    let mem_need = (rate / 1000.0 * OCP_GIB_PER_1000 * GB_IN_GIB + OCP_IDLE_GIB) / left;
    let most = |f: fn(&Manager) -> f64| managers.iter().map(f).fold(0.0, f64::max);
    let vm_cpu = most(|m| m.vm_cpu);
    let vm_mem = most(|m| m.vm_memory_gib + m.volumes * IM_GIB_PER_VOLUME);
    (
        (cpu_need + vm_cpu + reserved.0) / (1.0 - im_cpu_share),
        mem_need + vm_mem + reserved.1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(threads: f64, gib: f64) -> Manager {
        Manager {
            name: "m".into(),
            threads,
            memory_gib: gib,
            ..Manager::default()
        }
    }

    #[test]
    fn the_budget_follows_the_published_coefficients_and_inverts() {
        // Three 32-thread, 128 GiB nodes, nothing else on them, no reservation: two of
        // them carry the control plane.
        let m = vec![node(32.0, 128.0); 3];
        let c = capacity(&m, "t", 0.12, (0.0, 0.0));
        let cpu = 64.0 * (1.0 - 0.12) - 2.9;
        assert!((c.cpu_left - cpu).abs() < 1e-9);
        assert!((c.writes_per_s - cpu / 9.0 * 1000.0).abs() < 1e-6);
        assert_eq!(c.bound_by, "cpu");
        // The CPUs needed for that rate are the nodes' own.
        let (t, _) = needed_per_node(&m, c.writes_per_s, 0.12, (0.0, 0.0));
        assert!((t - 32.0).abs() < 1e-9, "{t}");
        // VMs placed on a management node take from the budget: the node lost is then
        // another one, with more to lose.
        let mut busy = m.clone();
        busy[0].vm_cpu = 9.0;
        let b = capacity(&busy, "t", 0.12, (0.0, 0.0));
        assert!((c.writes_per_s - b.writes_per_s - 1000.0).abs() < 1e-6);
        // Too small a node serves nothing rather than a negative rate.
        assert!(
            capacity(&[node(2.0, 8.0)], "t", 0.12, (2.0, 8.0))
                .writes_per_s
                .abs()
                < 1e-12
        );
    }
}
