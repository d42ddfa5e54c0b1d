//! What a study answers, as data: the review of a fleet (verdict, headroom, growth,
//! rebuild, risk, warnings, the fix), which `crate::report` renders as text, JSON, HTML and
//! Markdown.

use serde::Serialize;

use crate::simulate::failure::headroom::{Headroom, HeadroomVerdict, Slack};
use crate::simulate::failure::rebuild::{NodeLoad, SweepPoint, Window};
use crate::simulate::failure::restart::Restart;
use crate::simulate::failure::risk::{Rate, RiskResult};
use crate::simulate::fleet::{Assumption, LiveSummary};

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
    pub vm_restart: Restart,
    pub headroom: Headroom,
    pub max_clusters: Option<MaxClusters>,
    pub timeline: Vec<Month>,
    pub refused: Vec<Refusal>,
    pub rebuild: RebuildReport,
    pub risk: RiskReport,
    /// Set when the fleet has no volume: "no volumes: rebuild and data-loss risk do not
    /// apply"; the rebuild and risk sections are then not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_volumes: Option<String>,
    pub warnings: Vec<Warning>,
    /// When the verdict fails: the smallest change found that passes.
    pub fix: Option<Fix>,
    /// Set when the fleet is a dump's (`--from-cluster`): what it held and lacked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveSummary>,
    /// Every input of the analyses with its value and source (dump, scenario, default).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<Assumption>,
    /// When and from what the answer was made (set by the command that ran it).
    pub provenance: Option<Provenance>,
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
    /// The search stopped early (`--budget`) with every count checked passing: the answer
    /// is at least `additional`. Only written when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lower_bound: bool,
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
    /// How the recommendation is chosen from the sweep, in words.
    pub recommendation_rule: String,
    /// The Longhorn version modelled and how a new replica's node and disk are chosen.
    pub longhorn: String,
    pub placement_rule: String,
    /// Every node that receives replicas, the slowest first, and the same per rack.
    pub receivers: Vec<NodeLoad>,
    pub by_rack: Vec<RackLoad>,
    /// The same rebuild under the other Longhorn disk rule (most available space up to
    /// v1.10, the balance score from v1.11), to show what the version changes.
    pub other_rule: Option<OtherRule>,
    pub windows: Vec<Window>,
}

/// The sentence given instead of rebuild and risk figures when there is no volume.
pub const NO_VOLUMES: &str = "no volumes: rebuild and data-loss risk do not apply";

/// The receiving side of one rack.
#[derive(Debug, Clone, Serialize)]
pub struct RackLoad {
    pub rack: String,
    /// Its nodes that receive replicas, and its nodes that may (up, schedulable).
    pub receiving_nodes: usize,
    pub nodes: usize,
    pub replicas: usize,
    pub tib: f64,
    /// Transfer hours until its last replica is done; `None`: never.
    pub transfer_hours: Option<f64>,
}

/// The rebuild at the scenario's limit under the other disk rule.
#[derive(Debug, Clone, Serialize)]
pub struct OtherRule {
    pub longhorn: String,
    pub placement_rule: String,
    pub hours_to_full_redundancy: Option<f64>,
    pub bottleneck: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RiskReport {
    /// Set (to `NO_VOLUMES`) when the fleet has no volume; the figures are then absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    #[serde(flatten)]
    pub figures: Option<RiskFigures>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RiskFigures {
    #[serde(flatten)]
    pub estimate: RiskResult,
    /// Hours a permanently failed node's replicas stay missing in the model, and where the
    /// figure comes from.
    pub exposure_window_h: f64,
    pub exposure_window_from: String,
    /// Why the model keeps fixed windows rather than the Markov chain of one replica group,
    /// and how far the two differ for this window.
    pub markov: MarkovNote,
    pub by_replicas: Vec<ByReplicas>,
    pub correlated: Correlated,
}

/// The Markov chain of one replica group (capacity model, section 4.1) next to the fixed
/// window the model uses, for one group of 3 nodes at this window.
#[derive(Debug, Clone, Serialize)]
pub struct MarkovNote {
    /// Losses per year of one 3-node group: fixed windows, as the model uses; the Markov
    /// chain with one repair at a time (the documented formula); and the Markov chain with
    /// every failed node repaired at once.
    pub fixed_window_per_year: f64,
    pub markov_one_repair_per_year: f64,
    pub markov_parallel_repair_per_year: f64,
    pub explanation: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ByReplicas {
    pub replicas: u32,
    pub data_loss: Rate,
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

#[derive(Debug, Clone, Serialize)]
pub struct AddNodes {
    /// The node class (or, with a site fleet, the host) the new nodes copy.
    pub like: String,
    pub count: u32,
    /// The rack of each new node, in order.
    pub racks: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RemoveClusters {
    pub shape: String,
    pub count: u32,
}

/// The smallest changes found that pass, each by placing and checking again.
#[derive(Debug, Clone, Serialize)]
pub struct Fix {
    /// `None`: no count up to `searched_nodes` passes.
    pub add_nodes: Option<AddNodes>,
    pub searched_nodes: u32,
    pub remove_clusters: Option<RemoveClusters>,
    pub searched_clusters: u32,
}

/// When, by which rackplan, and from which inputs a report was made.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    pub generated_at: String,
    pub rackplan: String,
    pub inputs: Vec<crate::files::provenance::InputFile>,
}
