//! A JSON dump cut into its items without parsing them: the document's skeleton (a list's
//! fields, or an array) is read here byte by byte, and each item's text is found by its
//! brackets and quotes only (`memchr` through strings), copied into a chunk with the line
//! it starts on, and handed on. The items are parsed later, in parallel, by `serde_json`,
//! which is what checks them: an item whose brackets do not match, or that is not JSON, is
//! refused there, with the dump's line.
//!
//! Only the skeleton is checked here: what is between items must be JSON whitespace and
//! commas, a list's other fields are parsed whole (`serde_json`), and a document cut off
//! is refused with the line it ends on.

use std::io::Read;

use serde_json::Value;

/// Items handed on at once: bounds memory to a few chunks' text however large the list.
pub(super) const CHUNK: usize = 2048;
/// Bytes read from the file at a time.
const BLOCK: usize = 1 << 20;

/// A run of items' text, each with where it is and the dump's line it starts on.
#[derive(Debug, Default)]
pub(super) struct Chunk {
    pub(super) text: Vec<u8>,
    pub(super) items: Vec<(usize, usize, u64)>,
}

impl Chunk {
    /// Emptied, its buffers kept for the next items.
    pub(super) fn emptied(mut self) -> Chunk {
        self.text.clear();
        self.items.clear();
        self
    }

    /// Item `i`'s text and first line.
    pub(super) fn item(&self, i: usize) -> (&[u8], u64) {
        let (at, len, line) = self.items[i];
        (&self.text[at..at + len], line)
    }
}

/// Where the items go: a full chunk in, an empty one (its buffers reused) back, `None` to
/// stop.
pub(super) type Take<'t> = dyn FnMut(Chunk) -> Option<Chunk> + 't;

/// Why a document is not JSON (its skeleton, or an item), with the dump's line.
#[derive(Debug, thiserror::Error)]
#[error("{what} at line {line}")]
pub(super) struct SplitError {
    pub(super) what: String,
    pub(super) line: u64,
}

/// The reader with a window of its bytes: `buf[pos..]` not yet looked at, `line` the line
/// `pos` is on.
struct Scan<R> {
    r: R,
    buf: Vec<u8>,
    pos: usize,
    line: u64,
    eof: bool,
}

impl<R: Read> Scan<R> {
    fn error(&self, what: impl Into<String>) -> SplitError {
        SplitError {
            what: what.into(),
            line: self.line,
        }
    }

    /// Reads more, keeping `buf[keep..]` (moved to the front; `pos` follows). False at the end.
    fn more(&mut self, keep: usize) -> Result<bool, SplitError> {
        self.buf.drain(..keep);
        self.pos -= keep;
        if self.eof {
            return Ok(false);
        }
        let had = self.buf.len();
        self.buf.resize(had + BLOCK, 0);
        let got = loop {
            match self.r.read(&mut self.buf[had..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(had);
                    return Err(self.error(format!("cannot read: {e}")));
                }
            }
        };
        self.buf.truncate(had + got);
        self.eof = got == 0;
        Ok(got > 0)
    }

