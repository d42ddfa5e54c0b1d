//! Where the objects come from: one file, a folder of files, an unpacked support bundle
//! (`yamls/cluster/...`, `yamls/namespaced/...`) or its `.zip`. Every file is parsed on its
//! own and reduced to its objects at once, so a large dump is held as objects, not as text.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::LiveError;
use super::objects::{Builder, Object, Prepared, prepare};

/// Largest single file read (a support bundle's biggest list is far below this).
const MAX_FILE: u64 = 512 * 1024 * 1024;
/// Most files read from one folder or archive.
const MAX_FILES: usize = 100_000;
/// Most bytes unpacked from one archive.
const MAX_UNPACKED: u64 = 4 * 1024 * 1024 * 1024;

fn fail(path: &Path, message: impl Into<String>) -> LiveError {
    LiveError::Read {
        path: path.display().to_string(),
        message: message.into(),
    }
}

fn is_manifest(name: &str) -> bool {
    Path::new(name).extension().is_some_and(|e| {
        e.eq_ignore_ascii_case("yaml")
            || e.eq_ignore_ascii_case("yml")
            || e.eq_ignore_ascii_case("json")
    })
}

/// The objects of one file's text; documents that are not Kubernetes objects are skipped.
/// Items parsed at once, in parallel, before they are handed on: bounds memory to one
/// chunk's trees however large the list.
const CHUNK: usize = 2048;

/// The objects of one file's text, handed to `sink` one at a time. JSON is read as a
/// stream: the items of a `kind: List` are cut out as raw text first, then parsed and
/// typed a chunk at a time (in parallel), so a large dump never sits in memory as one tree.
fn objects_of(file: &str, text: &str, sink: &mut Builder) -> Result<(), String> {
    use rayon::prelude::*;
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        let mut de = serde_json::Deserializer::from_str(t);
        let (items, rest) = serde::de::DeserializeSeed::deserialize(Top, &mut de)
            .and_then(|got| de.end().map(|()| got))
            .map_err(|e| format!("not JSON: {e}"))?;
        for chunk in items.chunks(CHUNK) {
            // Parsed and typed on every thread; added in order on this one.
            let typed: Vec<Result<Vec<Prepared>, String>> = chunk
                .par_iter()
                .map(|raw| {
                    let v = serde_json::from_str::<Value>(raw.get())
                        .map_err(|e| format!("not JSON: {e}"))?;
                    let mut objs = Vec::new();
                    push(file, v, &mut |o| objs.push(o), 1);
                    Ok(objs.into_iter().map(prepare).collect())
                })
                .collect();
            for t in typed {
                for p in t? {
                    sink.insert(p);
                }
            }
        }
        if let Some(v) = rest {
            push(file, v, &mut |o| sink.insert(prepare(o)), 0);
        }
        Ok(())
    } else {
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(text).map_err(|e| format!("not YAML: {e}"))?;
        for d in docs {
            push(file, d, &mut |o| sink.insert(prepare(o)), 0);
        }
        Ok(())
    }
}

type Raw<'de> = &'de serde_json::value::RawValue;

/// A JSON document: the raw items of a list (or of an array), and the document itself when
/// it is one object rather than a list.
struct Top;

impl<'de> serde::de::DeserializeSeed<'de> for Top {
    type Value = (Vec<Raw<'de>>, Option<Value>);
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Top {
    type Value = (Vec<Raw<'de>>, Option<Value>);
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Kubernetes object, a list of them, or an array of them")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<Raw<'de>>()? {
            items.push(v);
        }
        Ok((items, None))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut rest = serde_json::Map::new();
        let mut items: Option<Vec<Raw<'de>>> = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                items = map.next_value::<Option<Vec<Raw<'de>>>>()?;
                items.get_or_insert_with(Vec::new);
            } else {
                rest.insert(key, map.next_value::<Value>()?);
            }
        }
        let kind = rest.get("kind").and_then(Value::as_str).unwrap_or("");
        Ok(match items {
            // A list's own fields say nothing more.
            Some(items) if kind.is_empty() || kind.ends_with("List") => (items, None),
            Some(items) => {
                // Not a list after all: the object, its items kept as they were.
                let mut rest = rest;
                let parsed: Result<Vec<Value>, _> = items
                    .iter()
                    .map(|r| serde_json::from_str::<Value>(r.get()))
                    .collect();
                rest.insert(
                    "items".into(),
                    Value::Array(parsed.map_err(serde::de::Error::custom)?),
                );
                (Vec::new(), Some(Value::Object(rest)))
            }
            None => (Vec::new(), Some(Value::Object(rest))),
        })
    }
}

