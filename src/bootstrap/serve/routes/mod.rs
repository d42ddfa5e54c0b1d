//! The HTTP routes of `serve`, one file per route; `router` mounts them under the path of
//! the base URL.

pub mod config;
pub mod files;
pub mod ipxe;
pub mod reply;
pub mod status;
pub mod webhook;
