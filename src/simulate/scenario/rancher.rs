//! Cluster shapes from the YAML people already have: a Rancher `provisioning.cattle.io/v1`
//! `Cluster` with `rkeConfig.machinePools`, and the `HarvesterConfig` machine configs its
//! pools reference (`cpuCount`, `memorySize` in GiB, `diskInfo` JSON with sizes in GiB,
//! `vmAffinity` as Rancher's UI stores it, base64 of the JSON, or the raw JSON). Integer
//! driver flags are strings in HarvesterConfig. `kind: List` wrappers (kubectl's output)
//! are unwrapped, and JSON reads as the YAML it is a subset of.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;

use super::model::Pool;

/// Why a Rancher file cannot be read as cluster shapes.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RancherError {
    #[error("{0}")]
    Yaml(String),
    #[error("no provisioning.cattle.io Cluster in the file")]
    NoCluster,
    #[error("the file holds {count} Clusters ({names}); a shape imports one")]
    SeveralClusters { count: usize, names: String },
    #[error("Cluster {cluster}: {problem}")]
    Cluster {
        cluster: String,
        problem: PoolProblem,
    },
}

/// What is wrong with one Cluster's machine pools or their HarvesterConfigs.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PoolProblem {
    #[error("the Cluster has no rkeConfig.machinePools")]
    NoMachinePools,
    #[error("a machine pool has no name")]
    NoName,
    #[error("pool {pool}: no machineConfigRef.name")]
    NoConfigRef { pool: String },
    #[error("pool {pool}: HarvesterConfig `{config}` is not in the file")]
    NoConfig { pool: String, config: String },
    #[error("pool {pool}: quantity {value} is not a whole number from 0 to {MAX_POOL_QUANTITY}")]
    Quantity { pool: String, value: String },
    #[error("{config}: {field} {value} is not {want}")]
    Field {
        config: String,
        field: String,
        value: String,
        want: &'static str,
    },
    #[error(
        "{config}: diskInfo disk {disk} has no readable size ({value}): give a size in GiB above 0"
    )]
    DiskSize {
        config: String,
        disk: usize,
        value: String,
    },
    #[error("{config}: {field} missing")]
    Missing { config: String, field: &'static str },
    #[error("{config}: diskInfo is not JSON: {reason}")]
    DiskInfo { config: String, reason: String },
    #[error("{config} (pool {pool}): {reason}")]
    Affinity {
        config: String,
        pool: String,
        reason: AffinityError,
    },
}

/// Why a `vmAffinity` cannot be read; an unreadable affinity is never "no affinity".
#[derive(Debug, Clone, thiserror::Error)]
pub enum AffinityError {
    #[error("vmAffinity is {0}, not a string (base64 or JSON of an Affinity)")]
    NotAString(&'static str),
    #[error("vmAffinity is empty; remove the key for no affinity")]
    Empty,
    #[error("vmAffinity is neither base64 nor JSON: {0}")]
    BadJson(String),
    #[error("vmAffinity is neither JSON nor base64 ({0})")]
    BadBase64(String),
    #[error("vmAffinity decodes from base64 but is not JSON: {0}")]
    BadDecodedJson(String),
    #[error("vmAffinity: {0}")]
    Shape(&'static str),
}

/// The most machines one pool may ask for.
pub(crate) const MAX_POOL_QUANTITY: u32 = 10_000;
/// The most vCPU of one machine.
const MAX_VCPU: i64 = 4096;
/// The most memory of one machine, GiB.
const MAX_MEMORY_GIB: f64 = 65_536.0;
/// The largest disk, GiB.
const MAX_DISK_GIB: f64 = 1e7;

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// A driver flag as Rancher stores it: a string, or a plain number.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A whole number in `lo..=hi`, from a number or a string of one.
fn whole(v: &Value, lo: i64, hi: i64) -> Option<i64> {
    let t = text_of(v)?;
    let n: i64 = t.parse().ok()?;
    (lo..=hi).contains(&n).then_some(n)
}

/// A finite number in `(0, hi]`, from a number or a string of one.
fn positive(v: &Value, hi: f64) -> Option<f64> {
    let t = text_of(v)?;
    let x: f64 = t.parse().ok()?;
    (x.is_finite() && x > 0.0 && x <= hi).then_some(x)
}

/// Every object of a multi-document text, `kind: List` items unwrapped.
pub fn objects(text: &str) -> Result<Vec<Value>, RancherError> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| RancherError::Yaml(e.to_string()))?;
    let mut out = Vec::new();
    for d in docs {
        if d["kind"] == "List" {
            out.extend(d["items"].as_array().into_iter().flatten().cloned());
        } else if !d.is_null() {
            out.push(d);
        }
    }
    Ok(out)
}

