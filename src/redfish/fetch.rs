//! The seam between a Redfish walk and the network: [`Fetch`] reads a resource by path,
//! [`FetchError`] says why it could not, and [`link`] reads an `@odata.id`.
//!
//! Discovery (`discover::redfish`) and boot (`bootstrap::boot`) are written against
//! [`Fetch`]; [`crate::redfish::client::BmcClient`] is the real implementation, and tests
//! use in-memory ones.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FetchError {
    #[error("HTTP {0}")]
    Status(u16, Option<u64>),
    #[error("connection failed: {0}")]
    Transport(String),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("response larger than {0} bytes")]
    TooLarge(usize),
    #[error("malformed JSON: {0}")]
    BadJson(String),
    /// The BMC named a URL outside its origin; nothing was sent there.
    #[error("{0}")]
    OffOrigin(String),
}

/// Reading Redfish resources by path; the seam between the walk and the network.
pub trait Fetch: Sync {
    fn get(&self, path: &str) -> impl Future<Output = Result<Value, FetchError>> + Send;
    /// A document that leads to no further request (a DIMM, a drive, a port): it may wait
    /// behind requests that do.
    fn get_leaf(&self, path: &str) -> impl Future<Output = Result<Value, FetchError>> + Send {
        self.get(path)
    }
    /// Whether to ask for `$expand=.($levels=n)` (the service root advertises it).
    fn expand(&self) -> bool;
    /// The largest `$levels` the service root allows (`ExpandQuery.MaxLevels`; 1 when it
    /// names none).
    fn expand_max_levels(&self) -> u64 {
        1
    }
    /// The service advertised `$expand` but refused it: stop asking.
    fn expand_failed(&self);
}

/// The `@odata.id` of a link object.
pub(crate) fn link(v: &Value) -> Option<String> {
    v.get("@odata.id")
        .and_then(Value::as_str)
        .map(normalize_path)
}

/// Trailing slashes and fragments removed, so `/redfish/v1/Systems/1/` and
/// `/redfish/v1/Systems/1` are one resource.
pub(crate) fn normalize_path(p: &str) -> String {
    let p = p.split('#').next().unwrap_or(p);
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        "/".into()
    } else {
        t.to_string()
    }
}
