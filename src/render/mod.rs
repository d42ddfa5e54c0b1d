//! `rackplan render`: install configs, iPXE scripts and cluster manifests for a planned site.
//!
//! Rendering is all-or-nothing: every node is built and checked against the installer's
//! validation rules first, and only then is anything written. Output is deterministic (the
//! same inputs give byte-identical files): no timestamps, sorted maps, and password salts
//! taken from the lock. Files holding the token or a password hash are mode 0600. Files a
//! previous render wrote and this one does not are removed, and only those.

mod build;
pub(crate) mod bundles;
pub(crate) mod catalogue;
pub(crate) mod images;
pub mod installer;
pub(crate) mod ipxe;
pub(crate) mod manifests;
pub(crate) mod node;
pub(crate) mod offers;
mod operator_bundle;
pub(crate) mod operator_deploy;
pub(crate) mod review;
mod summary;
pub mod validate;

pub use build::webhook_keys;
pub(crate) use build::{
    OutputFile, RenderError, RenderOutcome, build, build_all, default_out_dir, write,
};
pub use operator_deploy::DeployError;
pub use review::{CatalogueReview, ReviewError, ShapeReview};
