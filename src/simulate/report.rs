//! What a study answers, as data: the review of a fleet (verdict, headroom, growth,
//! rebuild, risk, warnings, the fix), which `crate::report` renders as text, JSON, HTML and
//! Markdown.

use serde::Serialize;

use crate::simulate::failure::headroom::{Headroom, HeadroomVerdict, Slack};
use crate::simulate::failure::rebuild::{DiskLoad, NodeLoad, SweepPoint, Window};
use crate::simulate::failure::restart::Restart;
use crate::simulate::failure::risk::{Rate, RiskResult};
use crate::simulate::fleet::{Assumption, LiveSummary};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Report {
    pub(crate) scenario: String,
    /// Fail when a failure that decides the verdict strands a VM or a replica, or when the
    /// rebuild after losing a node never restores full redundancy.
    pub verdict: HeadroomVerdict,
    pub(crate) verdict_reasons: Vec<String>,
    pub(crate) nodes: usize,
    pub(crate) racks: usize,
    pub clusters: usize,
    pub vms: usize,
    pub(crate) volumes: usize,
    pub vm_restart: Restart,
    pub(crate) headroom: Headroom,
    pub max_clusters: Option<MaxClusters>,
    pub(crate) timeline: Vec<Month>,
    /// Set when the timeline stopped early (`--budget`, or Ctrl-C): the months from this
    /// one on were not checked and are left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) timeline_stopped: Option<TimelineStop>,
    pub(crate) refused: Vec<Refusal>,
    /// The dump's ClusterRequests whose clusters `rackplan operator` deletes at their
    /// `expiresAt`, soonest first. The timeline still counts them as running.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) scheduled_expiries: Vec<crate::simulate::fleet::Expiry>,
    pub rebuild: RebuildReport,
    pub(crate) risk: RiskReport,
    /// Set when the fleet has no volume: "no volumes: rebuild and data-loss risk do not
    /// apply"; the rebuild and risk sections are then not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) no_volumes: Option<String>,
    pub(crate) warnings: Vec<Warning>,
    /// When the verdict fails: the smallest change found that passes.
    pub(crate) fix: Option<Fix>,
    /// Set when the fleet is a dump's (`--from-cluster`): what it held and lacked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) live: Option<LiveSummary>,
    /// Every input of the analyses with its value and source (dump, scenario, default).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<Assumption>,
    /// When and from what the answer was made (set by the command that ran it).
    pub provenance: Option<Provenance>,
    /// The rolling upgrade, when `--upgrade` asked for it with `--report`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<crate::simulate::questions::UpgradeReport>,
    /// Per catalogue shape, the predicted time from admission to a Ready cluster, alone
    /// and in a burst, against the target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery: Option<crate::simulate::delivery::DeliveryReview>,
    /// Harvester's API server and etcd as a capacity limit: objects, etcd size, writes
    /// and their storms, and more clusters until each limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<crate::simulate::control_plane::ControlPlane>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Warning {
    /// A stable identifier: control-plane, pods-per-node, rebuild-share,
    /// rebuild-limit-fallback, memory-overcommit, rebuild-source-load, rebuild-abort-limit,
    /// scatter-width, etcd-snapshots-local.
    pub(crate) kind: &'static str,
    pub(crate) message: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MaxClusters {
    pub(crate) shape: String,
    /// The largest n such that every count of additional clusters from 0 to n passes;
    /// `None` when the fleet fails already as it is.
    pub additional: Option<u32>,
    /// The first count that fails (`None`: every count up to `checked_up_to` passes).
    pub first_failure: Option<u32>,
    /// Counts past the first failure that pass again: not safe, since fewer fail.
    pub passes_again: Vec<u32>,
    /// Every count from 0 to this one was placed and checked.
    pub checked_up_to: u32,
    /// The search stopped early (`--budget`, or Ctrl-C) with every count checked passing:
    /// the answer is at least `additional`. Only written when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lower_bound: bool,
    /// What stopped it, when it stopped early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<Stopped>,
    /// Minimum slack over all failure scenarios for N additional clusters (for the plot).
    pub(crate) curve: Vec<(u32, Slack, HeadroomVerdict)>,
    /// Set when Harvester's control plane stops growth before the hosts do: `additional`
    /// is then the control plane's answer, and the placement's is kept here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_plane: Option<crate::simulate::control_plane::ControlPlaneStop>,
    /// What stops it: the first failing count's worst failure and tightest resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stops: Option<MaxClustersStop>,
}

/// What the first count of max clusters that fails fails on.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MaxClustersStop {
    /// The count of additional clusters that fails (the answer plus one).
    pub count: u32,
    /// The failure that strands the most at that count (a node, a rack, a pair, a named
    /// set); `None` when that many do not even fit with every host up.
    pub failure: Option<String>,
    /// How many of the failures that decide the verdict fail at that count.
    pub failing: usize,
    pub stranded_vms: usize,
    pub stranded_replicas: usize,
    /// `cpu` or `memory` (the scarcer, when VMs strand) or `storage` (when only replicas
    /// do): the tightest resource after that failure.
    pub resource: String,
    /// Its free share on the surviving hosts (slack), 0 to 1.
    pub free_share: f64,
}

