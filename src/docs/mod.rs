//! The reference generated from the code, so it cannot drift from it: JSON Schemas of every
//! input file (from the Rust types), a page per file format and per command, shell
//! completions and man pages. The command line itself is handed in (a `clap::Command`), so
//! this module never reaches back into the shell.

mod commands;
mod formats;
mod generate;

pub(crate) use formats::{formats, modeline};
pub(crate) use generate::{completions, drift, generate, write};
