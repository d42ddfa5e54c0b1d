//! Tables for people: boxed and fitted to the terminal width, words never split, or plain
//! aligned columns for a pipe; prose wrapped to the width; JSON documents.

use super::wrap::{tokens, wrap_cell};
use std::cell::Cell;
use std::fmt;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;

/// How tables are drawn: boxed and fitted to a width (a terminal), or plain aligned columns
/// (a pipe or a file, for grep and awk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Boxed(u16),
    Plain,
}

thread_local! {
    /// Per thread, so tests can render at several widths side by side; `cli` sets it once.
    static STYLE: Cell<Style> = const { Cell::new(Style::Boxed(120)) };
}

/// Draw boxed tables fitted to `columns` (at least 40) from now on, in this thread.
pub fn set_width(columns: u16) {
    STYLE.with(|s| s.set(Style::Boxed(columns.max(40))));
}

/// Draw plain columns from now on, in this thread.
pub fn set_plain() {
    STYLE.with(|s| s.set(Style::Plain));
}

pub(crate) fn style() -> Style {
    STYLE.with(Cell::get)
}

/// A table: a header and rows of cells, drawn by [`fmt::Display`] in the thread's style.
/// Boxed tables wrap a cell only between words: every column is at least as wide as its
/// longest word, so a serial, a URL or a host name is never cut; a table whose longest
/// words do not fit side by side becomes one record per row.
pub struct Grid {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// A table with these column headings.
pub(crate) fn table(header: &[&str]) -> Grid {
    Grid {
        header: header.iter().map(|h| (*h).to_string()).collect(),
        rows: Vec::new(),
    }
}

impl Grid {
    pub(crate) fn add_row<I>(&mut self, cells: I) -> &mut Self
    where
        I: IntoIterator,
        I::Item: fmt::Display,
    {
        self.rows
            .push(cells.into_iter().map(|c| c.to_string()).collect());
        self
    }

    fn longest_word(&self, col: usize) -> usize {
        std::iter::once(&self.header)
            .chain(&self.rows)
            .filter_map(|r| r.get(col))
            .flat_map(|c| c.split('\n').flat_map(tokens).collect::<Vec<_>>())
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(1)
    }

    fn plain(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cols = self.header.len();
        let flat = |c: &str| c.split_whitespace().collect::<Vec<_>>().join(" ");
        let rows: Vec<Vec<String>> = std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|r| {
                (0..cols)
                    .map(|i| r.get(i).map_or(String::new(), |c| flat(c)))
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = (0..cols)
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for (k, r) in rows.iter().enumerate() {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(c);
                if i + 1 < cols {
                    line.push_str(&" ".repeat(widths[i] - c.chars().count()));
                }
            }
            if k > 0 {
                f.write_str("\n")?;
            }
            f.write_str(line.trim_end())?;
        }
        Ok(())
    }
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = match style() {
            Style::Plain => return self.plain(f),
            Style::Boxed(w) => usize::from(w),
        };
        let cols = self.header.len();
        let longest: Vec<usize> = (0..cols).map(|i| self.longest_word(i)).collect();
        let full = |i: usize| {
            std::iter::once(&self.header)
                .chain(&self.rows)
                .filter_map(|r| r.get(i))
                .flat_map(|c| c.split('\n'))
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(1)
        };
        // Start from every column's widest line; narrow the widest column that still has
        // room above its longest word until the cells and `chrome` more columns (borders,
        // padding) fit the width. The widths, and whether they fit.
        let fit = |chrome: usize| {
            let mut w: Vec<usize> = (0..cols).map(full).collect();
            let total = |w: &[usize]| w.iter().sum::<usize>() + chrome;
            while total(&w) > width {
                let Some(i) = (0..cols)
                    .filter(|&i| w[i] > longest[i])
                    .max_by_key(|&i| (w[i], std::cmp::Reverse(i)))
                else {
                    break;
                };
                w[i] -= 1;
            }
            let fits = total(&w) <= width;
            (w, fits)
        };
        // Boxed: three columns of border and padding per cell, one more at the end.
        let (w, boxed) = fit(3 * cols + 1);
        if !boxed {
            // Its longest words do not fit side by side in boxes: without borders (two
            // spaces between columns), else one record per row.
            let (w, bare) = fit(2 * cols.saturating_sub(1));
            return f.write_str(&if bare {
                super::records::borderless(&self.header, &self.rows, &w)
            } else {
                super::records::records(&self.header, &self.rows, width)
            });
        }
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(
                self.header
                    .iter()
                    .enumerate()
                    .map(|(i, h)| wrap_cell(h, w[i])),
            );
        for r in &self.rows {
            t.add_row(r.iter().enumerate().map(|(i, c)| wrap_cell(c, w[i])));
        }
        write!(f, "{t}")
    }
}

/// Wrap prose lines longer than the width at word boundaries, a number kept with its unit
/// (box style only; table lines and plain output are left as they are). A wrapped line
/// continues under its own indent plus two spaces.
pub(crate) fn wrap_prose(text: &str) -> String {
    match style() {
        Style::Boxed(width) => wrap_prose_at(text, width),
        Style::Plain => text.to_string(),
    }
}

/// [`wrap_prose`] at a given width.
pub fn wrap_prose_at(text: &str, width: u16) -> String {
    let width = usize::from(width);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, nl) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
        let boxed = body
            .trim_start()
            .starts_with(['│', '┌', '└', '├', '╞', '╭', '╰', '┆', '─', '═']);
        if boxed || body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start().len();
        let hang = " ".repeat(indent + 2);
        let mut cur = body[..indent].to_string();
        let mut cur_len = indent;
        let mut first = true;
        for word in tokens(body) {
            let word = word.as_str();
            let wl = word.chars().count();
            let start = cur_len == indent || (!first && cur_len == indent + 2);
            if !start && cur_len + 1 + wl > width {
                out.push_str(cur.trim_end());
                out.push('\n');
                cur.clone_from(&hang);
                cur_len = hang.len();
                first = false;
            } else if !start {
                cur.push(' ');
                cur_len += 1;
            }
            cur.push_str(word);
            cur_len += wl;
        }
        out.push_str(cur.trim_end());
        out.push_str(nl);
    }
    out
}

/// The version of every JSON document's shape, its first key `schema_version`: raised when
/// a field is removed or changes meaning (new fields do not raise it).
pub const SCHEMA_VERSION: u32 = 1;

/// A document with `schema_version` first; anything but an object is left as it is.
fn versioned<T: Serialize>(value: &T) -> serde_json::Result<serde_json::Value> {
    let v = serde_json::to_value(value)?;
    Ok(match v {
        serde_json::Value::Object(fields) => {
            let mut out = serde_json::Map::with_capacity(fields.len() + 1);
            out.insert("schema_version".into(), SCHEMA_VERSION.into());
            out.extend(fields);
            serde_json::Value::Object(out)
        }
        other => other,
    })
}

/// One JSON document on one line (a poll of `status --watch`, a log line of `serve`).
pub fn json_line<T: Serialize>(value: &T) -> String {
    versioned(value)
        .and_then(|v| serde_json::to_string(&v))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// One JSON document, pretty-printed: what `--output json` prints.
pub fn json<T: Serialize>(value: &T) -> String {
    versioned(value)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .expect("report data serializes")
}
