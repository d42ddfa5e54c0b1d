//! A JSON dump streamed as it is parsed: the items of a list handed on a chunk at a time,
//! the bytes read counted.

use serde_json::Value;

/// Items parsed at once, in parallel, before they are handed on: bounds memory to a few
/// chunks' text and trees however large the list.
const CHUNK: usize = 2048;

/// A reader that counts what it gave.
pub(super) struct Counted<R> {
    pub(super) inner: R,
    pub(super) read: u64,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

pub(super) type Raw = serde_json::value::RawValue;

/// A JSON document: the items of a list (or of an array) handed to `take` a chunk at a
/// time (its own), which says whether to go on; the document itself when it is one object rather
/// than a list (`None`: it was a list).
pub(super) struct Top<'t> {
    pub(super) take: &'t mut dyn FnMut(Vec<Box<Raw>>) -> bool,
}

impl Top<'_> {
    /// What a list gives back: its items went to `take`.
    const LIST: Option<Value> = None;

    /// Hand the items of `seq` on, a chunk at a time.
    fn stream<'de, A: serde::de::SeqAccess<'de>>(&mut self, mut seq: A) -> Result<(), A::Error> {
        let mut chunk: Vec<Box<Raw>> = Vec::with_capacity(CHUNK);
        while let Some(v) = seq.next_element::<Box<Raw>>()? {
            chunk.push(v);
            if chunk.len() == CHUNK
                && !(self.take)(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))
            {
                return Err(serde::de::Error::custom("an item is not JSON"));
            }
        }
        if !chunk.is_empty() && !(self.take)(chunk) {
            return Err(serde::de::Error::custom("an item is not JSON"));
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Top<'_> {
    type Value = Option<Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The `items` of an object, streamed by `Top::stream`.
struct Items<'a, 't>(&'a mut Top<'t>);

impl<'de> serde::de::DeserializeSeed<'de> for Items<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Items<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list's items")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.stream(seq)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

impl<'de> serde::de::Visitor<'de> for Top<'_> {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a Kubernetes object, a list of them, or an array of them")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, seq: A) -> Result<Self::Value, A::Error> {
        self.stream(seq)?;
        Ok(Top::LIST)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        mut self,
        mut map: A,
    ) -> Result<Self::Value, A::Error> {
        let mut rest = serde_json::Map::new();
        let mut items = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                map.next_value_seed(Items(&mut self))?;
                items = true;
            } else {
                rest.insert(key, map.next_value::<Value>()?);
            }
        }
        let kind = rest.get("kind").and_then(Value::as_str).unwrap_or("");
        // A list's own fields say nothing more. An object with `items` of another kind is
        // read without them (no kind rackplan reads has such a field): what they gave is
        // dropped by the caller.
        Ok(if items && (kind.is_empty() || kind.ends_with("List")) {
            Top::LIST
        } else {
            Some(Value::Object(rest))
        })
    }
}
