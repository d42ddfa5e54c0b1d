//! The delivery model's inputs and answers, and the API the operator calls.
//!
//! # For the operator
//!
//! ```text
//! study.delivery_site = Some(SiteCatalogue { .. });   // optional: the catalogue's image,
//!                                                     // user-data and shapes
//! let now = delivery::FleetNow::of(&study);              // placed once for many requests
//! let answer = delivery::request_answer(&study, &now, shape, &pools, count, measured.get(shape));
//! // answer.prediction: time to Ready, critical path, milestones, constants, inputs
//! // answer.preflight:  stall causes seen in the inputs, and what could not be checked
//! ```
//!
//! - [`request_answer`](super::request_answer)`(&Study, &FleetNow, shape, &[Pool], count,
//!   Option<&Measured>) -> DeliveryAnswer`: gathers the inputs from the study (its
//!   scenario's `delivery:` block, its dump's images, backing images, disks, deliveries in
//!   flight and rebuilds, `delivery_site` when set), places the request to find Longhorn's
//!   room, and answers. `count` clusters of one request are delivered together.
//! - [`inputs_for`](super::inputs_for), then [`answer`](super::answer),
//!   [`predict`](super::predict) or [`preflight`](super::preflight) for callers that build
//!   or adjust [`DeliveryInputs`] themselves (every field is public).
//! - [`predict`](super::predict) `(&DeliveryInputs, Option<&Measured>) -> Prediction`: the
//!   time from admission to a Ready cluster, its critical path (each step with its start,
//!   end and source), the milestones the operator measures, the range when every constant
//!   sits at the low or the high end of its range, and every constant and input used with
//!   where it came from. `total_s: None` with `never` set when the delivery cannot finish
//!   (a generic image without the guest agent, a boot past the node driver's ten minutes).
//! - [`preflight`](super::preflight) `(&DeliveryInputs, &Prediction) -> Preflight`: the
//!   known stall causes visible in the inputs, and the checks it could not make.
//! - [`Measured`]: what the operator has measured for a shape. For each segment between
//!   two consecutive [`Milestone`]s, a robust statistic of recent deliveries (the operator
//!   chooses; [`Measured::median_of_last`] gives the median of the last N from each
//!   delivery's milestone times). A measured segment replaces the model's steps inside it,
//!   and the prediction says so on the milestone, on the step, in `measured` and on each
//!   constant it no longer uses.
//!
//! Milestones are the moments the operator can read from Rancher: the Rancher Cluster
//! created (by the operator, at admission), every machine created, every machine's
//! infrastructure ready (CAPI `Machine` `InfrastructureReady`), the init node's probes
//! healthy, the control plane ready, the workers ready, the cluster Ready. A segment is
//! the time from the previous milestone to this one, at least zero (a milestone reached
//! before its predecessor counts as reached with it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::constants::Constant;

/// How the golden image boots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ImageKind {
    /// The guest agent and what the boot needs are in the image: about ninety seconds.
    Prepared,
    /// A cloud image that installs packages at boot: about eight minutes.
    Generic,
}

/// A value and where it came from (`scenario`, `site`, `dump`, `default: ...`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Given<T> {
    pub value: T,
    pub from: String,
}

impl<T> Given<T> {
    pub fn new(value: T, from: impl Into<String>) -> Given<T> {
        Given {
            value,
            from: from.into(),
        }
    }
}

/// The roles of a pool's machines in the RKE2 cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Roles {
    pub etcd: bool,
    pub control_plane: bool,
    pub worker: bool,
}

/// One machine pool of the shape.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MachinePool {
    pub name: String,
    pub count: u32,
    pub roles: Roles,
}

/// Where Longhorn holds the image's backing file, among the disks that may take a replica.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct OnDisks {
    /// Disks whose copy of the file is `ready`.
    pub ready: u32,
    /// Disks a new replica may land on.
    pub disks: u32,
}

