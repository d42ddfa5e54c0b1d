//! Bootstrap: `serve` hands iPXE scripts and install configs to PXE-booting nodes, `boot`
//! starts installs over Redfish virtual media, `status` reads where the installs stand.

pub(crate) mod boot;
pub mod serve;
pub(crate) mod status;
