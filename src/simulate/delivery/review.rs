//! The review's delivery answer: per catalogue shape, the predicted time to a Ready
//! cluster alone and under a burst of requests arriving together, against the target,
//! with the pre-flight of the burst.
//!
//! A burst changes what the deliveries share: Rancher and the node driver create every
//! machine at once (one machine-provision Job each; the planner writes first plans without
//! a concurrency limit), so in this model a burst shares the backing-image copies (more
//! disks need the file, each node takes its copies in waves of Longhorn's replenish limit,
//! and the disks holding the file serve them all), Longhorn's space, and the risk of VMs
//! created together showing no IP (harvester#5251). Packages a generic boot installs share
//! their mirror, which no published figure times: the pre-flight says it is not modelled.

use serde::Serialize;

use super::inputs::{burst_of, inputs_for};
use super::model::{DeliveryAnswer, DeliveryInputs, Measured, Prediction, Preflight};
use super::predict::predict;
use super::preflight::preflight;
use crate::simulate::place::Placement;
use crate::simulate::questions::Growth;
use crate::simulate::scenario::Pool;
use crate::simulate::study::Study;

/// One shape's delivery, alone and in the burst.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ShapeDelivery {
    pub shape: String,
    pub idle: Prediction,
    pub burst: Prediction,
    /// The pre-flight of the burst (what holds alone holds in it too).
    pub preflight: Preflight,
}

/// The delivery section of the review.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DeliveryReview {
    /// Requests of one shape arriving together in the burst answer.
    pub burst: u32,
    pub burst_from: String,
    pub shapes: Vec<ShapeDelivery>,
}

/// The prediction and the pre-flight of one delivery.
pub fn answer(inp: &DeliveryInputs, measured: Option<&Measured>) -> DeliveryAnswer {
    let prediction = predict(inp, measured);
    let preflight = preflight(inp, &prediction);
    DeliveryAnswer {
        prediction,
        preflight,
    }
}

/// The study's fleet as it runs, placed once for any number of [`request_answer`]s and
/// [`replicas_without_room`]s: each adds its clusters to a copy of it (as placing the
/// whole list would place them).
#[derive(Clone)]
pub struct FleetNow<'a> {
    placed: std::borrow::Cow<'a, Placement>,
}

impl FleetNow<'_> {
    /// The study's clusters placed.
    pub fn of(study: &Study) -> FleetNow<'static> {
        FleetNow {
            placed: std::borrow::Cow::Owned(study.place(&study.current())),
        }
    }

    /// `of`, from the study's clusters placed already (`study.place(&study.current())`).
    pub(crate) fn placed(placed: &Placement) -> FleetNow<'_> {
        FleetNow {
            placed: std::borrow::Cow::Borrowed(placed),
        }
    }

    /// Replicas the fleet has no room for already.
    fn stranded(&self) -> usize {
        self.placed.stranded_replicas()
    }
}

/// The answer for one request: `count` clusters of `shape` (`pools`) delivered together
/// beside what the study runs (`now`) and what is in flight, with the
/// operator's measurements of the shape when it has them. `rackplan admit` asks it; the
/// operator at admission.
pub fn request_answer(
    study: &Study,
    now: &FleetNow<'_>,
    shape: &str,
    pools: &[Pool],
    count: u32,
    measured: Option<&Measured>,
) -> DeliveryAnswer {
    let room = replicas_without_room(study, now, pools, count);
    answer(
        &inputs_for(study, shape, pools, count, Some(room)),
        measured,
    )
}

/// Replicas of `n` more clusters of `pools` Longhorn has no room for, even with every node
/// up, beside what the study runs (`now`, placed: what it strands already is not counted).
pub fn replicas_without_room(study: &Study, now: &FleetNow<'_>, pools: &[Pool], n: u32) -> usize {
    Growth::on(study, now.placed.as_ref().clone(), &study.current(), pools)
        .at(n)
        .stranded_replicas()
        .saturating_sub(now.stranded())
}

/// Every shape the catalogue offers (all of the study's without a site), alone and in the
/// burst.
pub fn review(study: &Study) -> DeliveryReview {
    review_on(study, &FleetNow::of(study))
}

/// `review` of the study's fleet placed already (`now`).
pub fn review_on(study: &Study, now: &FleetNow<'_>) -> DeliveryReview {
    let shapes = study
        .delivery_site
        .as_ref()
        .and_then(|s| s.shapes.as_deref());
    let burst = burst_of(study);
    let mut out = Vec::new();
    for (name, pools) in &study.shapes {
        if shapes.is_some_and(|only| !only.contains(name)) {
            continue;
        }
        let idle_room = replicas_without_room(study, now, pools, 1);
        let idle = inputs_for(study, name, pools, 1, Some(idle_room));
        let burst_room = replicas_without_room(study, now, pools, burst.value);
        let many = inputs_for(study, name, pools, burst.value, Some(burst_room));
        let burst_p = predict(&many, None);
        out.push(ShapeDelivery {
            shape: name.clone(),
            idle: predict(&idle, None),
            preflight: preflight(&many, &burst_p),
            burst: burst_p,
        });
    }
    DeliveryReview {
        burst: burst.value,
        burst_from: burst.from,
        shapes: out,
    }
}
