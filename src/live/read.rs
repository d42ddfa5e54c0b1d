//! Reading a dump: a file, a folder or a support bundle, its documents decoded into the
//! live state, each skipped file named.

use super::assemble::Builder;
use super::error::LiveError;
use super::objects::LiveState;
use super::source;
use std::path::Path;

/// Read a dump (file, folder, unpacked bundle or bundle `.zip`) into the fleet state.
/// Objects are typed one at a time as they are read (a JSON list streams), so memory
/// holds the typed fleet, not the dump's text as a tree.
pub fn read(path: &Path) -> Result<LiveState, LiveError> {
    let mut b = Builder::default();
    let mut notes = source::for_each_object(path, &mut b)?;
    let metrics = if path.is_dir() {
        super::metrics::read_dir(path, &mut notes)
    } else {
        None
    };
    let mut state = finish(&path.display().to_string(), b, notes)?;
    state.metrics = metrics;
    Ok(state)
}

/// The fleet state from objects an API server returned (`origin` names the server in
/// messages): typed by the same decoder as a dump, with the same checks.
pub fn from_objects(origin: &str, items: Vec<serde_json::Value>) -> Result<LiveState, LiveError> {
    let mut b = Builder::default();
    source::add_values(origin, items, &mut b);
    finish(origin, b, Vec::new())
}

fn finish(origin: &str, b: Builder, notes: Vec<String>) -> Result<LiveState, LiveError> {
    let skipped = notes.clone();
    let state = b.finish(notes);
    // With no Node, nothing can be analysed; when inputs were skipped, they are the likely
    // reason and are named here rather than lost behind a later "no Node".
    if state.nodes.is_empty() && !skipped.is_empty() {
        const SHOWN: usize = 5;
        let mut message = format!(
            "no Node object was read, and {} input(s) were skipped: {}",
            skipped.len(),
            skipped[..skipped.len().min(SHOWN)].join("; ")
        );
        if skipped.len() > SHOWN {
            message.push_str(&format!("; and {} more", skipped.len() - SHOWN));
        }
        return Err(LiveError::Read {
            path: origin.to_string(),
            message,
        });
    }
    Ok(state)
}
