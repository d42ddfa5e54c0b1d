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