/// `vmAffinity` as an Affinity object: base64 of JSON (what the UI writes) or raw JSON.
/// An empty or unreadable value is an error, never a silent "no affinity".
pub fn decode_affinity(raw: &str) -> Result<Value, AffinityError> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(AffinityError::Empty);
    }
    let v: Value = if t.starts_with('{') {
        serde_json::from_str(t).map_err(|e| AffinityError::BadJson(e.to_string()))?
    } else {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(t)
            .map_err(|e| AffinityError::BadBase64(e.to_string()))?;
        serde_json::from_slice(&bytes).map_err(|e| AffinityError::BadDecodedJson(e.to_string()))?
    };
    check_affinity(&v)?;
    Ok(v)
}

/// The parts of an Affinity the placement reads, typed as Kubernetes types them.
fn check_affinity(v: &Value) -> Result<(), AffinityError> {
    let Some(obj) = v.as_object() else {
        return Err(AffinityError::Shape("an Affinity is a map"));
    };
    for (k, part) in obj {
        if !matches!(
            k.as_str(),
            "nodeAffinity" | "podAffinity" | "podAntiAffinity"
        ) {
            return Err(AffinityError::Shape(
                "an Affinity holds nodeAffinity, podAffinity or podAntiAffinity only",
            ));
        }
        if !part.is_object() {
            return Err(AffinityError::Shape("each part of an Affinity is a map"));
        }
    }
    for part in ["podAffinity", "podAntiAffinity"] {
        let terms = &v[part]["requiredDuringSchedulingIgnoredDuringExecution"];
        if terms.is_null() {
            continue;
        }
        let Some(terms) = terms.as_array() else {
            return Err(AffinityError::Shape(
                "requiredDuringSchedulingIgnoredDuringExecution is a list of terms",
            ));
        };
        if terms.iter().any(|t| !t["topologyKey"].is_string()) {
            return Err(AffinityError::Shape(
                "every required pod (anti-)affinity term needs a topologyKey string",
            ));
        }
    }
    Ok(())
}

