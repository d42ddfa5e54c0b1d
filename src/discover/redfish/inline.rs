//! The resources an expanded Redfish answer brought (see `expand`), kept by path so the
//! walk never reads one again.

use std::collections::HashMap;

use serde_json::Value;

use crate::redfish::fetch::normalize_path;

/// Resources kept per BMC from expanded answers: far more than one server's parts.
pub(super) const MAX_INLINE: usize = 4096;

/// Resources kept down to this depth of nesting in one answer: the answer's own and three
/// levels of expansion.
const MAX_NESTED: usize = 4;

/// A whole resource given inline (not a bare reference): an `@odata.id`, an `@odata.type`
/// and at least one property more.
pub(super) fn is_inline(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.len() > 2 && o.contains_key("@odata.type") && o.contains_key("@odata.id")
    })
}

/// The key a resource is kept under: its path without a trailing slash, in lowercase (iLO
/// names one resource in two cases).
pub(super) fn key(path: &str) -> String {
    normalize_path(path).to_ascii_lowercase()
}

/// Whether `link` names a member of the collection at `coll` (one path segment below it).
pub(super) fn member_of(link: &str, coll: &str) -> bool {
    let (l, c) = (key(link), key(coll));
    l.strip_prefix(&c)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// The kept resources of one BMC, by [`key`].
#[derive(Default)]
pub(super) struct Inline(HashMap<String, Value>);

impl Inline {
    /// Keep every whole resource in `doc` and those nested in it, to [`MAX_NESTED`] deep
    /// (the walk asks for three levels at most): each is kept as a copy, so a hostile answer
    /// nesting resources deeper costs no more than that many copies of itself.
    pub(super) fn keep(&mut self, doc: &Value) {
        self.keep_at(doc, 0);
    }

    fn keep_at(&mut self, doc: &Value, nested: usize) {
        if self.0.len() >= MAX_INLINE {
            return;
        }
        match doc {
            Value::Object(o) => {
                let mut nested = nested;
                if is_inline(doc)
                    && let Some(id) = o.get("@odata.id").and_then(Value::as_str)
                {
                    if nested >= MAX_NESTED {
                        return;
                    }
                    nested += 1;
                    self.0.entry(key(id)).or_insert_with(|| doc.clone());
                }
                for v in o.values() {
                    self.keep_at(v, nested);
                }
            }
            Value::Array(a) => {
                for v in a {
                    self.keep_at(v, nested);
                }
            }
            _ => {}
        }
    }

    /// The resource kept under `path`.
    pub(super) fn get(&self, path: &str) -> Option<Value> {
        self.0.get(&key(path)).cloned()
    }

    /// Whether a resource is kept under `path`.
    pub(super) fn has(&self, path: &str) -> bool {
        self.0.contains_key(&key(path))
    }
}
