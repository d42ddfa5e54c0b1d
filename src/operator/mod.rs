//! `rackplan operator`: the cluster factory's request operator. Teams create
//! `ClusterRequest` objects in Rancher's cluster; the operator judges each against the
//! team's quota and the fleet's failure headroom (the decision `rackplan admit` makes, on
//! the fleet as it runs), delivers the admitted ones as Rancher clusters from the
//! catalogue, and removes them when their lifetime is over.

pub mod access;
pub mod admission;
pub mod catalogue;
pub mod context;
pub mod controller;
pub mod delivery;
mod drift;
mod ending;
pub mod fence;
pub mod harvester;
mod judge;
pub mod leader;
mod lifecycle;
pub mod machines;
pub mod metrics;
mod progress;
pub mod resource;
pub mod service;
pub mod snapshot;
pub mod spec;
pub mod steps;
pub mod teams;
mod text;

pub use context::{Clock, OperatorError, Settings, Transition};
pub use judge::{preview, shape_deliveries, team_namespaces, teams_now};
pub use resource::{ClusterRequest, ClusterRequestSpec, ClusterRequestStatus, Phase, crd};
pub use service::{ServiceOptions, serve};
