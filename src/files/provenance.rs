//! Where an answer came from: each input file named with its modification time and
//! SHA-256, so a reviewer can tell which state a report describes.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// One input of an answer.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct InputFile {
    /// What it is: `scenario`, `dump`, `site`.
    pub(crate) role: String,
    pub(crate) path: String,
    /// Its modification time (UTC), when it is a file or folder on disk.
    pub(crate) modified: Option<String>,
    /// SHA-256 of its bytes, when it is a regular file.
    pub sha256: Option<String>,
    /// For a dump: the newest timestamp its objects record, about when it was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_object: Option<String>,
}

/// `path` as an input: its modification time, and its SHA-256 when it is a regular file
/// (read in blocks, so a large dump is hashed without being held in memory). Anything that
/// cannot be read is left out, never an error: the answer was computed already.
pub(crate) fn describe(role: &str, path: &Path) -> InputFile {
    let meta = std::fs::metadata(path).ok();
    let modified = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_secs()).ok())
        .map(|s| crate::clock::format_at(s, false));
    let sha256 = meta
        .filter(std::fs::Metadata::is_file)
        .and_then(|_| sha256_of(path));
    InputFile {
        role: role.to_string(),
        path: path.display().to_string(),
        modified,
        sha256,
        newest_object: None,
    }
}

fn sha256_of(path: &Path) -> Option<String> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Some(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_with_its_time_and_digest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        std::fs::write(&p, "abc").unwrap();
        let d = describe("scenario", &p);
        assert_eq!(
            d.sha256.as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert!(d.modified.is_some());
        let folder = describe("dump", dir.path());
        assert!(folder.sha256.is_none() && folder.modified.is_some());
        let missing = describe("dump", &dir.path().join("none"));
        assert_eq!((missing.modified, missing.sha256), (None, None));
    }
}