    /// The next byte that is not JSON whitespace, not consumed; `None` at the end.
    fn peek(&mut self) -> Result<Option<u8>, SplitError> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                match b {
                    b'\n' => self.line += 1,
                    b' ' | b'\t' | b'\r' => {}
                    _ => return Ok(Some(b)),
                }
                self.pos += 1;
            }
            if !self.more(self.pos)? {
                return Ok(None);
            }
        }
    }

    fn expect(&mut self, want: &[u8], what: &str) -> Result<u8, SplitError> {
        match self.peek()? {
            Some(b) if want.contains(&b) => {
                self.pos += 1;
                Ok(b)
            }
            Some(b) => Err(self.error(format!("expected {what}, found `{}`", b as char))),
            None => Err(self.error(format!("EOF while expecting {what}"))),
        }
    }

    /// The extent of the value starting at the next non-whitespace byte: `(start, end)` in
    /// `buf`, valid until the next read. Brackets are counted, not matched (the parser
    /// checks them); strings are skipped to their closing quote.
    fn value(&mut self) -> Result<(usize, usize), SplitError> {
        if self.peek()?.is_none() {
            return Err(self.error("EOF while parsing a value"));
        }
        let mut start = self.pos;
        let mut depth = 0u64;
        let mut i = self.pos;
        loop {
            let Some(&b) = self.buf.get(i) else {
                let kept = i - start;
                if !self.more(start)? {
                    if depth == 0 && kept > 0 && !matches!(self.buf[0], b'{' | b'[' | b'"') {
                        // A number or a literal that ends the text.
                        self.pos = kept;
                        return Ok((0, kept));
                    }
                    return Err(self.error("EOF while parsing a value"));
                }
                start = 0;
                i = kept;
                continue;
            };
            match b {
                b'"' => {
                    i = self.string_end(&mut start, i + 1)?;
                    if depth == 0 {
                        self.pos = i;
                        return Ok((start, i));
                    }
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok((start, i + 1));
                    }
                }
                b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' if depth == 0 => {
                    self.pos = i;
                    return Ok((start, i));
                }
                b'\n' => self.line += 1,
                _ => {}
            }
            i += 1;
        }
    }

    /// Past the closing quote of the string whose text starts at `i`; reads more as needed
    /// (moving `start` with the window).
    fn string_end(&mut self, start: &mut usize, mut i: usize) -> Result<usize, SplitError> {
        loop {
            match memchr::memchr2(b'"', b'\\', &self.buf[i.min(self.buf.len())..]) {
                Some(k) if self.buf[i + k] == b'"' => return Ok(i + k + 1),
                Some(k) if i + k + 1 < self.buf.len() => i += k + 2,
                found => {
                    // The end of the window (or a backslash at its very end): read on.
                    let at = found.map_or(self.buf.len(), |k| i + k);
                    let kept = at - *start;
                    if !self.more(*start)? {
                        return Err(self.error("EOF while parsing a string"));
                    }
                    *start = 0;
                    i = kept;
                }
            }
        }
    }

    /// The items of an array whose `[` was just read, handed to `take` a chunk at a time
    /// (`take` gives back an empty chunk to fill next, or `None` to stop).
    fn items(&mut self, take: &mut Take<'_>) -> Result<(), SplitError> {
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        let mut chunk = Chunk::default();
        loop {
            self.peek()?;
            let line = self.line;
            let (s, e) = self.value()?;
            chunk.items.push((chunk.text.len(), e - s, line));
            chunk.text.extend_from_slice(&self.buf[s..e]);
            if chunk.items.len() == CHUNK {
                match take(chunk) {
                    Some(next) => chunk = next,
                    None => return Err(self.error("an item is not JSON")),
                }
            }
            if self.expect(b",]", "`,` or `]` after an item")? == b']' {
                break;
            }
        }
        if !chunk.items.is_empty() && take(chunk).is_none() {
            return Err(self.error("an item is not JSON"));
        }
        Ok(())
    }

    /// A value parsed whole (a key, or a list's own field).
    fn parsed<T: serde::de::DeserializeOwned>(&mut self) -> Result<T, SplitError> {
        self.peek()?;
        let line = self.line;
        let (s, e) = self.value()?;
        serde_json::from_slice(&self.buf[s..e]).map_err(|err| SplitError::parsing(&err, line))
    }
}

impl SplitError {
    /// The parser's error on a value whose text starts on `first_line` of the dump: its
    /// message without the value's own position, and the dump's line instead.
    pub(super) fn parsing(e: &serde_json::Error, first_line: u64) -> SplitError {
        let m = e.to_string();
        let what = match m.rfind(" at line ") {
            Some(k) => m[..k].to_string(),
            None => m,
        };
        SplitError {
            what,
            line: first_line + e.line().saturating_sub(1) as u64,
        }
    }
}

/// A JSON document read from `r`: the items of a list (an object with `items`, or an
/// array) handed to `take` a chunk at a time, which gives back the next chunk to fill or
/// `None` to stop. Returns the
/// document when it is one object rather than a list, `None` when it was a list. An
/// object with `items` whose `kind` is neither empty nor a `...List` is returned without
/// them (no kind rackplan reads has such a field); its items were handed on already.
pub(super) fn split(r: impl Read, take: &mut Take<'_>) -> Result<Option<Value>, SplitError> {
    let mut s = Scan {
        r,
        buf: Vec::with_capacity(BLOCK),
        pos: 0,
        line: 1,
        eof: false,
    };
    let got = match s.peek()? {
        Some(b'[') => {
            s.pos += 1;
            s.items(take)?;
            None
        }
        Some(b'{') => {
            s.pos += 1;
            let mut rest = serde_json::Map::new();
            let mut items = false;
            if s.peek()? == Some(b'}') {
                s.pos += 1;
            } else {
                loop {
                    if s.peek()? != Some(b'"') {
                        return Err(s.error("expected a key"));
                    }
                    let key: String = s.parsed()?;
                    s.expect(b":", "`:` after a key")?;
                    if key == "items" {
                        match s.peek()? {
                            Some(b'[') => {
                                s.pos += 1;
                                s.items(take)?;
                            }
                            Some(b'n') => {
                                let _: () = s.parsed()?;
                            }
                            _ => return Err(s.error("`items` is not a list")),
                        }
                        items = true;
                    } else {
                        let v: Value = s.parsed()?;
                        rest.insert(key, v);
                    }
                    if s.expect(b",}", "`,` or `}` after a field")? == b'}' {
                        break;
                    }
                }
            }
            let kind = rest.get("kind").and_then(Value::as_str).unwrap_or("");
            if items && (kind.is_empty() || kind.ends_with("List")) {
                None
            } else {
                Some(Value::Object(rest))
            }
        }
        Some(b) => {
            return Err(s.error(format!(
                "expected a Kubernetes object, a list of them, or an array of them, found `{}`",
                b as char
            )));
        }
        None => return Err(s.error("EOF while parsing a value")),
    };
    if let Some(b) = s.peek()? {
        return Err(s.error(format!(
            "trailing characters after the document (`{}`)",
            b as char
        )));
    }
    Ok(got)
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
