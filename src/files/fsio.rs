//! Atomic file writes: the only way rackplan puts bytes on disk.
//!
//! Every file is written to a temporary file in the same directory, fsynced, given its final
//! mode, then renamed over the target, and the directory is fsynced too. A crash or an
//! interrupted run therefore leaves either the old file or the new one, never a half-written
//! one. Files holding secrets are created with mode 0600 from the start (the temporary file
//! is 0600 already), so no window exists in which the secret is world-readable.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Who may read a written file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// 0644: plain generated files.
    Public,
    /// 0600: files that hold a token, a password hash or a key.
    Secret,
}

/// An I/O failure with the path it happened on.
#[derive(Debug, thiserror::Error)]
#[error("{action} {path}: {source}")]
pub struct FsError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

fn err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FsError + 'a {
    move |source| FsError {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Write `bytes` to `path` atomically, creating parent directories as needed.
///
/// When the file already holds exactly these bytes with the right mode, nothing is written,
/// so re-running a command leaves timestamps alone.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Mode) -> Result<(), FsError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(err("cannot create directory", &dir))?;
    if unchanged(path, bytes, mode) {
        return Ok(());
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".rackplan-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(err("cannot create a temporary file in", &dir))?;
    tmp.write_all(bytes).map_err(err("cannot write", path))?;
    set_mode(tmp.as_file(), mode).map_err(err("cannot set permissions of", path))?;
    tmp.as_file().sync_all().map_err(err("cannot sync", path))?;
    tmp.persist(path).map_err(|e| FsError {
        action: "cannot rename into",
        path: path.to_path_buf(),
        source: e.error,
    })?;
    // The rename is durable only once the directory entry is on disk.
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn unchanged(path: &Path, bytes: &[u8], mode: Mode) -> bool {
    let Ok(old) = fs::read(path) else {
        return false;
    };
    old == bytes && current_mode(path) == Some(mode_bits(mode))
}

fn mode_bits(mode: Mode) -> u32 {
    match mode {
        Mode::Public => 0o644,
        Mode::Secret => 0o600,
    }
}

#[cfg(unix)]
fn set_mode(file: &fs::File, mode: Mode) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode_bits(mode)))
}

#[cfg(not(unix))]
fn set_mode(_file: &fs::File, _mode: Mode) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn current_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn current_mode(_path: &Path) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_atomically_with_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/secret.yaml");
        write_atomic(&p, b"one", Mode::Secret).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        assert_eq!(current_mode(&p), Some(0o600));
        write_atomic(&p, b"two", Mode::Public).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(current_mode(&p), Some(0o644));
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
