//! Cabling: every NIC's LLDP neighbour (the switch and port at the other end of its cable)
//! held against the site's network design (`cabling:` in site.yaml) and against itself.
//! `design` resolves a neighbour to a design switch and says what each network needs;
//! `node` checks one node's ports; `site_wide` what spans nodes (a switch port twice, the
//! storage network sharing a switch) and the per-switch view; `model` is the report.

mod collected;
mod design;
mod model;
mod node;
mod port_checks;
mod site_wide;

#[cfg(test)]
pub(crate) mod cabling_tests;

pub(crate) use design::ranges;
pub use model::{CablingReport, CablingRow, SwitchPort, SwitchView};
pub use node::cabling;
pub(crate) use node::cabling_with;
