//! The top-level error: every module's error, flattened for people, with its exit code.
//!
//! Domain modules return their own error types; this is the one place they meet. The exit
//! codes are the documented ones (ARCHITECTURE.md, `rackplan --help`): 0 ok, 1 findings or
//! a failing verdict, 2 usage, input or runtime errors, 3 partial success.

use miette::Diagnostic;

use crate::files::fsio::FsError;
use crate::files::yaml::InputError;
use crate::plan::Finding;
use crate::render::RenderError;

/// Exit codes (ARCHITECTURE.md): 0 ok, 1 failing findings/verdicts, 2 usage or input
/// errors, 3 partial success.
pub(crate) mod exit {
    pub(crate) const OK: u8 = 0;
    pub(crate) const FINDINGS: u8 = 1;
    pub(crate) const INPUT: u8 = 2;
    pub(crate) const PARTIAL: u8 = 3;
}

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    /// A located error in an input file.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Input(Box<InputError>),
    #[error(transparent)]
    Fs(#[from] FsError),
    /// Error-level findings that stop the command.
    #[error("{0}")]
    #[diagnostic(help("run `rackplan check --site DIR` to see every finding"))]
    Findings(String, Vec<Finding>),
    /// A flag or argument that cannot be used as given, or a missing prerequisite.
    #[error("{0}")]
    Usage(String),
    /// Generated output that failed its own validation, or a plan that is out of date.
    #[error(transparent)]
    Render(RenderError),
    /// `serve` could not bind its address.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// A server that stopped with an error after it started.
    #[error("server error: {0}")]
    Server(String),
    /// Another rackplan is writing the same site.
    #[error(transparent)]
    Lock(crate::files::sitelock::LockError),
    /// The process could not set itself up (the async runtime).
    #[error("{0}")]
    Runtime(String),
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
            other => Error::Render(other),
        }
    }
}

impl From<crate::plan::LoadError> for Error {
    fn from(e: crate::plan::LoadError) -> Self {
        match e {
            crate::plan::LoadError::Input(i) => Error::Input(i),
            crate::plan::LoadError::Missing(m) => Error::Usage(m),
        }
    }
}

impl From<crate::bootstrap::serve::StateError> for Error {
    fn from(e: crate::bootstrap::serve::StateError) -> Self {
        use crate::bootstrap::serve::StateError;
        match e {
            StateError::Input(i) => Error::Input(i),
            StateError::Fs(f) => Error::Fs(f),
            StateError::Lock(l) => Error::Lock(l),
            held @ StateError::ServeRunning { .. } => Error::Usage(held.to_string()),
        }
    }
}

impl From<crate::scaffold::ScaffoldError> for Error {
    fn from(e: crate::scaffold::ScaffoldError) -> Self {
        use crate::scaffold::ScaffoldError as S;
        match e {
            S::Fs(f) => Error::Fs(f),
            S::Input(i) => Error::Input(i),
            S::NotAFolder(_) => Error::Usage(e.to_string()),
        }
    }
}

impl From<super::config::ConfigError> for Error {
    fn from(e: super::config::ConfigError) -> Self {
        Error::Usage(e.to_string())
    }
}

impl From<super::config::StudyFlagError> for Error {
    fn from(e: super::config::StudyFlagError) -> Self {
        Error::Usage(e.to_string())
    }
}

impl From<crate::simulate::StudyError> for Error {
    fn from(e: crate::simulate::StudyError) -> Self {
        use crate::simulate::StudyError;
        match e {
            StudyError::Input(i) => Error::Input(i),
            StudyError::Site(s) => s.into(),
            other => Error::Usage(other.to_string()),
        }
    }
}

impl From<crate::simulate::questions::DrainError> for Error {
    fn from(e: crate::simulate::questions::DrainError) -> Self {
        Error::Usage(e.to_string())
    }
}

impl From<crate::simulate::questions::UpgradeError> for Error {
    fn from(e: crate::simulate::questions::UpgradeError) -> Self {
        Error::Usage(e.to_string())
    }
}

impl Error {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Error::Findings(..) => exit::FINDINGS,
            Error::Input(_)
            | Error::Fs(_)
            | Error::Usage(_)
            | Error::Render(_)
            | Error::Bind { .. }
            | Error::Server(_)
            | Error::Lock(_)
            | Error::Runtime(_) => exit::INPUT,
        }
    }
}
