//! A new site folder, self-contained: every file names its schema (editors complete and
//! check it), every site.yaml key is there with a comment, the profiles sit beside the
//! site (no path back into this repository), and the secrets are fresh random files to
//! replace. From a discovered inventory, each node's role is annotated and the profiles
//! are derived from that hardware, so `check` starts from zero profile errors.
//!
//! `contents` decides what a new site holds (pure); `write` puts it on disk under the
//! rules of what may be replaced, with explicit modes whatever the umask.

mod contents;
mod write;

pub(crate) use contents::{STARTER_SCENARIO, site_name};
pub(crate) use write::{Outcome, Request, ScaffoldError, check_target, init};
