//! The headroom verdict by re-placement: for every failure domain, take its hosts away,
//! restart every displaced VM greedily as the scheduler would, re-home every lost replica
//! as Longhorn would (`place::replace_lost`: the same burst and the same rules the rebuild
//! model's replicas are placed by), and see what is left. Pass only if every scenario
//! places everything. The "keep 25 % free" rule is computed beside it, and disagreements
//! are named.

use rayon::prelude::*;
use serde::Serialize;

use crate::simulate::fleet::Topology;
use crate::simulate::place::Placement;
use crate::simulate::scenario::HeadroomSpec;

use super::pruned;
pub use super::replace::{
    Combined, HeadroomVerdict, Kind, NamedSet, ScenarioResult, Slack, Spec, scenario,
};
use super::replace::{KEEP_WORST, Prepared, domain_kind, scenario_in};
use super::sets::{pairs, plus_any_node, rack_and_node};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Headroom {
    pub verdict: HeadroomVerdict,
    /// What the "25 % free" rule of thumb says, for comparison.
    pub(crate) rule_25pct: HeadroomVerdict,
    pub(crate) utilisation: Slack,
    /// Every node, rack and power domain, then the named sets (the worst case of a set
    /// with `plus_any_node`).
    pub scenarios: Vec<ScenarioResult>,
    /// With `failures: 2`: every pair of nodes, and every rack plus one node if asked.
    pub combined: Vec<Combined>,
    pub(crate) disagreement: Option<String>,
    /// VMs or replicas that could not be placed even with every host up.
    pub(crate) unplaced_vms: usize,
    pub(crate) unplaced_replicas: usize,
}

/// Every failure domain of the topology, in parallel; results in domain order.
pub fn analyse(pl: &Placement) -> Headroom {
    analyse_with(pl, &Spec::default())
}

/// Every failure domain, the named sets and, if asked, every pair of nodes.
pub fn analyse_with(pl: &Placement, spec: &Spec) -> Headroom {
    let domains = pl.topo().failure_domains();
    let prep = Prepared::new(pl);
    let prep = &prep;
    // Every single scenario is re-placed: the report shows each one whole. The families
    // re-place only what the bounds cannot settle, and their worst (`pruned::combined`).
    let combined = pruned::combined;
    let mut scenarios: Vec<ScenarioResult> = domains
        .par_iter()
        .map(|(name, hosts)| scenario_in(pl, prep, name, domain_kind(name), hosts))
        .collect();
    for set in &spec.sets {
        if set.plus_any_node {
            let c = combined(pl, prep, Kind::Set, &plus_any_node(pl.topo(), set), 1);
            scenarios.extend(c.worst);
        } else {
            scenarios.push(scenario_in(pl, prep, &set.name, Kind::Set, &set.hosts));
        }
    }
    let mut combos = Vec::new();
    if spec.pairs {
        combos.push(combined(
            pl,
            prep,
            Kind::Pair,
            &pairs(pl.topo()),
            KEEP_WORST,
        ));
        if spec.node_and_rack {
            let racks = rack_and_node(pl.topo(), &domains);
            combos.push(combined(pl, prep, Kind::NodeAndRack, &racks, KEEP_WORST));
        }
    }
    let all_placed = pl.stranded_vms() == 0 && pl.stranded_replicas() == 0;
    let counts = |s: &&ScenarioResult| s.kind.decides();
    let pass = all_placed
        && scenarios.iter().filter(counts).all(|s| !s.fails())
        && combos.iter().all(|c| c.failing == 0);
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
                .chain(combos.iter().flat_map(|c| c.worst.iter()))
                .filter(|s| s.fails())
                .max_by_key(|s| (s.stranded, s.stranded_replicas));
            Some(format!(
                "25 % is free, yet {} strands {} VM(s) and {} replica(s): free capacity in total is not free capacity where the VMs can go",
                worst.map_or("placement", |w| w.name.as_str()),
                worst.map_or(pl.stranded_vms(), |w| w.stranded),
                worst.map_or(pl.stranded_replicas(), |w| w.stranded_replicas)
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
        combined: combos,
        disagreement,
        unplaced_vms: pl.stranded_vms(),
        unplaced_replicas: pl.stranded_replicas(),
    }
}

/// The minimum slack over the scenarios that decide the verdict, per resource: the plain
/// computation the pruned one (`pruned::verdict_and_min_slack`) is tested against.
#[cfg(test)]
pub(crate) fn min_slack(h: &Headroom) -> Slack {
    let min = |f: fn(&ScenarioResult) -> f64| {
        h.scenarios
            .iter()
            .filter(|s| s.kind.decides())
            .chain(h.combined.iter().flat_map(|c| c.worst.iter()))
            .map(f)
            .fold(f64::INFINITY, f64::min)
    };
    Slack {
        cpu: min(|s| s.slack.cpu),
        memory: min(|s| s.slack.memory),
        storage: min(|s| s.slack.storage),
    }
}

/// The headroom checks a scenario asks for, with its named sets resolved to hosts.
pub(crate) fn spec(h: &HeadroomSpec, topo: &Topology) -> Spec {
    Spec {
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
                NamedSet {
                    name: set.name.clone(),
                    hosts,
                    plus_any_node: set.plus_any_node,
                }
            })
            .collect(),
    }
}

