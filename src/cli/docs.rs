//! `rackplan docs` and `rackplan completions`: the reference generated from the code
//! (`crate::docs`), written under `docs/` or compared with it (`--check`, which CI runs).

use std::path::Path;

use clap::CommandFactory;

use super::args::Cli;
use super::error::{Error, exit};
use super::term;
use crate::report;

/// `rackplan docs [--out DIR] [--check]`; `json`: the outcome as JSON (`--output json`).
pub(crate) fn run(out: &Path, check: bool, json: bool) -> Result<u8, Error> {
    let files = crate::docs::generate(&Cli::command(), &super::outputs::output_schemas());
    let outcome = |drifted: Vec<String>, written: bool| report::docs::DocsOutcome {
        dir: out.display().to_string(),
        files: files.len(),
        checked: check,
        drifted,
        written,
    };
    if check {
        let drift = crate::docs::drift(out, &files);
        if json {
            term::outln(&report::json(&outcome(drift.clone(), false)));
        } else {
            term::out(&report::docs::check_text(out, files.len(), &drift));
        }
        return Ok(if drift.is_empty() {
            exit::OK
        } else {
            exit::FINDINGS
        });
    }
    crate::docs::write(out, &files)?;
    if json {
        term::outln(&report::json(&outcome(Vec::new(), true)));
    } else {
        term::out(&report::docs::written_text(out, files.len()));
    }
    Ok(exit::OK)
}

/// `rackplan completions SHELL`: the script on stdout.
pub(crate) fn completions(shell: clap_complete::Shell) -> u8 {
    let script = crate::docs::completions(&Cli::command(), shell);
    term::out(&String::from_utf8_lossy(&script));
    exit::OK
}
