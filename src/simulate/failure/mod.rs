//! Failures and what follows them: headroom by re-placement, VM restart times, Longhorn's
//! rebuild, and the risk of losing data.

pub mod headroom;
pub mod rebuild;
pub(crate) mod restart;
pub mod risk;
