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

mod assemble;
pub mod census;
mod decode;
mod error;
mod items;
pub mod metrics;
mod objects;
mod pins;
mod quantity;
mod read;
mod source;
mod sparse;
mod split;
mod stream;
pub mod synth;
mod tree;

pub(crate) use assemble::release;
pub(crate) use error::LiveError;
pub use objects::LiveState;
pub(crate) use objects::{LonghornNode, Node, Vmi};
pub(crate) use pins::NodeRequirement;
pub(crate) use quantity::bytes;
pub use read::{from_objects, read};
