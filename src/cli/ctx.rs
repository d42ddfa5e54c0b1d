//! What every command needs to know about how to answer, and the site's write lock.

use super::error::Error;

/// What every command needs to know about how to answer.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub(crate) json: bool,
    /// How long to wait for the site's write lock.
    pub(crate) lock_wait: std::time::Duration,
}

impl Ctx {
    /// The write lock of the site folder `dir`.
    pub(crate) fn lock_site(
        &self,
        dir: &std::path::Path,
    ) -> Result<crate::files::sitelock::SiteLock, Error> {
        crate::files::sitelock::SiteLock::acquire(dir, self.lock_wait).map_err(Error::Lock)
    }
}
