//! Tests of `yaml.rs`, kept beside it.

use super::*;
use crate::path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Inner {
    vlan: u16,
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Outer {
    tenants: Vec<Inner>,
}

#[test]
fn unknown_key_names_file_line_path_and_suggests() {
    let text = "tenants:\n  - name: a\n    vlan: 5\n  - name: b\n    vlna: 6\n";
    let e = parse::<Outer>(Path::new("site.yaml"), text).unwrap_err();
    assert_eq!((e.line, e.column), (5, 5), "{e}");
    assert_eq!(e.key, "tenants[1].vlna");
    assert_eq!(e.message, "unknown key `vlna`");
    assert!(
        e.hint
            .as_deref()
            .unwrap()
            .starts_with("did you mean `vlan`?"),
        "{:?}",
        e.hint
    );
}

#[test]
fn wrong_type_names_the_key() {
    let text = "tenants:\n  - name: a\n    vlan: lots\n";
    let e = parse::<Outer>(Path::new("s.yaml"), text).unwrap_err();
    assert_eq!(e.line, 3);
    assert_eq!(e.key, "tenants[0].vlan");
}

#[test]
fn locate_finds_nested_values() {
    let text = "a:\n  b:\n    - x\n    - y: 1\n      z: 2\n";
    let s = Source::new(Path::new("t.yaml"), text.to_string());
    assert_eq!(s.locate(&path!["a", "b", 1, "z"]), (5, 10));
    assert_eq!(s.locate(&path!["a", "missing"]), (2, 3));
}

#[test]
fn yaml11_words_are_quoted_on_output() {
    let out = to_string(&vec!["NO", "yes", "on", "0755", "12:30"]);
    for w in ["NO", "yes", "on", "0755", "12:30"] {
        assert!(!out.contains(&format!("- {w}\n")), "{w} unquoted in {out}");
    }
}
