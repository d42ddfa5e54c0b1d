//! The capacity and failure simulator.
//!
//! `scenario` reads the scenario file (and Rancher cluster files); `topology` is the fleet
//! as a graph of power domains, racks and hosts; `placement` places VMs and Longhorn
//! replicas like the real schedulers; `headroom` re-places after every node, rack and power
//! failure; `rebuild` times Longhorn's re-replication; `risk` runs the Monte Carlo and holds
//! the closed forms it is checked against. [`run`] ties them into one report.

pub mod admit;
pub mod drain;
pub mod headroom;
pub mod live_fleet;
pub mod loader;
pub mod placement;
pub mod rancher;
pub mod rebuild;
pub mod restart;
pub mod risk;
pub mod scenario;
pub mod site_fleet;
pub mod topology;
pub mod whatif;

use rayon::prelude::*;
use serde::Serialize;

use headroom::{Headroom, HeadroomVerdict, Slack};
use loader::Loaded;
use placement::{Placement, workload};
use rebuild::{DiskRoom, Job, NodeCaps, RebuildInput, RebuildResult, Recommendation, SweepPoint};
use risk::{Copysets, FleetRisk, RiskResult};
use scenario::{BondMode, Pool};
use topology::Topology;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: String,
    /// Fail when a failure that decides the verdict strands a VM or a replica, or when the
    /// rebuild after losing a node never restores full redundancy.
    pub verdict: HeadroomVerdict,
    pub verdict_reasons: Vec<String>,
    pub nodes: usize,
    pub racks: usize,
    pub clusters: usize,
    pub vms: usize,
    pub volumes: usize,
    pub vm_restart: restart::Restart,
    pub headroom: Headroom,
    pub max_clusters: Option<MaxClusters>,
    pub timeline: Vec<Month>,
    pub refused: Vec<Refusal>,
    pub rebuild: RebuildReport,
    pub risk: RiskReport,
    pub warnings: Vec<Warning>,
    /// When the verdict fails: the smallest change found that passes.
    pub fix: Option<whatif::Fix>,
    /// Set when the fleet is a dump's (`--from-cluster`): what it held and lacked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<live_fleet::LiveSummary>,
    /// Every input of the analyses with its value and source (dump, scenario, default).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<live_fleet::Assumption>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Warning {
    /// A stable identifier: vms-per-cluster, pods-per-node, rebuild-share,
    /// rebuild-limit-fallback, memory-overcommit, rebuild-source-load, rebuild-abort-limit,
    /// scatter-width.
    pub kind: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct MaxClusters {
    pub shape: String,
    /// The largest n such that every count of additional clusters from 0 to n passes;
    /// `None` when the fleet fails already as it is.
    pub additional: Option<u32>,
    /// The first count that fails (`None`: every count up to `checked_up_to` passes).
    pub first_failure: Option<u32>,
    /// Counts past the first failure that pass again: not safe, since fewer fail.
    pub passes_again: Vec<u32>,
    /// Every count from 0 to this one was placed and checked.
    pub checked_up_to: u32,
    /// Minimum slack over all failure scenarios for N additional clusters (for the plot).
    pub curve: Vec<(u32, Slack, HeadroomVerdict)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Month {
    pub month: String,
    pub clusters: usize,
    pub verdict: HeadroomVerdict,
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
    /// Set when the scenario's rebuild what-if loaded the node with this much data.
    pub what_if_tib: Option<f64>,
    /// The scenario's `concurrent-replica-rebuild-per-node-limit`, which the headline uses.
    pub limit: u32,
    pub replicas_to_rebuild: usize,
    /// Replicas of detached volumes on the node: Longhorn does not rebuild them (unless
    /// offline replica rebuilding is on) until their VM starts.
    pub detached_not_rebuilt: usize,
    pub tib_to_rebuild: f64,
    /// `None`: full redundancy is never restored; `never` says why.
    pub hours_to_full_redundancy: Option<f64>,
    pub never: Option<String>,
    pub bottleneck: String,
    pub aborted_rebuilds: usize,
    pub abort_restarts: usize,
    pub stranded_rebuilds: usize,
    pub blocked_rebuilds: usize,
    /// Per-volume time without full redundancy; `None` when some volume never gets it back.
    pub exposure_hours_max: Option<f64>,
    pub exposure_hours_median: Option<f64>,
    pub peak_link_share: f64,
    pub peak_disk_share: f64,
    pub peak_source_share: f64,
    pub peak_source_streams: usize,
    pub sweep: Vec<SweepPoint>,
    pub recommended_limit: Option<u32>,
    pub recommendation_fell_back: bool,
    pub windows: Vec<rebuild::Window>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RiskReport {
    #[serde(flatten)]
    pub monte_carlo: RiskResult,
    /// Hours a permanently failed node's replicas stay missing in the model, and where the
    /// figure comes from.
    pub exposure_window_h: f64,
    pub exposure_window_from: String,
    pub by_replicas: Vec<ByReplicas>,
    pub correlated: Correlated,
}

#[derive(Debug, Clone, Serialize)]
pub struct ByReplicas {
    pub replicas: u32,
    pub p_data_loss_per_year: f64,
    pub ci95: [f64; 2],
    pub loss_years: u64,
    pub trial_years: u64,
}

/// One figure with how it was obtained.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    pub value: f64,
    /// `exact` (every failure set enumerated) or `independence approximation`.
    pub method: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Correlated {
    pub failed_nodes: u32,
    pub trials: u32,
    pub longhorn_copysets: usize,
    pub longhorn: Estimate,
    pub longhorn_monte_carlo: f64,
    pub longhorn_ci95: [f64; 2],
    pub longhorn_hits: u64,
    pub scatter_width_requested: u32,
    pub scatter_width: u32,
    /// Mean distinct peers per node in the layout built.
    pub scatter_width_measured: f64,
    pub copyset_copysets: usize,
    pub copyset: Estimate,
    pub copyset_monte_carlo: f64,
    pub copyset_ci95: [f64; 2],
    pub copyset_hits: u64,
    /// Set when the comparison means nothing (fewer nodes than replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
}

/// Place `clusters` (shape pool lists) on the scenario's fleet: from scratch, or beside
/// what runs on a dump's fleet.
pub fn place(l: &Loaded, clusters: &[&[Pool]]) -> Placement {
    place_on(l, l.topology(), clusters)
}

/// `place` on `topo`: the fleet's hosts, perhaps with more appended.
pub fn place_on(l: &Loaded, topo: Topology, clusters: &[&[Pool]]) -> Placement {
    let s = &l.scenario;
    let (vms, vols) = workload(clusters, &s.platform);
    match &l.live {
        Some(live) => live.placement.extend(topo, vms, vols, &s.platform),
        None => Placement::build(topo, vms, vols, &s.platform),
    }
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

/// How many counts past the first failure are checked for passing again.
const PASSES_AGAIN_WINDOW: u32 = 16;

/// The largest n such that every count of additional `shape` clusters from 0 to n passes,
/// by placing and checking each count (greedy re-placement is not monotone in the count,
/// so no bisection); then a window past the first failure for counts that pass again.
pub fn max_clusters(l: &Loaded, shape: &str) -> MaxClusters {
    let base = current(l);
    let pools = l.shapes[shape].as_slice();
    let spec = headroom_spec(l, &l.topology());
    let eval = |n: u32| {
        let mut all = base.clone();
        all.extend(std::iter::repeat_n(pools, n as usize));
        let h = headroom::analyse_with(&place(l, &all), &spec);
        (n, h.verdict, headroom::min_slack(&h))
    };
    // Upper bound from raw capacity: no more than fit with nobody failing.
    let topo = l.topology();
    let cpu: f64 = topo.hosts.iter().map(|h| h.cpu).sum::<f64>()
        * l.scenario.platform.overcommit_cpu_pct
        / 100.0;
    let mem: f64 = topo.hosts.iter().map(|h| h.mem_gib).sum::<f64>()
        * l.scenario.platform.overcommit_memory_pct
        / 100.0;
    let running = |p: &&Pool| p.running;
    let need_cpu: f64 = pools
        .iter()
        .filter(running)
        .map(|p| p.vcpu * f64::from(p.count))
        .sum();
    let need_mem: f64 = pools
        .iter()
        .filter(running)
        .map(|p| p.memory_gib * f64::from(p.count))
        .sum();
    let bound = ((cpu / need_cpu.max(1e-9))
        .min(mem / need_mem.max(1e-9))
        .ceil()
        .min(100_000.0) as u32)
        .saturating_add(1);
    // Counts in batches, in parallel, until the first failure.
    let batch = (rayon::current_num_threads() as u32).clamp(2, 8);
    let mut curve: Vec<(u32, Slack, HeadroomVerdict)> = Vec::new();
    let mut first_failure = None;
    let mut next = 0u32;
    while first_failure.is_none() && next <= bound {
        let hi = next.saturating_add(batch - 1).min(bound);
        let got: Vec<_> = (next..=hi).into_par_iter().map(eval).collect();
        for (n, v, slack) in got {
            if first_failure.is_none() {
                curve.push((n, slack, v));
                if !v.passes() {
                    first_failure = Some(n);
                }
            }
        }
        next = hi + 1;
    }
    let mut passes_again = Vec::new();
    let mut checked_up_to = curve.last().map_or(0, |c| c.0);
    if let Some(f) = first_failure {
        let hi = f.saturating_add(PASSES_AGAIN_WINDOW).min(bound);
        let got: Vec<_> = (f + 1..=hi).into_par_iter().map(eval).collect();
        for (n, v, slack) in got {
            if v.passes() {
                passes_again.push(n);
            }
            curve.push((n, slack, v));
        }
        checked_up_to = f;
    }
    MaxClusters {
        shape: shape.to_string(),
        additional: match first_failure {
            Some(0) => None,
            Some(f) => Some(f - 1),
            None => Some(checked_up_to),
        },
        first_failure,
        passes_again,
        checked_up_to,
        curve,
    }
}

/// The headroom checks the scenario asks for, with its named sets resolved to hosts.
pub fn headroom_spec(l: &Loaded, topo: &Topology) -> headroom::Spec {
    let h = &l.scenario.headroom;
    headroom::Spec {
        pairs: h.failures >= 2,
        node_and_rack: h.node_and_rack,
        sets: h
            .sets
            .iter()
            .map(|set| {
                let mut hosts: Vec<usize> = set
                    .nodes
                    .iter()
                    .filter_map(|n| topo.host_index(n))
                    .collect();
                for r in &set.racks {
                    if let Some(ri) = topo.racks.iter().position(|x| x == r) {
                        hosts.extend((0..topo.hosts.len()).filter(|&i| topo.hosts[i].rack == ri));
                    }
                }
                hosts.sort_unstable();
                hosts.dedup();
                headroom::NamedSet {
                    name: set.name.clone(),
                    hosts,
                    plus_any_node: set.plus_any_node,
                }
            })
            .collect(),
    }
}

/// Whether a team request runs in month `m` (started, not yet ended).
pub fn request_active(r: &scenario::TeamRequest, m: i32) -> bool {
    scenario::month_index(&r.from).is_some_and(|f| f <= m)
        && r.until
            .as_deref()
            .and_then(scenario::month_index)
            .is_none_or(|u| m < u)
}

/// vCPU of one cluster of a shape.
pub fn shape_vcpu(l: &Loaded, shape: &str) -> f64 {
    l.shapes[shape]
        .iter()
        .map(|p| p.vcpu * f64::from(p.count))
        .sum()
}

/// The quota rule applied month by month up to `last`: each request arriving in a month is
/// admitted when the team's admitted, still active requests plus it stay within the
/// quota. Returns the admitted (team, request) pairs and the refusals.
pub fn quota_admissions(l: &Loaded, last: i32) -> (Vec<(usize, usize)>, Vec<Refusal>) {
    let s = &l.scenario;
    let mut refused = Vec::new();
    let mut admitted: Vec<(usize, usize)> = Vec::new();
    let mut months: Vec<i32> = s
        .teams
        .iter()
        .flat_map(|t| &t.requests)
        .filter_map(|r| scenario::month_index(&r.from))
        .filter(|&m| m <= last)
        .collect();
    months.sort_unstable();
    months.dedup();
    for m in months {
        for (ti, t) in s.teams.iter().enumerate() {
            for (ri, r) in t.requests.iter().enumerate() {
                if scenario::month_index(&r.from) != Some(m) {
                    continue;
                }
                let used: f64 = admitted
                    .iter()
                    .filter(|(a, b)| *a == ti && request_active(&t.requests[*b], m))
                    .map(|(_, b)| {
                        shape_vcpu(l, &t.requests[*b].shape) * f64::from(t.requests[*b].count)
                    })
                    .sum();
                let want = shape_vcpu(l, &r.shape) * f64::from(r.count);
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
    }
    (admitted, refused)
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
    let spec = headroom_spec(l, &l.topology());
    let (admitted, refused) = quota_admissions(l, last);
    let mut out = Vec::new();
    for m in first..=last {
        let mut all = base.clone();
        for &(ti, ri) in &admitted {
            let r = &s.teams[ti].requests[ri];
            if request_active(r, m) {
                all.extend(std::iter::repeat_n(
                    l.shapes[&r.shape].as_slice(),
                    r.count as usize,
                ));
            }
        }
        let h = headroom::analyse_with(&place(l, &all), &spec);
        out.push(Month {
            month: scenario::month_name(m),
            clusters: all.len() + l.live.as_ref().map_or(0, |f| f.tenant_clusters),
            verdict: h.verdict,
            min_slack: headroom::min_slack(&h),
        });
    }
    (out, refused)
}

/// Rebuild inputs for losing `failed` in a placement; also the replicas of detached
/// volumes that Longhorn leaves alone.
pub fn rebuild_input(
    l: &Loaded,
    pl: &Placement,
    failed: usize,
    limit: u32,
) -> (RebuildInput, usize) {
    let p = &l.scenario.platform;
    let net = &l.scenario.network;
    let eff = rebuild::wire_efficiency(net.mtu);
    let link = net.speed_gbps * 1e9 / 8.0 * eff;
    let links = match net.bond {
        BondMode::Lacp => f64::from(net.links.max(1)),
        BondMode::ActiveBackup => 1.0,
    };
    let survivors: Vec<usize> = (0..pl.topo.hosts.len()).filter(|&n| n != failed).collect();
    let mut index_of = vec![usize::MAX; pl.topo.hosts.len()];
    for (i, &n) in survivors.iter().enumerate() {
        index_of[n] = i;
    }
    let w = p.write_mbps_per_volume * 1e6;
    let mut fg_in = vec![0.0; pl.topo.hosts.len()];
    let mut fg_out = vec![0.0; pl.topo.hosts.len()];
    for vol in pl.volumes.iter().filter(|v| v.attached) {
        for &(n, _) in &vol.replicas {
            fg_in[n] += w;
        }
        if let Some(&Some(h)) = pl.vm_node.get(vol.vm) {
            fg_out[h] += w * vol.replicas.len() as f64;
        }
    }
    let nodes = survivors
        .iter()
        .map(|&n| {
            let h = &pl.topo.hosts[n];
            NodeCaps {
                rack: h.rack,
                ingress: (links * link - fg_in[n]).max(0.0),
                egress: (links * link - fg_out[n]).max(0.0),
                disk_write: (p.disk_write_mbps * 1e6 * h.disks.len().max(1) as f64 - fg_in[n])
                    .max(0.0),
                disk_read: p.disk_read_mbps * 1e6 * h.disks.len().max(1) as f64,
                disks: h
                    .disks
                    .iter()
                    .zip(&pl.free.disk[n])
                    .map(|(&max, &(sched, used))| DiskRoom { max, sched, used })
                    .collect(),
            }
        })
        .collect();
    let on_failed: Vec<usize> = pl.vols_on.get(failed).cloned().unwrap_or_default();
    let rebuilt = |i: &usize| pl.volumes[*i].attached || p.offline_replica_rebuilding;
    let detached = on_failed.iter().filter(|i| !rebuilt(i)).count();
    let jobs = on_failed
        .iter()
        .filter(|i| rebuilt(i))
        .map(|&i| {
            let v = &pl.volumes[i];
            Job {
                volume: i,
                bytes: v.data,
                size: v.size,
                holders: v
                    .replicas
                    .iter()
                    .filter(|&&(n, _)| n != failed)
                    .map(|&(n, _)| index_of[n])
                    .collect(),
            }
        })
        .collect();
    (
        RebuildInput {
            nodes,
            jobs,
            limit,
            stream_rate: p.stream_mbps * 1e6,
            flow_cap: link,
            detect_s: p.detection_s,
            wait_s: p.replenishment_wait_s,
            abort_s: p.rebuild_abort_h * 3600.0,
            rules: pl.rules,
        },
        detached,
    )
}

/// The risk model's view of a placement: copysets, racks, and per node the VMs that restart
/// elsewhere and those that headroom says cannot (`stranded_on[n]`).
pub fn fleet_risk(l: &Loaded, pl: &Placement, window_h: f64, stranded_on: &[usize]) -> FleetRisk {
    let r = l.scenario.platform.replicas as usize;
    let n = pl.topo.hosts.len();
    let running: Vec<f64> = (0..n).map(|h| pl.vms_on[h].len() as f64).collect();
    let stranded: Vec<f64> = (0..n)
        .map(|h| (stranded_on.get(h).copied().unwrap_or(0) as f64).min(running[h]))
        .collect();
    FleetRisk {
        rack_of: pl.topo.hosts.iter().map(|h| h.rack).collect(),
        racks: pl.topo.racks.len(),
        copysets: risk::copysets_of(
            pl.volumes
                .iter()
                .map(|v| v.replicas.iter().map(|&(n, _)| n).collect()),
            r,
        ),
        vms_restartable: running.iter().zip(&stranded).map(|(a, b)| a - b).collect(),
        vms_stranded: stranded,
        failures: l.scenario.failures.clone(),
        window_h,
        vm_restart_s: restart::derive(&l.scenario.platform).seconds,
    }
}

/// The node the rebuild model fails: the one the scenario names, else the one holding the
/// most replica data.
fn rebuild_target(l: &Loaded, pl: &Placement) -> usize {
    let mut data = vec![0.0; pl.topo.hosts.len()];
    for v in &pl.volumes {
        for &(n, _) in &v.replicas {
            data[n] += v.data;
        }
    }
    l.scenario
        .analysis
        .rebuild_node
        .filter(|&n| n < data.len())
        .unwrap_or_else(|| {
            (0..data.len())
                .max_by(|&a, &b| data[a].total_cmp(&data[b]).then(b.cmp(&a)))
                .unwrap_or(0)
        })
}

/// The rebuild after losing `failed`, at the scenario's limit, with the limit sweep.
pub fn rebuild_report(
    l: &Loaded,
    pl: &Placement,
    failed: usize,
    what_if_tib: Option<f64>,
) -> (RebuildReport, RebuildResult) {
    let s = &l.scenario;
    let (input, detached) = rebuild_input(l, pl, failed, s.platform.rebuild_limit);
    let r: RebuildResult = rebuild::simulate(&input);
    let (sweep, rec): (Vec<SweepPoint>, Recommendation) =
        rebuild::sweep(&input, s.analysis.warn.rebuild_share);
    let mut hours: Vec<f64> = r
        .windows
        .iter()
        .map(|w| w.hours.unwrap_or(f64::INFINITY))
        .collect();
    hours.sort_by(f64::total_cmp);
    let finite = |h: Option<&f64>| h.copied().filter(|x| x.is_finite());
    let report = RebuildReport {
        failed_node: pl
            .topo
            .hosts
            .get(failed)
            .map_or_else(String::new, |h| h.name.clone()),
        what_if_tib,
        limit: s.platform.rebuild_limit,
        replicas_to_rebuild: input.jobs.len(),
        detached_not_rebuilt: detached,
        tib_to_rebuild: (r.bytes / 1024f64.powi(4)).max(0.0),
        hours_to_full_redundancy: r.hours_to_full_redundancy,
        never: r.never.clone(),
        bottleneck: r.bottleneck.clone(),
        aborted_rebuilds: r.aborted,
        abort_restarts: r.abort_restarts,
        stranded_rebuilds: r.stranded,
        blocked_rebuilds: r.blocked,
        exposure_hours_max: if hours.is_empty() {
            Some(0.0)
        } else {
            finite(hours.last())
        },
        exposure_hours_median: if hours.is_empty() {
            Some(0.0)
        } else {
            finite(hours.get(hours.len() / 2))
        },
        peak_link_share: r.peak_link_share,
        peak_disk_share: r.peak_disk_share,
        peak_source_share: r.peak_source_share,
        peak_source_streams: r.peak_source_streams,
        sweep,
        recommended_limit: rec.limit,
        recommendation_fell_back: rec.fell_back,
        windows: r.windows.clone(),
    };
    (report, r)
}

/// Whether a fleet passes: headroom, and a rebuild that restores full redundancy.
pub fn passes(l: &Loaded, topo: &Topology, clusters: &[&[Pool]]) -> bool {
    let s = &l.scenario;
    let pl = place_on(l, topo.clone(), clusters);
    if !headroom::analyse_with(&pl, &headroom_spec(l, topo))
        .verdict
        .passes()
    {
        return false;
    }
    // The same rebuild the report runs: the what-if's loaded node, or the fullest one.
    let (pl, failed) = if let Some(w) = &s.rebuild {
        let node = whatif::what_if_node(l, topo, w);
        let Ok(loaded) = whatif::load_node(l, &pl, node, w.data_tib) else {
            return false;
        };
        (loaded, node)
    } else {
        let failed = rebuild_target(l, &pl);
        (pl, failed)
    };
    let (input, _) = rebuild_input(l, &pl, failed, s.platform.rebuild_limit);
    rebuild::simulate(&input).hours_to_full_redundancy.is_some()
}

#[allow(clippy::too_many_lines)] // the report, assembled in the order it is read
pub fn run(l: &Loaded) -> Report {
    let s = &l.scenario;
    let clusters = current(l);
    let pl = place(l, &clusters);
    let topo = pl.topo.clone();
    let headroom = headroom::analyse_with(&pl, &headroom_spec(l, &topo));
    let max_clusters = s
        .analysis
        .max_clusters_shape
        .as_deref()
        .map(|sh| max_clusters(l, sh));
    let (timeline, refused) = timeline(l);

    // Rebuild: the what-if's node loaded with its data, or the placement's fullest node.
    let (rebuild_report, r) = match &s.rebuild {
        Some(w) => {
            let node = whatif::what_if_node(l, &topo, w);
            match whatif::load_node(l, &pl, node, w.data_tib) {
                Ok(loaded) => rebuild_report(l, &loaded, node, Some(w.data_tib)),
                // The loader refuses what does not fit; should it get here, the placed
                // fleet is used.
                Err(_) => rebuild_report(l, &pl, rebuild_target(l, &pl), None),
            }
        }
        None => rebuild_report(l, &pl, rebuild_target(l, &pl), None),
    };

    // Risk, with the rebuild window as the time a failed node's replicas stay missing, or
    // the node's replacement when the rebuild never restores redundancy.
    let (window_h, window_from) = match r.hours_to_full_redundancy {
        Some(h) => (
            h.max(0.01),
            format!(
                "the rebuild model's time to full redundancy after losing {}",
                rebuild_report.failed_node
            ),
        ),
        None => (
            s.failures.node_replacement_hours,
            "failures.node_replacement_hours: the rebuild never restores full redundancy"
                .to_string(),
        ),
    };
    let stranded_on = whatif::stranded_by_node(&headroom, topo.hosts.len());
    let fr = fleet_risk(l, &pl, window_h, &stranded_on);
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
        let pl2 = if l.live.is_some() {
            // Every running volume at `rep` replicas.
            pl.with_replicas(rep as usize)
        } else {
            place(&l2, &clusters)
        };
        let fr2 = fleet_risk(&l2, &pl2, window_h, &stranded_on);
        let res = risk::monte_carlo(
            &fr2,
            s.analysis.risk_years,
            (s.analysis.risk_trials / 4).max(100),
            s.analysis.seed,
        );
        by_replicas.push(ByReplicas {
            replicas: rep,
            p_data_loss_per_year: res.p_data_loss_per_year,
            ci95: res.ci95,
            loss_years: res.loss_years,
            trial_years: res.trial_years,
        });
    }
    let n = topo.hosts.len();
    let f = s.analysis.correlated_failed_nodes.min(n as u32);
    let rr = s.platform.replicas as usize;
    let mut warnings = Vec::new();
    // Scatter width: a multiple of R-1 (one permutation adds R-1 peers), at most N-1.
    let step = (rr.max(2) - 1) as u32;
    let requested = s.analysis.copyset_scatter_width;
    let most = ((n.saturating_sub(1)) as u32 / step * step).max(step);
    let scatter = (requested.div_ceil(step) * step).clamp(step, most);
    if scatter != requested {
        warnings.push(Warning {
            kind: "scatter-width",
            message: format!(
                "copyset scatter width {requested} is not a multiple of replicas - 1 = {step} between {step} and {most} (N - 1 = {}); {scatter} is used",
                n.saturating_sub(1)
            ),
        });
    }
    let cs = Copysets::copyset_replication(n, rr, scatter as usize, s.analysis.seed);
    let what_if_trials = 20_000;
    let (lh_mc, lh_ci) =
        risk::what_if_monte_carlo(&fr.copysets, n, f as usize, what_if_trials, s.analysis.seed);
    let (cs_mc, cs_ci) =
        risk::what_if_monte_carlo(&cs, n, f as usize, what_if_trials, s.analysis.seed);
    let estimate = |sets: &Copysets| match sets.exact_p_loss(n, f as usize, 2e7) {
        Some(v) => Estimate {
            value: v,
            method: "exact",
        },
        None => Estimate {
            value: risk::p_loss_independent(n as u64, rr as u64, u64::from(f), sets.len() as f64),
            method: "independence approximation",
        },
    };
    let hits = |p: f64| (p * f64::from(what_if_trials)).round() as u64;
    let correlated = Correlated {
        failed_nodes: f,
        trials: what_if_trials,
        longhorn_copysets: fr.copysets.len(),
        longhorn: estimate(&fr.copysets),
        longhorn_monte_carlo: lh_mc,
        longhorn_ci95: lh_ci,
        longhorn_hits: hits(lh_mc),
        scatter_width_requested: requested,
        scatter_width: scatter,
        scatter_width_measured: cs.mean_scatter_width(n),
        copyset_copysets: cs.len(),
        copyset: estimate(&cs),
        copyset_monte_carlo: cs_mc,
        copyset_ci95: cs_ci,
        copyset_hits: hits(cs_mc),
        not_compared: (n < rr).then(|| {
            format!(
                "the fleet has fewer nodes ({n}) than replicas ({rr}): no placement can keep a volume's replicas apart, so the copyset comparison is not made"
            )
        }),
    };
    let vm_restart = restart::derive(&s.platform);
    warnings.extend(whatif::warnings(l, &pl, &headroom, &rebuild_report));
    warnings.sort_by_key(|w| w.kind == "scatter-width");

    let mut verdict_reasons = Vec::new();
    if !headroom.verdict.passes() {
        verdict_reasons.push(headroom_reason(&headroom));
    }
    if let Some(why) = &rebuild_report.never {
        verdict_reasons.push(format!(
            "after losing {}, full redundancy is never restored: {why}",
            rebuild_report.failed_node
        ));
    }
    let verdict = HeadroomVerdict::from_pass(verdict_reasons.is_empty());
    let fix = (!verdict.passes()).then(|| whatif::fix(l, &topo, &clusters));
    Report {
        scenario: s.name.clone(),
        verdict,
        verdict_reasons,
        nodes: n,
        racks: topo.racks.len(),
        clusters: clusters.len(),
        vms: pl.vms.len(),
        volumes: pl.volumes.len(),
        vm_restart,
        headroom,
        max_clusters,
        timeline,
        refused,
        rebuild: rebuild_report,
        risk: RiskReport {
            monte_carlo: mc,
            exposure_window_h: window_h,
            exposure_window_from: window_from,
            by_replicas,
            correlated,
        },
        warnings,
        fix,
        live: None,
        assumptions: Vec::new(),
    }
}

/// Why headroom fails, in one sentence.
fn headroom_reason(h: &Headroom) -> String {
    if h.unplaced_vms > 0 || h.unplaced_replicas > 0 {
        return format!(
            "{} VM(s) and {} replica(s) do not fit even with every host up",
            h.unplaced_vms, h.unplaced_replicas
        );
    }
    let failing: Vec<&headroom::ScenarioResult> = h
        .scenarios
        .iter()
        .filter(|s| s.kind.decides() && s.fails())
        .chain(
            h.combined
                .iter()
                .flat_map(|c| c.worst.iter().filter(|s| s.fails())),
        )
        .collect();
    let worst = failing.iter().max_by_key(|s| {
        (
            s.stranded + s.stranded_replicas,
            std::cmp::Reverse(s.name.clone()),
        )
    });
    match worst {
        Some(w) => format!(
            "{} failure scenario(s) strand VMs or replicas; the worst, {}, strands {} VM(s) and {} replica(s)",
            failing.len()
                + h.combined
                    .iter()
                    .map(|c| c
                        .failing
                        .saturating_sub(c.worst.iter().filter(|s| s.fails()).count()))
                    .sum::<usize>(),
            w.name,
            w.stranded,
            w.stranded_replicas
        ),
        None => "a failure scenario strands VMs or replicas".into(),
    }
}
