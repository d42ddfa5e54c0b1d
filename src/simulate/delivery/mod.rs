//! Fifteen minutes, predicted: a pure model of one delivery's critical path, from the
//! admission of a cluster request to a Ready cluster, and the pre-flight that names the
//! known stall causes its inputs show. `model` documents the API the operator calls
//! (`predict`, `preflight`, `answer`, `Measured`); `predict` follows Rancher's planner
//! tier by tier; `machine` follows one VM through the node driver and Longhorn;
//! `constants` holds every duration with its range and source.

mod constants;
mod inputs;
mod live;
mod machine;
mod model;
mod predict;
mod preflight;
mod review;
mod spec;

#[cfg(test)]
pub(crate) mod predict_tests;
#[cfg(test)]
mod timelines_tests;

pub use constants::Constant;
pub use inputs::{SiteCatalogue, inputs_for, machine_pools};
pub use live::LiveFacts;
pub use model::{
    ConstantUse, DeliveryAnswer, DeliveryInputs, Given, ImageFacts, ImageKind, InputUse, Load,
    MachinePool, Measured, Milestone, MilestoneAt, NetworkFacts, OnDisks, Prediction, Preflight,
    Roles, Severity, Stall, Step, Storage,
};
pub use predict::predict;
pub use preflight::preflight;
pub use review::{
    DeliveryReview, FleetNow, ShapeDelivery, answer, replicas_without_room, request_answer, review,
    review_on,
};
pub(crate) use spec::check_spec;
pub use spec::{DeliverySpec, ImageSpec, OnDisksSpec, OnDisksWord};
