//! The fleet risk model estimated by conditional Monte Carlo, for events far too rare for a
//! plain simulation of years (3 replicas: about one loss in a billion fleet-years).
//!
//! The model is the one `monte_carlo` simulates (fixed repair windows, transient outages,
//! rack events, bursts). Its failures arrive as a marked Poisson process of *clusters*: a
//! node failure with the burst mate it may take along, or a rack event with the nodes it
//! takes. A loss (or an unavailability) starts when a failure event arrives on a node `u`
//! while, for some copyset `C` holding `u`, every other node of `C` is already down. By the
//! Mecke (Slivnyak) formula for Poisson processes, the expected number of such starts per
//! hour is exact as
//!
//!   rate = Σ_s ρ_s · E_mark[ Σ_{events i of the cluster} P(C \ {u_i} ⊆ S ∪ Own_i for some C ∋ u_i) ]
//!
//! where ρ_s is the rate of cluster source `s`, `Own_i` the nodes the cluster itself has
//! down when its event `i` arrives, and `S` the nodes down at a stationary moment, drawn
//! from the *other* clusters. Those in progress at a stationary moment are a Poisson number
//! `J` of mean `M = Σ_s ρ_s E[L_s]` (an M/G/∞ queue: `L` is how long a cluster keeps some
//! node down), each with its mark drawn length-biased and its age uniform. The estimate is
//! therefore stratified on `J`, P(J = j) known exactly, and inside a stratum the `j`
//! clusters in progress are importance-sampled: half of the draws are anchored at a node
//! sharing a copyset with `u` (defensive mixture, so weights stay at most 2). Nothing rare
//! has to happen in a draw: at 3 replicas the stratum J = 2 holds almost all of the rate
//! and about one draw in ten finds a loss.
//!
//! Strata that cannot hold a loss are skipped exactly: a cluster takes nodes of one rack,
//! so a copyset spanning `z` racks needs at least `z - 1` clusters in progress. Strata past
//! `j_max` are bounded (each cluster has at most `members_max` events, each finding at most
//! one loss) and the bound is added to the upper end of the interval.
//!
//! The figure is a rate (expected loss starts per year). The chance of at least one in a
//! year is at most the rate, and equal to it at the precision printed while it is small.

use rand::RngExt;
use rand::rngs::ChaCha8Rng;
use serde::Serialize;

use super::monte_carlo::{FleetRisk, HOURS_PER_YEAR};

/// Longest delay of a burst's second node (Ford et al.: failures within 120 s).
const BURST_SPREAD_H: f64 = 120.0 / 3600.0;
/// Draws per parallel batch: its own random stream, so results do not depend on threads.
pub(super) const BATCH: u32 = 512;
/// A stratum keeps drawing (up to 16 times its first budget) until this many draws hit.
pub(super) const HITS_WANTED: u64 = 200;

/// Which failure events count: losing a replica needs a permanent failure, a volume is
/// unavailable while its nodes are down for any reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    Permanent,
    All,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Stratum {
    /// Clusters of failures in progress when the event arrives.
    pub in_progress: u32,
    /// P(J = in_progress).
    pub(crate) probability: f64,
    pub(crate) draws: u64,
    pub(crate) hits: u64,
    /// This stratum's share of the rate, per year.
    pub per_year: f64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct RareEstimate {
    /// Expected loss (or unavailability) starts per year.
    pub(crate) per_year: f64,
    pub(crate) ci95: [f64; 2],
    pub(crate) draws: u64,
    pub(crate) hits: u64,
    pub(crate) strata: Vec<Stratum>,
    /// Upper bound of the strata not drawn, added to `ci95[1]`.
    pub(crate) tail_bound_per_year: f64,
}

#[derive(Clone, Copy)]
enum Kind {
    NodePermanent(usize),
    NodeTransient(usize),
    Rack(usize),
}

/// One event of a cluster: node, delay from the cluster's start, hours down.
#[derive(Clone, Copy)]
struct Member {
    node: usize,
    offset: f64,
    down: f64,
}

pub(super) struct Model<'a> {
    pub(super) fr: &'a FleetRisk,
    counted: Counted,
    by_rack: Vec<Vec<usize>>,
    /// Per hour.
    lambda_p: f64,
    lambda_t: f64,
    lambda_r: f64,
    q: f64,
    b: f64,
    mean_transient_h: f64,
    /// Copysets as node lists, and per node the copysets holding it and its peers.
    pub(super) sets: Vec<Vec<usize>>,
    sets_of: Vec<Vec<u32>>,
    /// Per node: (another member, copyset) for each copyset holding it, by member; and
    /// whether a copyset holds it alone.
    peers_of: Vec<Vec<(u32, u32)>>,
    alone: Vec<bool>,
    /// Arrival sources and their rates, cumulated.
    arrivals: Vec<Kind>,
    pub(super) arrival_cum: Vec<f64>,
    /// Sources of clusters in progress and their mean numbers in progress, cumulated.
    present: Vec<Kind>,
    pub(super) present_cum: Vec<f64>,
    /// Per node: the in-progress sources anchored at a peer, cumulated, and their mass.
    anchored: Vec<(Vec<u32>, Vec<f64>)>,
}

