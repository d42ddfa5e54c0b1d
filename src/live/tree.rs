//! What `decode` reads a JSON value through, and the small tree the sparse read keeps.
//!
//! `decode` types objects read two ways: whole (a `serde_json::Value`: YAML bundles, kinds
//! kept whole, anything awkward) and sparsely (`sparse`: only the fields it reads). Both
//! are read through [`Json`], so there is one decoder. The sparse read keeps a [`Tree`]:
//! a map is a vector of fields in the order written (most have a handful, so a scan beats
//! hashing every key, as `serde_json`'s ordered map does on every insert and look-up), and
//! keys the read looks for are the reader's own static strings rather than copies.
//!
//! A [`Tree`] means what the `Value` of the same text means: a key written twice keeps its
//! first place and its last value (as the ordered map does), numbers are `serde_json`'s,
//! and it is written back as the same compact JSON.

use std::borrow::Cow;
use std::ops::Index;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};

/// A JSON value as `decode` reads it: `v["key"]` is null where the key is absent or `v` is
/// not a map.
pub(crate) trait Json: Sized + for<'a> Index<&'a str, Output = Self> {
    fn get_str(&self) -> Option<&str>;
    fn get_f64(&self) -> Option<f64>;
    fn get_bool(&self) -> Option<bool>;
    fn is_num(&self) -> bool;
    /// The elements of an array.
    fn items(&self) -> Option<&[Self]>;
    /// The fields of a map, in order.
    fn fields(&self) -> Option<impl Iterator<Item = (&str, &Self)>>;
    /// Written as compact JSON.
    fn compact(&self) -> String;
    fn into_value(self) -> Value;
}

impl Json for Value {
    fn get_str(&self) -> Option<&str> {
        self.as_str()
    }
    fn get_f64(&self) -> Option<f64> {
        self.as_f64()
    }
    fn get_bool(&self) -> Option<bool> {
        self.as_bool()
    }
    fn is_num(&self) -> bool {
        self.is_number()
    }
    fn items(&self) -> Option<&[Value]> {
        self.as_array().map(Vec::as_slice)
    }
    fn fields(&self) -> Option<impl Iterator<Item = (&str, &Value)>> {
        self.as_object()
            .map(|m| m.iter().map(|(k, v)| (k.as_str(), v)))
    }
    fn compact(&self) -> String {
        self.to_string()
    }
    fn into_value(self) -> Value {
        self
    }
}

/// A map's key: one the reader named (static) or one read from the text.
pub(crate) type Key = Cow<'static, str>;

/// A JSON value kept by the sparse read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tree {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Tree>),
    Object(Vec<(Key, Tree)>),
}

static NULL: Tree = Tree::Null;

impl Index<&str> for Tree {
    type Output = Tree;
    fn index(&self, key: &str) -> &Tree {
        match self {
            Tree::Object(m) => m.iter().find(|(k, _)| k == key).map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }
}

impl Tree {
    /// A map of `fields` as read, a key written twice kept once: in its first place, with
    /// its last value.
    pub(crate) fn object(mut fields: Vec<(Key, Tree)>) -> Tree {
        if has_twice(&fields) {
            let mut kept: Vec<(Key, Tree)> = Vec::with_capacity(fields.len());
            let mut at: std::collections::HashMap<Key, usize> =
                std::collections::HashMap::with_capacity(fields.len());
            for (k, v) in fields.drain(..) {
                if let Some(&i) = at.get(&k) {
                    kept[i].1 = v;
                } else {
                    at.insert(k.clone(), kept.len());
                    kept.push((k, v));
                }
            }
            fields = kept;
        }
        Tree::Object(fields)
    }
}

/// Whether a key appears twice: pairwise for a few fields, hashed past that.
fn has_twice(fields: &[(Key, Tree)]) -> bool {
    if fields.len() <= 16 {
        return fields
            .iter()
            .enumerate()
            .any(|(i, (k, _))| fields[i + 1..].iter().any(|(j, _)| j == k));
    }
    let mut seen = std::collections::HashSet::with_capacity(fields.len());
    !fields.iter().all(|(k, _)| seen.insert(k.as_ref()))
}

impl Json for Tree {
    fn get_str(&self) -> Option<&str> {
        match self {
            Tree::String(s) => Some(s),
            _ => None,
        }
    }
    fn get_f64(&self) -> Option<f64> {
        match self {
            Tree::Number(n) => n.as_f64(),
            _ => None,
        }
    }
    fn get_bool(&self) -> Option<bool> {
        match self {
            Tree::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_num(&self) -> bool {
        matches!(self, Tree::Number(_))
    }
    fn items(&self) -> Option<&[Tree]> {
        match self {
            Tree::Array(a) => Some(a),
            _ => None,
        }
    }
    fn fields(&self) -> Option<impl Iterator<Item = (&str, &Tree)>> {
        match self {
            Tree::Object(m) => Some(m.iter().map(|(k, v)| (k.as_ref(), v))),
            _ => None,
        }
    }
    fn compact(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    fn into_value(self) -> Value {
        match self {
            Tree::Null => Value::Null,
            Tree::Bool(b) => Value::Bool(b),
            Tree::Number(n) => Value::Number(n),
            Tree::String(s) => Value::String(s),
            Tree::Array(a) => Value::Array(a.into_iter().map(Json::into_value).collect()),
            Tree::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, v)| (k.into_owned(), v.into_value()))
                    .collect(),
            ),
        }
    }
}

impl Serialize for Tree {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tree::Null => s.serialize_unit(),
            Tree::Bool(b) => s.serialize_bool(*b),
            Tree::Number(n) => n.serialize(s),
            Tree::String(t) => s.serialize_str(t),
            Tree::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            Tree::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k.as_ref(), v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
