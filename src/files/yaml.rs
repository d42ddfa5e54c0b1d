//! All YAML reading and writing goes through here.
//!
//! Reading is strict (unknown keys rejected, duplicate keys rejected, no implicit null to
//! collection) and every failure becomes an [`InputError`] that names the file, the line, the
//! column and the key path, with a hint where one helps ("did you mean ..."). Semantic checks
//! made after parsing (overlapping networks, a VIP outside its subnet) point back into the
//! file through [`Source::error_at`], which finds the value of a key path in the document.
//!
//! Writing uses serde-saphyr's serializer, which quotes every string a YAML 1.1 reader (Go's
//! yaml.v2, used by Harvester's installer) would otherwise turn into a bool or a number.

use std::fmt;
use std::path::{Path, PathBuf};

use miette::{NamedSource, SourceSpan};
use serde::de::{DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_saphyr::Spanned;

pub use super::input_error::InputError;
pub(crate) use super::input_error::{Seg, display_path};

/// A parsed file kept with its text, so later checks can point into it.
#[derive(Debug, Clone)]
pub struct Source {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
    tree: Option<Spanned<Node>>,
}

impl Source {
    pub(crate) fn new(path: &Path, text: String) -> Self {
        let tree = serde_saphyr::from_str_with_options::<Spanned<Node>>(&text, options()).ok();
        Source {
            path: path.to_path_buf(),
            text,
            tree,
        }
    }

    /// The deepest node on `path`, and whether it is the one `path` names (every segment
    /// found) or only its nearest ancestor.
    fn walk(&self, path: &[Seg]) -> Option<(&Spanned<Node>, bool)> {
        let mut node = self.tree.as_ref()?;
        for seg in path {
            let next = match (&node.value, seg) {
                (Node::Map(entries), Seg::Key(k)) => {
                    entries.iter().find(|(key, _)| key == k).map(|(_, v)| v)
                }
                (Node::Seq(items), Seg::Index(i)) => items.get(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => return Some((node, false)),
            }
        }
        Some((node, true))
    }

    /// Whether the file states a value at `path` (a default filled in does not count).
    pub(crate) fn has(&self, path: &[Seg]) -> bool {
        self.walk(path).is_some_and(|(_, whole)| whole)
    }

    /// Line and column (1-based) of the value at `path`, or of its nearest ancestor.
    pub(crate) fn locate(&self, path: &[Seg]) -> (usize, usize) {
        self.walk(path).map_or((1, 1), |(node, _)| {
            let loc = node.referenced;
            (loc.line() as usize, loc.column() as usize)
        })
    }

    /// An error about the value at `path` (which parsed, but is wrong).
    pub(crate) fn error_at(
        &self,
        path: &[Seg],
        message: impl Into<String>,
        hint: Option<String>,
    ) -> InputError {
        let (line, column) = self.locate(path);
        self.make_error(line, column, display_path(path), message.into(), hint)
    }

    fn make_error(
        &self,
        line: usize,
        column: usize,
        key: String,
        message: String,
        hint: Option<String>,
    ) -> InputError {
        let offset = byte_offset(&self.text, line, column);
        InputError {
            file: self.path.display().to_string(),
            line,
            column,
            key,
            message,
            hint,
            src: NamedSource::new(self.path.display().to_string(), self.text.clone()),
            span: offset.map(|o| SourceSpan::from((o, 0))),
        }
    }
}

fn byte_offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let line_text = text[start..].split('\n').next()?;
    let col_bytes: usize = line_text
        .chars()
        .take(column.saturating_sub(1))
        .map(char::len_utf8)
        .sum();
    Some(start + col_bytes)
}

/// A YAML document as a tree of located values; used only to find where a key path lives.
#[derive(Debug, Clone)]
enum Node {
    Map(Vec<(String, Spanned<Node>)>),
    Seq(Vec<Spanned<Node>>),
    Leaf,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(k) = m.next_key::<KeyText>()? {
                    entries.push((k.0, m.next_value::<Spanned<Node>>()?));
                }
                Ok(Node::Map(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = s.next_element::<Spanned<Node>>()? {
                    items.push(v);
                }
                Ok(Node::Seq(items))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_str<E>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_unit<E>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_none<E>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Node, D2::Error> {
                Node::deserialize(d)
            }
        }
        d.deserialize_any(V)
    }
}

/// A mapping key of any scalar type, kept as text.
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Largest input file read: far above any real site (a 10,000-node nodes.yaml is about
/// 20 MB), small enough that a wrong path to a disk image fails fast.
pub(crate) const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// The parser's budget for the files operators keep (site, inventory, lock, scenarios).
/// serde-saphyr's default (250,000 nodes) is meant for untrusted input and stops at about
/// 1,500 servers; these limits hold 10,000-node inventories with room to spare, while
/// depth, alias and anchor limits stay at the defaults that stop alias bombs.
fn budget() -> serde_saphyr::Budget {
    let mut b = serde_saphyr::Budget::default();
    b.max_reader_input_bytes = Some(MAX_FILE_BYTES as usize);
    b.max_events = 100_000_000;
    b.max_nodes = 50_000_000;
    b.max_total_scalar_bytes = MAX_FILE_BYTES as usize;
    b
}

fn options() -> serde_saphyr::Options {
    serde_saphyr::options! { with_snippet: false, budget: Some(budget()) }
}

/// Parse `text` (read from `path`) into `T`, strictly. The key path of a type error comes
/// from the deserializer itself (serde_path_to_error), not from reading the message.
pub fn parse<T: DeserializeOwned>(path: &Path, text: &str) -> Result<(T, Source), InputError> {
    let source = Source::new(path, text.to_string());
    let mut key: Option<String> = None;
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options(), |de| {
        serde_path_to_error::deserialize::<_, T>(de).map_err(|e| {
            let p = e.path().to_string();
            if p != "." && !p.is_empty() {
                key = Some(p);
            }
            e.into_inner()
        })
    });
    match result {
        Ok(v) => Ok((v, source)),
        Err(e) => Err(convert_error(&source, &e, key)),
    }
}

/// Read and parse a file; a missing or unreadable file is an input error too.
pub(crate) fn load<T: DeserializeOwned>(path: &Path) -> Result<(T, Source), InputError> {
    let text = read_input(path)?;
    parse(path, &text)
}

/// An error about a whole file (no line to point at).
pub(crate) fn file_error(path: &Path, message: String, hint: &str) -> InputError {
    InputError {
        file: path.display().to_string(),
        line: 0,
        column: 0,
        key: "(file)".to_string(),
        message,
        hint: Some(hint.to_string()),
        src: NamedSource::new(path.display().to_string(), String::new()),
        span: None,
    }
}

/// Most links followed before a chain counts as a loop (Linux stops at 40 too).
const MAX_LINK_HOPS: usize = 40;

/// When `path` is a symbolic link that leads nowhere (its target is missing) or loops, the
/// input error that says so; `None` for anything else (a file, a good link, nothing).
pub(crate) fn broken_link(path: &Path) -> Option<InputError> {
    let first = std::fs::symlink_metadata(path).ok()?;
    if !first.file_type().is_symlink() || std::fs::metadata(path).is_ok() {
        return None;
    }
    let mut chain = vec![path.to_path_buf()];
    let mut at = path.to_path_buf();
    let message = loop {
        let Ok(to) = std::fs::read_link(&at) else {
            break "a symbolic link that cannot be followed".to_string();
        };
        let next = match at.parent() {
            Some(dir) => dir.join(&to),
            None => to,
        };
        if chain.contains(&next) || chain.len() > MAX_LINK_HOPS {
            chain.push(next);
            let shown: Vec<String> = chain.iter().map(|p| p.display().to_string()).collect();
            break format!("a symbolic link that loops ({})", shown.join(" -> "));
        }
        chain.push(next.clone());
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => at = next,
            Ok(_) => {
                break format!(
                    "a symbolic link to {}, which cannot be read",
                    next.display()
                );
            }
            Err(_) => {
                break format!(
                    "a symbolic link to {}, which does not exist",
                    next.display()
                );
            }
        }
    };
    Some(file_error(
        path,
        message,
        "a broken link is not a missing file: point the link at the real file (restore it from version control or a backup), or replace the link with the file itself",
    ))
}

