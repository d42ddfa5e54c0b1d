//! The Kubernetes objects of one parsed document: a `kind: List` (of lists, two deep)
//! unwrapped into its items, each object named (API version, kind, namespace, name), its
//! `metadata.managedFields` dropped and its size as compact JSON counted.

use serde_json::Value;

use super::objects::Object;
use super::tree::Json;

/// The objects of `d`, each handed to `out`; documents that are not objects are skipped.
pub(super) fn push<'f>(file: &'f str, mut d: Value, out: &mut dyn FnMut(Object<'f>), depth: u8) {
    let list = d["kind"]
        .as_str()
        .is_some_and(|k| k == "List" || k.ends_with("List"));
    if list && d["items"].is_array() && depth < 2 {
        if let Value::Array(items) = d["items"].take() {
            for i in items {
                push(file, i, out, depth + 1);
            }
        }
        return;
    }
    if let Some(m) = d.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    let bytes = super::census::json_len(&d);
    if let Some(o) = object(file, d, bytes) {
        out(o);
    }
}

/// The object `d` (`bytes`: its compact size, `managedFields` left out) named; `None` if
/// it has no API version or kind.
pub(super) fn object<J: Json>(file: &str, d: J, bytes: u64) -> Option<Object<'_, J>> {
    let api_version = d["apiVersion"].get_str()?.to_string();
    let kind = d["kind"].get_str().filter(|k| !k.is_empty())?.to_string();
    let name = super::quantity::text(&d["metadata"]["name"])
        .unwrap_or("")
        .to_string();
    let namespace = super::quantity::text(&d["metadata"]["namespace"]).map(str::to_string);
    Some(Object {
        file,
        api_version,
        kind,
        namespace,
        name,
        value: d,
        bytes,
    })
}
