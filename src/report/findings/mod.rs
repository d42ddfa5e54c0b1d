//! The review's findings, built once from the simulator's report and rendered as terminal
//! text (`report::simulate`), HTML and Markdown (`report::review`).

mod build;
mod glossary;
mod model;
mod storage;

#[cfg(test)]
mod findings_tests;

pub(crate) use build::findings;
pub(crate) use glossary::used_in as glossary;
pub(crate) use model::{Block, Findings};
