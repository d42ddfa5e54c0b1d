//! The terminal side of every command: the stdout writer, progress bars and the tokio
//! runtime. Nothing outside `cli/` writes to the terminal or starts a runtime.
//!
//! Rust ignores SIGPIPE, so a plain `println!` into a closed pipe (`rackplan ... | head -1`)
//! panics. Every write here goes through [`out`], which treats a closed pipe as the reader
//! having had enough: the process ends quietly with exit 0.

use std::io::{IsTerminal, Write};

use super::error::Error;

/// Set once by `main` for table output: long prose lines are wrapped to the table width.
static WRAP_PROSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `-q`: no progress bars.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn set_quiet(on: bool) {
    QUIET.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn wrap_prose(on: bool) {
    WRAP_PROSE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether stderr is coloured: then colour sequences in a line pass, all others are shown.
static COLOR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Write `text` to stdout (prose wrapped when [`wrap_prose`] is on); a closed pipe ends the
/// process with exit 0. Control characters and escape sequences in it (names from a BMC, a
/// dump or a status server) are shown as visible marks, never sent to the terminal.
pub(crate) fn out(text: &str) {
    let wrapped;
    let text = if WRAP_PROSE.load(std::sync::atomic::Ordering::Relaxed) {
        wrapped = crate::report::wrap_prose(text);
        wrapped.as_str()
    } else {
        text
    };
    out_raw(&crate::report::escape::terminal(text));
}

/// Write `text` to stdout as it is: only for sequences rackplan itself sends (the status
/// screen's clear).
pub(crate) fn out_raw(text: &str) {
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
pub(crate) fn outln(text: &str) {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    out(&s);
}

/// One line for the terminal: what a server sent shown visibly (no escape sequences), cut
/// to the table width with an ellipsis so a progress line never wraps.
pub fn fit_line(text: &str) -> String {
    let clean = crate::report::escape::terminal(text);
    let first = clean.lines().next().unwrap_or("");
    let width = match crate::report::style() {
        crate::report::Style::Boxed(w) => usize::from(w),
        crate::report::Style::Plain => usize::MAX,
    };
    if first.chars().count() <= width {
        return first.to_string();
    }
    let mut cut: String = first.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A line to stderr; a closed stderr is ignored (there is nobody to tell). Escape sequences
/// are shown visibly, except the colours rackplan adds itself when stderr is coloured.
pub(crate) fn errln(text: &str) {
    let text = if COLOR.load(std::sync::atomic::Ordering::Relaxed) {
        crate::report::escape::terminal_styled(text)
    } else {
        crate::report::escape::terminal(text)
    };
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// All of standard input, for a file argument given as `-`.
pub(crate) fn read_stdin(what: &str) -> Result<String, Error> {
    use std::io::Read as _;
    if std::io::stdin().is_terminal() {
        return Err(Error::Usage(format!(
            "{what} `-` reads standard input, which is a terminal: pipe the file in (`... < file.yaml`)"
        )));
    }
    let mut s = String::new();
    std::io::stdin()
        .take(crate::files::yaml::MAX_FILE_BYTES + 1)
        .read_to_string(&mut s)
        .map_err(|e| Error::Usage(format!("{what}: cannot read standard input: {e}")))?;
    if s.len() as u64 > crate::files::yaml::MAX_FILE_BYTES {
        return Err(Error::Usage(format!(
            "{what}: standard input is larger than the input limit"
        )));
    }
    Ok(s)
}

/// Ctrl-C during a long review. The first sets the flag returned: max clusters and the
/// timeline stop with what they checked, and the review completes and prints (its answer
/// marked "at least"). The second quits at once with status 130. Listening starts at the
/// first call; if it cannot start, Ctrl-C keeps its default (the process ends).
pub(crate) fn interrupts() -> &'static std::sync::atomic::AtomicBool {
    static FLAG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    static LISTEN: std::sync::Once = std::sync::Once::new();
    LISTEN.call_once(|| {
        let listen = || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
                FLAG.store(true, std::sync::atomic::Ordering::Relaxed);
                errln(
                    "rackplan: interrupted: max clusters and the timeline stop with what they checked, then the review prints; Ctrl-C again quits",
                );
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            });
        };
        // Without the thread, Ctrl-C simply ends the process as before.
        let _ = std::thread::Builder::new()
            .name("interrupts".into())
            .spawn(listen);
    });
    &FLAG
}

/// The async runtime for commands that talk to the network.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))
}

