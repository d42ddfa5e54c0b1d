//! rackplan: from racked servers to validated Harvester install configs and a failure-aware
//! capacity verdict.
//!
//! Module map, in the order of the flow (ARCHITECTURE.md). Imports run one way: from the
//! shell (`cli`) down through the stages to the data and file modules.
//!
//! - [`cli`]: the only code that prints, reads the terminal or starts tokio.
//! - [`report`]: every human table and JSON document, one file per command.
//! - [`discover`]: Redfish crawl and SSH probes that produce node records.
//! - [`redfish`]: shared Redfish transport (client, TLS, pins, `bmcs.yaml`), used by
//!   discovery and boot.
//! - [`plan`]: check findings, roles and the allocation lock.
//! - [`render`]: install configs, iPXE scripts, cluster manifests and their self-check.
//! - [`simulate`]: capacity and failure simulation.
//! - [`live`]: the fleet as it runs, read from kubectl dumps and support bundles.
//! - [`bootstrap`]: PXE over HTTP (`serve`) and Redfish virtual-media installs (`boot`).
//! - [`operator`]: the request operator: ClusterRequests admitted, delivered, expired.
//! - [`portal`]: the teams' self-service pages, acting as each user on the operator's API.
//! - [`site`], [`inventory`], [`profile`], [`network`]: the data models of the inputs.
//! - [`vocab`]: the role and network words every stage shares (a leaf).
//! - [`words`], [`units`], [`clock`], [`reach`]: small helpers written once (leaves):
//!   numbers and hints in words, byte units, dates, why a peer could not be reached.
//! - [`docs`]: the reference generated from the code (schemas, pages, completions, man).
//! - [`scaffold`]: what `init` puts in a new site folder.
//! - [`files`]: YAML reading and writing with located errors, atomic writes, secrets.

/// mimalloc instead of the system allocator: reading a large dump and simulating its
/// failures make millions of small allocations, and glibc's malloc and free took about a
/// third of that time (`cargo bench --bench live_dump`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod bootstrap;
pub mod cli;
pub mod clock;
pub mod discover;
pub mod docs;
pub mod files;
pub mod inventory;
pub mod live;
pub mod network;
pub mod operator;
pub mod plan;
pub mod portal;
pub mod profile;
pub(crate) mod reach;
pub mod redfish;
pub mod render;
pub mod report;
pub mod scaffold;
pub mod simulate;
pub mod site;
pub mod units;
pub mod vocab;
pub mod words;
