//! The study `simulate` and `admit` open, with the scenario from a file or standard input
//! and a spinner while a dump is read.

use std::path::Path;

use super::error::Error;
use super::term;
use crate::simulate::scenario::RebuildWhatIf;
use crate::simulate::{ScenarioInput, Study, StudyInput};

/// The study `simulate` and `admit` open: the scenario from a file or standard input.
pub(crate) fn open_study(
    scenario: Option<&Path>,
    site: Option<&Path>,
    dump: Option<&Path>,
    rebuild_what_if: Option<RebuildWhatIf>,
) -> Result<Study, Error> {
    let stdin;
    let scenario = match scenario {
        Some(f) if f == Path::new("-") => {
            stdin = term::read_stdin("the scenario")?;
            ScenarioInput::Text {
                name: Path::new("<stdin>"),
                text: &stdin,
            }
        }
        Some(f) => ScenarioInput::File(f),
        None => ScenarioInput::None,
    };
    let progress = dump.map(|d| term::spinner(&format!("reading {}", d.display())));
    let study = Study::open(&StudyInput {
        scenario,
        site,
        dump,
        rebuild_what_if,
    });
    drop(progress);
    Ok(study?)
}
