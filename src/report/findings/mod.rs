//! The review's findings, built once from the simulator's report and rendered as terminal
//! text (`report::simulate`), HTML and Markdown (`report::review`).

mod build;
mod control_plane;
mod delivery;
mod glossary;
mod model;
mod storage;

#[cfg(test)]
mod control_plane_tests;
#[cfg(test)]
mod findings_tests;
#[cfg(test)]
mod storage_tests;

pub(crate) use build::findings;
pub(crate) use glossary::used_in as glossary;
pub(crate) use model::{Block, Findings};
