//! `rackplan serve`: HTTP for PXE installs, every route under the path of the base URL.
//!
//! - `GET /ipxe?mac=MAC` (`routes::ipxe`): the node's iPXE script with a one-time config
//!   token; an installed node is told to boot its disk.
//! - `GET /nodes/<hostname>/config.yaml?token=T` (`routes::config`): the install config,
//!   only with a token issued to that node.
//! - `POST /webhook/<hostname>/<EVENT>` (`routes::webhook`): the installer's webhooks, only
//!   with the node's own key; `GET /status` (`routes::status`): every node's install state.
//! - Anything else (`routes::files`): manifests, SUMMARY.md and the `--artifacts` folder.
//!
//! Each node's install progress (`progress`) is kept in the site's state file
//! (`state_file`, written by `record`), so installed nodes still boot their disk after a
//! restart. `listener` is the accept loop (bounded connections, graceful stop), `tokens`
//! the one-time tokens, `paths` the request-path checks, `artifacts` the boot artefacts.
//!
//! Every request is logged (`log`) with the client address and the node it concerns;
//! tokens and keys never appear in the log. Risk that remains: a MAC is not a secret, so
//! anyone on the install network who knows a node's MAC can ask for its script; keep PXE on
//! an isolated provisioning network.

pub(crate) mod artifacts;
pub(crate) mod listener;
pub(crate) mod log;
pub(crate) mod paths;
pub(crate) mod progress;
pub(crate) mod record;
pub(crate) mod router;
pub(crate) mod routes;
pub(crate) mod state;
pub mod state_file;
pub(crate) mod tokens;

pub(crate) use artifacts::{check_artifacts, missing_artifacts};
pub use progress::{InstallEvent, InstallState, Progress};
pub(crate) use record::InstallRecord;
pub(crate) use router::router;
pub(crate) use state::{ServeInputs, ServeState, mac_map};
pub(crate) use state_file::StateError;
