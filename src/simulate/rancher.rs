//! Cluster shapes from the YAML people already have: a Rancher `provisioning.cattle.io/v1`
//! `Cluster` with `rkeConfig.machinePools`, and the `HarvesterConfig` machine configs its
//! pools reference (`cpuCount`, `memorySize` in GiB, `diskInfo` JSON with sizes in GiB,
//! `vmAffinity` as Rancher's UI stores it, base64 of the JSON, or the raw JSON). Integer
//! driver flags are strings in HarvesterConfig. `kind: List` wrappers (kubectl's output)
//! are unwrapped, and JSON reads as the YAML it is a subset of.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;

use super::scenario::Pool;

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// Every object of a multi-document text, `kind: List` items unwrapped.
fn objects(text: &str) -> Result<Vec<Value>, String> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| e.to_string())?;
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

/// `vmAffinity` as an Affinity object: base64 of JSON (what the UI writes) or raw JSON;
/// `None` when empty. An unreadable value is an error, never a silent "no affinity".
pub fn decode_affinity(raw: &str) -> Result<Option<Value>, String> {
    let t = raw.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if t.starts_with('{') {
        return serde_json::from_str(t)
            .map(Some)
            .map_err(|e| format!("vmAffinity is neither base64 nor JSON: {e}"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(t)
        .map_err(|e| format!("vmAffinity is neither JSON nor base64 ({e})"))?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("vmAffinity decodes from base64 but is not JSON: {e}"))
}

/// The pools of the one Cluster in a multi-document YAML (or JSON) text.
pub fn pools(text: &str) -> Result<Vec<Pool>, String> {
    let mut all = clusters(text)?;
    match all.len() {
        1 => Ok(all.remove(0).1),
        n => Err(format!(
            "the file holds {n} Clusters ({}); a shape imports one",
            all.iter()
                .map(|c| c.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Every provisioning.cattle.io Cluster of a file, by name, with its pools.
pub fn clusters(text: &str) -> Result<Vec<(String, Vec<Pool>)>, String> {
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
        return Err("no provisioning.cattle.io Cluster in the file".into());
    }
    clusters
        .iter()
        .map(|c| {
            let name = c["metadata"]["name"].as_str().unwrap_or("?").to_string();
            cluster_pools(&docs, c)
                .map(|p| (name.clone(), p))
                .map_err(|e| format!("Cluster {name}: {e}"))
        })
        .collect()
}

fn cluster_pools(docs: &[Value], cluster: &Value) -> Result<Vec<Pool>, String> {
    let configs: BTreeMap<&str, &Value> = docs
        .iter()
        .filter(|d| d["kind"] == "HarvesterConfig")
        .filter_map(|d| d["metadata"]["name"].as_str().map(|n| (n, d)))
        .collect();
    let mut out = Vec::new();
    for p in cluster["spec"]["rkeConfig"]["machinePools"]
        .as_array()
        .ok_or("the Cluster has no rkeConfig.machinePools")?
    {
        let name = p["name"]
            .as_str()
            .ok_or("a machine pool has no name")?
            .to_string();
        let count = p["quantity"].as_u64().unwrap_or(1) as u32;
        let cfg_name = p["machineConfigRef"]["name"]
            .as_str()
            .ok_or(format!("pool {name}: no machineConfigRef.name"))?;
        let cfg = configs.get(cfg_name).ok_or(format!(
            "pool {name}: HarvesterConfig `{cfg_name}` is not in the file"
        ))?;
        let vcpu = num(&cfg["cpuCount"]).ok_or(format!("{cfg_name}: cpuCount missing"))?;
        let memory_gib =
            num(&cfg["memorySize"]).ok_or(format!("{cfg_name}: memorySize missing"))?;
        let disks: Vec<f64> = match cfg["diskInfo"].as_str() {
            Some(j) => {
                let v: Value = serde_json::from_str(j)
                    .map_err(|e| format!("{cfg_name}: diskInfo is not JSON: {e}"))?;
                // A disk whose size cannot be read is an error, never a smaller cluster.
                v["disks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, d)| {
                        num(&d["size"]).ok_or(format!(
                            "{cfg_name}: diskInfo disk {i} has no readable size ({})",
                            d["size"]
                        ))
                    })
                    .collect::<Result<_, _>>()?
            }
            None => num(&cfg["diskSize"]).into_iter().collect(),
        };
        let affinity = match cfg["vmAffinity"].as_str() {
            Some(raw) => decode_affinity(raw).map_err(|e| format!("{cfg_name}: {e}"))?,
            None => None,
        };
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
