//! `rackplan boot`: start the Harvester installer on a node over Redfish virtual media.
//!
//! The plan is read off the BMC: the host system, a CD/DVD virtual-media slot (under the
//! system or its manager, an `EXT` slot on Lenovo XCC), how that BMC mounts media (the
//! `InsertMedia` action, or a PATCH of the slot where there is no action, as on XCC; no
//! `Inserted`/`WriteProtected` parameters on Supermicro, which rejects them), the boot
//! override (target `Cd` once, UEFI, sent together with an If-Match ETag when the BMC gives
//! one), the reset type allowed in this power state, then polling until the host is on.
//! Without `--yes` only the plan is printed. Each node is planned and run on its own: a
//! failure on one never touches another.

pub(crate) mod bios;
pub(crate) mod error;
pub(crate) mod gate;
#[cfg(test)]
mod plan_tests;
pub(crate) mod run;
pub(crate) mod targets;
mod virtual_media;

pub(crate) use virtual_media::Action;
