//! The review's findings, built once from the simulator's report and rendered as terminal
//! text (`report::simulate`), HTML and Markdown (`report::review`).

mod build;
mod model;
mod storage;

#[cfg(test)]
mod findings_tests;

pub use build::{findings, verdict_sentence};
pub use model::{Block, Findings, Section, Table};
pub use storage::rate_text;
