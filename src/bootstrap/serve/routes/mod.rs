//! The HTTP routes of `serve`, one file per route; `router` mounts them under the path of
//! the base URL.

pub(crate) mod config;
pub(crate) mod files;
pub(crate) mod ipxe;
pub(crate) mod reply;
pub(crate) mod status;
pub(crate) mod webhook;
