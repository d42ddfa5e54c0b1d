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

pub mod artifacts;
pub mod listener;
pub mod log;
pub mod paths;
pub mod progress;
pub mod record;
pub mod router;
pub mod routes;
pub mod state;
pub mod state_file;
pub mod tokens;

pub use artifacts::{ArtifactsError, boot_artifacts, check_artifacts, missing_artifacts};
pub use log::{LogEntry, LogLine};
pub use paths::safe_relative;
pub use progress::{InstallEvent, InstallState, Progress};
pub use record::InstallRecord;
pub use router::router;
pub use state::{MAX_BODY_BYTES, ServeInputs, ServeState, TOKEN_TTL, mac_map};
pub use state_file::StateError;