/// What stopped a growth question before its whole answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Stopped {
    /// The time given with `--budget` ran out.
    Budget,
    /// Ctrl-C (SIGINT).
    Interrupt,
}

impl Stopped {
    /// Why, in words: "the time budget (--budget) ran out".
    pub(crate) fn words(self) -> &'static str {
        match self {
            Stopped::Budget => "the time budget (--budget) ran out",
            Stopped::Interrupt => "the run was interrupted (Ctrl-C)",
        }
    }
}

/// Where the timeline stopped early, and why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TimelineStop {
    /// The first month not checked.
    pub(crate) from_month: String,
    pub(crate) by: Stopped,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[allow(clippy::struct_field_names)] // `month` is the JSON's field name
pub struct Month {
    pub(crate) month: String,
    pub(crate) clusters: usize,
    pub(crate) verdict: HeadroomVerdict,
    pub(crate) min_slack: Slack,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Refusal {
    pub(crate) team: String,
    pub(crate) shape: String,
    pub(crate) month: String,
    pub(crate) reason: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RebuildReport {
    pub(crate) failed_node: String,
    /// Set when the scenario's rebuild what-if loaded the node with this much data.
    pub(crate) what_if_tib: Option<f64>,
    /// The scenario's `concurrent-replica-rebuild-per-node-limit`, which the headline uses.
    pub(crate) limit: u32,
    pub(crate) replicas_to_rebuild: usize,
    /// Replicas of detached volumes on the node: Longhorn does not rebuild them (unless
    /// offline replica rebuilding is on) until their VM starts.
    pub(crate) detached_not_rebuilt: usize,
    pub(crate) tib_to_rebuild: f64,
    /// `None`: full redundancy is never restored; `never` says why.
    pub(crate) hours_to_full_redundancy: Option<f64>,
    pub(crate) never: Option<String>,
    pub(crate) bottleneck: String,
    pub(crate) aborted_rebuilds: usize,
    pub(crate) abort_restarts: usize,
    pub(crate) stranded_rebuilds: usize,
    pub(crate) blocked_rebuilds: usize,
    /// Per-volume time without full redundancy; `None` when some volume never gets it back.
    pub(crate) exposure_hours_max: Option<f64>,
    pub(crate) exposure_hours_median: Option<f64>,
    pub(crate) peak_link_share: f64,
    pub(crate) peak_disk_share: f64,
    pub(crate) peak_source_share: f64,
    pub(crate) peak_source_streams: usize,
    pub(crate) sweep: Vec<SweepPoint>,
    pub(crate) recommended_limit: Option<u32>,
    pub(crate) recommendation_fell_back: bool,
    /// How the recommendation is chosen from the sweep, in words.
    pub(crate) recommendation_rule: String,
    /// The Longhorn version modelled and how a new replica's node and disk are chosen.
    pub longhorn: String,
    pub(crate) placement_rule: String,
    /// Every node that receives replicas, the slowest first, and the same per rack.
    pub(crate) receivers: Vec<NodeLoad>,
    pub(crate) by_rack: Vec<RackLoad>,
    /// Every disk that receives replicas (node, disk, replicas, data against its free space
    /// before the failure), the overfilled first.
    pub(crate) receiving_disks: Vec<DiskLoad>,
    /// Receiving disks whose data exceeds their free space: the rebuild then fails.
    pub(crate) overfilled_disks: usize,
    /// When disks overfill: what would stop it, each computed on the same fleet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) overfill_fix: Option<OverfillFix>,
    /// Set when some replica's disk was drawn among exactly tied disks, which Longhorn
    /// decides by Go's map order: how many, and what other draws give.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ties: Option<TieSpread>,
    /// After how many new replicas of the burst the scheduler sees `storageScheduled`
    /// refreshed (`platform.scheduled_refresh_every`; 1: at once, 0: never).
    pub(crate) scheduled_refresh_every: u32,
    /// The same rebuild under the other Longhorn disk rule (most available space up to
    /// v1.10, the balance score from v1.11), to show what the version changes.
    pub(crate) other_rule: Option<OtherRule>,
    pub(crate) windows: Vec<Window>,
}

/// What stops a burst from overfilling its disks, each found by creating the burst and
/// running the rebuild again on the same fleet.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct OverfillFix {
    /// The highest `storage-over-provisioning-percentage` below the scenario's (whole
    /// percents, down to 1) at which no disk overfills and full redundancy returns, and
    /// the hours it then takes; `None`: none does.
    pub(crate) over_provisioning_pct: Option<u32>,
    /// The scenario's (or the live fleet's) percentage, rounded up.
    pub(crate) from_pct: u32,
    pub(crate) hours_at_that: Option<f64>,
    /// The receiving disks at that percentage.
    pub(crate) disks_at_that: usize,
    /// The other disk rule's answer on the same fleet: hours (`None`: never) and the disks
    /// it overfills; `rule` names it.
    pub(crate) other_rule: String,
    pub(crate) other_rule_hours: Option<f64>,
    pub(crate) other_rule_overfilled: usize,
}

/// Exact ties among the candidate disks: Longhorn keeps the last of Go's map order, a new
/// order on every call, so the answer is one draw among several.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TieSpread {
    /// Replicas drawn among tied disks, and the most disks one tie had.
    pub(crate) tied_replicas: usize,
    pub(crate) widest_tie: usize,
    /// Draws run, the answer's own included; the fewest and most hours they give (`None`
    /// when none completes), how many never complete, and the fewest and most receiving
    /// nodes.
    pub(crate) draws: u32,
    pub(crate) hours_min: Option<f64>,
    pub(crate) hours_max: Option<f64>,
    pub(crate) draws_never: u32,
    pub(crate) receiving_nodes_min: usize,
    pub(crate) receiving_nodes_max: usize,
}

