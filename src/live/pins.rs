//! What pins a VM to its node or keeps it from live-migrating, read from its VMI: host
//! devices and GPUs, `spec.nodeSelector`, required node affinity, the LiveMigratable
//! condition's reason and `spec.evictionStrategy`; and the node labels they are matched
//! against.

use std::collections::BTreeMap;

use super::quantity::text;
use super::tree::Json;

/// A list of strings; anything else is none.
fn strings<J: Json>(v: &J) -> Vec<String> {
    v.items()
        .into_iter()
        .flatten()
        .filter_map(|x| text(x).map(str::to_string))
        .collect()
}

/// One requirement of a node selector term (`key`, `operator`, `values`), as Kubernetes
/// spells it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

impl NodeRequirement {
    /// Whether a node with `labels` meets it (`k8s.io/component-helpers` `nodeaffinity`:
    /// In, NotIn, Exists, DoesNotExist, Gt, Lt; an unknown operator matches nothing).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let v = labels.get(&self.key);
        let num = |s: &str| s.trim().parse::<i64>().ok();
        match self.operator.as_str() {
            "In" => v.is_some_and(|v| self.values.contains(v)),
            "NotIn" => v.is_none_or(|v| !self.values.contains(v)),
            "Exists" => v.is_some(),
            "DoesNotExist" => v.is_none(),
            "Gt" | "Lt" => {
                let (Some(have), Some(want)) = (
                    v.and_then(|v| num(v)),
                    self.values.first().and_then(|w| num(w)),
                ) else {
                    return false;
                };
                if self.operator == "Gt" {
                    have > want
                } else {
                    have < want
                }
            }
            _ => false,
        }
    }
}

/// A map of strings (labels, a node selector); other values are left out.
pub fn string_map<J: Json>(v: &J) -> BTreeMap<String, String> {
    v.fields()
        .into_iter()
        .flatten()
        .filter_map(|(k, x)| text(x).map(|t| (k.to_string(), t.to_string())))
        .collect()
}

/// The condition's reason when its status is False.
pub fn false_reason<J: Json>(conds: &J, kind: &str) -> Option<String> {
    let c = conds
        .items()?
        .iter()
        .find(|c| c["type"].get_str() == Some(kind))?;
    (text(&c["status"]) == Some("False")).then(|| {
        text(&c["reason"])
            .unwrap_or("(no reason given)")
            .to_string()
    })
}

/// Required node affinity terms (`nodeSelectorTerms`, their `matchExpressions`; a
/// `matchFields` on `metadata.name` is read as the `kubernetes.io/hostname` label).
pub fn node_affinity<J: Json>(v: &J) -> Vec<Vec<NodeRequirement>> {
    let req = |e: &J, key: Option<&str>| NodeRequirement {
        key: key
            .map(str::to_string)
            .or_else(|| text(&e["key"]).map(str::to_string))
            .unwrap_or_default(),
        operator: text(&e["operator"]).unwrap_or("").to_string(),
        values: strings(&e["values"]),
    };
    v["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .items()
        .into_iter()
        .flatten()
        .map(|t| {
            let exprs = t["matchExpressions"].items().into_iter().flatten();
            let fields = t["matchFields"]
                .items()
                .into_iter()
                .flatten()
                .filter(|e| e["key"].get_str() == Some("metadata.name"));
            exprs
                .map(|e| req(e, None))
                .chain(fields.map(|e| req(e, Some("kubernetes.io/hostname"))))
                .collect()
        })
        .collect()
}

/// Host devices and GPUs of a VMI's domain, named for the reader.
pub fn host_devices<J: Json>(devices: &J) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, word) in [("hostDevices", "host device"), ("gpus", "GPU")] {
        for d in devices[kind].items().into_iter().flatten() {
            let name = text(&d["name"]).unwrap_or("?");
            out.push(match text(&d["deviceName"]) {
                Some(dev) => format!("{word} {name} ({dev})"),
                None => format!("{word} {name}"),
            });
        }
    }
    out
}
