//! Cluster shapes from the YAML people already have: a Rancher `provisioning.cattle.io/v1`
//! `Cluster` with `rkeConfig.machinePools`, and the `HarvesterConfig` machine configs its
//! pools reference (`cpuCount`, `memorySize` in GiB, `diskInfo` JSON with sizes in GiB,
//! `vmAffinity` JSON). Integer driver flags are strings in HarvesterConfig.

use std::collections::BTreeMap;

use serde_json::Value;

use super::scenario::Pool;

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// The pools of the (first) Cluster in a multi-document YAML text.
pub fn pools(text: &str) -> Result<Vec<Pool>, String> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| e.to_string())?;
    let cluster = docs
        .iter()
        .find(|d| {
            d["kind"] == "Cluster"
                && d["apiVersion"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("provisioning.cattle.io/"))
        })
        .ok_or("no provisioning.cattle.io Cluster in the file")?;
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
                v["disks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| num(&d["size"]))
                    .collect()
            }
            None => num(&cfg["diskSize"]).into_iter().collect(),
        };
        let anti_affinity = cfg["vmAffinity"]
            .as_str()
            .and_then(|j| serde_json::from_str::<Value>(j).ok())
            .is_some_and(|a| {
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
