//! Bootstrap: `serve` hands iPXE scripts and install configs to PXE-booting nodes, `boot`
//! starts installs over Redfish virtual media.

pub mod boot;
pub mod serve;
