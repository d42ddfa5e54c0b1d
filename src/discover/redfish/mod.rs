//! Redfish discovery: many BMCs at once, every vendor's quirks, one BMC's failure costing
//! only that BMC.
//!
//! `config` reads `bmcs.yaml`; `tls` decides how a certificate is trusted; `client` is the
//! HTTP side (auth, retries, caps); `crawl` walks the resources behind the [`crawl::Fetch`]
//! seam; `normalize` turns documents into node records. [`discover`] runs them for a list
//! of BMCs with a global cap on BMCs in flight and a deadline per BMC.

pub mod bios;
pub mod byid;
pub mod crawl;
pub mod firmware;
pub mod identity;
pub mod mockup_dir;
pub mod normalize;
#[cfg(test)]
mod quirk_tests;
mod run;
mod walk_more;

pub use run::{BmcError, BmcOutcome, Options, apply, discover};
