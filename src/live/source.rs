//! Where the objects come from: one file, a folder of files, an unpacked support bundle
//! (`yamls/cluster/...`, `yamls/namespaced/...`) or its `.zip`. Every file is parsed on its
//! own and reduced to its objects at once, so a large dump is held as objects, not as text.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use super::assemble::Builder;
use super::decode::{Prepared, prepare};
use super::error::LiveError;
use super::items::{object, push};
use super::split::{Chunk, SplitError, split};
use super::stream::Counted;

/// Largest single file read, or entry unpacked from an archive (a support bundle's biggest
/// list is far below this).
const MAX_FILE: u64 = 512 * 1024 * 1024;
/// Most files read from one folder or archive.
const MAX_FILES: usize = 100_000;
/// Most bytes unpacked from one archive, counted while inflating.
const MAX_UNPACKED: u64 = 4 * 1024 * 1024 * 1024;
/// Most entries (files and folders) a folder walk visits, and how deep it goes: a bundle
/// holds a few thousand files a few folders down.
const MAX_ENTRIES: usize = 200_000;
const MAX_DEPTH: usize = 10;

/// The bounds of one read; the constants above, smaller in the unit tests.
#[derive(Debug, Clone, Copy)]
struct Caps {
    file: u64,
    unpacked: u64,
    files: usize,
    entries: usize,
    depth: usize,
}

const CAPS: Caps = Caps {
    file: MAX_FILE,
    unpacked: MAX_UNPACKED,
    files: MAX_FILES,
    entries: MAX_ENTRIES,
    depth: MAX_DEPTH,
};

/// A byte count as people read it: `512 MiB`, `4 GiB`, or bytes below 1 MiB.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= 1024 * MIB && bytes.is_multiple_of(1024 * MIB) {
        format!("{} GiB", bytes / (1024 * MIB))
    } else if bytes >= MIB {
        format!("{:.0} MiB", bytes as f64 / MIB as f64)
    } else {
        format!("{bytes} bytes")
    }
}

/// Why one file's text gave no objects (the file is skipped and named in the notes).
#[derive(Debug, thiserror::Error)]
enum TextError {
    #[error("not JSON: {0}")]
    Item(#[from] SplitError),
    #[error("not YAML: {0}")]
    Yaml(#[from] serde_saphyr::Error),
    #[error(
        "an object of kind `{0}` holds `items` but is not a List: give kubectl's `kind: List` output"
    )]
    NotAList(String),
}

/// Why a file or an archive entry could not be read as text.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not UTF-8 text")]
    NotUtf8,
    /// More than the cap: how many bytes were read before stopping.
    #[error("more than {0} bytes")]
    TooLarge(u64),
    #[error(transparent)]
    Text(TextError),
}

/// A folder too large to be a dump.
#[derive(Debug, thiserror::Error)]
#[error("more than {0} entries in the folder: not a kubectl dump or a support bundle")]
struct TooManyEntries(usize);

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
fn objects_of(file: &str, text: &str, sink: &mut Builder) -> Result<(), TextError> {
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        json_objects(file, t.as_bytes(), sink, false)
    } else {
        let docs: Vec<Value> = serde_saphyr::from_multiple(text)?;
        for d in docs {
            push(file, d, &mut |o| sink.insert(prepare(o)), 0);
        }
        Ok(())
    }
}

