//! Redfish transport shared by discovery and boot: `config` reads `bmcs.yaml`, `tls`
//! decides how a certificate is trusted, `pins` records first-use pins, `client` is the
//! HTTP side (auth, retries, caps, the per-BMC priority `gate`), and `fetch` is the seam the
//! walks are written against.

pub(crate) mod bounded;
pub(crate) mod client;
pub(crate) mod config;
pub(crate) mod connect;
pub mod fetch;
mod gate;
pub(crate) mod origin;
pub(crate) mod pins;
pub mod tls;
