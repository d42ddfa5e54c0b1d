//! `rackplan render`: install configs, iPXE scripts and cluster manifests for a planned site.
//!
//! Rendering is all-or-nothing: every node is built and checked against the installer's
//! validation rules first, and only then is anything written. Output is deterministic (the
//! same inputs give byte-identical files): no timestamps, sorted maps, and password salts
//! taken from the lock. Files holding the token or a password hash are mode 0600. Files a
//! previous render wrote and this one does not are removed, and only those.

mod build;
pub mod bundles;
pub mod catalogue;
pub mod images;
pub mod installer;
pub mod ipxe;
pub mod manifests;
pub mod node;
mod summary;
pub mod validate;

pub use build::{
    OutputFile, RenderError, RenderOutcome, build, default_out_dir, webhook_keys, write,
};
