//! Failures and what follows them: headroom by re-placement, VM restart times, Longhorn's
//! rebuild, and the risk of losing data.

mod bounds;
pub mod headroom;
pub(crate) mod pruned;
pub mod rebuild;
pub(crate) mod replace;
pub(crate) mod restart;
pub mod risk;
mod sets;

pub(crate) use bounds::Shares;