/// The objects of one JSON document, read as a stream: the items of a `kind: List` are cut
/// out as text a chunk at a time (`split`), then parsed and typed (in parallel) and handed
/// to `sink`, so neither the dump's text nor its tree is ever held whole (a file is read
/// from disk as it goes, `json_file`).
///
/// Whether a document with `items` is a list is known from its `kind`, which kubectl writes
/// after them: the items are held, typed, until it is known, or with `eager` handed on at
/// once and a document that turns out not to be a list refused (for a single file, whose
/// refusal ends the read).
fn json_objects(
    file: &str,
    r: impl std::io::Read,
    sink: &mut Builder,
    eager: bool,
) -> Result<(), TextError> {
    // A pipeline of three: this thread cuts the items out of the text, a parser parses and
    // types each chunk's items (in parallel), and an adder hands the typed objects on in
    // the document's order (chunks go through one at a time, at most two waiting between
    // stages). Parsed chunks come back emptied to be filled again, and so do the vectors
    // of typed objects: their memory is reused rather than fresh pages taken every chunk.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let add_to = &mut *sink;
    let (top, handed, typed, failed) = std::thread::scope(|scope| {
        let (to_parse, chunks) = std::sync::mpsc::sync_channel::<Chunk>(1);
        let (parsed, results) = std::sync::mpsc::sync_channel(1);
        let (done, reuse) = std::sync::mpsc::channel::<Chunk>();
        let (spent, refill) = std::sync::mpsc::channel::<Vec<Prepared>>();
        let stop = &stop;
        scope.spawn(move || {
            let mut scratch = Vec::new();
            for chunk in chunks {
                let mut out = refill.try_recv().unwrap_or_default();
                let got = parse_chunk(file, &chunk, &mut scratch, &mut out).map(|()| out);
                let bad = got.is_err();
                stop.fetch_or(bad, std::sync::atomic::Ordering::Relaxed);
                if parsed.send(got).is_err() || bad {
                    break;
                }
                let _ = done.send(chunk.emptied());
            }
        });
        // Typed objects are held until the document is known to be a list, or with `eager`
        // handed on at once; the parser's first error is kept.
        let adder = scope.spawn(move || {
            let mut typed: Vec<Prepared> = Vec::new();
            let mut handed = false;
            let mut failed: Option<SplitError> = None;
            for got in results {
                match got {
                    Ok(mut p) => {
                        if eager {
                            handed |= !p.is_empty();
                            for one in p.drain(..) {
                                add_to.insert(one);
                            }
                        } else {
                            typed.append(&mut p);
                        }
                        let _ = spent.send(p);
                    }
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
            }
            (handed, typed, failed)
        });
        let top = split(r, &mut |chunk: Chunk| {
            (!stop.load(std::sync::atomic::Ordering::Relaxed) && to_parse.send(chunk).is_ok())
                .then(|| reuse.try_recv().unwrap_or_default())
        });
        // The parser ends after the last chunk (or at a failure), then the adder.
        drop(to_parse);
        let (handed, typed, failed) = adder
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (top, handed, typed, failed)
    });
    if let Some(e) = failed {
        return Err(TextError::Item(e));
    }
    match top? {
        None => {
            for p in typed {
                sink.insert(p);
            }
        }
        Some(v) if handed => {
            return Err(TextError::NotAList(
                v["kind"].as_str().unwrap_or_default().to_string(),
            ));
        }
        Some(v) => push(file, v, &mut |o| sink.insert(prepare(o)), 0),
    }
    Ok(())
}

/// What one item gave: most items are one object, a nested list several. (One is kept
/// inline: boxing it would cost an allocation per object.)
#[allow(clippy::large_enum_variant)]
enum Got {
    Zero,
    One(Prepared),
    Many(Vec<Prepared>),
}

impl Got {
    fn add(&mut self, p: Prepared) {
        *self = match std::mem::replace(self, Got::Zero) {
            Got::Zero => Got::One(p),
            Got::One(a) => Got::Many(vec![a, p]),
            Got::Many(mut v) => {
                v.push(p);
                Got::Many(v)
            }
        };
    }
}

/// One chunk's items parsed and typed, in parallel, into `out` in order; the first that is
/// not JSON (or not UTF-8) named with the dump's line it is on. `scratch` is reused from
/// chunk to chunk.
fn parse_chunk(
    file: &str,
    chunk: &Chunk,
    scratch: &mut Vec<Result<Got, SplitError>>,
    out: &mut Vec<Prepared>,
) -> Result<(), SplitError> {
    (0..chunk.items.len())
        .into_par_iter()
        .map(|i| {
            let (text, line) = chunk.item(i);
            let at = |e: serde_json::Error| SplitError::parsing(&e, line);
            let mut got = Got::Zero;
            if let Some(read) = super::sparse::read(text) {
                let (v, bytes) = read.map_err(at)?;
                if let Some(o) = object(file, v, bytes) {
                    got.add(prepare(o));
                }
            } else {
                let v = serde_json::from_slice::<Value>(text).map_err(at)?;
                push(file, v, &mut |o| got.add(prepare(o)), 1);
            }
            Ok(got)
        })
        .collect_into_vec(scratch);
    out.reserve(scratch.len());
    for g in scratch.drain(..) {
        match g? {
            Got::Zero => {}
            Got::One(p) => out.push(p),
            Got::Many(v) => out.extend(v),
        }
    }
    Ok(())
}

/// A JSON dump file read from disk as it is parsed: at most `cap` bytes (counted while
/// reading).
fn json_file(
    file: &str,
    r: impl std::io::Read,
    cap: u64,
    sink: &mut Builder,
) -> Result<(), ReadError> {
    let mut counted = Counted {
        inner: r.take(cap + 1),
        read: 0,
    };
    let got = json_objects(file, &mut counted, sink, true);
    if counted.read > cap {
        return Err(ReadError::TooLarge(counted.read));
    }
    got.map_err(ReadError::Text)
}

/// Objects already parsed (read from an API server rather than a file), each typed and
/// added as a file's would be; `origin` names them in notes.
pub(crate) fn add_values(origin: &str, items: Vec<Value>, sink: &mut Builder) {
    for v in items {
        push(origin, v, &mut |o| sink.insert(prepare(o)), 0);
    }
}

/// The manifests under `dir`, in name order. Symbolic links are not followed (a dump is a
/// tree of plain files) and, like anything else skipped, are named in `notes`. Visits at
/// most `caps.entries` entries (an error past that: not a dump) and `caps.depth` levels.
fn walk(
    dir: &Path,
    depth: usize,
    caps: &Caps,
    seen: &mut usize,
    files: &mut Vec<PathBuf>,
    notes: &mut Vec<String>,
) -> Result<(), TooManyEntries> {
    if files.len() >= caps.files {
        return Ok(());
    }
    if depth > caps.depth {
        notes.push(format!(
            "{}: deeper than {} folders; not read",
            dir.display(),
            caps.depth
        ));
        return Ok(());
    }
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            notes.push(format!("{}: {e}; not read", dir.display()));
            return Ok(());
        }
    };
    let mut entries = Vec::new();
    for e in rd.flatten() {
        *seen += 1;
        if *seen > caps.entries {
            return Err(TooManyEntries(caps.entries));
        }
        entries.push(e.path());
    }
    entries.sort();
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, depth + 1, caps, seen, files, notes)?;
        } else if !is_manifest(&p.to_string_lossy()) {
        } else if meta.file_type().is_symlink() {
            notes.push(format!(
                "{}: a symbolic link; not followed (a dump is a tree of plain files)",
                p.display()
            ));
        } else if !meta.is_file() {
            notes.push(format!(
                "{}: not a regular file (a FIFO, socket or device); skipped",
                p.display()
            ));
        } else if files.len() >= caps.files {
            notes.push(format!(
                "{}: more than {} files; the rest were not read",
                dir.display(),
                caps.files
            ));
            return Ok(());
        } else {
            files.push(p);
        }
    }
    Ok(())
}

