//! rackplan: from racked servers to validated Harvester install configs and a failure-aware
//! capacity verdict.
//!
//! The flow is a chain of pure functions from files to files (see ARCHITECTURE.md):
//! `inventory` (nodes.yaml) and `site` (site.yaml) with `profile` (role profiles) feed
//! `plan` (check findings, roles, the allocation lock), which feeds `render` (Harvester
//! install configs, iPXE scripts, cluster manifests). `yamlio` is the only YAML reader and
//! writer, `fsio` the only file writer, `secrets` the only place secret values live.
//! `report` renders results; `app` and `cli` are the thin command-line shell.

pub mod app;
pub mod app_boot;
pub mod app_discover;
pub mod app_serve;
pub mod app_simulate;
pub mod boot;
pub mod cli;
pub mod error;
pub mod fsio;
pub mod inventory;
pub mod network;
pub mod plan;
pub mod profile;
pub mod render;
pub mod report;
pub mod secrets;
pub mod serve;
pub mod sim;
pub mod site;
pub mod yamlio;
