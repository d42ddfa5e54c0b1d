//! The control-plane answer as data, rendered by `report::findings` as text, HTML and
//! Markdown and serialised as the review's `control_plane` JSON.

use serde::Serialize;

use super::figures::Figure;
use super::objects::KindRow;
use super::serve::Capacity;
use super::writes::{SteadyPart, Storm};

/// How many more clusters fit before a limit is crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Until {
    /// The fleet is past the limit as it is.
    AlreadyPast,
    /// This many more clusters stay within it.
    Additional(u32),
    /// Adding clusters never reaches it (it does not grow with them, or not within
    /// 100,000 more).
    Never,
}

impl Until {
    /// "12 more", "none: already past", "never".
    pub(crate) fn words(self) -> String {
        match self {
            Until::AlreadyPast => "none: already past".into(),
            Until::Additional(n) => format!("{n} more"),
            Until::Never => "never".into(),
        }
    }
}

/// etcd's database: what the objects take, the history a compaction window keeps, and
/// the limits it is held against.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EtcdSize {
    /// The objects' keys and values, times the database bytes per stored byte.
    pub live_bytes: f64,
    /// The steady writes' old revisions within one compaction window.
    pub steady_history_bytes: f64,
    /// The largest storm's revisions and events within a window.
    pub storm_history_bytes: f64,
    /// The database file at its largest: it keeps its size until defragmented, and the
    /// quota is checked against the file.
    pub peak_bytes: f64,
    pub quota_bytes: f64,
    /// Where the quota comes from: the dump's etcd metrics, an etcd Pod's command line,
    /// the scenario (`platform.etcd_quota_gib`) or etcd's default.
    pub quota_from: String,
    pub suggested_max_bytes: f64,
}

/// The writes at their peak.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Peak {
    /// The storm that makes it.
    pub storm: String,
    /// Steady plus the storm's busiest phase.
    pub per_s: f64,
    /// The WAL fsyncs that asks of etcd's disk (the calibrated fsyncs per write).
    pub fsyncs_per_s: f64,
    /// Steady and peak as shares of what the management nodes serve.
    pub steady_share: f64,
    pub peak_share: f64,
    /// The p99 the calibration machine showed at the peak's share of its own knee;
    /// `None` past the knee.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_p99_s: Option<f64>,
}

/// One limit for one shape.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LimitRow {
    /// `etcd quota`, `etcd suggested maximum`, `objects of one type`, `write capacity`.
    pub limit: String,
    pub threshold: String,
    /// The figure now, in words.
    pub now: String,
    pub until: Until,
    /// What crosses it, in words (the kind, the storm).
    pub detail: String,
}

/// The limits for more clusters of one shape.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ShapeGrowth {
    pub shape: String,
    pub vms_per_cluster: f64,
    pub objects_per_cluster: f64,
    pub etcd_bytes_per_cluster: f64,
    pub limits: Vec<LimitRow>,
    /// The first limit the control plane reaches, and when.
    pub first: String,
    pub until: Until,
}

/// Which limit stops growth of the max-clusters shape first.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Binding {
    pub shape: String,
    /// The placement's answer (max clusters) and what stops it: `hosts (cpu)`, `hosts
    /// (memory)`, `storage`, or the capacity bound of the search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_additional: Option<u32>,
    pub hosts_cause: String,
    pub control_plane: Until,
    pub control_plane_limit: String,
    /// `control plane`, or the hosts' cause.
    pub first: String,
    pub sentence: String,
}

/// The dump's own figures beside the model's.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Measured {
    pub files: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_p99_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_p99_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_bytes: Option<f64>,
    pub model_db_bytes: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wal_fsync_p99_s: Option<f64>,
}

/// A change, and why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Advice {
    pub action: String,
    pub reason: String,
}

/// Harvester's API server and etcd as a capacity limit.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ControlPlane {
    /// The answer in a sentence or two.
    pub summary: String,
    pub objects: Vec<KindRow>,
    pub objects_total: f64,
    pub largest_kind: String,
    pub largest_count: f64,
    pub etcd: EtcdSize,
    pub steady: Vec<SteadyPart>,
    pub steady_per_s: f64,
    pub storms: Vec<Storm>,
    pub peak: Peak,
    pub capacity: Capacity,
    pub growth: Vec<ShapeGrowth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<Binding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
    pub advice: Vec<Advice>,
    /// What the model leaves out.
    pub not_counted: Vec<String>,
    /// Every constant with its value and source, and the machine the calibrated ones were
    /// fitted on.
    pub figures: Vec<Figure>,
    pub calibration_machine: String,
}

/// Set on max clusters when the control plane stops growth before the hosts do.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ControlPlaneStop {
    /// The limit reached first, in words.
    pub limit: String,
    /// What the placement alone allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_additional: Option<u32>,
}
