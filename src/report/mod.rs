//! Rendering results for people (tables) and scripts (JSON), one file per command. Domain
//! modules return typed data; these functions turn it into text, and `cli` prints the text.
//! JSON documents are serde structs, so their shape is fixed by types and pinned by
//! snapshot tests.

use std::io::IsTerminal;

pub mod boot;
pub mod check;
pub mod discover;
pub mod error;
pub mod plan;
pub mod render;
pub mod serve;
pub mod simulate;
pub mod svg;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;

/// A table sized to the terminal, or 120 columns when output is piped.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().copied());
    if !std::io::stdout().is_terminal() {
        t.set_width(120);
    }
    t
}

pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("report data serializes")
}
