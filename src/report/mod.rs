//! Rendering results for people (tables) and scripts (JSON), one file per command. Domain
//! modules return typed data; these functions turn it into text, and `cli` prints the text.
//! JSON documents are serde structs, so their shape is fixed by types and pinned by
//! snapshot tests.

use std::sync::atomic::{AtomicU16, Ordering};

pub mod admit;
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

/// Columns tables are fitted to; `cli` sets it from the terminal (120 when piped).
static WIDTH: AtomicU16 = AtomicU16::new(120);

/// Fit every table from now on to `columns` (at least 40).
pub fn set_width(columns: u16) {
    WIDTH.store(columns.max(40), Ordering::Relaxed);
}

/// A table fitted to the width `cli` set.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().copied())
        .set_width(WIDTH.load(Ordering::Relaxed));
    t
}

/// One JSON document on one line (for logs).
pub fn json_line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("report data serializes")
}