/// Whether a folder that is not a bundle holds a manifest at its top (a folder of
/// `kubectl get -o yaml` files); looks at most `caps.entries` names.
fn holds_manifests(dir: &Path, caps: &Caps) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten().take(caps.entries).any(|e| {
            is_manifest(&e.file_name().to_string_lossy())
                && std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_file())
        })
    })
}

/// The text of a file of at most `cap` bytes, counted while reading (a file that grows
/// after its size was looked at is still cut off).
fn read_capped(mut r: impl std::io::Read, cap: u64) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    (&mut r).take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)
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

/// The manifests of a support bundle's `.zip`. Entries are looked at before anything is
/// inflated: a symbolic link, or an entry declaring more than the per-file cap, is skipped
/// and named in `notes`, and an archive declaring more than the total cap is refused at
/// once. Inflating then counts real bytes against both caps (a declared size can lie).
fn read_zip(
    path: &Path,
    out: &mut Builder,
    notes: &mut Vec<String>,
    caps: &Caps,
) -> Result<(), LiveError> {
    let f = std::fs::File::open(path).map_err(|e| fail(path, format!("cannot open: {e}")))?;
    let mut z =
        zip::ZipArchive::new(f).map_err(|e| fail(path, format!("not a zip archive: {e}")))?;
    let mut chosen = Vec::new();
    let mut declared = 0u64;
    for i in 0..z.len() {
        let e = z
            .by_index_raw(i)
            .map_err(|e| fail(path, format!("entry {i}: {e}")))?;
        let Ok(name) = e.name().map(|n| n.to_string()) else {
            notes.push(format!(
                "{}: entry {i} has an unreadable name; skipped",
                path.display()
            ));
            continue;
        };
        let in_yamls = name.starts_with("yamls/") || name.contains("/yamls/");
        if e.is_dir() || !in_yamls || !is_manifest(&name) {
            continue;
        }
        let shown = format!("{}!{name}", path.display());
        if e.is_symlink() {
            notes.push(format!(
                "{shown}: a symbolic link; not followed (a bundle holds plain files)"
            ));
            continue;
        }
        if e.size() > caps.file {
            notes.push(format!(
                "{shown}: unpacks to {} bytes, past the limit of {} per file; skipped",
                e.size(),
                size(caps.file)
            ));
            continue;
        }
        if chosen.len() >= caps.files {
            notes.push(format!(
                "{}: more than {} files; the rest were not read",
                path.display(),
                caps.files
            ));
            break;
        }
        declared = declared.saturating_add(e.size());
        chosen.push((i, shown));
    }
    let too_much = |bytes: u64| {
        fail(
            path,
            format!(
                "its manifests unpack to {bytes} bytes or more, past the limit of {} for one archive; not read (a support bundle is far smaller: check that this is one)",
                size(caps.unpacked)
            ),
        )
    };
    if declared > caps.unpacked {
        return Err(too_much(declared));
    }
    let mut unpacked = 0u64;
    for (i, shown) in chosen {
        let e = z
            .by_index(i)
            .map_err(|e| fail(path, format!("entry {i}: {e}")))?;
        let room = caps.unpacked - unpacked;
        let text = match read_capped(e, caps.file.min(room)) {
            Ok(text) => text,
            Err(ReadError::TooLarge(got)) if room <= caps.file => {
                return Err(too_much(unpacked + got));
            }
            Err(ReadError::TooLarge(_)) => {
                notes.push(format!(
                    "{shown}: unpacks to more than {} (more than it declares); skipped",
                    size(caps.file)
                ));
                unpacked += caps.file;
                continue;
            }
            Err(m) => {
                notes.push(format!("{shown}: {m}; skipped"));
                continue;
            }
        };
        unpacked += text.len() as u64;
        if let Err(m) = objects_of(&shown, &text, out) {
            notes.push(format!("{shown}: {m}; skipped"));
        }
    }
    Ok(())
}

