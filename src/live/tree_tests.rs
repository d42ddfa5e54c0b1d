use serde_json::Value;

use super::*;

/// `text` read as a tree by the sparse reader's walk (every field kept).
fn tree(text: &str) -> Tree {
    super::super::sparse::whole(text.as_bytes()).unwrap()
}

#[test]
fn a_tree_means_what_the_value_of_the_same_text_means() {
    for text in [
        r#"{"a": 1, "b": [true, null, -2, 3.5e10, "x\"y\u00e9"], "c": {"d": {}}}"#,
        r#"{"k": 1, "j": 2, "k": 3}"#,
        r#"[{"type": "Ready", "status": "True"}, 1.0, 18446744073709551615, -0]"#,
        r#""just a string""#,
        r#"{"labels": {"x": "1", "y": "2", "x": "3", "z": {"x": 1, "x": [2]}}}"#,
    ] {
        let v: Value = serde_json::from_str(text).unwrap();
        let t = tree(text);
        assert_eq!(t.compact(), v.to_string(), "{text}");
        assert_eq!(t.clone().into_value(), v, "{text}");
    }
    // Many fields with one written twice: found by hashing, kept in its first place.
    let mut text = String::from("{");
    for i in 0..40 {
        text.push_str(&format!("\"f{i}\": {i},"));
    }
    text.push_str("\"f3\": \"last\"}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(tree(&text).compact(), v.to_string());
    assert_eq!(tree(&text)["f3"].get_str(), Some("last"));
}

#[test]
fn a_tree_is_read_as_a_value_is() {
    let text = r#"{"m": {"s": "x", "n": 2, "f": 0.5, "b": false, "a": [1], "o": {"k": "v"}}}"#;
    let (v, t): (Value, Tree) = (serde_json::from_str(text).unwrap(), tree(text));
    for key in ["s", "n", "f", "b", "a", "o", "absent"] {
        let (x, y) = (&v["m"][key], &t["m"][key]);
        assert_eq!(x.get_str(), y.get_str(), "{key}");
        assert_eq!(x.get_f64(), y.get_f64(), "{key}");
        assert_eq!(x.get_bool(), y.get_bool(), "{key}");
        assert_eq!(x.is_num(), y.is_num(), "{key}");
        assert_eq!(
            x.items().map(<[_]>::len),
            y.items().map(<[_]>::len),
            "{key}"
        );
        let xs: Option<Vec<&str>> = x.fields().map(|f| f.map(|(k, _)| k).collect());
        let ys: Option<Vec<&str>> = y.fields().map(|f| f.map(|(k, _)| k).collect());
        assert_eq!(xs, ys, "{key}");
        assert_eq!(x.compact(), y.compact(), "{key}");
    }
    // Indexing past a scalar or an array is null, as for a value.
    assert_eq!(t["m"]["s"]["deeper"], Tree::Null);
    assert_eq!(t["m"]["a"]["0"], Tree::Null);
}
