//! The headroom verdict by re-placement: for every failure domain, take its hosts away,
//! restart every displaced VM greedily as the scheduler would, re-home every lost replica
//! as Longhorn would, and see what is left. Pass only if every scenario places everything.
//! The "keep 25 % free" rule is computed beside it, and disagreements are named.

use rayon::prelude::*;
use serde::Serialize;

use super::placement::{Placement, pick_disk, pick_node};

#[derive(Debug, Clone, Serialize)]
pub struct Slack {
    /// Scheduler-visible free share of the surviving hosts after re-placement.
    pub cpu: f64,
    pub memory: f64,
    /// Free share of the surviving hosts' disks (actual data).
    pub storage: f64,
}

/// Whether the fleet survives: every VM restarted and every replica re-homed after each
/// failure that decides the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HeadroomVerdict {
    Pass,
    Fail,
}

impl HeadroomVerdict {
    pub fn from_pass(pass: bool) -> HeadroomVerdict {
        if pass {
            HeadroomVerdict::Pass
        } else {
            HeadroomVerdict::Fail
        }
    }

    pub fn passes(self) -> bool {
        self == HeadroomVerdict::Pass
    }
}

impl std::fmt::Display for HeadroomVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeadroomVerdict::Pass => "pass",
            HeadroomVerdict::Fail => "fail",
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    pub name: String,
    /// `node` and `rack` scenarios decide the verdict; `power` ones are reported as what-ifs.
    pub kind: &'static str,
    pub failed_hosts: usize,
    pub displaced: usize,
    pub stranded: usize,
    pub displaced_replicas: usize,
    pub stranded_replicas: usize,
    /// Greedy restart stranded VMs that an offline first-fit-decreasing packing places.
    pub better_packing_exists: bool,
    pub slack: Slack,
}

#[derive(Debug, Clone, Serialize)]
pub struct Headroom {
    pub verdict: HeadroomVerdict,
    /// What the "25 % free" rule of thumb says, for comparison.
    pub rule_25pct: HeadroomVerdict,
    pub utilisation: Slack,
    pub scenarios: Vec<ScenarioResult>,
    pub disagreement: Option<String>,
    /// VMs or replicas that could not be placed even with every host up.
    pub unplaced_vms: usize,
    pub unplaced_replicas: usize,
}

fn first_fit_decreasing(pl: &Placement, alive: &[bool], displaced: &[usize]) -> bool {
    let mut free = pl.free.clone();
    let mut order = displaced.to_vec();
    order.sort_by(|&a, &b| {
        pl.vms[b]
            .mem_req
            .total_cmp(&pl.vms[a].mem_req)
            .then(a.cmp(&b))
    });
    let mut extra: Vec<Vec<u32>> = vec![Vec::new(); pl.topo.hosts.len()];
    'vm: for v in order {
        let vm = &pl.vms[v];
        for (n, &up) in alive.iter().enumerate() {
            let blocked = vm
                .group
                .is_some_and(|g| pl.groups[n].contains(&g) || extra[n].contains(&g));
            if up
                && !blocked
                && free.cpu[n] >= vm.cpu_req - 1e-9
                && free.mem[n] >= vm.mem_req - 1e-9
            {
                free.cpu[n] -= vm.cpu_req;
                free.mem[n] -= vm.mem_req;
                if let Some(g) = vm.group {
                    extra[n].push(g);
                }
                continue 'vm;
            }
        }
        return false;
    }
    true
}