/// Every object of a dump, each handed to `out` as it is read; returns the notes (files
/// skipped and why). Only regular files and folders that are a support bundle or hold
/// manifests are read: a FIFO, a device or a folder like `/` is refused before reading.
pub(crate) fn for_each_object(path: &Path, out: &mut Builder) -> Result<Vec<String>, LiveError> {
    read_with(path, out, &CAPS)
}

fn read_with(path: &Path, out: &mut Builder, caps: &Caps) -> Result<Vec<String>, LiveError> {
    let mut notes = Vec::new();
    let meta = std::fs::metadata(path).map_err(|e| fail(path, format!("cannot read: {e}")))?;
    if meta.is_dir() {
        if path.canonicalize().is_ok_and(|p| p.parent().is_none()) {
            return Err(fail(
                path,
                "the root of the filesystem is not a dump: give a kubectl dump file, a folder of them, or a support bundle (.zip or unpacked)",
            ));
        }
        let root = match bundle_yamls(path) {
            Some(yamls) => yamls,
            None if holds_manifests(path, caps) => path.to_path_buf(),
            None => {
                return Err(fail(
                    path,
                    "no .yaml, .yml or .json file in the folder and no support bundle (`yamls/`): give a kubectl dump, a folder of them, or a support bundle (.zip or unpacked)",
                ));
            }
        };
        let mut files = Vec::new();
        walk(&root, 0, caps, &mut 0, &mut files, &mut notes)
            .map_err(|e| fail(path, e.to_string()))?;
        if files.is_empty() {
            return Err(fail(path, "no .yaml, .yml or .json file in the folder"));
        }
        for f in files {
            let shown = f.display().to_string();
            let read = std::fs::File::open(&f).map_err(ReadError::from);
            match read.and_then(|r| read_capped(r, caps.file)) {
                Ok(text) => {
                    if let Err(m) = objects_of(&shown, &text, out) {
                        notes.push(format!("{shown}: {m}; skipped"));
                    }
                }
                Err(ReadError::TooLarge(_)) => notes.push(format!(
                    "{shown}: larger than the input limit ({}); skipped",
                    size(caps.file)
                )),
                Err(m) => notes.push(format!("{shown}: {m}; skipped")),
            }
        }
    } else if !meta.is_file() {
        return Err(fail(
            path,
            "not a regular file or a folder (a FIFO, socket or device); give a kubectl dump file, a folder of them, or a support bundle (.zip or unpacked)",
        ));
    } else if path
        .to_string_lossy()
        .to_ascii_lowercase()
        .ends_with(".zip")
    {
        read_zip(path, out, &mut notes, caps)?;
    } else {
        let too_large = || {
            fail(
                path,
                format!("larger than the input limit ({})", size(caps.file)),
            )
        };
        if meta.len() > caps.file {
            return Err(too_large());
        }
        let f = std::fs::File::open(path).map_err(|e| fail(path, format!("cannot read: {e}")))?;
        let mut r = std::io::BufReader::new(f);
        let json = std::io::BufRead::fill_buf(&mut r).is_ok_and(|b| {
            b.iter()
                .find(|c| !c.is_ascii_whitespace())
                .is_some_and(|c| matches!(c, b'{' | b'['))
        });
        let shown = path.display().to_string();
        let read = if json {
            json_file(&shown, r, caps.file, out)
        } else {
            read_capped(r, caps.file)
                .and_then(|text| objects_of(&shown, &text, out).map_err(ReadError::Text))
        };
        read.map_err(|e| match e {
            ReadError::TooLarge(_) => too_large(),
            ReadError::Text(e) => fail(path, e.to_string()),
            e => fail(path, format!("cannot read: {e}")),
        })?;
    }
    Ok(notes)
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
