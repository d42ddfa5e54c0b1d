//! The capacity and failure simulator.
//!
//! `scenario` reads the scenario file (and Rancher cluster files); `topology` is the fleet
//! as a graph of power domains, racks and hosts; `placement` places VMs and Longhorn
//! replicas like the real schedulers; `headroom` re-places after every node, rack and power
//! failure; `rebuild` times Longhorn's re-replication; `risk` runs the Monte Carlo and holds
//! the closed forms it is checked against. [`run`] ties them into one report.

pub mod headroom;
pub mod loader;
pub mod placement;
pub mod rancher;
pub mod rebuild;
pub mod risk;
pub mod scenario;
pub mod site_fleet;
pub mod topology;

use serde::Serialize;

use headroom::{Headroom, Slack};
use loader::Loaded;
use placement::{Placement, workload};
use rebuild::{Job, NodeCaps, RebuildInput, RebuildResult, SweepPoint};
use risk::{Copysets, FleetRisk, RiskResult};
use scenario::{BondMode, Pool};

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: String,
    pub nodes: usize,
    pub racks: usize,
    pub clusters: usize,
    pub vms: usize,
    pub volumes: usize,
    pub headroom: Headroom,
    pub max_clusters: Option<MaxClusters>,
    pub timeline: Vec<Month>,
    pub refused: Vec<Refusal>,
    pub rebuild: RebuildReport,
    pub risk: RiskReport,
}

