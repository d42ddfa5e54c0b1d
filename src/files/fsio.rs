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
pub(crate) enum Mode {
    /// 0644: plain generated files.
    Public,
    /// 0600: files that hold a token, a password hash or a key.
    Secret,
}

/// An I/O failure with the path it happened on.
#[derive(Debug, thiserror::Error)]
#[error("{action} {path}: {source}")]
pub struct FsError {
    pub(crate) action: &'static str,
    pub(crate) path: PathBuf,
    #[source]
    pub(crate) source: std::io::Error,
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
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: Mode) -> Result<(), FsError> {
    match stage(path, bytes, mode)? {
        Some(staged) => staged.commit(),
        None => Ok(()),
    }
}

/// A file written in full beside its target, not yet renamed over it.
#[derive(Debug)]
pub(crate) struct Staged {
    tmp: tempfile::NamedTempFile,
    target: PathBuf,
    dir: PathBuf,
}

impl Staged {
    /// Rename over the target (renames need no space, so a set of staged files either all
    /// land or the failure is reported before any of them moved).
    pub(crate) fn commit(self) -> Result<(), FsError> {
        let dir = self.rename()?;
        sync_dir(&dir);
        Ok(())
    }

    /// Rename over the target without syncing its directory; the directory to sync.
    fn rename(self) -> Result<PathBuf, FsError> {
        let Staged { tmp, target, dir } = self;
        tmp.persist(&target).map_err(|e| FsError {
            action: "cannot rename into",
            path: target.clone(),
            source: e.error,
        })?;
        Ok(dir)
    }
}

/// The rename is durable only once the directory entry is on disk.
fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Rename a set of staged files into place, then sync each directory once (one fsync per
/// directory after its files, not one per file).
pub(crate) fn commit_all(staged: Vec<Staged>) -> Result<(), FsError> {
    let mut dirs = std::collections::BTreeSet::new();
    for s in staged {
        dirs.insert(s.rename()?);
    }
    for d in &dirs {
        sync_dir(d);
    }
    Ok(())
}

/// Write `bytes` into a synced temporary file beside `path` (`None` when `path` already
/// holds them). Dropping the result removes the temporary file.
///
/// The mode: 0600 for secrets; a public file keeps the mode it has (someone who made it
/// 0640 meant it), else 0644.
pub(crate) fn stage(path: &Path, bytes: &[u8], mode: Mode) -> Result<Option<Staged>, FsError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(err("cannot create directory", &dir))?;
    let bits = match mode {
        Mode::Secret => 0o600,
        Mode::Public => current_mode(path).unwrap_or(0o644),
    };
    if unchanged(path, bytes, bits) {
        return Ok(None);
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(TMP_PREFIX)
        .suffix(TMP_SUFFIX)
        .tempfile_in(&dir)
        .map_err(err("cannot create a temporary file in", &dir))?;
    tmp.write_all(bytes).map_err(err("cannot write", path))?;
    set_mode(tmp.as_file(), bits).map_err(err("cannot set permissions of", path))?;
    tmp.as_file().sync_all().map_err(err("cannot sync", path))?;
    Ok(Some(Staged {
        tmp,
        target: path.to_path_buf(),
        dir,
    }))
}

/// Who may enter a folder rackplan makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirMode {
    /// 0755 at most (a stricter umask makes it stricter): plain folders.
    Public,
    /// 0700, set explicitly even on a folder that exists: folders of secrets.
    Private,
}

/// Make `dir` and its missing parents with `mode`, whatever the umask (a umask of 000 would
/// otherwise leave them 0777). A folder that exists keeps its mode, except that a private
/// one is narrowed to 0700.
pub(crate) fn create_dir(dir: &Path, mode: DirMode) -> Result<(), FsError> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(match mode {
            DirMode::Public => 0o755,
            DirMode::Private => 0o700,
        });
    }
    b.create(dir).map_err(err("cannot create directory", dir))?;
    #[cfg(unix)]
    if mode == DirMode::Private {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(err("cannot set permissions of", dir))?;
    }
    Ok(())
}

const TMP_PREFIX: &str = ".rackplan-";
const TMP_SUFFIX: &str = ".tmp";

/// Remove temporary files a killed run left under `dir` (they may hold secrets). Only our
/// own names (`.rackplan-*.tmp`) are touched; returns how many were removed.
pub(crate) fn remove_leftovers(dir: &Path) -> usize {
    let mut removed = 0;
    let mut todo = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = todo.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && depth < 8 {
                todo.push((e.path(), depth + 1));
            } else if t.is_file()
                && name.starts_with(TMP_PREFIX)
                && name.ends_with(TMP_SUFFIX)
                && fs::remove_file(e.path()).is_ok()
            {
                removed += 1;
            }
        }
    }
    removed
}

fn unchanged(path: &Path, bytes: &[u8], bits: u32) -> bool {
    let Ok(old) = fs::read(path) else {
        return false;
    };
    old == bytes && current_mode(path) == Some(bits)
}

#[cfg(unix)]
fn set_mode(file: &fs::File, bits: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(bits))
}

#[cfg(not(unix))]
fn set_mode(_file: &fs::File, _bits: u32) -> std::io::Result<()> {
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
        assert_eq!(
            current_mode(&p),
            Some(0o600),
            "a rewrite keeps the file's mode"
        );
        let q = dir.path().join("a/b/new.yaml");
        write_atomic(&q, b"x", Mode::Public).unwrap();
        assert_eq!(current_mode(&q), Some(0o644));
        fs::remove_file(&q).unwrap();
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn leftovers_of_a_killed_run_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("nodes/hv-c01")).unwrap();
        fs::write(dir.path().join("nodes/hv-c01/.rackplan-abc.tmp"), b"token").unwrap();
        fs::write(dir.path().join("keep.tmp"), b"mine").unwrap();
        assert_eq!(remove_leftovers(dir.path()), 1);
        assert!(dir.path().join("keep.tmp").exists());
    }
}
