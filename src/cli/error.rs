//! The top-level error: every module's error, flattened for people, with its exit code.

use miette::Diagnostic;

use crate::files::fsio::FsError;
use crate::files::yaml::InputError;
use crate::plan::Finding;
use crate::render::RenderError;

/// Exit codes (ARCHITECTURE.md): 0 ok, 1 failing findings/verdicts, 2 usage or input
/// errors, 3 partial success.
pub mod exit {
    pub const OK: u8 = 0;
    pub const FINDINGS: u8 = 1;
    pub const INPUT: u8 = 2;
    pub const PARTIAL: u8 = 3;
}

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Input(Box<InputError>),
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{0}")]
    #[diagnostic(help("run `rackplan check --site DIR` to see every finding"))]
    Findings(String, Vec<Finding>),
    #[error("{0}")]
    Usage(String),
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input(Box::new(e))
    }
}

impl From<Box<InputError>> for Error {
    fn from(e: Box<InputError>) -> Self {
        Error::Input(e)
    }
}

impl From<RenderError> for Error {
    fn from(e: RenderError) -> Self {
        match e {
            RenderError::Input(i) => Error::Input(i),
            RenderError::Fs(f) => Error::Fs(f),
            RenderError::Findings(f) => {
                Error::Findings(RenderError::Findings(f.clone()).to_string(), f)
            }
            other => Error::Usage(other.to_string()),
        }
    }
}

impl Error {
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Findings(..) => exit::FINDINGS,
            Error::Input(_) | Error::Fs(_) | Error::Usage(_) => exit::INPUT,
        }
    }
}
