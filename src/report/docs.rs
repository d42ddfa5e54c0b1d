//! `rackplan docs`: what was written, or (with `--check`) which files drifted from the code.

use std::path::Path;

/// `docs --check` when everything matches, or the drifted files and what to do.
pub(crate) fn check_text(dir: &Path, total: usize, drift: &[String]) -> String {
    if drift.is_empty() {
        return format!("{total} file(s) in {} match the code\n", dir.display());
    }
    let mut s = String::new();
    for d in drift {
        s.push_str(&format!("drifted: {}\n", dir.join(d).display()));
    }
    s.push_str("run `rackplan docs` (cargo run -- docs) and commit the result\n");
    s
}

/// `docs` after writing.
pub(crate) fn written_text(dir: &Path, total: usize) -> String {
    format!("{total} file(s) written in {}\n", dir.display())
}

/// `docs` and `docs --check` as JSON: the folder, how many files the code generates, the
/// drifted ones (with `--check`) and whether they were written.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub(crate) struct DocsOutcome {
    pub(crate) dir: String,
    pub(crate) files: usize,
    pub(crate) checked: bool,
    pub(crate) drifted: Vec<String>,
    pub(crate) written: bool,
}
