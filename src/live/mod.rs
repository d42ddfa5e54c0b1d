//! The fleet as it runs, from what an operator can hand over without giving rackplan
//! credentials: `kubectl get ... -o yaml|json` output (one file or a folder, `kind: List`
//! wrappers of mixed kinds included) or a Harvester support bundle (the `.zip` the UI
//! downloads, or unpacked).
//!
//! Everything read is untrusted text. The support bundle's quirks are undone here, once:
//! the string `"null"` for empty or null values, byte counts written as floats
//! (`3.94085056512e+11`), map-shaped conditions of older Longhorn, missing files for kinds
//! with no objects. Objects of an API version rackplan does not know are named and skipped;
//! a kind no file holds is reported as missing, so an analysis that needs it can say it is
//! skipped and why. Errors name the file and the object (`longhorn-system/pvc-1234:
//! spec.size: ...`).

mod objects;
mod pins;
mod quantity;
mod source;
pub mod synth;

pub use objects::{
    LiveState, LonghornDisk, LonghornNode, Missing, Node, Object, Replica, Settings, Vm, Vmi,
    Volume,
};
pub use pins::NodeRequirement;
pub use quantity::{bytes, millicores};

use std::path::Path;

/// Why a dump could not be read at all (a bad object is a note, not an error).
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("{path}: {message}")]
    Read { path: String, message: String },
}

/// Read a dump (file, folder, unpacked bundle or bundle `.zip`) into the fleet state.
/// Objects are typed one at a time as they are read (a JSON list streams), so memory
/// holds the typed fleet, not the dump's text as a tree.
pub fn read(path: &Path) -> Result<LiveState, LiveError> {
    let mut b = objects::Builder::default();
    let notes = source::for_each_object(path, &mut b)?;
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
            path: path.display().to_string(),
            message,
        });
    }
    Ok(state)
}
