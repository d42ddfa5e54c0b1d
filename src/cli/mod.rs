//! The command-line shell: the only code that prints, reads the terminal or starts tokio.
//!
//! `args` is clap's raw view, `config` resolves it per command (flags > site files >
//! defaults, every clamp), `term` owns stdout, progress bars and the runtime, `error` maps
//! every failure to an exit code. Each command file does three things: resolve its config,
//! call one domain function, hand the typed result to `report`.

pub(crate) mod admit;
pub(crate) mod args;
pub(crate) mod boot;
pub(crate) mod check;
pub mod config;
mod ctx;
#[cfg(test)]
mod deploy_args_tests;
pub(crate) mod discover;
mod dispatch;
pub(crate) mod docs;
pub(crate) mod error;
pub(crate) mod init;
pub(crate) mod operator;
mod outputs;
pub(crate) mod plan;
pub(crate) mod portal;
pub(crate) mod render;
pub(crate) mod serve;
pub(crate) mod simulate;
pub(crate) mod ssh;
pub(crate) mod status;
mod study;
pub(crate) mod term;

pub use dispatch::{main, run};