/// Re-place what `failed` hosted.
pub fn scenario(pl: &Placement, name: &str, failed: &[usize]) -> ScenarioResult {
    let n = pl.topo.hosts.len();
    let mut alive = vec![true; n];
    for &f in failed {
        alive[f] = false;
    }
    let mut free = pl.free.clone();
    let displaced: Vec<usize> = (0..pl.vms.len())
        .filter(|&v| pl.vm_node[v].is_some_and(|h| !alive[h]))
        .collect();
    let mut extra: Vec<Vec<u32>> = vec![Vec::new(); pl.topo.hosts.len()];
    let mut stranded = Vec::new();
    for &v in &displaced {
        let vm = &pl.vms[v];
        match pick_node(vm, &free, &pl.topo, &pl.groups, &extra, &alive) {
            Some(h) => {
                free.cpu[h] -= vm.cpu_req;
                free.mem[h] -= vm.mem_req;
                if let Some(g) = vm.group {
                    extra[h].push(g);
                }
            }
            None => stranded.push(v),
        }
    }
    let better_packing_exists =
        !stranded.is_empty() && first_fit_decreasing(pl, &alive, &displaced);
    // Longhorn re-homes each lost replica onto a node that does not hold the volume.
    let (mut displaced_replicas, mut stranded_replicas) = (0, 0);
    let mut affected: Vec<usize> = failed
        .iter()
        .flat_map(|&f| pl.vols_on[f].iter().copied())
        .collect();
    affected.sort_unstable();
    affected.dedup();
    for &vi in &affected {
        let mut v = pl.volumes[vi].clone();
        let lost: Vec<(usize, usize)> = v
            .replicas
            .iter()
            .copied()
            .filter(|&(h, _)| !alive[h])
            .collect();
        for (k, _) in lost.iter().enumerate() {
            displaced_replicas += 1;
            let draw = (displaced_replicas as u64) << 8 | k as u64;
            match pick_disk(&v, &free, &pl.topo, &pl.rules, &alive, draw) {
                Some((h, d)) => {
                    free.add_replica(&pl.topo, h, d, &v);
                    v.replicas.push((h, d));
                }
                None => stranded_replicas += 1,
            }
        }
    }
    let (mut ac, mut am, mut fc, mut fm, mut smax, mut sused) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for (h, host) in pl.topo.hosts.iter().enumerate() {
        if !alive[h] {
            continue;
        }
        ac += host.cpu;
        am += host.mem_gib;
        fc += free.cpu[h];
        fm += free.mem[h];
        for (d, max) in host.disks.iter().enumerate() {
            smax += max;
            sused += free.disk[h][d].1;
        }
    }
    let share = |f: f64, t: f64| if t > 0.0 { f / t } else { 0.0 };
    ScenarioResult {
        name: name.to_string(),
        kind: if name.starts_with("node ") {
            "node"
        } else if name.starts_with("rack ") {
            "rack"
        } else {
            "power"
        },
        failed_hosts: failed.len(),
        displaced: displaced.len(),
        stranded: stranded.len(),
        displaced_replicas,
        stranded_replicas,
        better_packing_exists,
        slack: Slack {
            cpu: share(fc, ac),
            memory: share(fm, am),
            storage: share(smax - sused, smax),
        },
    }
}

/// Every failure domain of the topology, in parallel; results in domain order.
pub fn analyse(pl: &Placement) -> Headroom {
    let domains = pl.topo.failure_domains();
    let scenarios: Vec<ScenarioResult> = domains
        .par_iter()
        .map(|(name, hosts)| scenario(pl, name, hosts))
        .collect();
    let all_placed = pl.stranded_vms == 0 && pl.stranded_replicas == 0;
    let counts = |s: &&ScenarioResult| s.kind != "power";
    let pass = all_placed
        && scenarios
            .iter()
            .filter(counts)
            .all(|s| s.stranded == 0 && s.stranded_replicas == 0);
    let (c, m, s) = pl.utilisation();
    let rule = c <= 0.75 && m <= 0.75 && s <= 0.75;
    let disagreement = match (pass, rule) {
        (true, false) => Some(
            "the 25 % rule fails but every failure is survived: the fleet is bigger than the rule assumes, so 25 % free is more than needed"
                .to_string(),
        ),
        (false, true) => {
            let worst = scenarios
                .iter()
                .filter(counts)
                .filter(|s| s.stranded > 0 || s.stranded_replicas > 0)
                .max_by_key(|s| (s.stranded, s.stranded_replicas));
            Some(format!(
                "25 % is free, yet {} strands {} VM(s) and {} replica(s): free capacity in total is not free capacity where the VMs can go",
                worst.map_or("placement", |w| w.name.as_str()),
                worst.map_or(pl.stranded_vms, |w| w.stranded),
                worst.map_or(pl.stranded_replicas, |w| w.stranded_replicas)
            ))
        }
        _ => None,
    };
    Headroom {
        verdict: HeadroomVerdict::from_pass(pass),
        rule_25pct: HeadroomVerdict::from_pass(rule),
        utilisation: Slack {
            cpu: c,
            memory: m,
            storage: s,
        },
        scenarios,
        disagreement,
        unplaced_vms: pl.stranded_vms,
        unplaced_replicas: pl.stranded_replicas,
    }
}

/// The minimum slack over the scenarios that decide the verdict, per resource.
pub fn min_slack(h: &Headroom) -> Slack {
    let min = |f: fn(&ScenarioResult) -> f64| {
        h.scenarios
            .iter()
            .filter(|s| s.kind != "power")
            .map(f)
            .fold(f64::INFINITY, f64::min)
    };
    Slack {
        cpu: min(|s| s.slack.cpu),
        memory: min(|s| s.slack.memory),
        storage: min(|s| s.slack.storage),
    }
}
