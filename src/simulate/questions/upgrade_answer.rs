//! The rolling upgrade's answer as data: each step with its VMs' fates, its volumes and
//! its timeline segments, the blockers with what to do, a better order, and the totals.

use serde::Serialize;

use crate::simulate::place::MigrationConfig;

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct VmFate {
    pub vm: String,
    pub to: Option<String>,
    /// `live migration`, `stopped`, `stopped as asked` or `stalls`.
    pub fate: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Seconds of its migration (target pod start included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// It had already migrated in an earlier step.
    pub again: bool,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct NextFailure {
    pub node: String,
    pub stranded_vms: usize,
    pub volumes_without_replica: usize,
}

/// A stretch of a step on the timeline: `migrate`, `evict`, `upgrade`, `resync`, `rebuild`.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Segment {
    pub kind: String,
    pub start_s: f64,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Step {
    pub node: String,
    /// `management`, `worker` or `witness`.
    pub role: String,
    pub start_s: f64,
    pub migrate_s: f64,
    pub evict_s: f64,
    pub upgrade_s: f64,
    /// Waiting for its volumes to be healthy again once it is back.
    pub volume_s: f64,
    pub end_s: f64,
    pub migrated: usize,
    pub stopped: usize,
    pub stalls: usize,
    pub vms: Vec<VmFate>,
    /// Volumes running on fewer healthy replicas while it is away.
    pub degraded: usize,
    pub evicted: usize,
    /// Volumes whose last healthy replica there blocks the drain.
    pub blocked: Vec<String>,
    /// Volumes left with no healthy replica while it is away.
    pub faulted: usize,
    pub volumes: String,
    /// The worst further node failure during the step, and how many nodes would harm.
    pub next_failure: Option<NextFailure>,
    pub next_failure_nodes: usize,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Blocker {
    /// The step's node; `None`: before the upgrade starts.
    pub node: Option<String>,
    /// The VM, volume or node concerned.
    pub subject: String,
    pub what: String,
    pub fix: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BetterOrder {
    pub order: Vec<String>,
    /// How it was found, and whether it keeps Harvester's tiers (management first).
    pub how: String,
    pub keeps_tiers: bool,
    pub window_s: f64,
    pub degraded_s: f64,
    pub saves_window_s: f64,
    pub saves_degraded_s: f64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct UpgradeReport {
    /// The fleet: `the running fleet in DUMP` or the scenario's.
    pub fleet: String,
    pub order: Vec<String>,
    pub order_from: String,
    /// No VM stopped against its owner's will, no volume losing its last healthy replica,
    /// nothing that refuses or stalls the upgrade.
    pub clean: bool,
    pub sentence: String,
    pub window_s: f64,
    pub critical_path: String,
    pub degraded_s: f64,
    pub degraded_volume_hours: f64,
    pub migrations: usize,
    /// Migrations of VMs that had already moved once.
    pub remigrations: usize,
    pub blockers: Vec<Blocker>,
    pub steps: Vec<Step>,
    pub better_order: Option<BetterOrder>,
    pub node_upgrade_s: f64,
    pub replenishment_wait_s: f64,
    pub node_drain_policy: String,
    pub migration: MigrationConfig,
    /// Bytes/s one migration copies at when the node runs its full share of them.
    pub migration_rate: f64,
    pub assumptions: Vec<String>,
}

/// Why the upgrade cannot be worked out as asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpgradeError {
    #[error("--order: no node `{name}` in the fleet{hint}; nodes: {all}")]
    NoNode {
        name: String,
        hint: String,
        all: String,
    },
    #[error("--order: `{0}` is named twice")]
    Twice(String),
    #[error("--upgrade: the fleet has no node that can host VMs")]
    NoHosts,
}

/// `45 s`, `12 min`, `3 h 05 min`.
pub fn minutes(s: f64) -> String {
    if !s.is_finite() {
        return "never".into();
    }
    let s = s.max(0.0).round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min", (s + 30) / 60)
    } else {
        let m = (s + 30) / 60;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}
