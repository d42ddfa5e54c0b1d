//! Redfish discovery: many BMCs at once, every vendor's quirks, one BMC's failure costing
//! only that BMC.
//!
//! `config` reads `bmcs.yaml`; `tls` decides how a certificate is trusted; `client` is the
//! HTTP side (auth, retries, caps); `crawl` walks the resources behind the [`crawl::Fetch`]
//! seam; `normalize` turns documents into node records. [`discover`] runs them for a list
//! of BMCs with a global cap on BMCs in flight and a deadline per BMC.

pub(crate) mod bios;
pub(crate) mod byid;
pub mod crawl;
mod expand;
pub(crate) mod firmware;
#[cfg(test)]
mod gpu_tests;
pub(crate) mod identity;
mod inline;
pub(crate) mod mockup_dir;
pub mod normalize;
#[cfg(test)]
mod quirk_tests;
mod run;
mod walk_more;

pub(crate) use run::{BmcOutcome, Options, apply, discover};
