//! The error every bad input file becomes ([`InputError`]: file, line, column, key path,
//! message, hint), and the key paths it names (`tenants[2].vlan`). Built by `yaml` when it
//! parses and by the semantic checks that point back into a file.

use miette::{Diagnostic, NamedSource, SourceSpan};

/// One step of a key path: a mapping key or a sequence index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

impl From<&str> for Seg {
    fn from(k: &str) -> Self {
        Seg::Key(k.to_string())
    }
}

impl From<String> for Seg {
    fn from(k: String) -> Self {
        Seg::Key(k)
    }
}

impl From<usize> for Seg {
    fn from(i: usize) -> Self {
        Seg::Index(i)
    }
}

/// Build a key path: `path!["management", "pool", 0]`.
#[macro_export]
macro_rules! path {
    ($($seg:expr),* $(,)?) => {{
        #[allow(clippy::useless_vec)]
        let p = vec![$($crate::files::input_error::Seg::from($seg)),*];
        p
    }};
}

/// Render a key path the way people write it: `tenants[2].vlan`.
pub(crate) fn display_path(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        out.push_str("(document)");
    }
    out
}

/// A bad input file: where, what, and what to do about it.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{}", self.headline())]
#[diagnostic(code(rackplan::input))]
pub struct InputError {
    pub file: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
    /// Key path of the offending value (`management.vip`), or `(document)`.
    pub key: String,
    pub message: String,
    #[help]
    pub hint: Option<String>,
    #[source_code]
    pub(crate) src: NamedSource<String>,
    #[label("here")]
    pub(crate) span: Option<SourceSpan>,
}

impl InputError {
    /// `file:line:column: key: message`; a file-level error (no line) is `file: message`.
    fn headline(&self) -> String {
        if self.line == 0 {
            let key = if self.key.is_empty() || self.key.starts_with('(') {
                String::new()
            } else {
                format!("{}: ", self.key)
            };
            format!("{}: {key}{}", self.file, self.message)
        } else {
            format!(
                "{}:{}:{}: {}: {}",
                self.file, self.line, self.column, self.key, self.message
            )
        }
    }
}