fn pick(cum: &[f64], x: f64) -> usize {
    cum.partition_point(|&c| c <= x).min(cum.len() - 1)
}

fn exp_h(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

/// Flags of `n` Bernoulli(`p`) trials, at least one of them true (the first true one's
/// index drawn from its truncated geometric law, the rest free).
fn at_least_one(n: usize, p: f64, rng: &mut ChaCha8Rng) -> Vec<bool> {
    let mut flags = vec![false; n];
    if n == 0 {
        return flags;
    }
    let none = (1.0 - p).powf(n as f64);
    let u = rng.random::<f64>() * (1.0 - none);
    // P(first true at index <= i) = 1 - (1-p)^(i+1).
    let mut first = n - 1;
    for i in 0..n {
        if 1.0 - (1.0 - p).powf((i + 1) as f64) > u {
            first = i;
            break;
        }
    }
    flags[first] = true;
    for f in flags.iter_mut().skip(first + 1) {
        *f = rng.random::<f64>() < p;
    }
    flags
}

impl<'a> Model<'a> {
    pub(super) fn new(fr: &'a FleetRisk, counted: Counted) -> Model<'a> {
        let f = &fr.failures;
        let n = fr.rack_of.len();
        let by_rack: Vec<Vec<usize>> = (0..fr.racks)
            .map(|r| (0..n).filter(|&i| fr.rack_of[i] == r).collect())
            .collect();
        let sets: Vec<Vec<usize>> = fr
            .copysets
            .members()
            .filter(|m| m.iter().all(|&x| x < n))
            .collect();
        let mut sets_of = vec![Vec::new(); n];
        for (i, m) in sets.iter().enumerate() {
            for &x in m {
                sets_of[x].push(i as u32);
            }
        }
        let mut peers_of: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut alone = vec![false; n];
        for (i, m) in sets.iter().enumerate() {
            for &x in m {
                let before = peers_of[x].len();
                for &v in m {
                    if v != x {
                        peers_of[x].push((v as u32, i as u32));
                    }
                }
                alone[x] |= peers_of[x].len() == before;
            }
        }
        for p in &mut peers_of {
            p.sort_unstable();
            p.dedup();
        }
        let mut m = Model {
            fr,
            counted,
            by_rack,
            lambda_p: f.node_permanent_per_year.max(0.0) / HOURS_PER_YEAR,
            lambda_t: f.node_transient_per_year.max(0.0) / HOURS_PER_YEAR,
            lambda_r: f.rack_events_per_year.max(0.0) / HOURS_PER_YEAR,
            q: f.rack_event_permanent_share.clamp(0.0, 1.0),
            b: f.burst_fraction.clamp(0.0, 1.0),
            mean_transient_h: f.transient_minutes.max(1e-6) / 60.0,
            sets,
            sets_of,
            peers_of,
            alone,
            arrivals: Vec::new(),
            arrival_cum: Vec::new(),
            present: Vec::new(),
            present_cum: Vec::new(),
            anchored: Vec::new(),
        };
        m.sources();
        m
    }

    fn window(&self) -> f64 {
        self.fr.window_h.max(1e-9)
    }

    fn mate_p(&self, node: usize) -> f64 {
        if self.by_rack[self.fr.rack_of[node]].len() > 1 {
            self.b
        } else {
            0.0
        }
    }

    /// Rate of clusters of this source with an event that counts, per hour.
    fn arrival_rate(&self, k: Kind) -> f64 {
        match k {
            Kind::NodePermanent(_) => self.lambda_p,
            Kind::NodeTransient(_) => match self.counted {
                Counted::All => self.lambda_t,
                Counted::Permanent => 0.0,
            },
            Kind::Rack(r) => {
                let size = self.by_rack[r].len();
                if size == 0 {
                    return 0.0;
                }
                match self.counted {
                    Counted::All => self.lambda_r,
                    Counted::Permanent => self.lambda_r * (1.0 - (1.0 - self.q).powf(size as f64)),
                }
            }
        }
    }

    /// E[L]: how long a cluster keeps some counted node down, on average (given it has a
    /// counted event).
    fn mean_length(&self, k: Kind) -> f64 {
        let w = self.window();
        let shift = BURST_SPREAD_H / 2.0;
        match k {
            Kind::NodePermanent(x) => w + self.mate_p(x) * shift,
            Kind::NodeTransient(x) => self.mean_transient_h + self.mate_p(x) * shift,
            Kind::Rack(r) => {
                let size = self.by_rack[r].len() as f64;
                match self.counted {
                    Counted::Permanent => w,
                    Counted::All => {
                        let h = self.fr.failures.rack_outage_hours.max(0.0);
                        let all = self.q.powf(size);
                        let none = (1.0 - self.q).powf(size);
                        all * w + none * h + (1.0 - all - none).max(0.0) * w.max(h)
                    }
                }
            }
        }
    }

    fn sources(&mut self) {
        let n = self.fr.rack_of.len();
        let mut kinds: Vec<Kind> = Vec::new();
        for x in 0..n {
            kinds.push(Kind::NodePermanent(x));
            kinds.push(Kind::NodeTransient(x));
        }
        kinds.extend((0..self.fr.racks).map(Kind::Rack));
        let mut acc = 0.0;
        for &k in &kinds {
            let r = self.arrival_rate(k);
            if r > 0.0 {
                acc += r;
                self.arrivals.push(k);
                self.arrival_cum.push(acc);
            }
        }
        let mut acc = 0.0;
        let mut mass = Vec::new();
        for &k in &kinds {
            let m = self.arrival_rate(k) * self.mean_length(k);
            if m > 0.0 {
                acc += m;
                self.present.push(k);
                self.present_cum.push(acc);
                mass.push(m);
            }
        }
        // Per node: the in-progress sources at a peer (a node sharing a copyset with it)
        // or at a rack holding one.
        let mut peer = vec![u32::MAX; n];
        let mut rack_mark = vec![u32::MAX; self.fr.racks];
        self.anchored = (0..n)
            .map(|u| {
                let stamp = u as u32;
                for &c in &self.sets_of[u] {
                    for &v in &self.sets[c as usize] {
                        if v != u {
                            peer[v] = stamp;
                            rack_mark[self.fr.rack_of[v]] = stamp;
                        }
                    }
                }
                let mut ids = Vec::new();
                let mut cum = Vec::new();
                let mut acc = 0.0;
                for (i, k) in self.present.iter().enumerate() {
                    let on = match *k {
                        Kind::NodePermanent(x) | Kind::NodeTransient(x) => peer[x] == stamp,
                        Kind::Rack(r) => rack_mark[r] == stamp,
                    };
                    if on {
                        acc += mass[i];
                        ids.push(i as u32);
                        cum.push(acc);
                    }
                }
                (ids, cum)
            })
            .collect();
    }

    /// Fewest racks a copyset spans.
    pub(super) fn min_racks(&self) -> usize {
        self.sets
            .iter()
            .map(|m| {
                let mut r: Vec<usize> = m.iter().map(|&x| self.fr.rack_of[x]).collect();
                r.sort_unstable();
                r.dedup();
                r.len()
            })
            .min()
            .unwrap_or(0)
    }

    pub(super) fn members_max(&self) -> usize {
        self.arrivals
            .iter()
            .map(|k| match *k {
                Kind::NodePermanent(x) | Kind::NodeTransient(x) => {
                    1 + usize::from(self.mate_p(x) > 0.0)
                }
                Kind::Rack(r) => self.by_rack[r].len(),
            })
            .max()
            .unwrap_or(0)
    }

    /// A rack-mate of `x`, uniform over the others (the rack holds at least two nodes).
    fn mate(&self, x: usize, rng: &mut ChaCha8Rng) -> usize {
        let mates = &self.by_rack[self.fr.rack_of[x]];
        let m = mates[rng.random_range(0..mates.len() - 1)];
        if m == x { mates[mates.len() - 1] } else { m }
    }

    /// A cluster as it arrives (its mark drawn from its own law), counted events only.
    fn arrival(&self, k: Kind, rng: &mut ChaCha8Rng) -> Vec<Member> {
        let w = self.window();
        match k {
            Kind::NodePermanent(x) | Kind::NodeTransient(x) => {
                let down = match k {
                    Kind::NodePermanent(_) => w,
                    _ => exp_h(rng, self.mean_transient_h),
                };
                let mut out = vec![Member {
                    node: x,
                    offset: 0.0,
                    down,
                }];
                if rng.random::<f64>() < self.mate_p(x) {
                    out.push(Member {
                        node: self.mate(x, rng),
                        offset: rng.random::<f64>() * BURST_SPREAD_H,
                        down,
                    });
                }
                out
            }
            Kind::Rack(r) => self.rack_members(r, rng),
        }
    }

    /// A rack event's counted members. With `Counted::Permanent` at least one is
    /// permanent (the arrival rate counts only those).
    fn rack_members(&self, r: usize, rng: &mut ChaCha8Rng) -> Vec<Member> {
        let members = &self.by_rack[r];
        let w = self.window();
        let h = self.fr.failures.rack_outage_hours.max(0.0);
        match self.counted {
            Counted::Permanent => at_least_one(members.len(), self.q, rng)
                .iter()
                .zip(members)
                .filter(|(p, _)| **p)
                .map(|(_, &node)| Member {
                    node,
                    offset: 0.0,
                    down: w,
                })
                .collect(),
            Counted::All => members
                .iter()
                .map(|&node| Member {
                    node,
                    offset: 0.0,
                    down: if rng.random::<f64>() < self.q { w } else { h },
                })
                .collect(),
        }
    }

    /// A cluster in progress at a stationary moment: its mark drawn length-biased (a
    /// longer cluster is more likely to be in progress), its age uniform over its length;
    /// the nodes it has down then are pushed to `down`. Returns the length weight (1 except
    /// for rack events counting every outage, where the bias is applied as a weight).
    fn in_progress(&self, k: Kind, rng: &mut ChaCha8Rng, down: &mut Vec<usize>) -> f64 {
        let w = self.window();
        let c = BURST_SPREAD_H;
        match k {
            Kind::NodePermanent(x) | Kind::NodeTransient(x) => {
                let permanent = matches!(k, Kind::NodePermanent(_));
                let mean_d = if permanent { w } else { self.mean_transient_h };
                let b = self.mate_p(x);
                let el = mean_d + b * c / 2.0;
                let with_mate = rng.random::<f64>() < b * (mean_d + c / 2.0) / el;
                let d_biased = |rng: &mut ChaCha8Rng| {
                    if permanent {
                        w
                    } else {
                        exp_h(rng, mean_d) + exp_h(rng, mean_d)
                    }
                };
                let d_plain = |rng: &mut ChaCha8Rng| {
                    if permanent { w } else { exp_h(rng, mean_d) }
                };
                let (d, shift) = if with_mate {
                    if rng.random::<f64>() < mean_d / (mean_d + c / 2.0) {
                        (d_biased(rng), rng.random::<f64>() * c)
                    } else {
                        (d_plain(rng), c * rng.random::<f64>().sqrt())
                    }
                } else {
                    (d_biased(rng), 0.0)
                };
                let len = d + if with_mate { shift } else { 0.0 };
                let age = rng.random::<f64>() * len;
                if age < d {
                    down.push(x);
                }
                if with_mate && age >= shift && age < shift + d {
                    down.push(self.mate(x, rng));
                }
                1.0
            }
            Kind::Rack(r) => {
                let members = self.rack_members(r, rng);
                let len = members.iter().map(|m| m.down).fold(0.0, f64::max);
                let el = self.mean_length(k);
                let age = rng.random::<f64>() * len;
                down.extend(members.iter().filter(|m| age < m.down).map(|m| m.node));
                if el > 0.0 { len / el } else { 0.0 }
            }
        }
    }

    /// Whether some copyset holding `u` has every other node marked down.
    ///
    /// `marked` lists every node marked with `stamp`, once: a copyset completed by them holds one
    /// of them besides `u`, so when few nodes are marked only the copysets `u` shares with
    /// a marked node are looked at, not every copyset of `u`.
    fn completes(&self, u: usize, marks: &[u32], stamp: u32, marked: &[usize]) -> bool {
        if self.fr.copysets.r <= 1 || self.alone[u] {
            return !self.sets_of[u].is_empty();
        }
        let all = |c: u32| {
            self.sets[c as usize]
                .iter()
                .all(|&x| x == u || marks[x] == stamp)
        };
        // Whichever is shorter: every copyset of `u`, or those it shares with a marked node.
        if marked.len() * 4 >= self.sets_of[u].len() {
            return self.sets_of[u].iter().any(|&c| all(c));
        }
        let peers = &self.peers_of[u];
        marked.iter().any(|&v| {
            let from = peers.partition_point(|&(w, _)| (w as usize) < v);
            peers[from..]
                .iter()
                .take_while(|&&(w, _)| w as usize == v)
                .any(|&(_, c)| all(c))
        })
    }

    /// One draw of stratum `j`: a cluster arrives; for each of its counted events, `j`
    /// clusters in progress are drawn (importance-sampled towards the event's peers) and
    /// the loss checked. Returns Σ weight x found.
    pub(super) fn draw(
        &self,
        j: u32,
        rng: &mut ChaCha8Rng,
        marks: &mut [u32],
        stamp: &mut u32,
    ) -> f64 {
        let k = self.arrivals[pick(
            &self.arrival_cum,
            rng.random::<f64>() * Self::total(&self.arrival_cum),
        )];
        let cluster = self.arrival(k, rng);
        let total_present = Self::total(&self.present_cum);
        let mut x = 0.0;
        let mut down = Vec::new();
        let mut marked = Vec::new();
        for (i, e) in cluster.iter().enumerate() {
            *stamp = stamp.wrapping_add(1);
            if *stamp == 0 {
                marks.fill(0);
                *stamp = 1;
            }
            let s = *stamp;
            marked.clear();
            for o in &cluster[..i] {
                if o.offset + o.down > e.offset && o.node != e.node && marks[o.node] != s {
                    marks[o.node] = s;
                    marked.push(o.node);
                }
            }
            let (ids, cum) = &self.anchored[e.node];
            let anchored_mass = cum.last().copied().unwrap_or(0.0);
            let mut weight = 1.0;
            for _ in 0..j {
                let use_anchor = anchored_mass > 0.0 && rng.random::<bool>();
                let idx = if use_anchor {
                    ids[pick(cum, rng.random::<f64>() * anchored_mass)] as usize
                } else {
                    pick(&self.present_cum, rng.random::<f64>() * total_present)
                };
                if anchored_mass > 0.0 {
                    let is_anchored = ids.binary_search(&(idx as u32)).is_ok();
                    let q = 0.5
                        + if is_anchored {
                            0.5 * total_present / anchored_mass
                        } else {
                            0.0
                        };
                    weight /= q;
                }
                down.clear();
                weight *= self.in_progress(self.present[idx], rng, &mut down);
                for &v in &down {
                    if v != e.node && marks[v] != s {
                        marks[v] = s;
                        marked.push(v);
                    }
                }
            }
            if weight > 0.0 && self.completes(e.node, marks, s, &marked) {
                x += weight;
            }
        }
        x
    }

    pub(super) fn total(cum: &[f64]) -> f64 {
        cum.last().copied().unwrap_or(0.0)
    }
}
