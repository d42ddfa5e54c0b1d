//! An item of a dump read for what the analyses use only: for the kinds rackplan types
//! (Nodes, VMs and their instances, Longhorn's nodes, volumes, replicas and settings) and
//! for kinds it only counts, the text is walked once by `serde_json`, the fields `decode`
//! reads are kept as a small tree (`tree::Tree`: a map is a vector of its fields, the keys
//! this reader names are its static strings) and everything else is passed over without
//! being built,
//! while the object's size as compact JSON (what `census::json_len` gives for the whole
//! object, `metadata.managedFields` left out) is counted on the way. Kinds kept whole
//! (Rancher's, Pods for the etcd quota, nested lists) are parsed whole as before.
//!
//! The tree kept is what `decode` reads: the test `sparse_tests` holds every object of the
//! reference support bundle and of a generated dump to the same typed record as the whole
//! parse gives, field for field, and the same size.

use std::sync::OnceLock;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::tree::{Json, Key as FieldName, Tree};

/// What of a value to keep: all of it, or some of its fields (each with what of that to
/// keep). Arrays are transparent: each element is kept by the same rule. A scalar where
/// fields were expected is kept as it is (`decode` reads it as `serde_json` would).
#[derive(Debug)]
enum Keep {
    All,
    Fields(Vec<(&'static str, Keep)>),
}

impl Keep {
    /// The rule for a field `key` and, where this rule names it, the name as a static
    /// string; `None`: not kept.
    fn field(&self, key: &str) -> Option<(Option<&'static str>, &Keep)> {
        match self {
            Keep::All => Some((None, &Keep::All)),
            Keep::Fields(f) => f
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(name, k)| (Some(*name), k)),
        }
    }

    /// Keep `path` (and all below it).
    fn add(&mut self, path: &[&'static str]) {
        let Keep::Fields(fields) = self else {
            return;
        };
        let Some((first, rest)) = path.split_first() else {
            *self = Keep::All;
            return;
        };
        let at = if let Some(i) = fields.iter().position(|(k, _)| k == first) {
            i
        } else {
            fields.push((first, Keep::Fields(Vec::new())));
            fields.len() - 1
        };
        fields[at].1.add(rest);
    }
}

type Path = &'static [&'static str];

/// What every object needs: its identity, creation and conditions (the newest stamp).
const COMMON: &[Path] = &[
    &["apiVersion"],
    &["kind"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["metadata", "creationTimestamp"],
    &["status", "conditions"],
];

/// The fields `decode` reads, by the kind it types: `decode::node`, `vmi`, `vm`,
/// `longhorn_node`, `volume`, `replica` and the settings.
const NODE: &[Path] = &[
    &["metadata", "labels"],
    &["metadata", "annotations", "harvesterhci.io/maintain-status"],
    &["status", "allocatable"],
    &["spec", "unschedulable"],
];
const VMI: &[Path] = &[
    &["metadata", "labels"],
    &["status", "nodeName"],
    &["status", "phase"],
    &["spec", "domain", "resources"],
    &["spec", "domain", "cpu"],
    &["spec", "domain", "devices", "hostDevices"],
    &["spec", "domain", "devices", "gpus"],
    &["spec", "affinity"],
    &["spec", "evictionStrategy"],
    &["spec", "nodeSelector"],
    &["spec", "volumes", "persistentVolumeClaim", "claimName"],
];
const VM: &[Path] = &[
    &["metadata", "labels"],
    &["spec", "runStrategy"],
    &["spec", "running"],
    &["spec", "template", "spec", "domain", "resources", "limits"],
];
const LONGHORN_NODE: &[Path] = &[
    &["spec", "disks"],
    &["spec", "allowScheduling"],
    &["spec", "tags"],
    &["status", "diskStatus"],
    &["status", "zone"],
];
const VOLUME: &[Path] = &[
    &["spec", "size"],
    &["spec", "numberOfReplicas"],
    &["spec", "nodeSelector"],
    &["spec", "diskSelector"],
    &["status", "actualSize"],
    &["status", "state"],
    &["status", "robustness"],
    &["status", "currentNodeID"],
    &["status", "kubernetesStatus", "pvcName"],
];
const REPLICA: &[Path] = &[
    &["spec", "volumeName"],
    &["spec", "nodeID"],
    &["spec", "diskID"],
    &["status", "currentState"],
];
const SETTING: &[Path] = &[&["value"], &["default"]];

/// The rules, built once: [counted only, Node, VMI, VM, Longhorn Node, Volume, Replica,
/// Setting].
fn rules() -> &'static [Keep; 8] {
    static RULES: OnceLock<[Keep; 8]> = OnceLock::new();
    RULES.get_or_init(|| {
        [
            &[][..],
            NODE,
            VMI,
            VM,
            LONGHORN_NODE,
            VOLUME,
            REPLICA,
            SETTING,
        ]
        .map(|paths| {
            let mut k = Keep::Fields(Vec::new());
            for p in COMMON.iter().chain(paths) {
                k.add(p);
            }
            k
        })
    })
}

/// The rule for an object of `api_version` and `kind`; `None`: read it whole (kinds kept
/// whole by `decode::prepare`, Pods, lists).
fn rule(api_version: &str, kind: &str) -> Option<&'static Keep> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let r = rules();
    // The versions `decode` reads: another version is only named (read whole).
    let read = super::decode::known(group, kind).is_some_and(|v| v.contains(&version));
    let typed = |k: usize| read.then(|| &r[k]);
    match (group, kind) {
        (_, k) if k.ends_with("List") => None,
        ("", "Node") => typed(1),
        ("kubevirt.io", "VirtualMachineInstance") => typed(2),
        ("kubevirt.io", "VirtualMachine") => typed(3),
        ("longhorn.io", "Node") => typed(4),
        ("longhorn.io", "Volume") => typed(5),
        ("longhorn.io", "Replica") => typed(6),
        ("longhorn.io" | "harvesterhci.io", "Setting") => typed(7),
        ("", "Pod")
        | (
            "provisioning.cattle.io"
            | "rke-machine-config.cattle.io"
            | "harvesterhci.io"
            | "longhorn.io"
            | "rackplan.io",
            _,
        ) => None,
        _ => Some(&r[0]),
    }
}

