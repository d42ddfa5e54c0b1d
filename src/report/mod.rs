//! Rendering results for people (tables) and scripts (JSON), one file per command. Domain
//! modules return typed data; these functions turn it into text, and `cli` prints the text.
//! JSON documents are serde structs, so their shape is fixed by types and pinned by
//! snapshot tests.

pub(crate) mod admit;
pub(crate) mod boot;
pub(crate) mod cabling;
pub(crate) mod catalogue;
pub(crate) mod charts;
pub mod check;
pub(crate) mod delivery;
pub(crate) mod discover;
pub(crate) mod docs;
pub(crate) mod error;
pub(crate) mod escape;
pub(crate) mod findings;
mod grid;
pub(crate) mod init;
pub(crate) mod operator;
pub(crate) mod plan;
mod records;
pub(crate) mod render;
pub(crate) mod review;
pub(crate) mod serve;
pub mod simulate;
pub(crate) mod status;
pub(crate) mod svg;
pub(crate) mod upgrade;
mod wrap;

pub use grid::set_plain;
pub use grid::set_width;
pub use grid::wrap_prose_at;
pub(crate) use grid::{SCHEMA_VERSION, Style, json, json_line, style, table, wrap_prose};
