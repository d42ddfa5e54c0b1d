//! A Redfish-Mockup-Creator capture read from disk as a BMC would serve it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::redfish::fetch::{Fetch, FetchError, normalize_path};

/// A Redfish-Mockup-Creator capture on disk, read as a BMC would serve it (for offline use
/// and fast tests): `<dir>/redfish/v1/.../index.json`; no `$expand`.
pub struct MockupDir {
    pub(crate) root: PathBuf,
    pub requests: std::sync::atomic::AtomicUsize,
}

impl MockupDir {
    pub fn new(dir: &Path) -> MockupDir {
        MockupDir {
            root: dir.to_path_buf(),
            requests: Default::default(),
        }
    }
}

impl Fetch for MockupDir {
    async fn get(&self, path: &str) -> Result<Value, FetchError> {
        self.requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if path.contains("?$expand") {
            return Err(FetchError::Status(404, None));
        }
        let p = normalize_path(path);
        let rel = p.trim_start_matches('/');
        let file = self.root.join(rel).join("index.json");
        let text = std::fs::read_to_string(&file).map_err(|_| FetchError::Status(404, None))?;
        serde_json::from_str(&text).map_err(|e| FetchError::BadJson(e.to_string()))
    }

    fn expand(&self) -> bool {
        false
    }

    fn expand_failed(&self) {}
}