/// What the prediction knows of the image.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ImageFacts {
    /// The image's name, when a site or a dump names it.
    pub name: Option<String>,
    pub kind: Given<ImageKind>,
    /// Whether the user-data installs packages at boot (then even a prepared image boots
    /// like a generic one).
    pub installs_packages: Given<bool>,
    /// Whether the guest agent will run: in a prepared image, or installed by the
    /// user-data.
    pub guest_agent: Given<bool>,
    pub size_bytes: Given<f64>,
    pub on_disks: Given<OnDisks>,
}

/// The storage the backing-image copies travel over: the rebuild model's figures.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Storage {
    /// MB/s of one stream (`platform.stream_mbps`).
    pub stream_mbps: f64,
    /// MB/s one disk reads (`platform.disk_read_mbps`): what a disk holding the file can
    /// serve to the copies.
    pub disk_read_mbps: f64,
    /// MB/s of one node's storage links (links x speed).
    pub node_link_mbps: f64,
    /// Replicas per volume.
    pub replicas: u32,
    /// Nodes whose disks may take a replica (the copies spread over them).
    pub nodes: u32,
    /// Replica rebuilds running per node (they share the link with the copies).
    pub rebuild_streams_per_node: Given<f64>,
}

/// What else is being delivered.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Load {
    /// Deliveries under way besides these (a dump's Admitted and Provisioning requests).
    pub deliveries_in_flight: Given<u32>,
    /// Their VMs.
    pub vms_in_flight: u32,
}

/// What the site says of the tenant network the VMs attach to.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct NetworkFacts {
    /// `None`: the site does not say.
    pub dhcp: Option<bool>,
    pub free_addresses: Option<u32>,
}

/// Everything one prediction is made from.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DeliveryInputs {
    pub shape: String,
    pub pools: Vec<MachinePool>,
    pub image: ImageFacts,
    pub storage: Storage,
    pub load: Load,
    pub network: NetworkFacts,
    /// Requests of this shape delivered together (1: this one alone).
    pub concurrent: u32,
    /// Replicas of these deliveries' volumes Longhorn has no room for, when known.
    pub replicas_without_room: Option<usize>,
    pub target_s: Given<f64>,
}

/// The moments of a delivery the operator reads from Rancher.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Milestone {
    ClusterCreated,
    MachinesCreated,
    InfrastructureReady,
    InitNodeReady,
    ControlPlaneReady,
    WorkersReady,
    ClusterReady,
}

impl Milestone {
    pub const ALL: [Milestone; 7] = [
        Milestone::ClusterCreated,
        Milestone::MachinesCreated,
        Milestone::InfrastructureReady,
        Milestone::InitNodeReady,
        Milestone::ControlPlaneReady,
        Milestone::WorkersReady,
        Milestone::ClusterReady,
    ];

    pub fn words(self) -> &'static str {
        match self {
            Milestone::ClusterCreated => "Rancher cluster created",
            Milestone::MachinesCreated => "machines created",
            Milestone::InfrastructureReady => "every machine's infrastructure ready",
            Milestone::InitNodeReady => "init node ready",
            Milestone::ControlPlaneReady => "control plane ready",
            Milestone::WorkersReady => "workers ready",
            Milestone::ClusterReady => "cluster Ready",
        }
    }
}

/// What the operator measured for one shape: per segment (the time from the previous
/// milestone to this one), a robust statistic of recent deliveries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measured {
    /// Deliveries the statistic is taken over.
    pub deliveries: u32,
    /// The statistic, in words (`median of the last 5`).
    pub statistic: String,
    /// Seconds per segment, keyed by the milestone that ends it.
    pub segments: BTreeMap<Milestone, f64>,
}

