//! Rendering results for people (tables) and scripts (JSON), one file per command. Domain
//! modules return typed data; these functions turn it into text, and `cli` prints the text.
//! JSON documents are serde structs, so their shape is fixed by types and pinned by
//! snapshot tests.

pub mod admit;
pub mod boot;
pub mod charts;
pub mod check;
pub mod discover;
pub mod docs;
pub mod error;
pub mod escape;
pub mod findings;
mod grid;
pub mod init;
pub mod plan;
mod records;
pub mod render;
pub mod review;
pub mod serve;
pub mod simulate;
pub mod status;
pub mod svg;
pub mod upgrade;
mod wrap;

pub use grid::{
    Grid, SCHEMA_VERSION, Style, json, json_line, set_plain, set_width, style, table, wrap_prose,
    wrap_prose_at,
};
