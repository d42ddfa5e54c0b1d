//! Parsing a BMC's JSON into a bounded `serde_json::Value`: arrays keep at most
//! [`MAX_ITEMS`] elements and objects at most [`MAX_KEYS`] keys (the rest is read and
//! dropped), nesting stops at [`MAX_DEPTH`]. A hostile BMC that lists 20,000 members in a
//! 1 MiB body then costs kilobytes of memory, not the tens of megabytes a full `Value`
//! takes; no real Redfish document comes near these limits.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Elements kept per array (the crawl reads at most this many members of a collection).
pub(crate) const MAX_ITEMS: usize = 1024;
/// Keys kept per object.
pub(crate) const MAX_KEYS: usize = 1024;
/// Nesting kept; deeper values become null.
pub(crate) const MAX_DEPTH: usize = 32;

/// Parse `bytes` as one JSON document, bounded as above.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Bounded(0).deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

#[derive(Clone, Copy)]
struct Bounded(usize);

impl<'de> DeserializeSeed<'de> for Bounded {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        if self.0 >= MAX_DEPTH {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(Value::Null);
        }
        while out.len() < MAX_ITEMS {
            match s.next_element_seed(Bounded(self.0 + 1))? {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        if self.0 >= MAX_DEPTH {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Value::Null);
        }
        while let Some(k) = m.next_key::<String>()? {
            if out.len() < MAX_KEYS {
                let v = m.next_value_seed(Bounded(self.0 + 1))?;
                out.insert(k, v);
            } else {
                m.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_member_list_is_cut_and_the_rest_is_kept() {
        let members: Vec<String> = (0..20_000)
            .map(|i| format!("{{\"@odata.id\": \"/redfish/v1/Systems/{i}\"}}"))
            .collect();
        let text = format!(
            "{{\"Members\": [{}], \"Members@odata.count\": 20000, \"Name\": \"x\"}}",
            members.join(",")
        );
        let v = parse(text.as_bytes()).unwrap();
        assert_eq!(v["Members"].as_array().unwrap().len(), MAX_ITEMS);
        assert_eq!(v["Name"], "x");
        assert_eq!(v["Members@odata.count"], 20000);
    }

    #[test]
    fn ordinary_documents_are_unchanged_and_bad_json_is_an_error() {
        let text = r#"{"a": [1, 2.5, "x", null, true, {"b": []}], "c": {}}"#;
        let want: Value = serde_json::from_str(text).unwrap();
        assert_eq!(parse(text.as_bytes()).unwrap(), want);
        assert!(parse(b"{\"a\": [1, 2").is_err());
        assert!(parse(b"{} trailing").is_err());
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(
            parse(deep.as_bytes()).is_ok(),
            "deep nesting is cut, not a stack overflow"
        );
    }
}
