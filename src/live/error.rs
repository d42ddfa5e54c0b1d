//! Why a dump could not be read at all.

/// Why a dump could not be read at all (a bad object is a note, not an error).
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error("{path}: {message}")]
    Read { path: String, message: String },
}
