//! The install progress of a running server: kept in memory for the routes, written to
//! the site's state file (`state_file`) as it changes, under the lock `serve` holds for
//! its life.
//!
//! Writes are ordered by a generation number: every change bumps it, a write records the
//! generation it saved, and a write that finds a newer one already on disk does nothing. So
//! a flood of `/ipxe` requests costs a few writes, not one per request, while a webhook
//! waits for its own write (a SUCCEEDED must be on disk before the installer reboots the
//! node into a network boot).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use super::progress::{InstallEvent, Progress};
use super::state_file::{self, StateError};
use crate::files::fsio::FsError;
use crate::files::sitelock::SiteLock;

pub(crate) struct InstallRecord {
    /// The progress and its generation.
    now: Mutex<(Progress, u64)>,
    /// The generation on disk; held while writing, so writes never cross.
    written: Mutex<u64>,
    path: PathBuf,
    _lock: SiteLock,
}

impl InstallRecord {
    /// Take the site's install-state lock (waiting up to `wait`) and load what an earlier
    /// server recorded.
    pub(crate) fn open(site_dir: &Path, wait: Duration) -> Result<InstallRecord, StateError> {
        let lock = state_file::lock(site_dir, wait)?;
        let path = state_file::path(site_dir);
        let progress = state_file::load(&path)?.unwrap_or_default();
        Ok(InstallRecord {
            now: Mutex::new((progress, 0)),
            written: Mutex::new(0),
            path,
            _lock: lock,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn snapshot(&self) -> Progress {
        self.now.lock().expect("not poisoned").0.clone()
    }

    /// See [`Progress::installed`].
    pub(crate) fn installed(&self, hostname: &str, id: &str) -> bool {
        self.now
            .lock()
            .expect("not poisoned")
            .0
            .installed(hostname, id)
    }

    /// Record an event now (in memory; [`InstallRecord::flush`] writes it).
    pub(crate) fn note(&self, hostname: &str, id: &str, event: InstallEvent) {
        let mut now = self.now.lock().expect("not poisoned");
        now.0.note(hostname, id, event, crate::inventory::utc_now());
        now.1 += 1;
    }

    /// Nodes recorded as installed.
    pub(crate) fn installed_count(&self) -> usize {
        self.now
            .lock()
            .expect("not poisoned")
            .0
            .nodes
            .values()
            .filter(|n| n.state() == super::progress::InstallState::Installed)
            .count()
    }

    /// Write what is recorded, unless a write already saved it. Blocking.
    pub(crate) fn flush(&self) -> Result<(), FsError> {
        let mut written = self.written.lock().expect("not poisoned");
        let (progress, generation) = {
            let now = self.now.lock().expect("not poisoned");
            if now.1 <= *written {
                return Ok(());
            }
            (now.0.clone(), now.1)
        };
        state_file::save(&self.path, &progress)?;
        *written = generation;
        Ok(())
    }
}