/// Node-failure scenarios of a headroom result, by host index: VMs each strands.
pub(crate) fn stranded_by_node(h: &Headroom, hosts: usize) -> Vec<usize> {
    let mut out = vec![0; hosts];
    for s in h.scenarios.iter().filter(|s| s.kind == Kind::Node) {
        if let Some(&n) = s.hosts.first() {
            out[n] = s.stranded;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::failure::replace::{Scratch, combined_plain, judge, scenario_in_whole};
    use crate::simulate::fleet::Host;
    use crate::simulate::place::workload;
    use crate::simulate::scenario::{Platform, Pool};

    /// From 256 hosts re-placement reads the indexes; the plain scan must reach the same
    /// verdict and re-place the same VMs and replicas.
    #[test]
    fn the_indexed_re_placement_agrees_with_the_plain_scan() {
        let racks: Vec<String> = (0..8).map(|r| format!("r{r}")).collect();
        let hosts: Vec<Host> = (0..300)
            .map(|i| Host {
                name: format!("n{i}"),
                rack: i % 8,
                cpu: 62.0 + (i % 3) as f64,
                mem_gib: 240.0 + (i % 5) as f64 * 8.0,
                disks: vec![2e12, 2e12],
            })
            .collect();
        let topo = Topology::build(hosts, racks, &vec![None; 8]);
        let pools = [
            Pool {
                name: "cp".into(),
                count: 3,
                vcpu: 4.0,
                memory_gib: 8.0,
                disks_gib: vec![60.0],
                anti_affinity: true,
                running: true,
            },
            Pool {
                name: "w".into(),
                count: 3,
                vcpu: 8.0,
                memory_gib: 48.0,
                disks_gib: vec![300.0],
                anti_affinity: false,
                running: true,
            },
        ];
        let p = Platform::default();
        let clusters: Vec<&[Pool]> = std::iter::repeat_n(&pools[..], 200).collect();
        let (vms, vols) = workload(&clusters, &p);
        let pl = Placement::build(topo, vms, vols, &p);
        assert!(pl.scores().is_built());
        let indexed = analyse(&pl);
        let mut plain_pl = pl.clone();
        plain_pl.drop_scores();
        let plain = analyse(&plain_pl);
        assert_eq!(indexed.verdict, plain.verdict);
        for (a, b) in indexed.scenarios.iter().zip(&plain.scenarios) {
            assert_eq!(a.name, b.name);
            assert_eq!(
                (a.displaced, a.displaced_replicas),
                (b.displaced, b.displaced_replicas)
            );
            assert_eq!(a.fails(), b.fails(), "{}", a.name);
            assert!((a.slack.memory - b.slack.memory).abs() < 1e-9, "{}", a.name);
        }
    }

    /// Eight hosts of three sizes in three racks on two feeds.
    fn topology() -> Topology {
        let hosts = (0..8)
            .map(|i| Host {
                name: format!("n{i}"),
                rack: i % 3,
                cpu: [48.0, 64.0, 96.0][i % 3],
                mem_gib: [256.0, 384.0, 512.0][i % 3],
                disks: vec![1.2e12 + (i as f64) * 1e11, 8e11],
            })
            .collect();
        Topology::build(
            hosts,
            vec!["a".into(), "b".into(), "c".into()],
            &[Some("f1".into()), Some("f1".into()), Some("f2".into())],
        )
    }

    fn pools() -> Vec<Pool> {
        let pool = |name: &str, count, vcpu, memory_gib, disk, anti, running| Pool {
            name: name.into(),
            count,
            vcpu,
            memory_gib,
            disks_gib: vec![disk],
            anti_affinity: anti,
            running,
        };
        vec![
            pool("cp", 3, 4.0, 16.0, 40.0, true, true),
            pool("w", 2, 16.0, 48.0, 150.0, false, true),
            pool("off", 1, 8.0, 32.0, 60.0, false, false),
        ]
    }

    /// The pruned families and verdict are the plain ones, exhaustively over every pair,
    /// every rack plus a node and a set plus any node, from an empty fleet to past the
    /// point where everything fails, under the default storage rules and under soft node
    /// anti-affinity with hard zone anti-affinity (where the replica bound stands aside).
    #[test]
    fn pruned_families_and_verdict_are_the_plain_ones_at_every_fill() {
        let shape = pools();
        let spec = Spec {
            pairs: true,
            node_and_rack: true,
            sets: vec![NamedSet {
                name: "rack c".into(),
                hosts: vec![2, 5],
                plus_any_node: true,
            }],
        };
        let mut pruned_some = false;
        for hard_zones in [false, true] {
            let p = Platform {
                replica_soft_anti_affinity: hard_zones,
                replica_zone_soft_anti_affinity: !hard_zones,
                ..Platform::default()
            };
            let mut failing_seen = false;
            for clusters in (0..90).step_by(3) {
                let list: Vec<&[Pool]> = std::iter::repeat_n(&shape[..], clusters).collect();
                let (vms, vols) = workload(&list, &p);
                let pl = Placement::build(topology(), vms, vols, &p);
                let prep = Prepared::new(&pl);
                let domains = pl.topo().failure_domains();
                let families = [
                    (Kind::Pair, pairs(pl.topo()), KEEP_WORST),
                    (
                        Kind::NodeAndRack,
                        rack_and_node(pl.topo(), &domains),
                        KEEP_WORST,
                    ),
                    (Kind::Set, plus_any_node(pl.topo(), &spec.sets[0]), 1),
                ];
                for (kind, sets, keep) in &families {
                    let fast = pruned::combined(&pl, &prep, *kind, sets, *keep);
                    let plain = combined_plain(&pl, &prep, *kind, sets, *keep);
                    assert_eq!(
                        serde_json::to_string(&fast).unwrap(),
                        serde_json::to_string(&plain).unwrap(),
                        "{kind:?} at {clusters} clusters"
                    );
                    failing_seen |= plain.failing > 0;
                    pruned_some |= sets.iter().any(|s| prep.bounds.survives(&s.1));
                }
                let h = analyse_with(&pl, &spec);
                let failures = pruned::Failures::new(pl.topo(), &spec);
                let (v, slack) = pruned::verdict_and_min_slack(&pl, &failures);
                assert_eq!(v, h.verdict, "{clusters}");
                assert_eq!(format!("{slack:?}"), format!("{:?}", min_slack(&h)));
            }
            assert!(failing_seen, "the fill reaches failing pairs");
        }
        assert!(pruned_some, "the bounds settle some scenarios");
    }

    /// Every scenario of `sets` re-placed whole and judged: `judge` gives the whole
    /// re-placement's stranded count and slack, bit for bit; a scenario the bounds prove
    /// survives strands nothing, and its closed-form slack is the re-placement's. Returns
    /// how many were proven, proven only by mass, and failing.
    fn check_bounds(pl: &Placement, sets: &[(String, Vec<usize>)], at: &str) -> [usize; 3] {
        let prep = Prepared::new(pl);
        let bits = |n: usize, x: [f64; 3]| (n, x.map(f64::to_bits));
        let mut counts = [0; 3];
        // One scratch for every set: each judgement puts back what it changed.
        let mut scratch = Scratch::new(pl);
        for (name, hosts) in sets {
            let s = scenario_in_whole(pl, &prep, name, Kind::Pair, hosts);
            // The report's scenario skips re-placing replicas the bounds prove re-homed, and
            // says exactly what the whole re-placement says.
            assert_eq!(
                serde_json::to_string(&scenario_in(pl, &prep, name, Kind::Pair, hosts)).unwrap(),
                serde_json::to_string(&s).unwrap(),
                "{name} at {at}"
            );
            counts[2] += usize::from(s.fails());
            let slack = [s.slack.cpu, s.slack.memory, s.slack.storage];
            let (stranded, judged) = judge(pl, &prep, hosts, &mut scratch);
            assert_eq!(
                bits(stranded, judged),
                bits(s.stranded + s.stranded_replicas, slack),
                "{name} at {at}"
            );
            if prep.bounds.survives(hosts) {
                counts[0] += 1;
                assert!(!s.fails(), "{name} at {at}: proven, yet {s:?}");
                assert_eq!(
                    bits(0, prep.bounds.share(hosts, [0.0; 3])),
                    bits(0, slack),
                    "{name} at {at}: the closed form is the re-placement's slack"
                );
                counts[1] += usize::from(!prep.bounds.survives_by_units(hosts));
            }
        }
        counts
    }

    /// Every scenario the bounds prove survives strands nothing when re-placed, and
    /// judging re-places only what they do not prove yet answers as the whole
    /// re-placement, over every node, rack, pair and rack plus node, from an empty fleet to past full, with
    /// VMs and volumes of several sizes; and the mass bounds prove scenarios that
    /// counting units of the largest VM or replica cannot.
    #[test]
    fn the_bounds_are_sound_and_mass_proves_more_than_units() {
        let shape = pools();
        let hosts: Vec<Host> = (0..24)
            .map(|i| Host {
                name: format!("n{i:02}"),
                rack: i % 4,
                cpu: [48.0, 64.0, 96.0][i % 3],
                mem_gib: [256.0, 384.0, 512.0][i % 3],
                disks: vec![2e12 + (i as f64) * 1e11, 1.6e12],
            })
            .collect();
        let racks: Vec<String> = (0..4).map(|r| format!("r{r}")).collect();
        let topo = Topology::build(hosts, racks, &[None, None, None, None]);
        let (mut proven, mut only_by_mass, mut failing) = (0, 0, 0);
        for zones_soft in [true, false] {
            let p = Platform {
                replica_zone_soft_anti_affinity: zones_soft,
                ..Platform::default()
            };
            for clusters in (0..90).step_by(3) {
                let list: Vec<&[Pool]> = std::iter::repeat_n(&shape[..], clusters).collect();
                let (vms, vols) = workload(&list, &p);
                let pl = Placement::build(topo.clone(), vms, vols, &p);
                let domains = pl.topo().failure_domains();
                let sets: Vec<(String, Vec<usize>)> = domains
                    .iter()
                    .cloned()
                    .chain(pairs(pl.topo()))
                    .chain(rack_and_node(pl.topo(), &domains))
                    .collect();
                let [p, m, f] = check_bounds(&pl, &sets, &format!("{clusters} clusters"));
                proven += p;
                only_by_mass += m;
                failing += f;
            }
        }
        assert!(
            failing > 100,
            "{failing} failing scenarios: the fill goes past full"
        );
        assert!(proven > 1000, "{proven} proven");
        assert!(only_by_mass > 100, "{only_by_mass} proven only by mass");
    }

    /// The bounds stay sound on random fleets: hosts of mixed sizes, pools whose CPU or
    /// memory binds (overcommit from none to 16x), volumes with no data written (where
    /// the replica mass bound stands aside), hard or soft zone anti-affinity; every node,
    /// rack and pair proven to survive strands nothing, and `judge` agrees with the whole
    /// re-placement, from empty to past full.
    #[test]
    fn the_bounds_are_sound_on_random_fleets() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(25);
        let (mut proven, mut failing) = (0, 0);
        for trial in 0..10 {
            let racks = rng.random_range(2..5usize);
            let hosts: Vec<Host> = (0..rng.random_range(8..16usize))
                .map(|i| Host {
                    name: format!("h{i:02}"),
                    rack: i % racks,
                    cpu: [16.0, 32.0, 64.0][rng.random_range(0..3usize)],
                    mem_gib: [64.0, 128.0, 256.0][rng.random_range(0..3usize)],
                    disks: (0..rng.random_range(1..4usize))
                        .map(|_| rng.random_range(2e11..2e12))
                        .collect(),
                })
                .collect();
            let names: Vec<String> = (0..racks).map(|r| format!("r{r}")).collect();
            let topo = Topology::build(hosts, names, &vec![None; racks]);
            let pools: Vec<Pool> = (0..rng.random_range(1..4usize))
                .map(|k| Pool {
                    name: format!("p{k}"),
                    count: rng.random_range(1..4u32),
                    vcpu: f64::from(rng.random_range(1..17u32)),
                    memory_gib: f64::from(rng.random_range(1..65u32)),
                    disks_gib: (0..rng.random_range(0..3usize))
                        .map(|_| f64::from(rng.random_range(10..500u32)))
                        .collect(),
                    anti_affinity: rng.random_bool(0.5),
                    running: rng.random_bool(0.9),
                })
                .collect();
            let p = Platform {
                overcommit_cpu_pct: [100.0, 400.0, 1600.0][rng.random_range(0..3usize)],
                overcommit_memory_pct: [100.0, 150.0][rng.random_range(0..2usize)],
                data_fill: [0.0, 0.3, 0.9][rng.random_range(0..3usize)],
                replica_zone_soft_anti_affinity: rng.random_bool(0.7),
                replica_soft_anti_affinity: rng.random_bool(0.3),
                ..Platform::default()
            };
            for clusters in (0..80).step_by(4) {
                let list: Vec<&[Pool]> = std::iter::repeat_n(&pools[..], clusters).collect();
                let (vms, vols) = workload(&list, &p);
                let pl = Placement::build(topo.clone(), vms, vols, &p);
                let sets: Vec<(String, Vec<usize>)> = pl
                    .topo()
                    .failure_domains()
                    .into_iter()
                    .chain(pairs(pl.topo()))
                    .collect();
                let at = format!("trial {trial}, {clusters} clusters");
                let [p, _, f] = check_bounds(&pl, &sets, &at);
                proven += p;
                failing += f;
            }
        }
        assert!(
            proven > 1000 && failing > 1000,
            "{proven} proven, {failing} failing"
        );
    }
}