/// A progress bar on a terminal (hidden for JSON output or when stderr is piped).
pub(crate) fn progress(len: usize, what: &str, json: bool) -> indicatif::ProgressBar {
    if json || QUIET.load(std::sync::atomic::Ordering::Relaxed) || !std::io::stderr().is_terminal()
    {
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

/// A spinner on a terminal for a step of unknown length; cleared when dropped.
pub(crate) struct Spinner(indicatif::ProgressBar);

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

pub(crate) fn spinner(what: &str) -> Spinner {
    if QUIET.load(std::sync::atomic::Ordering::Relaxed) || !std::io::stderr().is_terminal() {
        return Spinner(indicatif::ProgressBar::hidden());
    }
    let b = indicatif::ProgressBar::new_spinner();
    b.set_message(what.to_string());
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    Spinner(b)
}

impl Spinner {
    /// What the step is doing now.
    pub fn set_message(&self, what: &str) {
        self.0.set_message(what.to_string());
    }
}

/// Progress of a long analysis on stderr, in every output format: on a terminal a spinner
/// whose message follows the analysis; into a pipe or a log, once the analysis has run
/// `STEPS_AFTER`, a line for the step at hand, at most one per `STEPS_EVERY`. Nothing
/// with `--quiet`.
pub struct Steps {
    spinner: Spinner,
    start: std::time::Instant,
    /// When the last line went out (pipes and logs only).
    last: std::sync::Mutex<Option<std::time::Instant>>,
    lines: bool,
}

const STEPS_AFTER: std::time::Duration = std::time::Duration::from_secs(2);
const STEPS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

impl Steps {
    pub fn new(what: &str) -> Steps {
        let quiet = QUIET.load(std::sync::atomic::Ordering::Relaxed);
        Steps {
            spinner: spinner(what),
            start: std::time::Instant::now(),
            last: std::sync::Mutex::new(None),
            lines: !quiet && !std::io::stderr().is_terminal(),
        }
    }

    /// The step at hand.
    pub fn note(&self, what: &str) {
        self.spinner.set_message(what);
        if !self.lines {
            return;
        }
        let now = std::time::Instant::now();
        if self.due(now) {
            errln(&format!(
                "rackplan: {:.0} s: {what}",
                now.duration_since(self.start).as_secs_f64()
            ));
        }
    }

    /// Whether a line goes out at `now` (and, if so, the next waits `STEPS_EVERY`).
    fn due(&self, now: std::time::Instant) -> bool {
        if now.saturating_duration_since(self.start) < STEPS_AFTER {
            return false;
        }
        let Ok(mut last) = self.last.lock() else {
            return false;
        };
        if last.is_some_and(|t| now.saturating_duration_since(t) < STEPS_EVERY) {
            return false;
        }
        *last = Some(now);
        true
    }
}

/// How tables are drawn: boxed and fitted to the terminal when stdout is one (`COLUMNS`
/// overrides the width), plain aligned columns into a pipe or a file.
pub(crate) fn fit_tables_to_terminal() {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&c| c >= 20);
    if std::io::stdout().is_terminal() {
        let w = columns
            .or_else(|| comfy_table::Table::new().width())
            .unwrap_or(80);
        crate::report::set_width(w);
    } else {
        crate::report::set_plain();
    }
}

/// Whether stderr gets colour: `--color always|never`, else only a terminal without
/// `NO_COLOR` set (any value, per no-color.org).
pub(crate) fn use_color(choice: super::args::ColorChoice) -> bool {
    match choice {
        super::args::ColorChoice::Always => true,
        super::args::ColorChoice::Never => false,
        super::args::ColorChoice::Auto => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Diagnostics through miette, coloured or plain.
pub(crate) fn install_error_hook(color: bool) {
    COLOR.store(color, std::sync::atomic::Ordering::Relaxed);
    let _ = miette::set_hook(Box::new(move |_| {
        let theme = if color {
            miette::GraphicalTheme::unicode()
        } else {
            miette::GraphicalTheme::unicode_nocolor()
        };
        Box::new(miette::GraphicalReportHandler::new_themed(theme).with_width(100))
    }));
}

/// Logging through `tracing` to stderr: `RUST_LOG` when set, else warnings (`-q`: errors
/// only; `-v`: info; `-vv`: debug; `-vvv`: trace), for rackplan's own modules.
pub(crate) fn init_logging(quiet: bool, verbose: u8, color: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "info",
        (false, 2) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("rackplan={level}")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(false)
        .without_time()
        .try_init();
}

/// Resolves on SIGTERM or SIGINT (registered now, so a signal that comes early is not lost).
pub(crate) fn stop_signal() -> Result<impl std::future::Future<Output = ()>, super::error::Error> {
    use tokio::signal::unix::{SignalKind, signal};
    let register = |kind| {
        signal(kind)
            .map_err(|e| super::error::Error::Runtime(format!("cannot handle signals: {e}")))
    };
    let mut term = register(SignalKind::terminate())?;
    let mut int = register(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Into a pipe: nothing for the first seconds, then a line, then at most one per
    /// `STEPS_EVERY`.
    #[test]
    fn progress_lines_wait_a_while_and_then_come_spaced() {
        let t0 = Instant::now();
        let steps = Steps {
            spinner: Spinner(indicatif::ProgressBar::hidden()),
            start: t0,
            last: std::sync::Mutex::new(None),
            lines: true,
        };
        assert!(!steps.due(t0 + Duration::from_millis(500)));
        assert!(steps.due(t0 + STEPS_AFTER));
        assert!(!steps.due(t0 + STEPS_AFTER + Duration::from_secs(1)));
        assert!(steps.due(t0 + STEPS_AFTER + STEPS_EVERY));
        assert!(!steps.due(t0 + STEPS_AFTER + STEPS_EVERY));
    }
}
