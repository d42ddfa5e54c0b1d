//! What stops `boot` at one node: the BMC could not be read, offers no way to boot the
//! installer, or refused a request of the plan.

use std::time::Duration;

use crate::redfish::fetch::FetchError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum BootError {
    #[error("GET {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: FetchError,
    },
    #[error("the BMC lists no system")]
    NoSystem,
    #[error("BIOS settings cannot be written here: {why}")]
    NoBios { why: String },
    #[error("no CD/DVD virtual-media slot on this BMC")]
    NoCdSlot,
    #[error("the BMC does not offer a `Cd` boot override (offers {offered})")]
    NoCdOverride { offered: String },
    #[error("no usable reset type for power state {power} (offered: {offered})")]
    NoResetType { power: String, offered: String },
    #[error("{method} {path}: {source}")]
    Send {
        method: &'static str,
        path: String,
        #[source]
        source: FetchError,
    },
    #[error("{method} {path} answered HTTP {code} ({why})")]
    Refused {
        method: &'static str,
        path: String,
        code: u16,
        why: String,
    },
    #[error("still {state} after {waited:?}; the reset was sent, check the console")]
    StillOff { state: String, waited: Duration },
}
