use std::io::Write as _;

use super::*;

const SMALL: Caps = Caps {
    file: 200,
    unpacked: 300,
    files: 10,
    entries: 50,
    depth: 2,
};

fn node(name: &str) -> String {
    format!("apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n")
}

fn zip(path: &Path, entries: &[(&str, String)]) {
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    for (name, text) in entries {
        z.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(text.as_bytes()).unwrap();
    }
    z.finish().unwrap();
}

#[test]
fn the_caps_hold_while_reading() {
    assert_eq!(read_capped(&b"12345"[..], 5).unwrap(), "12345");
    assert!(matches!(
        read_capped(&b"123456"[..], 5),
        Err(ReadError::TooLarge(6))
    ));
    assert!(matches!(
        read_capped(std::io::repeat(0), 1000),
        Err(ReadError::TooLarge(1001))
    ));
    assert_eq!(size(512 * 1024 * 1024), "512 MiB");
    assert_eq!(size(4 * 1024 * 1024 * 1024), "4 GiB");
}

#[test]
fn an_entry_past_the_file_cap_is_skipped_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let z = tmp.path().join("b.zip");
    let big = format!("{}# {}\n", node("n2"), "x".repeat(300));
    zip(
        &z,
        &[
            ("b/yamls/nodes.yaml", node("n1")),
            ("b/yamls/big.yaml", big),
        ],
    );
    let mut out = Builder::default();
    let notes = read_with(&z, &mut out, &SMALL).unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("big.yaml") && notes[0].contains("past the limit of 200 bytes"),
        "{notes:?}"
    );
    assert_eq!(out.finish(notes).nodes.len(), 1);
}

#[test]
fn an_archive_past_the_total_cap_is_refused_before_inflating() {
    let tmp = tempfile::tempdir().unwrap();
    let z = tmp.path().join("b.zip");
    let names: Vec<String> = (0..8).map(|i| format!("b/yamls/n{i}.yaml")).collect();
    let entries: Vec<(&str, String)> = names.iter().map(|n| (n.as_str(), node(n))).collect();
    zip(&z, &entries);
    let e = read_with(&z, &mut Builder::default(), &SMALL)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("past the limit of 300 bytes for one archive"),
        "{e}"
    );
}

#[test]
fn a_folder_walk_is_bounded_in_entries_and_depth() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("d1/d2/d3/d4");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(tmp.path().join("top.yaml"), node("top")).unwrap();
    std::fs::write(deep.join("deep.yaml"), node("deep")).unwrap();
    let mut out = Builder::default();
    let notes = read_with(tmp.path(), &mut out, &SMALL).unwrap();
    assert!(
        notes.iter().any(|n| n.contains("deeper than 2 folders")),
        "{notes:?}"
    );
    assert_eq!(out.finish(notes).nodes.len(), 1);
    for i in 0..60 {
        std::fs::write(tmp.path().join(format!("f{i}.txt")), "").unwrap();
    }
    let e = read_with(tmp.path(), &mut Builder::default(), &SMALL)
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than 50 entries"), "{e}");
}

/// A kubectl JSON list of `n` Nodes (`node-0` ...), `kind` after the items as kubectl
/// writes it, with node `dup` written a second time at the end.
fn node_list(n: usize, dup: usize) -> String {
    let item = |i: usize, cpu: &str| {
        format!(
            r#"{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "node-{i}"}}, "status": {{"allocatable": {{"cpu": "{cpu}"}}}}}}"#
        )
    };
    let mut items: Vec<String> = (0..n).map(|i| item(i, "64")).collect();
    items.push(item(dup, "2"));
    format!(
        "{{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n{}\n  ],\n  \"kind\": \"List\"\n}}\n",
        items.join(",\n")
    )
}

/// Items parsed on another thread while the next chunk is cut out come back in the
/// document's order, across several chunks, from a file and from a text held in memory:
/// every node once, in order, the first copy of a duplicate kept; a file cut off after
/// several chunks is refused with the parser's error, and what came before is not lost
/// silently.
#[test]
fn a_list_of_several_chunks_is_read_in_order() {
    let n = 5_000;
    let text = node_list(n, 7);
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("dump.json");
    std::fs::write(&path, &text).unwrap();
    let read = |b: Builder| b.finish(Vec::new());
    let mut from_file = Builder::default();
    read_with(&path, &mut from_file, &CAPS).unwrap();
    let mut from_text = Builder::default();
    objects_of("dump.json", &text, &mut from_text).unwrap();
    for state in [read(from_file), read(from_text)] {
        let names: Vec<&str> = state.nodes.iter().map(|x| x.name.as_str()).collect();
        let want: Vec<String> = (0..n).map(|i| format!("node-{i}")).collect();
        assert_eq!(names, want.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            state.nodes[7].cpu_milli,
            Some(64_000.0),
            "the first copy kept"
        );
    }
    let cut = &text[..text.len() * 9 / 10];
    std::fs::write(&path, cut).unwrap();
    let err = read_with(&path, &mut Builder::default(), &CAPS).unwrap_err();
    assert!(err.to_string().contains("dump.json"), "{err}");
}

/// An item that is not JSON is refused with the dump's line, not the item's own: the
/// items are parsed apart from the text they were cut from.
#[test]
fn an_item_that_is_not_json_is_named_by_the_dumps_line() {
    let text = "{\"items\": [\n  {\"apiVersion\": \"v1\", \"kind\": \"Node\"},\n  {\"apiVersion\": \"v1\",\n   \"kind\": \"Node\", \"spec\": tru}\n], \"kind\": \"List\"}";
    let e = objects_of("d.json", text, &mut Builder::default())
        .unwrap_err()
        .to_string();
    assert_eq!(e, "not JSON: expected ident at line 4");
}
