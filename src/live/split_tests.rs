use super::*;

/// The items' texts with their lines, and the document when it is not a list.
type Cut = (Vec<(String, u64)>, Option<Value>);

/// Reads `text` through a reader that gives `step` bytes at a time (so every item, string
/// and escape crosses a window's edge somewhere), returning the items' texts and lines.
fn cut(text: &str, step: usize) -> Result<Cut, SplitError> {
    struct Slow<'a>(&'a [u8], usize);
    impl Read for Slow<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut items = Vec::new();
    let top = split(Slow(text.as_bytes(), step), &mut |c: Chunk| {
        for i in 0..c.items.len() {
            let (t, line) = c.item(i);
            items.push((String::from_utf8(t.to_vec()).unwrap(), line));
        }
        Some(c.emptied())
    })?;
    Ok((items, top))
}

#[test]
fn items_are_cut_whole_whatever_the_reads_and_the_rest_is_parsed() {
    let text = "{\n \"apiVersion\": \"v1\",\n \"items\": [\n  {\"a\": \"x}]\\\"\\\\\", \"b\": [1, {\"c\": null}]},\n  [\"[\"],\n  \"s\\\"\",\n  -1.5e3,\n  true\n ],\n \"kind\": \"List\", \"metadata\": {\"k\": [1]}\n}\n";
    let want = vec![
        (r#"{"a": "x}]\"\\", "b": [1, {"c": null}]}"#.to_string(), 4),
        (r#"["["]"#.to_string(), 5),
        (r#""s\"""#.to_string(), 6),
        ("-1.5e3".to_string(), 7),
        ("true".to_string(), 8),
    ];
    for step in [1, 2, 3, 7, 64, 1 << 20] {
        let (items, top) = cut(text, step).unwrap();
        assert_eq!(items, want, "reads of {step} bytes");
        assert_eq!(top, None, "a list");
        for (t, _) in &items {
            serde_json::from_str::<Value>(t).unwrap();
        }
    }
    // An array, an empty list, `items: null`, one object (its fields parsed, in order).
    assert_eq!(cut("[1 , 2]", 1).unwrap().0.len(), 2);
    assert_eq!(
        cut(r#"{"items": [], "kind": "List"}"#, 1).unwrap(),
        (vec![], None)
    );
    assert_eq!(cut(r#"{"items": null}"#, 1).unwrap(), (vec![], None));
    let (items, top) = cut(r#"{"kind": "Node", "metadata": {"name": "n"}}"#, 2).unwrap();
    assert!(items.is_empty());
    assert_eq!(
        top.unwrap().to_string(),
        r#"{"kind":"Node","metadata":{"name":"n"}}"#
    );
    // Items of an object that is not a list are handed on; the object comes back without them.
    let (items, top) = cut(r#"{"kind": "Pod", "items": [{}]}"#, 3).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(top.unwrap().to_string(), r#"{"kind":"Pod"}"#);
}

#[test]
fn a_broken_skeleton_is_refused_with_its_line() {
    let err = |t: &str| cut(t, 5).unwrap_err().to_string();
    for (text, want) in [
        ("", "EOF while parsing a value at line 1"),
        (
            "\n\n  x",
            "expected a Kubernetes object, a list of them, or an array of them, found `x` at line 3",
        ),
        (
            "{\"items\": [{}, {}\n",
            "EOF while expecting `,` or `]` after an item at line 2",
        ),
        (
            "{\"items\": [{},\n {\"a\": \"b",
            "EOF while parsing a string at line 2",
        ),
        (
            "{\"items\": [{},\n {\"a\": [",
            "EOF while parsing a value at line 2",
        ),
        (
            "{\"items\": [{} {}]}",
            "expected `,` or `]` after an item, found `{` at line 1",
        ),
        ("{\"items\": {}}", "`items` is not a list at line 1"),
        (
            "{\"kind\": \"List\" \"items\": []}",
            "expected `,` or `}` after a field, found `\"` at line 1",
        ),
        ("{kind: 1}", "expected a key at line 1"),
        (
            "{\"kind\" 1}",
            "expected `:` after a key, found `1` at line 1",
        ),
        ("{\"a\":\n tru}", "EOF while parsing a value at line 2"),
        ("{\"a\":\n\n [1}]}", "expected `,` or `]` at line 3"),
        (
            "[1]\n\n]",
            "trailing characters after the document (`]`) at line 3",
        ),
    ] {
        assert_eq!(err(text), want, "{text:?}");
    }
}

#[test]
fn a_take_that_stops_ends_the_cut() {
    let text = format!("[{}0]", "0,".repeat(CHUNK * 3));
    let mut chunks = 0;
    let e = split(text.as_bytes(), &mut |c: Chunk| {
        assert_eq!(c.items.len(), CHUNK);
        chunks += 1;
        (chunks < 2).then(Chunk::default)
    })
    .unwrap_err();
    assert_eq!(chunks, 2);
    assert_eq!(e.to_string(), "an item is not JSON at line 1");
}
