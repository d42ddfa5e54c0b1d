//! The risk model's view of a placement.

use super::copysets::copysets_of;
use super::monte_carlo::FleetRisk;
use crate::simulate::failure::restart;
use crate::simulate::place::Placement;
use crate::simulate::scenario::Scenario;

/// The risk model's view of a placement: copysets, racks, and per node the VMs that restart
/// elsewhere and those that headroom says cannot (`stranded_on[n]`).
pub fn fleet_risk(s: &Scenario, pl: &Placement, window_h: f64, stranded_on: &[usize]) -> FleetRisk {
    let r = s.platform.replicas as usize;
    let n = pl.topo().hosts.len();
    let running: Vec<f64> = (0..n).map(|h| pl.vms_on()[h].len() as f64).collect();
    let stranded: Vec<f64> = (0..n)
        .map(|h| (stranded_on.get(h).copied().unwrap_or(0) as f64).min(running[h]))
        .collect();
    FleetRisk {
        rack_of: pl.topo().hosts.iter().map(|h| h.rack).collect(),
        racks: pl.topo().racks.len(),
        copysets: copysets_of(
            pl.volumes()
                .iter()
                .map(|v| v.replicas.iter().map(|&(n, _)| n).collect()),
            r,
        ),
        vms_restartable: running.iter().zip(&stranded).map(|(a, b)| a - b).collect(),
        vms_stranded: stranded,
        failures: s.failures.clone(),
        window_h,
        vm_restart_s: restart::derive(&s.platform).seconds,
    }
}
