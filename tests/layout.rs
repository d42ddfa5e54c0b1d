//! The layout rules of ARCHITECTURE.md, checked on the source itself: imports run one way
//! (no circle between files or between top-level folders), nothing imports the shell, and
//! only `cli/` prints, reads the terminal or starts a runtime.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::repo;

/// Module path (`plan::fit`) -> source text without comments and without its test module.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = repo().join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        // lib.rs and main.rs are the crate's frame; `*_tests.rs` files are test modules.
        if parts == ["lib"]
            || parts == ["main"]
            || parts.last().is_some_and(|p| p.ends_with("_tests"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        out.insert(parts.join("::"), code);
    }
    out
}

fn resolve(mods: &BTreeMap<String, String>, path: &[&str]) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|i| path[..i].join("::"))
        .find(|m| mods.contains_key(m))
}

/// Every path after `crate::` or `super::`, including the items of `{...}` groups.
fn paths(code: &str) -> Vec<(bool, Vec<String>)> {
    let mut out = Vec::new();
    for (prefix, is_super) in [("crate::", false), ("super::", true)] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            rest = &rest[i + prefix.len()..];
            let end = rest
                .find(|c: char| {
                    !(c.is_alphanumeric()
                        || c == '_'
                        || c == ':'
                        || c == '{'
                        || c == '}'
                        || c == ','
                        || c == ' '
                        || c == '\n')
                })
                .unwrap_or(rest.len());
            let seg = &rest[..end];
            let (head, group) = match seg.find('{') {
                Some(b) => (&seg[..b], seg[b + 1..].split('}').next().unwrap_or("")),
                None => (seg.split([' ', '\n', ',', '}']).next().unwrap_or(""), ""),
            };
            let head: Vec<String> = head
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if group.is_empty() {
                out.push((is_super, head));
            } else {
                for item in group.split(',') {
                    let mut p = head.clone();
                    p.extend(
                        item.trim()
                            .split("::")
                            .filter(|s| !s.is_empty() && *s != "self")
                            .map(str::to_string),
                    );
                    out.push((is_super, p));
                }
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let mut g = BTreeMap::new();
    for (m, code) in &mods {
        let me: Vec<&str> = m.split("::").collect();
        let mut deps = BTreeSet::new();
        for (is_super, p) in paths(code) {
            let mut full: Vec<&str> = Vec::new();
            if is_super {
                full.extend(&me[..me.len().saturating_sub(1)]);
            }
            full.extend(p.iter().map(String::as_str));
            if let Some(r) = resolve(&mods, &full)
                && r != *m
                && !r.starts_with(&format!("{m}::"))
                && !m.starts_with(&format!("{r}::"))
            {
                deps.insert(r);
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

/// Strongly connected components with more than one member.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = g.keys().collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for d in g.get(&n).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    todo.push(d.clone());
                }
            }
        }
        seen
    };
    let r: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        if !r[n].contains(*n) {
            continue;
        }
        let comp: Vec<String> = nodes
            .iter()
            .filter(|m| r[n].contains(**m) && r[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        if comp.len() > 1 && !out.contains(&comp) {
            out.push(comp);
        }
    }
    out
}

#[test]
fn no_import_circle_between_files() {
    let g = graph();
    assert!(g.len() > 40, "the walk found {} modules", g.len());
    assert_eq!(circles(&g), Vec::<Vec<String>>::new());
}

#[test]
fn no_import_circle_between_folders_and_nothing_imports_the_shell() {
    let mut top: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, deps) in graph() {
        let a = m.split("::").next().unwrap().to_string();
        for d in deps {
            let b = d.split("::").next().unwrap().to_string();
            if a != b {
                assert!(b != "cli", "{m} imports the shell ({d})");
                top.entry(a.clone()).or_default().insert(b);
            }
        }
    }
    assert!(top["cli"].contains("report"), "{top:?}");
    assert_eq!(circles(&top), Vec::<Vec<String>>::new(), "{top:?}");
}

#[test]
fn only_the_shell_prints_reads_the_terminal_or_starts_a_runtime() {
    for (m, code) in modules() {
        if m == "cli" || m.starts_with("cli::") {
            continue;
        }
        for bad in [
            "println!",
            "eprintln!",
            "print!(",
            "eprint!(",
            "std::io::stdout",
            "std::io::stdin",
            "is_terminal",
            "runtime::Builder",
            "Runtime::new",
        ] {
            assert!(!code.contains(bad), "{m} uses {bad}");
        }
    }
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&g), vec![vec!["a".to_string(), "b".to_string()]]);
    let p = paths("use crate::plan::{fit::meets_profile, Lock};\nuse super::x::Y;");
    assert!(p.contains(&(
        false,
        vec!["plan".into(), "fit".into(), "meets_profile".into()]
    )));
    assert!(p.contains(&(true, vec!["x".into(), "Y".into()])));
}

/// `mod.rs` is a face (ARCHITECTURE.md): everywhere in `src/` it holds module docs, `mod`
/// lines and re-exports only, in at most 60 lines, and no file anywhere under `src/` grows
/// past 650 lines, its tests included (long tests go to a `*_tests.rs` file beside it).
#[test]
fn mod_rs_is_a_face_and_files_stay_small() {
    let mut bad = Vec::new();
    fn walk(dir: &Path, bad: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, bad);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            if text.lines().count() > 650 {
                bad.push(format!("{}: {} lines", p.display(), text.lines().count()));
            }
            if p.file_name().is_some_and(|n| n == "mod.rs") {
                // Statements may span lines (`pub use a::{\n b,\n};`): join and split on `;`.
                let joined: String = text
                    .lines()
                    .filter(|l| {
                        let t = l.trim();
                        !(t.is_empty() || t.starts_with("//"))
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                if text.lines().count() > 60 {
                    bad.push(format!("{}: {} lines", p.display(), text.lines().count()));
                }
                for stmt in joined.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                    // `#[cfg(test)] mod x_tests`: the attribute does not make it logic.
                    let mut stmt = stmt;
                    while let Some(rest) = stmt.strip_prefix("#[") {
                        stmt = rest.split_once(']').map_or("", |(_, r)| r.trim_start());
                    }
                    let ok = [
                        "mod ",
                        "pub mod ",
                        "pub use ",
                        "pub(crate) use ",
                        "pub(crate) mod ",
                    ]
                    .iter()
                    .any(|k| stmt.starts_with(k));
                    if !ok {
                        bad.push(format!("{}: `{stmt}`", p.display()));
                    }
                }
            }
        }
    }
    walk(&repo().join("src"), &mut bad);
    assert!(bad.is_empty(), "{bad:#?}");
}
