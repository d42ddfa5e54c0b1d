//! The installer's boot artefacts: which ones the iPXE scripts fetch, which ones this
//! server cannot hand out, and the check that keeps rendered configs out of `--artifacts`.

use std::path::{Path, PathBuf};

/// An `--artifacts` folder that cannot be served.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArtifactsError {
    #[error("--artifacts {0}: not a folder")]
    NotAFolder(PathBuf),
    #[error(
        "--artifacts {dir} holds an install config ({config}): it would be served without its one-time token; point --artifacts at the installer's kernel, initrd, rootfs and ISO only"
    )]
    HoldsAConfig { dir: PathBuf, config: PathBuf },
}

/// Refuse an artifacts folder that holds rendered install configs: serving it as it is
/// would hand out cluster tokens without the token route.
pub(crate) fn check_artifacts(dir: &Path) -> Result<(), ArtifactsError> {
    if !dir.is_dir() {
        return Err(ArtifactsError::NotAFolder(dir.to_path_buf()));
    }
    let mut todo = vec![(dir.to_path_buf(), 0)];
    let mut seen = 0usize;
    while let Some((d, depth)) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > 100_000 {
                return Ok(());
            }
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_ascii_lowercase();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if !is_dir && name == "config.yaml" {
                return Err(ArtifactsError::HoldsAConfig {
                    dir: dir.to_path_buf(),
                    config: p.strip_prefix(dir).unwrap_or(&p).to_path_buf(),
                });
            }
            if is_dir && depth < 6 {
                todo.push((p, depth + 1));
            }
        }
    }
    Ok(())
}

/// The installer's boot artefacts the iPXE scripts fetch from the base URL, by version.
pub(crate) fn boot_artifacts(version: &str) -> [String; 3] {
    [
        format!("harvester-{version}-vmlinuz-amd64"),
        format!("harvester-{version}-initrd-amd64"),
        format!("harvester-{version}-rootfs-amd64.squashfs"),
    ]
}

/// The boot artefacts `serve` cannot hand out: not in `--artifacts` (or no `--artifacts`),
/// so the nodes' iPXE would stop at them unless another server publishes them.
pub(crate) fn missing_artifacts(dir: Option<&Path>, version: &str) -> Vec<String> {
    boot_artifacts(version)
        .into_iter()
        .filter(|a| dir.is_none_or(|d| !d.join(a).is_file()))
        .collect()
}
