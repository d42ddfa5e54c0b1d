//! The terminal side of every command: the stdout writer, progress bars and the tokio
//! runtime. Nothing outside `cli/` writes to the terminal or starts a runtime.
//!
//! Rust ignores SIGPIPE, so a plain `println!` into a closed pipe (`rackplan ... | head -1`)
//! panics. Every write here goes through [`out`], which treats a closed pipe as the reader
//! having had enough: the process ends quietly with exit 0.

use std::io::{IsTerminal, Write};

use super::error::Error;

/// Write `text` to stdout as it is; a closed pipe ends the process with exit 0.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let result = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    if let Err(e) = result {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        // Any other stdout failure (a full disk behind a redirect) is reported once.
        let _ = writeln!(std::io::stderr(), "rackplan: cannot write to stdout: {e}");
        std::process::exit(i32::from(super::error::exit::INPUT));
    }
}

/// `text` and a newline to stdout.
pub fn outln(text: &str) {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    out(&s);
}

/// A line to stderr; a closed stderr is ignored (there is nobody to tell).
pub fn errln(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The async runtime for commands that talk to the network.
pub fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))
}

/// A progress bar on a terminal (hidden for JSON output or when stderr is piped).
pub fn progress(len: usize, what: &str, json: bool) -> indicatif::ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(len as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "{{spinner}} {what} {{pos}}/{{len}} [{{bar:30}}] {{elapsed_precise}} {{msg}}"
    )) {
        b.set_style(style.progress_chars("=> "));
    }
    b
}

/// Tell `report` how wide the terminal is (120 columns when stdout is not a terminal).
pub fn fit_tables_to_terminal() {
    if std::io::stdout().is_terminal()
        && let Some(w) = comfy_table::Table::new().width()
    {
        crate::report::set_width(w);
    }
}

/// Plain, uncoloured diagnostics when stderr is not a terminal, so logs and tests read
/// the same everywhere.
pub fn install_error_hook() {
    let plain = !std::io::stderr().is_terminal() || std::env::var_os("NO_COLOR").is_some();
    let _ = miette::set_hook(Box::new(move |_| {
        let theme = if plain {
            miette::GraphicalTheme::unicode_nocolor()
        } else {
            miette::GraphicalTheme::default()
        };
        Box::new(miette::GraphicalReportHandler::new_themed(theme).with_width(100))
    }));
}
