//! The command-line shell: the only code that prints, reads the terminal or starts tokio.
//!
//! `args` is clap's raw view, `config` resolves it per command (flags > site files >
//! defaults, every clamp), `term` owns stdout, progress bars and the runtime, `error` maps
//! every failure to an exit code. Each command file does three things: resolve its config,
//! call one domain function, hand the typed result to `report`.

pub mod admit;
pub mod args;
pub mod boot;
pub mod check;
pub mod config;
mod ctx;
pub mod discover;
mod dispatch;
pub mod docs;
pub mod error;
pub mod init;
pub mod plan;
pub mod render;
pub mod serve;
pub mod simulate;
pub mod ssh;
pub mod status;
pub mod term;

pub use ctx::Ctx;
pub use dispatch::{main, run};
