//! The JSON document of a command that failed.

use serde::Serialize;

use crate::plan::Finding;

/// `--output json` when a command fails: the message, the exit code, and the findings that
/// stopped it, if any.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct ErrorJson<'a> {
    pub(crate) error: String,
    pub(crate) exit_code: u8,
    pub(crate) findings: Option<&'a [Finding]>,
}
