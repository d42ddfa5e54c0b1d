//! What a dump holds for the control plane: every object it lists, whatever its kind,
//! counted by kind with its size as compact JSON (without `metadata.managedFields`, which
//! recent kubectl hides and the support bundle keeps), and the etcd quota when an etcd
//! Pod's command line names one. Kinds served from memory rather than etcd (the
//! `metrics.k8s.io` group of metrics-server) are left out.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::tree::Json;

/// The count and size of one kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct KindTally {
    pub count: u64,
    /// Compact JSON bytes of every object of the kind, `managedFields` left out.
    pub json_bytes: u64,
}

/// Objects by kind: `Kind (group)`, the core group written `v1` (`Pod (v1)`).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Census {
    pub kinds: BTreeMap<String, KindTally>,
    /// `--quota-backend-bytes` of an etcd Pod's command line, with the Pod that says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_backend_bytes: Option<(f64, String)>,
}

impl Census {
    pub(crate) fn add(&mut self, e: Entry) {
        let t = match self.kinds.get_mut(e.kind.as_ref()) {
            Some(t) => t,
            None => self.kinds.entry(e.kind.into_owned()).or_default(),
        };
        t.count += 1;
        t.json_bytes += e.bytes;
        if let Some(q) = e.quota {
            self.quota_backend_bytes = Some(q);
        }
    }

    /// Objects of all kinds.
    pub fn objects(&self) -> u64 {
        self.kinds.values().map(|t| t.count).sum()
    }

    /// The count of one kind (`Replica (longhorn.io)`), 0 when absent.
    pub fn count(&self, kind: &str) -> u64 {
        self.kinds.get(kind).map_or(0, |t| t.count)
    }
}

/// One object's part of the census.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    kind: std::borrow::Cow<'static, str>,
    bytes: u64,
    quota: Option<(f64, String)>,
}

/// The name a census gives a kind of an API group: `Replica (longhorn.io)`, `Pod (v1)`.
pub fn kind_name(group: &str, kind: &str) -> String {
    if group.is_empty() {
        format!("{kind} (v1)")
    } else {
        format!("{kind} ({group})")
    }
}

/// The names of the kinds a dump holds by the thousand, written once.
const NAMED: &[(&str, &str, &str)] = &[
    ("", "Node", "Node (v1)"),
    ("", "Pod", "Pod (v1)"),
    (
        "kubevirt.io",
        "VirtualMachine",
        "VirtualMachine (kubevirt.io)",
    ),
    (
        "kubevirt.io",
        "VirtualMachineInstance",
        "VirtualMachineInstance (kubevirt.io)",
    ),
    ("longhorn.io", "Node", "Node (longhorn.io)"),
    ("longhorn.io", "Volume", "Volume (longhorn.io)"),
    ("longhorn.io", "Replica", "Replica (longhorn.io)"),
    ("longhorn.io", "Engine", "Engine (longhorn.io)"),
];

/// `kind_name`, without a new string for the kinds of `NAMED`.
fn kind_name_of(group: &str, kind: &str) -> std::borrow::Cow<'static, str> {
    NAMED
        .iter()
        .find(|(g, k, _)| *g == group && *k == kind)
        .map_or_else(|| kind_name(group, kind).into(), |(_, _, n)| (*n).into())
}

/// Groups whose objects are not kept in etcd.
const NOT_STORED: &[&str] = &["metrics.k8s.io"];

/// The census entry of one object (`bytes`: its compact JSON size), `None` for kinds not
/// kept in etcd.
pub(crate) fn entry<J: Json>(
    group: &str,
    kind: &str,
    id: &str,
    value: &J,
    bytes: u64,
) -> Option<Entry> {
    if NOT_STORED.contains(&group) {
        return None;
    }
    let quota = (group.is_empty() && kind == "Pod")
        .then(|| etcd_quota(value))
        .flatten()
        .map(|q| (q, format!("Pod {id}")));
    Some(Entry {
        kind: kind_name_of(group, kind),
        bytes,
        quota,
    })
}

/// `--quota-backend-bytes=N` (or `--quota-backend-bytes N`) among the command and
/// arguments of a container running etcd.
fn etcd_quota<J: Json>(pod: &J) -> Option<f64> {
    let containers = pod["spec"]["containers"].items()?;
    for c in containers {
        let words: Vec<&str> = ["command", "args"]
            .iter()
            .flat_map(|k| c[*k].items().into_iter().flatten())
            .filter_map(Json::get_str)
            .collect();
        if !words
            .iter()
            .any(|w| w.ends_with("etcd") || w.contains("/etcd"))
        {
            continue;
        }
        for (i, w) in words.iter().enumerate() {
            let v = match w.strip_prefix("--quota-backend-bytes") {
                Some(rest) if rest.starts_with('=') => Some(&rest[1..]),
                Some("") => words.get(i + 1).copied(),
                _ => None,
            };
            if let Some(n) = v.and_then(|s| s.trim().parse::<f64>().ok())
                && n.is_finite()
                && n > 0.0
            {
                return Some(n);
            }
        }
    }
    None
}

/// Bytes a value takes as compact JSON, counted without building the text.
pub fn json_len(v: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    match serde_json::to_writer(&mut c, v) {
        Ok(()) => c.0,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_are_compact_json_and_the_etcd_quota_is_read_off_its_pod() {
        let v = json!({"a": [1, 2], "b": "x y"});
        assert_eq!(
            json_len(&v),
            serde_json::to_string(&v).unwrap().len() as u64
        );
        let pod = json!({"spec": {"containers": [
            {"name": "sidecar", "command": ["sh", "--quota-backend-bytes=1"]},
            {"name": "etcd", "command": ["etcd", "--data-dir=/var/lib/etcd", "--quota-backend-bytes=8589934592"]},
        ]}});
        let e = entry("", "Pod", "kube-system/etcd-a", &pod, 10).unwrap();
        assert_eq!(
            e.quota,
            Some((8_589_934_592.0, "Pod kube-system/etcd-a".into()))
        );
        let split = json!({"spec": {"containers": [
            {"command": ["/usr/local/bin/etcd"], "args": ["--quota-backend-bytes", "4294967296"]},
        ]}});
        assert_eq!(etcd_quota(&split), Some(4_294_967_296.0));
        assert_eq!(
            etcd_quota(&json!({"spec": {"containers": [{"command": ["etcd"]}]}})),
            None
        );
        assert!(entry("metrics.k8s.io", "NodeMetrics", "n", &v, 1).is_none());
        assert_eq!(kind_name("", "Pod"), "Pod (v1)");
        for (g, k, n) in NAMED {
            assert_eq!(kind_name(g, k), *n);
        }
    }
}