/// The pools of the one Cluster in a multi-document YAML (or JSON) text.
pub fn pools(text: &str) -> Result<Vec<Pool>, RancherError> {
    let mut all = clusters(text)?;
    match all.len() {
        1 => Ok(all.remove(0).1),
        n => Err(RancherError::SeveralClusters {
            count: n,
            names: all
                .iter()
                .map(|c| c.0.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Every provisioning.cattle.io Cluster of a file, by name, with its pools.
pub fn clusters(text: &str) -> Result<Vec<(String, Vec<Pool>)>, RancherError> {
    let docs = objects(text)?;
    let clusters: Vec<&Value> = docs
        .iter()
        .filter(|d| {
            d["kind"] == "Cluster"
                && d["apiVersion"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("provisioning.cattle.io/"))
        })
        .collect();
    if clusters.is_empty() {
        return Err(RancherError::NoCluster);
    }
    clusters
        .iter()
        .map(|c| {
            let name = c["metadata"]["name"].as_str().unwrap_or("?").to_string();
            cluster_pools(&docs, c)
                .map(|p| (name.clone(), p))
                .map_err(|problem| RancherError::Cluster {
                    cluster: name,
                    problem,
                })
        })
        .collect()
}

fn cluster_pools(docs: &[Value], cluster: &Value) -> Result<Vec<Pool>, PoolProblem> {
    let configs: BTreeMap<&str, &Value> = docs
        .iter()
        .filter(|d| d["kind"] == "HarvesterConfig")
        .filter_map(|d| d["metadata"]["name"].as_str().map(|n| (n, d)))
        .collect();
    let mut out = Vec::new();
    for p in cluster["spec"]["rkeConfig"]["machinePools"]
        .as_array()
        .ok_or(PoolProblem::NoMachinePools)?
    {
        let name = p["name"].as_str().ok_or(PoolProblem::NoName)?.to_string();
        // Absent: Rancher's default of one machine. Present: a whole number in range.
        let count = match p.get("quantity") {
            None => 1,
            Some(q) => {
                whole(q, 0, i64::from(MAX_POOL_QUANTITY)).ok_or_else(|| PoolProblem::Quantity {
                    pool: name.clone(),
                    value: q.to_string(),
                })? as u32
            }
        };
        let cfg_name = p["machineConfigRef"]["name"]
            .as_str()
            .ok_or_else(|| PoolProblem::NoConfigRef { pool: name.clone() })?;
        let cfg = configs.get(cfg_name).ok_or_else(|| PoolProblem::NoConfig {
            pool: name.clone(),
            config: cfg_name.to_string(),
        })?;
        let field = |key: &'static str| -> Result<&Value, PoolProblem> {
            cfg.get(key)
                .filter(|v| !v.is_null())
                .ok_or_else(|| PoolProblem::Missing {
                    config: cfg_name.to_string(),
                    field: key,
                })
        };
        let bad = |key: &str, v: &Value, want: &'static str| PoolProblem::Field {
            config: cfg_name.to_string(),
            field: key.to_string(),
            value: v.to_string(),
            want,
        };
        let raw = field("cpuCount")?;
        let vcpu = whole(raw, 1, MAX_VCPU)
            .ok_or_else(|| bad("cpuCount", raw, "a whole number of vCPU from 1 to 4096"))?
            as f64;
        let raw = field("memorySize")?;
        let memory_gib = positive(raw, MAX_MEMORY_GIB)
            .ok_or_else(|| bad("memorySize", raw, "a size in GiB above 0 and at most 65536"))?;
        let disks: Vec<f64> = match cfg.get("diskInfo").filter(|v| !v.is_null()) {
            Some(Value::String(j)) => {
                let v: Value = serde_json::from_str(j).map_err(|e| PoolProblem::DiskInfo {
                    config: cfg_name.to_string(),
                    reason: e.to_string(),
                })?;
                let Some(list) = v["disks"].as_array() else {
                    return Err(PoolProblem::DiskInfo {
                        config: cfg_name.to_string(),
                        reason: "no `disks` list".into(),
                    });
                };
                // A disk whose size cannot be read is an error, never a smaller cluster.
                list.iter()
                    .enumerate()
                    .map(|(i, d)| {
                        positive(&d["size"], MAX_DISK_GIB).ok_or_else(|| PoolProblem::DiskSize {
                            config: cfg_name.to_string(),
                            disk: i,
                            value: d["size"].to_string(),
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
            Some(other) => return Err(bad("diskInfo", other, "a JSON string")),
            None => match cfg.get("diskSize").filter(|v| !v.is_null()) {
                Some(raw) => vec![
                    positive(raw, MAX_DISK_GIB)
                        .ok_or_else(|| bad("diskSize", raw, "a size in GiB above 0"))?,
                ],
                None => Vec::new(),
            },
        };
        let affinity = match cfg.get("vmAffinity") {
            None => None,
            Some(Value::String(raw)) => Some(decode_affinity(raw)),
            Some(other) => Some(Err(AffinityError::NotAString(kind_of(other)))),
        }
        .transpose()
        .map_err(|reason| PoolProblem::Affinity {
            config: cfg_name.to_string(),
            pool: name.clone(),
            reason,
        })?;
        let anti_affinity = affinity.is_some_and(|a| {
            a["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                .as_array()
                .is_some_and(|terms| {
                    terms
                        .iter()
                        .any(|t| t["topologyKey"] == "kubernetes.io/hostname")
                })
        });
        out.push(Pool {
            name,
            count,
            vcpu,
            memory_gib,
            disks_gib: disks,
            anti_affinity,
            running: true,
        });
    }
    Ok(out)
}
