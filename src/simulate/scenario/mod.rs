//! The scenario: its YAML model, how it is loaded and checked, the Rancher cluster files
//! it imports as shapes, and the one-cluster requests `admit` judges against it.

mod load;
mod model;
mod rancher;
pub(crate) mod ranges;
pub(crate) mod request;
pub mod scaled;

pub use load::{Loaded, load, load_text};
pub use model::*;
pub use rancher::{RancherError, clusters, decode_affinity, objects, pools};
pub use request::load_request;
pub use request::request_from_text;
pub(crate) use request::{Request, RequestFile};
