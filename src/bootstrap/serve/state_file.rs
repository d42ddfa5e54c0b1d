//! The install progress on disk: `DIR/install-state.yaml` in the site folder, so a
//! restarted `serve` still knows which nodes are installed (and tells them to boot their
//! disk instead of handing out the install script again), and `rackplan status --site`
//! reads it when no server runs.
//!
//! Design: the site's write lock (`.rackplan.lock`) belongs to the commands that rewrite
//! the site (discover, plan, render) and is held for seconds; `serve` runs for days, so it
//! takes its own lock, `DIR/.install-state.lock`, for its whole life. That keeps one server
//! per site (two would each hand out scripts and overwrite each other's records) without
//! ever blocking `plan` or `render`, which do not touch this file. Every write is atomic
//! (`files::fsio`), so a reader without the lock (`status --site`) sees the old file or the
//! new one, whole.
//!
//! Reading is strict and bounded: a regular file (a symlink, dangling or not, is an error,
//! since the atomic writer would replace the link), at most [`MAX_FILE_BYTES`] and
//! [`MAX_NODES`] nodes, known events, well-formed times; events past
//! [`progress::MAX_EVENTS`] per node are dropped. Anything wrong is a located error that
//! says what to do. A bad file is never taken for "nothing installed": that would reinstall
//! every installed node that network-boots.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use miette::Diagnostic;
use serde::{Deserialize, Serialize};

use super::progress::{NodeProgress, Progress};
use crate::files::fsio::{self, FsError, Mode};
use crate::files::sitelock::{LockError, SiteLock};
use crate::files::yaml::{self, InputError};
use crate::path;

/// The file, in the site folder.
pub(crate) const FILE_NAME: &str = "install-state.yaml";
/// The lock `serve` holds for its life.
pub(crate) const LOCK_NAME: &str = ".install-state.lock";
/// Largest state file read (10,000 nodes with full histories take about 10 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Most nodes a state file may hold.
pub(crate) const MAX_NODES: usize = 10_000;
/// The version of the format written and read.
pub(crate) const VERSION: u32 = 1;

const HINT: &str = "install-state.yaml is written by `rackplan serve` and records which nodes are installed; fix this entry or restore the file from a backup. Do not delete it: serve would forget which nodes are installed and reinstall them on their next network boot";

const HEADER: &str = "# Written by `rackplan serve`: each node's install progress. Installed nodes are told to\n# boot their disk; removing this file makes serve reinstall them on their next network boot.\n";

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum StateError {
    /// The file is there and wrong.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Input(Box<InputError>),
    #[error(
        "another `rackplan serve` (pid {pid}) keeps the install state of site {dir}: stop it first; two servers of one site would each hand out install scripts and lose each other's records"
    )]
    ServeRunning { dir: String, pid: String },
    #[error(transparent)]
    Lock(LockError),
    #[error(transparent)]
    Fs(#[from] FsError),
}

impl From<InputError> for StateError {
    fn from(e: InputError) -> Self {
        StateError::Input(Box::new(e))
    }
}

/// The file as written.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct StateDoc {
    version: u32,
    #[serde(default)]
    nodes: BTreeMap<String, NodeProgress>,
}

pub(crate) fn path(site_dir: &Path) -> PathBuf {
    site_dir.join(FILE_NAME)
}

/// Take the lock on the install state of the site in `dir`.
pub(crate) fn lock(dir: &Path, wait: Duration) -> Result<SiteLock, StateError> {
    SiteLock::acquire_file(dir, LOCK_NAME, wait).map_err(|e| match e {
        LockError::Held { dir, pid } => StateError::ServeRunning { dir, pid },
        other @ LockError::Io { .. } => StateError::Lock(other),
    })
}

fn file_error(path: &Path, message: String) -> InputError {
    yaml::file_error(path, message, HINT)
}

/// The progress recorded in `path`; `None` when there is no file (nothing recorded yet).
pub fn load(path: &Path) -> Result<Option<Progress>, StateError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(file_error(path, format!("cannot read the file: {e}")).into()),
    };
    if meta.file_type().is_symlink() {
        return Err(file_error(
            path,
            "is a symbolic link; serve replaces this file on every write, which would break the link: put the file itself here".into(),
        )
        .into());
    }
    if !meta.is_file() {
        return Err(
            file_error(path, "not a regular file (a folder, FIFO or device)".into()).into(),
        );
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(file_error(
            path,
            format!(
                "the file is {} bytes; rackplan reads at most {MAX_FILE_BYTES}",
                meta.len()
            ),
        )
        .into());
    }
    let text = yaml::read_input(path).map_err(with_hint)?;
    parse(path, &text).map(Some)
}

fn with_hint(mut e: InputError) -> InputError {
    e.hint = Some(match e.hint.take() {
        Some(h) => format!("{h}. {HINT}"),
        None => HINT.to_string(),
    });
    e
}

