//! Longhorn's rebuild after losing a node: the model's input from a placement, the
//! discrete-event model, the limit sweep, and the what-if of a node loaded with data.

mod input;
mod model;
mod share;
mod sweep;
mod what_if;

pub use input::{rebuild_input, rebuild_target};
pub use model::{
    Job, NodeCaps, NodeLoad, RebuildInput, RebuildResult, Window, simulate, wire_efficiency,
};
pub use sweep::{Recommendation, SweepPoint, sweep};
pub use what_if::{WhatIfError, check as check_what_if, largest_class, load_node, what_if_node};