/// Whether an input file is there: `Ok(false)` only when nothing at all is at `path`. A
/// symbolic link that is dangling or loops is an error, never "absent".
pub(crate) fn input_exists(path: &Path) -> Result<bool, InputError> {
    if let Some(e) = broken_link(path) {
        return Err(e);
    }
    Ok(std::fs::symlink_metadata(path).is_ok())
}

/// The text of an input file: a regular file (a FIFO or a device would hang or never end),
/// at most [`MAX_FILE_BYTES`], UTF-8.
pub(crate) fn read_input(path: &Path) -> Result<String, InputError> {
    let fail = |message: String, hint: &str| file_error(path, message, hint);
    if let Some(e) = broken_link(path) {
        return Err(e);
    }
    let meta = std::fs::metadata(path).map_err(|e| {
        let site_yaml = path.file_name().is_some_and(|n| n == "site.yaml");
        fail(
            format!("cannot read the file: {e}"),
            if site_yaml {
                "no site here: give --site DIR, set RACKPLAN_SITE, or run rackplan inside the site folder; `rackplan init DIR` creates a site"
            } else {
                "check the path given with --site and that the file exists"
            },
        )
    })?;
    if !meta.is_file() {
        return Err(fail(
            "not a regular file (a folder, FIFO or device)".into(),
            "give the path of a YAML file",
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(
            format!(
                "the file is {} bytes; rackplan reads at most {MAX_FILE_BYTES}",
                meta.len()
            ),
            "check that this is the YAML file you meant",
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| {
        fail(
            format!("cannot read the file: {e}"),
            "check its permissions",
        )
    })?;
    String::from_utf8(bytes).map_err(|e| {
        fail(
            format!("the file is not UTF-8 text: {e}"),
            "save it as UTF-8",
        )
    })
}

fn convert_error(source: &Source, e: &serde_saphyr::Error, key: Option<String>) -> InputError {
    let inner = e.without_snippet();
    let (line, column) = inner
        .location()
        .map_or((1, 1), |l| (l.line() as usize, l.column() as usize));
    let raw = strip_location(&inner.to_string());
    // The deserializer's path where it has one; for text that does not parse as YAML at
    // all (no path yet), the path of the value written at the error's position.
    let key = key.unwrap_or_else(|| key_path_at(source, line, column));
    let hint = hint_for(&raw);
    source.make_error(line, column, key, tidy_message(&raw), hint)
}

/// serde-saphyr appends " at line X column Y"; we print the location ourselves.
fn strip_location(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn tidy_message(raw: &str) -> String {
    // "unknown field `foo`, expected one of `a`, `b`" -> keep only the first clause; the
    // alternatives go into the hint.
    if let Some(rest) = raw.strip_prefix("unknown field ") {
        if let Some(end) = rest.find(", expected") {
            return format!("unknown key {}", &rest[..end]);
        }
        return format!("unknown key {rest}");
    }
    raw.to_string()
}

fn hint_for(raw: &str) -> Option<String> {
    let generic = [
        (
            "invalid IP address syntax",
            "write a network as address/prefix, e.g. `10.10.0.0/24` (prefix 0 to 32)",
        ),
        (
            "invalid IPv4 address syntax",
            "write a dotted IPv4 address, e.g. `10.10.0.10`",
        ),
        ("invalid u32", "write a whole number"),
        ("invalid u16", "write a whole number"),
        ("invalid i64", "write a whole number"),
        (
            "expected string scalar",
            "check brackets and quotes on this line: the YAML does not parse",
        ),
        ("duplicate", "remove one of the two entries"),
    ];
    if let Some((_, h)) = generic.iter().find(|(m, _)| raw.contains(m)) {
        return Some((*h).to_string());
    }
    let rest = raw.strip_prefix("unknown field `")?;
    let end = rest.find('`')?;
    let unknown = &rest[..end];
    let alternatives = rest[end + 1..]
        .trim_start_matches(',')
        .trim()
        .trim_start_matches("expected one of")
        .trim_start_matches("expected")
        .trim();
    let expected: Vec<String> = alternatives
        .split(", ")
        .flat_map(|s| s.split(" or "))
        .map(|s| s.trim().trim_matches('`').to_string())
        .filter(|s| !s.is_empty() && !s.contains(' '))
        .collect();
    match crate::words::closest(unknown, expected.iter().map(String::as_str)) {
        Some(candidate) => Some(format!(
            "did you mean `{candidate}`? (known keys here: {})",
            expected.join(", ")
        )),
        _ if !expected.is_empty() => Some(format!("known keys here: {}", expected.join(", "))),
        _ => Some("this key is not known here; remove it".to_string()),
    }
}

/// The key path of the value at (line, column), or of the key written there.
fn key_path_at(source: &Source, line: usize, column: usize) -> String {
    fn walk(node: &Spanned<Node>, path: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, (usize, usize))>) {
        let pos = (
            node.referenced.line() as usize,
            node.referenced.column() as usize,
        );
        out.push((path.clone(), pos));
        match &node.value {
            Node::Map(entries) => {
                for (k, v) in entries {
                    path.push(Seg::Key(k.clone()));
                    walk(v, path, out);
                    path.pop();
                }
            }
            Node::Seq(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(v, path, out);
                    path.pop();
                }
            }
            Node::Leaf => {}
        }
    }
    let Some(tree) = &source.tree else {
        return key_path_from_indentation(&source.text, line, column);
    };
    let mut all = Vec::new();
    walk(tree, &mut Vec::new(), &mut all);
    let target = (line, column);
    // Errors about a key (unknown, duplicate) point at the key: its value is the first value
    // with that key name at or after the key's position.
    if let Some(key) = key_on_line(&source.text, line, column) {
        let hit = all
            .iter()
            .filter(|(p, pos)| *pos >= target && matches!(p.last(), Some(Seg::Key(k)) if *k == key))
            .min_by_key(|(_, pos)| *pos);
        if let Some((p, _)) = hit {
            return display_path(p);
        }
    }
    // Otherwise: the last value that starts at or before the position.
    let best = all
        .iter()
        .filter(|(_, pos)| *pos <= target)
        .max_by_key(|(p, pos)| (*pos, p.len()))
        .map(|(p, _)| p.clone())
        .unwrap_or_default();
    display_path(&best)
}

/// For text that does not parse at all: the block-style keys enclosing (line, column),
/// read from indentation.
fn key_path_from_indentation(text: &str, line: usize, column: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut path = Vec::new();
    let mut limit = column;
    for l in lines.iter().take(line).rev() {
        let indent = l.len() - l.trim_start().len();
        let t = l.trim_start().trim_start_matches("- ");
        if t.starts_with('#') || t.is_empty() || indent >= limit {
            continue;
        }
        if let Some(colon) = t.find(':') {
            let key = t[..colon].trim();
            if !key.is_empty() && !key.contains(' ') {
                path.push(Seg::Key(key.to_string()));
                limit = indent;
                if indent == 0 {
                    break;
                }
            }
        }
    }
    path.reverse();
    display_path(&path)
}

/// The mapping key written at (line, column), if the text there is `key:`.
fn key_on_line(text: &str, line: usize, column: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let rest: String = l.chars().skip(column.saturating_sub(1)).collect();
    let rest = rest.trim_start_matches("- ");
    let colon = rest.find(':')?;
    let key = rest[..colon].trim().trim_matches('"').trim_matches('\'');
    if key.is_empty() || key.contains(' ') || key.contains('{') {
        return None;
    }
    Some(key.to_string())
}

/// Serialize to YAML text that Go's YAML parsers read back the same.
///
/// Block scalars are off: a folded SSH key or password hash reads back the same, but people
/// grep these files and copy values out of them, so every string stays on one line.
pub fn to_string<T: Serialize>(value: &T) -> String {
    let opts = serde_saphyr::ser_options! { prefer_block_scalars: false };
    serde_saphyr::to_string_with_options(value, opts)
        .expect("rackplan's own data always serializes")
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
