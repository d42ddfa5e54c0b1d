//! Putting a new site on disk. What may be replaced: the schemas always (they follow the
//! binary), the derived profiles and nodes.yaml when derived again, site.yaml, bmcs.yaml and
//! the shipped profiles only with `force`, the secrets never, and a `.gitignore` is never
//! replaced: the lines it lacks are added. Modes are set, not left to the umask: the site
//! and its folders 0755 at most, `secrets/` 0700, the secrets 0600, other files 0644.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::contents::{GITIGNORE_LINES, Owner, STARTER_SCENARIO, site_files};
use crate::files::fsio::{self, DirMode, FsError, Mode};
use crate::files::yaml::{InputError, read_input};
use crate::inventory::Inventory;
use crate::profile::Role;

/// Why a site could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ScaffoldError {
    #[error(
        "{0} is a file, not a folder: give the folder the site goes into (a new one is made), or move the file away"
    )]
    NotAFolder(PathBuf),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Input(#[from] Box<InputError>),
}

/// What to make.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The site's name (a DNS label, checked by the caller).
    pub(crate) name: &'a str,
    /// A discovered inventory to annotate and derive the profiles from.
    pub(crate) inventory: Option<&'a Inventory>,
    /// Replace site.yaml, bmcs.yaml and the shipped profiles that exist.
    pub(crate) force: bool,
}

/// What `init` did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Outcome {
    pub(crate) dir: String,
    pub(crate) written: Vec<String>,
    pub(crate) kept: Vec<String>,
    /// Role per node, when derived from an inventory.
    pub(crate) roles: std::collections::BTreeMap<String, Role>,
    /// Profile errors the derivation could not remove, per role.
    pub(crate) remaining: Vec<String>,
    /// When fewer than three nodes could be made management: each node that was not, and
    /// why (`annotations.role` in nodes.yaml chooses instead).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) role_gaps: Vec<String>,
    pub(crate) next: Vec<String>,
}

/// Refuse a target that exists and is not a folder (a folder behind a symlink is fine).
pub(crate) fn check_target(dir: &Path) -> Result<(), ScaffoldError> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(ScaffoldError::NotAFolder(dir.to_path_buf())),
        _ => Ok(()),
    }
}

/// The `.gitignore` to write: `None` when the existing one has every line already.
fn gitignore(path: &Path, fresh: &[u8]) -> Result<Option<Vec<u8>>, ScaffoldError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Some(fresh.to_vec()));
    }
    let mut text = read_input(path).map_err(Box::new)?;
    let has = |line: &str| {
        text.lines()
            .any(|l| l.trim() == line || l.trim() == line.trim_end_matches('/'))
    };
    let missing: Vec<&str> = GITIGNORE_LINES.into_iter().filter(|l| !has(l)).collect();
    if missing.is_empty() {
        return Ok(None);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(
        "# Added by `rackplan init`: secrets and rendered configs stay out of version control.\n",
    );
    for l in missing {
        text.push_str(l);
        text.push('\n');
    }
    Ok(Some(text.into_bytes()))
}

/// Make (or complete) the site in `dir`. The caller holds the site's lock when the folder
/// existed already.
pub(crate) fn init(dir: &Path, req: &Request<'_>) -> Result<Outcome, ScaffoldError> {
    check_target(dir)?;
    let contents = site_files(req.name, req.inventory);
    fsio::create_dir(dir, DirMode::Public)?;
    fsio::create_dir(&dir.join("secrets"), DirMode::Private)?;
    let mut written = Vec::new();
    let mut kept = Vec::new();
    let mut staged = Vec::new();
    for f in &contents.files {
        let path = dir.join(&f.rel);
        let exists = std::fs::symlink_metadata(&path).is_ok();
        let bytes = match f.owner {
            Owner::Binary | Owner::Derived => Some(f.bytes.clone()),
            Owner::People if req.force || !exists => Some(f.bytes.clone()),
            Owner::Secret if !exists => Some(f.bytes.clone()),
            Owner::People | Owner::Secret => None,
            Owner::GitIgnore => gitignore(&path, &f.bytes)?,
        };
        let Some(bytes) = bytes else {
            kept.push(f.rel.clone());
            continue;
        };
        if let Some(parent) = path.parent() {
            fsio::create_dir(parent, DirMode::Public)?;
        }
        let mode = if f.owner == Owner::Secret {
            Mode::Secret
        } else {
            Mode::Public
        };
        if let Some(s) = fsio::stage(&path, &bytes, mode)? {
            staged.push(s);
        }
        written.push(f.rel.clone());
    }
    for s in staged {
        s.commit()?;
    }
    Ok(outcome(
        dir,
        req.inventory,
        &written,
        &kept,
        contents.roles,
        contents.remaining,
    ))
}

fn outcome(
    dir: &Path,
    inventory: Option<&Inventory>,
    written: &[String],
    kept: &[String],
    roles: std::collections::BTreeMap<String, Role>,
    remaining: Vec<String>,
) -> Outcome {
    let shown = |rel: &str| dir.join(rel).display().to_string();
    let site_arg = dir.display().to_string();
    let mut next = Vec::new();
    if inventory.is_none() {
        next.push(format!(
            "edit {} (BMC addresses and credentials)",
            shown("bmcs.yaml")
        ));
        next.push(format!("rackplan discover redfish --site {site_arg}"));
        next.push(format!(
            "rackplan init {site_arg} --from {}   (profiles from the hardware found)",
            shown("nodes.yaml")
        ));
    }
    let no_paths = inventory
        .iter()
        .flat_map(|i| &i.nodes)
        .filter(|n| !n.disks.is_empty() && n.disks.iter().all(|d| d.device_path().is_none()))
        .count();
    if no_paths > 0 {
        next.push(format!(
            "rackplan discover ssh --site {site_arg}   ({no_paths} node(s) have disks the BMC's data cannot name; the install config needs /dev/disk/by-id)"
        ));
    }
    next.push(format!(
        "edit {} (networks, VIP, DNS, NTP) and replace the secrets in {}",
        shown("site.yaml"),
        shown("secrets")
    ));
    next.push(format!("rackplan check --site {site_arg}"));
    next.push(format!("rackplan plan --site {site_arg}"));
    next.push(format!("rackplan render --site {site_arg}"));
    next.push(format!(
        "rackplan simulate --site {site_arg}   (the capacity review of this fleet, from {}; add your clusters and teams there)",
        shown(STARTER_SCENARIO)
    ));
    let role_gaps = inventory.map_or_else(Vec::new, |i| crate::plan::derive::role_gaps(i, &roles));
    Outcome {
        dir: dir.display().to_string(),
        written: written.iter().map(|r| shown(r)).collect(),
        kept: kept.iter().map(|r| shown(r)).collect(),
        roles,
        remaining,
        role_gaps,
        next,
    }
}