impl Measured {
    /// The median of each segment over the last `n` deliveries (oldest first), each
    /// delivery given as the seconds since admission at which it reached each milestone.
    /// A segment is measured only from deliveries that reached both of its ends.
    pub fn median_of_last(deliveries: &[BTreeMap<Milestone, f64>], n: usize) -> Measured {
        let recent = &deliveries[deliveries.len().saturating_sub(n)..];
        let mut segments = BTreeMap::new();
        for (i, m) in Milestone::ALL.iter().enumerate() {
            let mut xs: Vec<f64> = recent
                .iter()
                .filter_map(|d| {
                    let at = *d.get(m)?;
                    let before = if i == 0 {
                        0.0
                    } else {
                        // The latest of the milestones before it that this delivery reached.
                        Milestone::ALL[..i]
                            .iter()
                            .filter_map(|p| d.get(p).copied())
                            .fold(0.0, f64::max)
                    };
                    Some((at - before).max(0.0))
                })
                .filter(|x| x.is_finite())
                .collect();
            if xs.is_empty() {
                continue;
            }
            xs.sort_by(f64::total_cmp);
            let k = xs.len();
            let med = if k % 2 == 1 {
                xs[k / 2]
            } else {
                f64::midpoint(xs[k / 2 - 1], xs[k / 2])
            };
            segments.insert(*m, med);
        }
        Measured {
            deliveries: u32::try_from(recent.len()).unwrap_or(u32::MAX),
            statistic: format!("median of the last {}", recent.len()),
            segments,
        }
    }
}

/// One step of the critical path.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Step {
    pub what: String,
    /// The machine it happens on (`cp-1`), when one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    pub start_s: f64,
    pub end_s: f64,
    /// The constant's key, `measured`, or the input that sets it.
    pub source: String,
}

/// When a milestone is reached, and whether the model or a measurement says so.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MilestoneAt {
    pub milestone: Milestone,
    pub at_s: f64,
    /// `model` or `measured: <statistic> of N deliveries`.
    pub from: String,
}

/// A constant as this prediction used it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ConstantUse {
    #[serde(flatten)]
    pub constant: Constant,
    /// `default` or `replaced by measured <segment>`.
    pub used: String,
}

/// An input of the prediction, in words, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct InputUse {
    pub input: String,
    pub value: String,
    pub from: String,
}

/// The predicted time from admission to a Ready cluster.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Prediction {
    pub shape: String,
    /// Requests of the shape delivered together.
    pub concurrent: u32,
    /// Seconds from admission to Ready; `None`: never (see `never`).
    pub total_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub never: Option<String>,
    /// The total with every default constant at the low, then the high end of its range
    /// (measured segments kept): a range, not a probability interval. `None`: never.
    pub low_s: Option<f64>,
    pub high_s: Option<f64>,
    pub target_s: f64,
    pub target_from: String,
    /// Ready within the target (`false` when never).
    pub within_target: bool,
    pub milestones: Vec<MilestoneAt>,
    pub critical_path: Vec<Step>,
    /// Set when measured segments replaced the model's: which, and over how many
    /// deliveries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
    pub constants: Vec<ConstantUse>,
    pub inputs: Vec<InputUse>,
}

/// How a known stall cause weighs on the delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The delivery cannot finish.
    Blocks,
    /// It finishes, later than it would without it (already in the prediction).
    Delays,
    /// It may stall; the prediction assumes it does not.
    Risk,
}

/// A known stall cause visible in the inputs.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Stall {
    /// A stable identifier: no-guest-agent, boot-past-driver-limit, backing-image-missing,
    /// longhorn-space, vm-network, many-in-flight, cluster-agent.
    pub kind: &'static str,
    pub severity: Severity,
    pub message: String,
    pub source: String,
}

/// The pre-flight: what it found, and what it could not check.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Preflight {
    pub stalls: Vec<Stall>,
    pub not_checked: Vec<String>,
}

/// The prediction and the pre-flight of one delivery.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DeliveryAnswer {
    pub prediction: Prediction,
    pub preflight: Preflight,
}