fn push(file: &str, mut d: Value, out: &mut dyn FnMut(Object), depth: u8) {
    let kind = d["kind"].as_str().unwrap_or_default().to_string();
    if (kind == "List" || kind.ends_with("List")) && d["items"].is_array() && depth < 2 {
        if let Value::Array(items) = d["items"].take() {
            for i in items {
                push(file, i, out, depth + 1);
            }
        }
        return;
    }
    let Some(api) = d["apiVersion"].as_str().map(str::to_string) else {
        return;
    };
    if kind.is_empty() {
        return;
    }
    if let Some(m) = d.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    let name = super::quantity::text(&d["metadata"]["name"])
        .unwrap_or("")
        .to_string();
    let namespace = super::quantity::text(&d["metadata"]["namespace"]).map(str::to_string);
    out(Object {
        file: file.to_string(),
        api_version: api,
        kind,
        namespace,
        name,
        value: d,
    });
}

fn walk(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    if depth > 10 || files.len() >= MAX_FILES {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        // Symlinks are not followed: a dump is a tree of plain files.
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, depth + 1, files);
        } else if meta.is_file() && is_manifest(&p.to_string_lossy()) {
            files.push(p);
        }
    }
}

/// The folder of a bundle's `yamls/` (at the top, or one level down as the zip unpacks).
fn bundle_yamls(dir: &Path) -> Option<PathBuf> {
    if dir.join("yamls").is_dir() {
        return Some(dir.join("yamls"));
    }
    let mut subs = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().is_dir());
    let only = subs.next()?;
    (subs.next().is_none() && only.path().join("yamls").is_dir()).then(|| only.path().join("yamls"))
}

fn read_zip(path: &Path, out: &mut Builder, notes: &mut Vec<String>) -> Result<(), LiveError> {
    let f = std::fs::File::open(path).map_err(|e| fail(path, format!("cannot open: {e}")))?;
    let mut z =
        zip::ZipArchive::new(f).map_err(|e| fail(path, format!("not a zip archive: {e}")))?;
    let mut unpacked = 0u64;
    let mut read = 0usize;
    for i in 0..z.len() {
        let mut e = z
            .by_index(i)
            .map_err(|e| fail(path, format!("entry {i}: {e}")))?;
        let Ok(name) = e.name().map(|n| n.to_string()) else {
            notes.push(format!(
                "{}: entry {i} has an unreadable name; skipped",
                path.display()
            ));
            continue;
        };
        let in_yamls = name.starts_with("yamls/") || name.contains("/yamls/");
        if !e.is_file() || !in_yamls || !is_manifest(&name) {
            continue;
        }
        read += 1;
        if read > MAX_FILES {
            notes.push(format!(
                "{}: more than {MAX_FILES} files; the rest were not read",
                path.display()
            ));
            break;
        }
        let size = e.size();
        if size > MAX_FILE || unpacked + size > MAX_UNPACKED {
            notes.push(format!(
                "{}!{name}: {size} bytes unpacked is past the limit; skipped",
                path.display()
            ));
            continue;
        }
        unpacked += size;
        let mut text = String::new();
        if (&mut e).take(MAX_FILE).read_to_string(&mut text).is_err() {
            notes.push(format!(
                "{}!{name}: not UTF-8 text; skipped",
                path.display()
            ));
            continue;
        }
        let shown = format!("{}!{name}", path.display());
        if let Err(m) = objects_of(&shown, &text, out) {
            notes.push(format!("{shown}: {m}; skipped"));
        }
    }
    Ok(())
}

/// Every object under `path`, and notes on what was skipped.
/// Every object of a dump, each handed to `out` as it is read; returns the notes (files
/// skipped and why).
pub fn for_each_object(path: &Path, out: &mut Builder) -> Result<Vec<String>, LiveError> {
    let mut notes = Vec::new();
    let meta = std::fs::metadata(path).map_err(|e| fail(path, format!("cannot read: {e}")))?;
    if meta.is_dir() {
        let root = bundle_yamls(path).unwrap_or_else(|| path.to_path_buf());
        let mut files = Vec::new();
        walk(&root, 0, &mut files);
        if files.is_empty() {
            return Err(fail(path, "no .yaml, .yml or .json file in the folder"));
        }
        for f in files {
            let shown = f.display().to_string();
            if std::fs::metadata(&f).is_ok_and(|m| m.len() > MAX_FILE) {
                notes.push(format!("{shown}: larger than the input limit; skipped"));
                continue;
            }
            match std::fs::read_to_string(&f) {
                Ok(text) => {
                    if let Err(m) = objects_of(&shown, &text, out) {
                        notes.push(format!("{shown}: {m}; skipped"));
                    }
                }
                Err(e) => notes.push(format!("{shown}: {e}; skipped")),
            }
        }
    } else if path
        .to_string_lossy()
        .to_ascii_lowercase()
        .ends_with(".zip")
    {
        read_zip(path, out, &mut notes)?;
    } else {
        if meta.len() > MAX_FILE {
            return Err(fail(path, "larger than the input limit (512 MiB)"));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| fail(path, format!("cannot read: {e}")))?;
        objects_of(&path.display().to_string(), &text, out).map_err(|m| fail(path, m))?;
    }
    Ok(notes)
}
