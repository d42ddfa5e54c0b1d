//! Longhorn's rebuild after losing a node: the model's input from a placement, the
//! discrete-event model, the limit sweep, and the what-if of a node loaded with data.

mod input;
mod model;
#[cfg(test)]
mod model_tests;
mod share;
mod sweep;
mod what_if;

pub(crate) use input::rebuild_input_with;
pub use input::{rebuild_input, rebuild_target};
pub use model::simulate;
pub(crate) use model::{
    DiskLoad, Job, NodeLoad, RebuildInput, RebuildResult, Window, wire_efficiency,
};
pub(crate) use share::NodeCaps;
pub(crate) use sweep::{SweepPoint, sweep};
pub(crate) use what_if::{
    WhatIfError, check as check_what_if, largest_class, load_node, what_if_node,
};