/// When the scheduler sees `storageScheduled` refreshed during a burst, in words.
pub(crate) fn refresh_words(every: u32) -> String {
    match every {
        1 => "after every new replica".into(),
        0 => "never during the burst".into(),
        n => format!("after every {n} new replicas"),
    }
}

/// The sentence given instead of rebuild and risk figures when there is no volume.
pub(crate) const NO_VOLUMES: &str = "no volumes: rebuild and data-loss risk do not apply";

/// The receiving side of one rack.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RackLoad {
    pub(crate) rack: String,
    /// Its nodes that receive replicas, and its nodes that may (up, schedulable).
    pub(crate) receiving_nodes: usize,
    pub(crate) nodes: usize,
    pub(crate) replicas: usize,
    pub(crate) tib: f64,
    /// Transfer hours until its last replica is done; `None`: never.
    pub(crate) transfer_hours: Option<f64>,
}

/// The rebuild at the scenario's limit under the other disk rule.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct OtherRule {
    pub(crate) rule: crate::simulate::place::DiskChoice,
    pub(crate) longhorn: String,
    pub(crate) placement_rule: String,
    pub(crate) hours_to_full_redundancy: Option<f64>,
    pub(crate) bottleneck: String,
    /// Its receiving nodes and disks, and the disks it overfills.
    pub(crate) receiving_nodes: usize,
    pub(crate) receiving_disks: usize,
    pub(crate) overfilled_disks: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RiskReport {
    /// Set (to `NO_VOLUMES`) when the fleet has no volume; the figures are then absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) not_applicable: Option<String>,
    #[serde(flatten)]
    pub(crate) figures: Option<RiskFigures>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RiskFigures {
    #[serde(flatten)]
    pub estimate: RiskResult,
    /// Hours a permanently failed node's replicas stay missing in the model, and where the
    /// figure comes from.
    pub(crate) exposure_window_h: f64,
    pub(crate) exposure_window_from: String,
    /// Why the model keeps fixed windows rather than the Markov chain of one replica group,
    /// and how far the two differ for this window.
    pub(crate) markov: MarkovNote,
    pub by_replicas: Vec<ByReplicas>,
    pub correlated: Correlated,
}

/// The Markov chain of one replica group (capacity model, section 4.1) next to the fixed
/// window the model uses, for one group of 3 nodes at this window.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MarkovNote {
    /// Losses per year of one 3-node group: fixed windows, as the model uses; the Markov
    /// chain with one repair at a time (the documented formula); and the Markov chain with
    /// every failed node repaired at once.
    pub(crate) fixed_window_per_year: f64,
    pub(crate) markov_one_repair_per_year: f64,
    pub(crate) markov_parallel_repair_per_year: f64,
    pub(crate) explanation: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ByReplicas {
    pub(crate) replicas: u32,
    pub data_loss: Rate,
}

/// One figure with how it was obtained.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Estimate {
    pub value: f64,
    /// `exact` (every failure set enumerated) or `independence approximation`.
    pub method: &'static str,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Correlated {
    pub failed_nodes: u32,
    pub(crate) trials: u32,
    pub(crate) longhorn_copysets: usize,
    pub longhorn: Estimate,
    pub(crate) longhorn_monte_carlo: f64,
    pub(crate) longhorn_ci95: [f64; 2],
    pub(crate) longhorn_hits: u64,
    pub(crate) scatter_width_requested: u32,
    pub(crate) scatter_width: u32,
    /// Mean distinct peers per node in the layout built.
    pub(crate) scatter_width_measured: f64,
    pub(crate) copyset_copysets: usize,
    pub(crate) copyset: Estimate,
    pub(crate) copyset_monte_carlo: f64,
    pub(crate) copyset_ci95: [f64; 2],
    pub(crate) copyset_hits: u64,
    /// Set when the comparison means nothing (fewer nodes than replicas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) not_compared: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AddNodes {
    /// The node class (or, with a site fleet, the host) the new nodes copy.
    pub(crate) like: String,
    pub(crate) count: u32,
    /// The rack of each new node, in order.
    pub(crate) racks: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RemoveClusters {
    pub(crate) shape: String,
    pub(crate) count: u32,
}

/// The smallest changes found that pass, each by placing and checking again.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Fix {
    /// `None`: no count up to `searched_nodes` passes.
    pub(crate) add_nodes: Option<AddNodes>,
    pub(crate) searched_nodes: u32,
    pub(crate) remove_clusters: Option<RemoveClusters>,
    pub(crate) searched_clusters: u32,
}

/// When, by which rackplan, and from which inputs a report was made.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Provenance {
    pub(crate) generated_at: String,
    pub(crate) rackplan: String,
    pub(crate) inputs: Vec<crate::files::provenance::InputFile>,
}

impl Provenance {
    /// Now, this rackplan, and each input with its modification time and digest; a dump
    /// also with its newest object timestamp.
    pub(crate) fn of_run(
        scenario: Option<&std::path::Path>,
        dump: Option<&std::path::Path>,
        site: Option<&std::path::Path>,
        dump_newest: Option<String>,
    ) -> Provenance {
        use crate::files::provenance::describe;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut inputs = Vec::new();
        if let Some(p) = scenario {
            inputs.push(describe("scenario", p));
        }
        if let Some(p) = dump {
            let mut d = describe("dump", p);
            d.newest_object = dump_newest;
            inputs.push(d);
        }
        if let Some(p) = site {
            inputs.push(describe("site", p));
        }
        Provenance {
            generated_at: crate::clock::rfc3339(now),
            rackplan: env!("CARGO_PKG_VERSION").to_string(),
            inputs,
        }
    }
}
