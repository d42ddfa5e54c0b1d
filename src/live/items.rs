//! The Kubernetes objects of one parsed document: a `kind: List` (of lists, two deep)
//! unwrapped into its items, each object named (API version, kind, namespace, name), its
//! `metadata.managedFields` dropped and its size as compact JSON counted.

use serde_json::Value;

use super::objects::Object;

/// The objects of `d`, each handed to `out`; documents that are not objects are skipped.
pub(super) fn push<'f>(file: &'f str, d: Value, out: &mut dyn FnMut(Object<'f>), depth: u8) {
    push_sized(file, d, out, depth, None);
}

/// `push`, with the object's compact size when it is known already (`sparse`).
pub(super) fn push_sized<'f>(
    file: &'f str,
    mut d: Value,
    out: &mut dyn FnMut(Object<'f>),
    depth: u8,
    bytes: Option<u64>,
) {
    let kind = d["kind"].as_str().unwrap_or_default().to_string();
    if (kind == "List" || kind.ends_with("List")) && d["items"].is_array() && depth < 2 {
        if let Value::Array(items) = d["items"].take() {
            for i in items {
                push_sized(file, i, out, depth + 1, None);
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
    let bytes = bytes.unwrap_or_else(|| super::census::json_len(&d));
    out(Object {
        file,
        api_version: api,
        kind,
        namespace,
        name,
        value: d,
        bytes,
    });
}