/// Parse and check the text of a state file.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Progress, StateError> {
    let (doc, src): (StateDoc, _) = yaml::parse(path, text).map_err(with_hint)?;
    let fail = |p: Vec<yaml::Seg>, msg: String| -> StateError {
        src.error_at(&p, msg, Some(HINT.to_string())).into()
    };
    if doc.version != VERSION {
        return Err(fail(
            path!["version"],
            format!(
                "version {} is not one this rackplan reads (it reads {VERSION})",
                doc.version
            ),
        ));
    }
    if doc.nodes.len() > MAX_NODES {
        return Err(fail(
            path!["nodes"],
            format!(
                "{} nodes; rackplan keeps at most {MAX_NODES}",
                doc.nodes.len()
            ),
        ));
    }
    let mut nodes = BTreeMap::new();
    for (host, mut p) in doc.nodes {
        if !is_hostname(&host) {
            // Shown without its control characters (a hostile key could drive the terminal).
            let shown = crate::redfish::origin::shown(&host);
            return Err(fail(
                path!["nodes", shown.as_str()],
                format!(
                    "{shown:?} is not a hostname (lowercase letters, digits, `-` and `.`, at most 253)"
                ),
            ));
        }
        if p.node.is_empty() || p.node.len() > 256 || p.node.chars().any(char::is_control) {
            return Err(fail(
                path!["nodes", host.as_str(), "node"],
                "the node id must be 1 to 256 printable characters".into(),
            ));
        }
        for (i, e) in p.events.iter().enumerate() {
            if !is_utc_time(&e.at) {
                return Err(fail(
                    path!["nodes", host.as_str(), "events", i, "at"],
                    format!(
                        "{:?} is not a UTC time like 2025-06-01T12:00:00Z",
                        crate::redfish::origin::shown(&e.at)
                    ),
                ));
            }
        }
        p.trim();
        nodes.insert(host, p);
    }
    Ok(Progress { nodes })
}

/// The text of a state file holding `progress`.
pub(crate) fn render(progress: &Progress) -> String {
    let doc = StateDoc {
        version: VERSION,
        nodes: progress.nodes.clone(),
    };
    format!("{HEADER}{}", yaml::to_string(&doc))
}

/// Write `progress` to `path`, atomically.
pub(crate) fn save(path: &Path, progress: &Progress) -> Result<(), FsError> {
    fsio::write_atomic(path, render(progress).as_bytes(), Mode::Public)
}

fn is_hostname(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 253
        && h.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

/// `YYYY-MM-DDTHH:MM:SSZ`, as `inventory::utc_now` writes it.
fn is_utc_time(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::super::progress::{InstallEvent, InstallState, MAX_EVENTS};
    use super::*;

    fn sample() -> Progress {
        let mut p = Progress::default();
        p.note(
            "hv-c01",
            "SN-1",
            InstallEvent::TokenIssued,
            "2025-06-01T12:00:00Z".into(),
        );
        p.note(
            "hv-c01",
            "SN-1",
            InstallEvent::Succeeded,
            "2025-06-01T12:20:00Z".into(),
        );
        p
    }

    #[test]
    fn a_saved_state_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let f = path(dir.path());
        assert_eq!(load(&f).unwrap(), None, "no file: nothing recorded yet");
        save(&f, &sample()).unwrap();
        let back = load(&f).unwrap().unwrap();
        assert_eq!(back, sample());
        assert!(back.installed("hv-c01", "SN-1"));
        insta::assert_snapshot!(render(&sample()));
    }

    fn error_of(text: &str) -> String {
        let e = parse(Path::new("site/install-state.yaml"), text).unwrap_err();
        let StateError::Input(e) = e else {
            panic!("{e}")
        };
        format!(
            "{e}\nhint: {}",
            e.hint
                .clone()
                .unwrap_or_default()
                .split(". Do not")
                .next()
                .unwrap()
        )
    }

    #[test]
    fn a_bad_file_is_a_located_error_never_nothing_installed() {
        let good = render(&sample());
        for (name, text) in [
            ("not_yaml", "version: 1\nnodes: [\n".to_string()),
            ("unknown_event", good.replace("SUCCEEDED", "DONE")),
            (
                "bad_time",
                good.replace("2025-06-01T12:20:00Z", "yesterday"),
            ),
            (
                "bad_hostname",
                good.replace("hv-c01:", "\"hv c01\\u001b[2J\":"),
            ),
            ("version", good.replace("version: 1", "version: 7")),
            (
                "unknown_key",
                good.replace("version: 1", "version: 1\nextra: x"),
            ),
            ("empty_node", good.replace("node: SN-1", "node: \"\"")),
        ] {
            insta::assert_snapshot!(name, error_of(&text));
        }
    }

    #[test]
    fn links_and_oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = path(dir.path());
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &f).unwrap();
        let e = load(&f).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(&f).unwrap();
        assert!(
            load(&f)
                .unwrap_err()
                .to_string()
                .contains("not a regular file")
        );
        std::fs::remove_dir(&f).unwrap();
        let file = std::fs::File::create(&f).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        assert!(load(&f).unwrap_err().to_string().contains("at most"));
    }

    #[test]
    fn long_histories_are_cut_on_reading() {
        let mut text = String::from("version: 1\nnodes:\n  hv-c01:\n    node: SN-1\n    events:\n");
        text.push_str("      - {event: SUCCEEDED, at: \"2025-06-01T12:00:00Z\"}\n");
        for _ in 0..500 {
            text.push_str("      - {event: CONFIG_SERVED, at: \"2025-06-01T12:00:00Z\"}\n");
        }
        let p = parse(Path::new("install-state.yaml"), &text).unwrap();
        assert_eq!(p.nodes["hv-c01"].events.len(), MAX_EVENTS);
        assert_eq!(p.nodes["hv-c01"].state(), InstallState::Installed);
    }

    #[test]
    fn one_server_per_site() {
        let dir = tempfile::tempdir().unwrap();
        let _first = lock(dir.path(), Duration::ZERO).unwrap();
        let e = lock(dir.path(), Duration::ZERO).unwrap_err();
        assert!(matches!(e, StateError::ServeRunning { .. }), "{e}");
        // The site's own write lock stays free for plan and render.
        SiteLock::acquire(dir.path(), Duration::ZERO).unwrap();
    }
}