/// An item read sparsely: the tree kept and the object's compact size. `None`: the item is
/// to be read whole (a kind kept whole, or one that cannot be told from its first fields).
pub(super) fn read(text: &[u8]) -> Option<Result<(Tree, u64), serde_json::Error>> {
    let (api, kind) = identity(text)?;
    let keep = rule(api, kind)?;
    let mut bytes = 0;
    let mut de = serde_json::Deserializer::from_slice(text);
    let got = Walk {
        keep: Some(keep),
        at: At::Top,
        bytes: &mut bytes,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    let v = match got {
        Ok(v) => v.unwrap_or(Tree::Null),
        Err(e) => return Some(Err(e)),
    };
    // A key written twice may say otherwise than the first copy read here: read it whole.
    if v["apiVersion"].get_str() != Some(api) || v["kind"].get_str() != Some(kind) {
        return None;
    }
    Some(Ok((v, bytes)))
}

/// The whole of `text` kept as a tree (for tests of the tree itself).
#[cfg(test)]
pub(super) fn whole(text: &[u8]) -> Result<Tree, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let v = Walk {
        keep: Some(&Keep::All),
        at: At::Below,
        bytes: &mut 0,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(v.unwrap_or(Tree::Null))
}

/// Where a map is: the object itself, its `metadata` (whose `managedFields` are not
/// counted), or below.
#[derive(Clone, Copy, PartialEq)]
enum At {
    Top,
    Metadata,
    Below,
}

/// One value walked: kept by `keep` (`None`: only counted) and its compact size added to
/// `bytes`.
struct Walk<'k, 'b> {
    keep: Option<&'k Keep>,
    at: At,
    bytes: &'b mut u64,
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
    type Value = Option<Tree>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// Compact JSON length of a string, quotes included, escaped as `serde_json` writes it.
fn str_len(s: &str) -> u64 {
    let extra: u64 = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    s.len() as u64 + 2 + extra
}

fn digits(mut n: u64) -> u64 {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

impl<'de> Visitor<'de> for Walk<'_, '_> {
    type Value = Option<Tree>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        *self.bytes += if b { 4 } else { 5 };
        Ok(self.keep.map(|_| Tree::Bool(b)))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        *self.bytes += digits(n);
        Ok(self.keep.map(|_| Tree::Number(n.into())))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        *self.bytes += digits(n.unsigned_abs()) + u64::from(n < 0);
        Ok(self.keep.map(|_| Tree::Number(n.into())))
    }
    fn visit_f64<E>(self, x: f64) -> Result<Self::Value, E> {
        let n = serde_json::Number::from_f64(x);
        *self.bytes += n.as_ref().map_or(4, |n| n.to_string().len() as u64);
        Ok(self.keep.map(|_| n.map_or(Tree::Null, Tree::Number)))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        // Taken from the text as it is: it has no escapes, and JSON text holds no control
        // characters or quotes unescaped, so it is written back as it is.
        *self.bytes += s.len() as u64 + 2;
        Ok(self.keep.map(|_| Tree::String(s.to_string())))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        *self.bytes += str_len(s);
        Ok(self.keep.map(|_| Tree::String(s.to_string())))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        *self.bytes += str_len(&s);
        Ok(self.keep.map(|_| Tree::String(s)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        *self.bytes += 4;
        Ok(self.keep.map(|_| Tree::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = self.keep.map(|_| Vec::new());
        let mut n = 0u64;
        while let Some(v) = seq.next_element_seed(Walk {
            keep: self.keep,
            at: At::Below,
            bytes: &mut *self.bytes,
        })? {
            n += 1;
            if let (Some(k), Some(v)) = (kept.as_mut(), v) {
                k.push(v);
            }
        }
        *self.bytes += 2 + n.saturating_sub(1);
        Ok(kept.map(Tree::Array))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut kept = self.keep.map(|_| Vec::new());
        let mut n = 0u64;
        while let Some(key) = map.next_key_seed(Key(self.keep))? {
            let counted = !(self.at == At::Metadata && key.name == "managedFields");
            let at = match (self.at, &*key.name) {
                (At::Top, "metadata") => At::Metadata,
                _ => At::Below,
            };
            let mut sub = 0;
            let v = map.next_value_seed(Walk {
                keep: key.keep,
                at,
                bytes: &mut sub,
            })?;
            if counted {
                n += 1;
                *self.bytes += key.len + 1 + sub;
            }
            if let (Some(m), Some(v)) = (kept.as_mut(), v) {
                let name = match (key.fixed, key.name) {
                    (Some(n), _) => FieldName::Borrowed(n),
                    (None, n) => FieldName::Owned(n.into_owned()),
                };
                m.push((name, v));
            }
        }
        *self.bytes += 2 + n.saturating_sub(1);
        Ok(kept.map(Tree::object))
    }
}

/// A map's key: its compact length, and the rule for its value.
struct Key<'k>(Option<&'k Keep>);

struct KeyRead<'k, 'de> {
    name: std::borrow::Cow<'de, str>,
    /// The name as the rule writes it, when the rule names it.
    fixed: Option<&'static str>,
    keep: Option<&'k Keep>,
    len: u64,
}

impl<'k, 'de> KeyRead<'k, 'de> {
    fn new(name: std::borrow::Cow<'de, str>, rule: Option<&'k Keep>, len: u64) -> Self {
        let got = rule.and_then(|k| k.field(&name));
        KeyRead {
            fixed: got.and_then(|(n, _)| n),
            keep: got.map(|(_, k)| k),
            name,
            len,
        }
    }
}

impl<'k, 'de> DeserializeSeed<'de> for Key<'k> {
    type Value = KeyRead<'k, 'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'k, 'de> Visitor<'de> for Key<'k> {
    type Value = KeyRead<'k, 'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(KeyRead::new(
            std::borrow::Cow::Borrowed(s),
            self.0,
            s.len() as u64 + 2,
        ))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(KeyRead::new(
            std::borrow::Cow::Owned(s.to_string()),
            self.0,
            str_len(s),
        ))
    }
}

/// The object's `apiVersion` and `kind` when both are plain strings among its fields
/// (kubectl writes them first); `None` otherwise (the item is then read whole).
fn identity(t: &[u8]) -> Option<(&str, &str)> {
    let mut i = ws(t, 0);
    if t.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let (mut api, mut kind) = (None, None);
    loop {
        let (key, j) = plain(t, ws(t, i))?;
        i = ws(t, j);
        if t.get(i) != Some(&b':') {
            return None;
        }
        i = ws(t, i + 1);
        match key {
            "apiVersion" | "kind" => {
                let (v, j) = plain(t, i)?;
                if key == "kind" {
                    kind.get_or_insert(v);
                } else {
                    api.get_or_insert(v);
                }
                i = j;
                if let (Some(a), Some(k)) = (api, kind) {
                    return Some((a, k));
                }
            }
            _ => i = value_end(t, i)?,
        }
        i = ws(t, i);
        if t.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
}

fn ws(t: &[u8], mut i: usize) -> usize {
    while t
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// A string without escapes at `i`, and the index past it.
fn plain(t: &[u8], i: usize) -> Option<(&str, usize)> {
    if t.get(i) != Some(&b'"') {
        return None;
    }
    let k = memchr::memchr2(b'"', b'\\', &t[i + 1..])?;
    if t[i + 1 + k] != b'"' {
        return None;
    }
    let s = std::str::from_utf8(&t[i + 1..i + 1 + k]).ok()?;
    Some((s, i + k + 2))
}

/// The index past the value at `i` (brackets counted, strings skipped).
fn value_end(t: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0u32;
    loop {
        match *t.get(i)? {
            b'"' => {
                i += 1;
                loop {
                    let k = memchr::memchr2(b'"', b'\\', t.get(i..)?)?;
                    if t[i + k] == b'"' {
                        i += k + 1;
                        break;
                    }
                    i += k + 2;
                }
                if depth == 0 {
                    return Some(i);
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
#[path = "sparse_tests.rs"]
mod tests;
