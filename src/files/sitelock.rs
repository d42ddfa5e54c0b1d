//! One writer per site: an advisory lock on `DIR/.rackplan.lock`, held by every command
//! that writes into the site folder (discover, plan, render), so two runs cannot lose each
//! other's writes. The holder writes its PID into the file, so the next one can say who
//! holds it. The lock goes with the process: a crash or `kill -9` releases it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The lock, held until dropped.
#[derive(Debug)]
pub struct SiteLock {
    file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "the site {dir} is in use by another rackplan (pid {pid}); wait for it, or give --wait-lock SECS"
    )]
    Held { dir: String, pid: String },
    #[error("cannot lock {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl SiteLock {
    /// Take the site's lock, waiting up to `wait` for another holder to finish.
    pub fn acquire(dir: &Path, wait: Duration) -> Result<SiteLock, LockError> {
        SiteLock::acquire_file(dir, ".rackplan.lock", wait)
    }

    /// Take another lock of the site, the lock file `DIR/name`, by the same rules (`serve`
    /// keeps the site's install state under its own lock, so it never blocks the writers).
    pub(crate) fn acquire_file(
        dir: &Path,
        name: &str,
        wait: Duration,
    ) -> Result<SiteLock, LockError> {
        let path = dir.join(name);
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let deadline = Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if Instant::now() >= deadline {
                        let mut pid = String::new();
                        let _ = file.read_to_string(&mut pid);
                        let pid = pid.trim();
                        return Err(LockError::Held {
                            dir: dir.display().to_string(),
                            pid: if pid.is_empty() {
                                "unknown".into()
                            } else {
                                pid.chars().take(20).collect()
                            },
                        });
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let _ = writeln!(file, "{}", std::process::id());
        Ok(SiteLock { file })
    }
}

impl Drop for SiteLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_then_gets_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = SiteLock::acquire(dir.path(), Duration::ZERO).unwrap();
        let e = SiteLock::acquire(dir.path(), Duration::from_millis(100)).unwrap_err();
        assert!(
            e.to_string().contains(&std::process::id().to_string()),
            "{e}"
        );
        drop(first);
        SiteLock::acquire(dir.path(), Duration::ZERO).unwrap();
    }
}