#[derive(Debug, Clone, Serialize)]
pub struct MaxClusters {
    pub shape: String,
    /// Clusters of this shape that fit on top of what runs now, every failure survived.
    pub additional: u32,
    /// Minimum slack over all failure scenarios for N additional clusters (for the plot).
    pub curve: Vec<(u32, Slack, headroom::HeadroomVerdict)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Month {
    pub month: String,
    pub clusters: usize,
    pub verdict: headroom::HeadroomVerdict,
    pub min_slack: Slack,
}

#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    pub team: String,
    pub shape: String,
    pub month: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RebuildReport {
    pub failed_node: String,
    /// The scenario's `concurrent-replica-rebuild-per-node-limit`, which the headline uses.
    pub limit: u32,
    pub replicas_to_rebuild: usize,
    pub tib_to_rebuild: f64,
    pub hours_to_full_redundancy: f64,
    pub bottleneck: String,
    pub aborted_rebuilds: usize,
    pub stranded_rebuilds: usize,
    pub exposure_hours_max: f64,
    pub exposure_hours_median: f64,
    pub sweep: Vec<SweepPoint>,
    pub recommended_limit: u32,
    pub windows: Vec<rebuild::Window>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RiskReport {
    #[serde(flatten)]
    pub monte_carlo: RiskResult,
    pub by_replicas: Vec<(u32, f64, [f64; 2])>,
    pub correlated: Correlated,
}

#[derive(Debug, Clone, Serialize)]
pub struct Correlated {
    pub failed_nodes: u32,
    pub longhorn_copysets: usize,
    pub longhorn_closed_form: f64,
    pub longhorn_monte_carlo: f64,
    pub longhorn_ci95: [f64; 2],
    pub scatter_width: u32,
    pub copyset_closed_form: f64,
    pub copyset_monte_carlo: f64,
    pub copyset_ci95: [f64; 2],
}

/// Place `clusters` (shape pool lists) on the scenario's fleet.
pub fn place(l: &Loaded, clusters: &[&[Pool]]) -> Placement {
    let s = &l.scenario;
    let (vms, vols) = workload(clusters, &s.platform);
    Placement::build(l.topology(), vms, vols, &s.platform)
}

/// The clusters running now, as pool lists.
pub fn current(l: &Loaded) -> Vec<&[Pool]> {
    let mut out = Vec::new();
    for c in &l.scenario.clusters {
        for _ in 0..c.count {
            out.push(l.shapes[&c.shape].as_slice());
        }
    }
    out
}

/// The largest number of additional clusters of `shape` that still passes.
pub fn max_clusters(l: &Loaded, shape: &str) -> MaxClusters {
    let base = current(l);
    let pools = l.shapes[shape].as_slice();
    let eval = |n: u32| {
        let mut all = base.clone();
        all.extend(std::iter::repeat_n(pools, n as usize));
        let h = headroom::analyse(&place(l, &all));
        (h.verdict.passes(), headroom::min_slack(&h))
    };
    // Upper bound from raw capacity: no more than fit with nobody failing.
    let topo = l.topology();
    let cpu: f64 = topo.hosts.iter().map(|h| h.cpu).sum::<f64>()
        * l.scenario.platform.overcommit_cpu_pct
        / 100.0;
    let mem: f64 = topo.hosts.iter().map(|h| h.mem_gib).sum::<f64>()
        * l.scenario.platform.overcommit_memory_pct
        / 100.0;
    let need_cpu: f64 = pools.iter().map(|p| p.vcpu * f64::from(p.count)).sum();
    let need_mem: f64 = pools
        .iter()
        .map(|p| p.memory_gib * f64::from(p.count))
        .sum();
    let hi = ((cpu / need_cpu.max(1e-9))
        .min(mem / need_mem.max(1e-9))
        .ceil() as u32)
        .saturating_add(1)
        .min(100_000);
    let (mut lo, mut hi) = (0u32, hi);
    if !eval(0).0 {
        hi = 0;
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if eval(mid).0 { lo = mid } else { hi = mid - 1 }
    }
    let step = (lo / 8).max(1);
    let mut curve = Vec::new();
    let mut n = 0;
    while n <= lo + 2 * step {
        let (ok, slack) = eval(n);
        curve.push((n, slack, headroom::HeadroomVerdict::from_pass(ok)));
        n += step;
    }
    MaxClusters {
        shape: shape.to_string(),
        additional: lo,
        curve,
    }
}

/// Month by month: clusters arriving and expiring, quotas applied, verdict per month.
pub fn timeline(l: &Loaded) -> (Vec<Month>, Vec<Refusal>) {
    let s = &l.scenario;
    let mut months: Vec<i32> = Vec::new();
    for t in &s.teams {
        for r in &t.requests {
            months.extend(scenario::month_index(&r.from));
            months.extend(r.until.as_deref().and_then(scenario::month_index));
        }
    }
    if months.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let (first, last) = (
        *months.iter().min().expect("not empty"),
        *months.iter().max().expect("not empty"),
    );
    let base = current(l);
    let mut refused = Vec::new();
    let mut admitted: Vec<(usize, usize)> = Vec::new(); // (team, request)
    let vcpu_of = |shape: &str| {
        l.shapes[shape]
            .iter()
            .map(|p| p.vcpu * f64::from(p.count))
            .sum::<f64>()
    };
    let active = |r: &scenario::TeamRequest, m: i32| {
        scenario::month_index(&r.from).is_some_and(|f| f <= m)
            && r.until
                .as_deref()
                .and_then(scenario::month_index)
                .is_none_or(|u| m < u)
    };
    let mut out = Vec::new();
    for m in first..=last {
        for (ti, t) in s.teams.iter().enumerate() {
            for (ri, r) in t.requests.iter().enumerate() {
                if scenario::month_index(&r.from) != Some(m) {
                    continue;
                }
                let used: f64 = admitted
                    .iter()
                    .filter(|(a, b)| *a == ti && active(&t.requests[*b], m))
                    .map(|(_, b)| vcpu_of(&t.requests[*b].shape) * f64::from(t.requests[*b].count))
                    .sum();
                let want = vcpu_of(&r.shape) * f64::from(r.count);
                match t.vcpu_quota {
                    Some(q) if used + want > q + 1e-9 => refused.push(Refusal {
                        team: t.name.clone(),
                        shape: r.shape.clone(),
                        month: scenario::month_name(m),
                        reason: format!("needs {want:.0} vCPU; {:.0} of the team's {q:.0} vCPU quota are in use", used.abs()),
                    }),
                    _ => admitted.push((ti, ri)),
                }
            }
        }
        let mut all = base.clone();
        for &(ti, ri) in &admitted {
            let r = &s.teams[ti].requests[ri];
            if active(r, m) {
                all.extend(std::iter::repeat_n(
                    l.shapes[&r.shape].as_slice(),
                    r.count as usize,
                ));
            }
        }
        let h = headroom::analyse(&place(l, &all));
        out.push(Month {
            month: scenario::month_name(m),
            clusters: all.len(),
            verdict: h.verdict,
            min_slack: headroom::min_slack(&h),
        });
    }
    (out, refused)
}

/// Rebuild inputs for losing `failed` in a placement.
pub fn rebuild_input(l: &Loaded, pl: &Placement, failed: usize, limit: u32) -> RebuildInput {
    let p = &l.scenario.platform;
    let net = &l.scenario.network;
    let eff = rebuild::wire_efficiency(net.mtu);
    let link = net.speed_gbps * 1e9 / 8.0 * eff;
    let links = match net.bond {
        BondMode::Lacp => f64::from(net.links.max(1)),
        BondMode::ActiveBackup => 1.0,
    };
    let survivors: Vec<usize> = (0..pl.topo.hosts.len()).filter(|&n| n != failed).collect();
    let index_of = |n: usize| survivors.iter().position(|&s| s == n);
    let w = p.write_mbps_per_volume * 1e6;
    let mut fg_in = vec![0.0; pl.topo.hosts.len()];
    let mut fg_out = vec![0.0; pl.topo.hosts.len()];
    for vol in &pl.volumes {
        for &(n, _) in &vol.replicas {
            fg_in[n] += w;
        }
        if let Some(h) = pl.vm_node[vol.vm] {
            fg_out[h] += w * vol.replicas.len() as f64;
        }
    }
    let nodes = survivors
        .iter()
        .map(|&n| {
            let h = &pl.topo.hosts[n];
            let room: f64 = h
                .disks
                .iter()
                .enumerate()
                .map(|(d, max)| {
                    (max * (1.0 - p.minimal_available_pct / 100.0) - pl.free.disk[n][d].1).max(0.0)
                })
                .sum();
            NodeCaps {
                rack: h.rack,
                ingress: (links * link - fg_in[n]).max(0.0),
                egress: (links * link - fg_out[n]).max(0.0),
                disk_write: (p.disk_write_mbps * 1e6 * h.disks.len().max(1) as f64 - fg_in[n])
                    .max(0.0),
                disk_read: p.disk_read_mbps * 1e6 * h.disks.len().max(1) as f64,
                room,
            }
        })
        .collect();
    let jobs = pl
        .volumes
        .iter()
        .enumerate()
        .filter(|(_, v)| v.replicas.iter().any(|&(n, _)| n == failed))
        .map(|(i, v)| Job {
            volume: i,
            bytes: v.data,
            holders: v
                .replicas
                .iter()
                .filter(|&&(n, _)| n != failed)
                .filter_map(|&(n, _)| index_of(n))
                .collect(),
        })
        .collect();
    RebuildInput {
        nodes,
        jobs,
        limit,
        stream_rate: p.stream_mbps * 1e6,
        flow_cap: link,
        detect_s: p.detection_s,
        wait_s: p.replenishment_wait_s,
        abort_s: p.rebuild_abort_h * 3600.0,
    }
}

pub fn fleet_risk(l: &Loaded, pl: &Placement, window_h: f64) -> FleetRisk {
    let r = l.scenario.platform.replicas as usize;
    let mut vms_per_node = vec![0.0; pl.topo.hosts.len()];
    for n in pl.vm_node.iter().flatten() {
        vms_per_node[*n] += 1.0;
    }
    FleetRisk {
        rack_of: pl.topo.hosts.iter().map(|h| h.rack).collect(),
        racks: pl.topo.racks.len(),
        copysets: risk::copysets_of(
            pl.volumes
                .iter()
                .map(|v| v.replicas.iter().map(|&(n, _)| n).collect()),
            r,
        ),
        vms_per_node,
        failures: l.scenario.failures.clone(),
        window_h,
        vm_restart_s: l.scenario.platform.vm_restart_s,
    }
}

pub fn run(l: &Loaded) -> Report {
    let s = &l.scenario;
    let clusters = current(l);
    let pl = place(l, &clusters);
    let headroom = headroom::analyse(&pl);
    let max_clusters = s
        .analysis
        .max_clusters_shape
        .as_deref()
        .map(|sh| max_clusters(l, sh));
    let (timeline, refused) = timeline(l);

    // Rebuild: the node holding the most replica data, unless the scenario names one.
    let mut data = vec![0.0; pl.topo.hosts.len()];
    for v in &pl.volumes {
        for &(n, _) in &v.replicas {
            data[n] += v.data;
        }
    }
    let failed = s
        .analysis
        .rebuild_node
        .filter(|&n| n < data.len())
        .unwrap_or_else(|| {
            (0..data.len())
                .max_by(|&a, &b| data[a].total_cmp(&data[b]).then(b.cmp(&a)))
                .unwrap_or(0)
        });
    let input = rebuild_input(l, &pl, failed, s.platform.rebuild_limit);
    let r: RebuildResult = rebuild::simulate(&input);
    let (sweep, recommended_limit) = rebuild::sweep(&input);
    let mut hours: Vec<f64> = r.windows.iter().map(|w| w.hours).collect();
    hours.sort_by(f64::total_cmp);
    let rebuild_report = RebuildReport {
        limit: s.platform.rebuild_limit,
        failed_node: pl
            .topo
            .hosts
            .get(failed)
            .map_or_else(String::new, |h| h.name.clone()),
        replicas_to_rebuild: input.jobs.len(),
        tib_to_rebuild: r.bytes / 1024f64.powi(4),
        hours_to_full_redundancy: r.hours_to_full_redundancy,
        bottleneck: r.bottleneck.clone(),
        aborted_rebuilds: r.aborted,
        stranded_rebuilds: r.stranded,
        exposure_hours_max: hours.last().copied().unwrap_or(0.0),
        exposure_hours_median: hours.get(hours.len() / 2).copied().unwrap_or(0.0),
        sweep,
        recommended_limit,
        windows: r.windows.clone(),
    };

    // Risk, with the rebuild window as the time a failed node's replicas stay missing.
    let window_h = r.hours_to_full_redundancy.max(0.01);
    let fr = fleet_risk(l, &pl, window_h);
    let mc = risk::monte_carlo(
        &fr,
        s.analysis.risk_years,
        s.analysis.risk_trials,
        s.analysis.seed,
    );
    let mut by_replicas = Vec::new();
    for rep in 2..=3u32 {
        let mut l2 = l.clone();
        l2.scenario.platform.replicas = rep;
        let pl2 = place(&l2, &clusters);
        let fr2 = fleet_risk(&l2, &pl2, window_h);
        let res = risk::monte_carlo(
            &fr2,
            s.analysis.risk_years,
            (s.analysis.risk_trials / 4).max(100),
            s.analysis.seed,
        );
        by_replicas.push((rep, res.p_data_loss_per_year, res.ci95));
    }
    let n = pl.topo.hosts.len();
    let f = s.analysis.correlated_failed_nodes.min(n as u32);
    let rr = s.platform.replicas as usize;
    let cs = Copysets::copyset_replication(
        n,
        rr,
        s.analysis.copyset_scatter_width as usize,
        s.analysis.seed,
    );
    let what_if_trials = 20_000;
    let (lh_mc, lh_ci) =
        risk::what_if_monte_carlo(&fr.copysets, n, f as usize, what_if_trials, s.analysis.seed);
    let (cs_mc, cs_ci) =
        risk::what_if_monte_carlo(&cs, n, f as usize, what_if_trials, s.analysis.seed);
    let correlated = Correlated {
        failed_nodes: f,
        longhorn_copysets: fr.copysets.len(),
        longhorn_closed_form: risk::p_loss_random(
            n as u64,
            rr as u64,
            u64::from(f),
            fr.copysets.len() as f64,
        ),
        longhorn_monte_carlo: lh_mc,
        longhorn_ci95: lh_ci,
        scatter_width: s.analysis.copyset_scatter_width,
        copyset_closed_form: risk::p_loss_copyset(
            n as u64,
            rr as u64,
            u64::from(s.analysis.copyset_scatter_width),
            u64::from(f),
        ),
        copyset_monte_carlo: cs_mc,
        copyset_ci95: cs_ci,
    };
    Report {
        scenario: s.name.clone(),
        nodes: n,
        racks: pl.topo.racks.len(),
        clusters: clusters.len(),
        vms: pl.vms.len(),
        volumes: pl.volumes.len(),
        headroom,
        max_clusters,
        timeline,
        refused,
        rebuild: rebuild_report,
        risk: RiskReport {
            monte_carlo: mc,
            by_replicas,
            correlated,
        },
    }
}
