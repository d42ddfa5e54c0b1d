//! The boot plan read off one BMC (host system, CD slot, how it mounts media, the boot
//! override) and its execution, step by step.

use super::error::BootError;
use serde::Serialize;
use serde_json::{Value, json};

use crate::redfish::client::BmcClient;
use crate::redfish::fetch::{Fetch, link};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Step {
    pub(crate) method: &'static str,
    pub(crate) path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) if_match: Option<String>,
    pub(crate) why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Action {
    Boot,
    Eject,
    /// Write the BIOS attributes `check` names (`--bios`).
    Bios,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Plan {
    /// What the plan does: boot the installer, eject it, or write BIOS settings.
    pub(crate) action: Action,
    pub(crate) system: String,
    pub(crate) vendor: String,
    pub(crate) power_state: String,
    /// The CD/DVD virtual-media slot, or with `--bios` the BIOS settings resource written.
    pub(crate) slot: String,
    pub(crate) steps: Vec<Step>,
    pub(crate) notes: Vec<String>,
    /// Why the plan sends nothing (with `--bios`: every setting is already as asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nothing_to_do: Option<String>,
}

pub(super) fn s(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

pub(super) async fn get(c: &impl Fetch, path: &str) -> Result<Value, BootError> {
    c.get(path).await.map_err(|source| BootError::Read {
        path: path.to_string(),
        source,
    })
}

async fn members(c: &impl Fetch, coll: &str) -> Result<Vec<(String, Value)>, BootError> {
    let doc = get(c, coll).await?;
    let mut out = Vec::new();
    for m in doc
        .get("Members")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(l) = link(m) {
            out.push((l.clone(), get(c, &l).await?));
        }
    }
    Ok(out)
}

fn is_cd(slot: &Value, id: &str) -> bool {
    let types: Vec<String> = slot
        .get("MediaTypes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_ascii_uppercase))
        .collect();
    if types.is_empty() {
        let u = id.to_ascii_uppercase();
        return u.contains("CD") || u.contains("DVD") || u.starts_with("EXT");
    }
    types.iter().any(|t| t == "CD" || t == "DVD")
}

/// The boot override targets the system offers (empty when it does not say).
fn boot_targets(sys: &Value) -> Vec<&str> {
    sys.pointer("/Boot/BootSourceOverrideTarget@Redfish.AllowableValues")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The service root's `Vendor`, and the host system: the first with processors, else the
/// first listed.
pub(super) async fn host_system(c: &impl Fetch) -> Result<(String, String, Value), BootError> {
    let root = get(c, "/redfish/v1").await?;
    let vendor = s(&root, "Vendor");
    let systems_link = root
        .get("Systems")
        .and_then(link)
        .unwrap_or_else(|| "/redfish/v1/Systems".into());
    let systems = members(c, &systems_link).await?;
    let (sys_path, sys) = systems
        .iter()
        .find(|(_, d)| {
            d.pointer("/ProcessorSummary/Count")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                > 0
        })
        .or(systems.first())
        .cloned()
        .ok_or(BootError::NoSystem)?;
    Ok((vendor, sys_path, sys))
}

/// Read the BMC and plan the requests for `action`.
pub(crate) async fn plan(c: &impl Fetch, iso: &str, action: Action) -> Result<Plan, BootError> {
    let (vendor, sys_path, sys) = host_system(c).await?;
    let manufacturer = s(&sys, "Manufacturer");
    let supermicro = manufacturer.to_ascii_lowercase().contains("supermicro")
        || vendor.to_ascii_lowercase().contains("supermicro");
    let mut notes = Vec::new();
    // Virtual-media slots: the system's, then each manager's.
    let mut colls: Vec<String> = sys.get("VirtualMedia").and_then(link).into_iter().collect();
    for m in sys
        .pointer("/Links/ManagedBy")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(ml) = link(m)
            && let Ok(mgr) = get(c, &ml).await
            && let Some(vm) = mgr.get("VirtualMedia").and_then(link)
            && !colls.contains(&vm)
        {
            colls.push(vm);
        }
    }
    let mut slots = Vec::new();
    for coll in &colls {
        match members(c, coll).await {
            Ok(m) => slots.extend(m),
            Err(e) => notes.push(format!("{coll}: {e}")),
        }
    }
    let cd: Vec<&(String, Value)> = slots
        .iter()
        .filter(|(p, d)| is_cd(d, p.rsplit('/').next().unwrap_or("")))
        .collect();
    let pick = match action {
        Action::Boot => cd
            .iter()
            .find(|(_, d)| {
                d.get("Inserted") != Some(&Value::Bool(true)) && s(d, "ConnectedVia") != "URI"
            })
            .or(cd.first()),
        // `--bios` is planned by `bios::plan`; here it reads as an eject would.
        Action::Eject | Action::Bios => cd
            .iter()
            .find(|(_, d)| {
                d.get("Inserted") == Some(&Value::Bool(true)) || s(d, "ConnectedVia") == "URI"
            })
            .or(cd.first()),
    };
    let (slot_path, slot) = pick.map(|x| (*x).clone()).ok_or(BootError::NoCdSlot)?;
    let mut steps = Vec::new();
    let etag = sys
        .get("@odata.etag")
        .and_then(Value::as_str)
        .map(str::to_string);
    let power = s(&sys, "PowerState");
    match action {
        Action::Boot => {
            let insert_target = slot
                .pointer("/Actions/#VirtualMedia.InsertMedia/target")
                .and_then(Value::as_str);
            let body = if supermicro {
                notes.push(
                    "Supermicro rejects Inserted/WriteProtected in InsertMedia: sending Image only"
                        .into(),
                );
                json!({"Image": iso})
            } else {
                json!({"Image": iso, "Inserted": true, "WriteProtected": true})
            };
            match insert_target {
                Some(t) => steps.push(Step {
                    method: "POST",
                    path: t.to_string(),
                    body: Some(body),
                    if_match: None,
                    why: "insert the installer ISO".into(),
                }),
                None => steps.push(Step {
                    method: "PATCH",
                    path: slot_path.clone(),
                    body: Some(json!({"Image": iso, "Inserted": true, "WriteProtected": true})),
                    if_match: slot
                        .get("@odata.etag")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    why: "this slot has no InsertMedia action: mount by PATCH".into(),
                }),
            }
            let allowed = boot_targets(&sys);
            if !allowed.is_empty() && !allowed.contains(&"Cd") {
                return Err(BootError::NoCdOverride {
                    offered: allowed.join(", "),
                });
            }
            if s(
                sys.get("Boot").unwrap_or(&Value::Null),
                "BootSourceOverrideMode",
            ) == "Legacy"
            {
                notes.push("the system boots in Legacy mode; Harvester v1.7+ refuses BIOS boot, so UEFI is requested".into());
            }
            steps.push(Step {
                method: "PATCH",
                path: sys_path.clone(),
                body: Some(json!({"Boot": {"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}})),
                if_match: etag.clone(),
                why: "boot once from the virtual CD, in UEFI mode (target, enabled and mode together)".into(),
            });
            let mut allowed_reset: Vec<String> = sys
                .pointer("/Actions/#ComputerSystem.Reset/ResetType@Redfish.AllowableValues")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            if allowed_reset.is_empty()
                && let Some(info) = sys
                    .pointer("/Actions/#ComputerSystem.Reset/@Redfish.ActionInfo")
                    .and_then(Value::as_str)
                && let Ok(ai) = get(c, info).await
            {
                for p in ai
                    .get("Parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if p["Name"] == "ResetType" {
                        allowed_reset.extend(
                            p["AllowableValues"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(|v| v.as_str().map(str::to_string)),
                        );
                    }
                }
            }
            let prefs: &[&str] = if power == "On" {
                &["ForceRestart", "PowerCycle", "GracefulRestart"]
            } else {
                &["On", "ForceOn"]
            };
            let reset = prefs
                .iter()
                .find(|p| allowed_reset.is_empty() || allowed_reset.iter().any(|a| a == *p))
                .ok_or_else(|| BootError::NoResetType {
                    power: power.clone(),
                    offered: allowed_reset.join(", "),
                })?;
            let target = sys
                .pointer("/Actions/#ComputerSystem.Reset/target")
                .and_then(Value::as_str)
                .map_or_else(
                    || {
                        format!(
                            "{}/Actions/ComputerSystem.Reset",
                            sys_path.trim_end_matches('/')
                        )
                    },
                    str::to_string,
                );
            steps.push(Step {
                method: "POST",
                path: target,
                body: Some(json!({"ResetType": reset})),
                if_match: None,
                why: format!("power state is {power}: {reset}"),
            });
            steps.push(Step {
                method: "GET",
                path: sys_path.clone(),
                body: None,
                if_match: None,
                why: "poll until PowerState is On".into(),
            });
        }
        Action::Eject | Action::Bios => {
            match slot
                .pointer("/Actions/#VirtualMedia.EjectMedia/target")
                .and_then(Value::as_str)
            {
                Some(t) => steps.push(Step {
                    method: "POST",
                    path: t.to_string(),
                    body: Some(json!({})),
                    if_match: None,
                    why: "eject the ISO".into(),
                }),
                None => steps.push(Step {
                    method: "PATCH",
                    path: slot_path.clone(),
                    body: Some(json!({"Image": null, "Inserted": false})),
                    if_match: None,
                    why: "no EjectMedia action: unmount by PATCH".into(),
                }),
            }
            // Target, enabled and mode go together (some BMCs reject a lone `Enabled`).
            let allowed = boot_targets(&sys);
            let target = if allowed.is_empty() || allowed.contains(&"None") {
                "None"
            } else {
                "Hdd"
            };
            steps.push(Step {
                method: "PATCH",
                path: sys_path.clone(),
                body: Some(json!({"Boot": {"BootSourceOverrideTarget": target, "BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideMode": "UEFI"}})),
                if_match: etag,
                why: "clear the one-time boot override, back to the normal boot order".into(),
            });
        }
    }
    Ok(Plan {
        action,
        system: sys_path,
        vendor: if vendor.is_empty() {
            manufacturer
        } else {
            vendor
        },
        power_state: power,
        slot: slot_path,
        steps,
        notes,
        nothing_to_do: None,
    })
}

/// Run a plan. A PATCH refused with 412 because of the ETag is retried once without it
/// (some BMCs reject quoted or weak ETags); `poll` bounds the wait for PowerState On.
pub(crate) async fn execute(
    c: &BmcClient,
    plan: &Plan,
    poll: std::time::Duration,
) -> Result<Vec<String>, BootError> {
    let mut log = Vec::new();
    for st in &plan.steps {
        if st.method == "GET" {
            let deadline = tokio::time::Instant::now() + poll;
            loop {
                let doc = get(c, &st.path).await?;
                let state = s(&doc, "PowerState");
                if state == "On" {
                    log.push(format!("PowerState On ({})", st.path));
                    break;
                }
                if tokio::time::Instant::now() >= deadline {
                    return Err(BootError::StillOff {
                        state,
                        waited: poll,
                    });
                }
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            continue;
        }
        let mut code = c
            .send(
                st.method,
                &st.path,
                st.body.as_ref(),
                st.if_match.as_deref(),
            )
            .await
            .map_err(|source| BootError::Send {
                method: st.method,
                path: st.path.clone(),
                source,
            })?;
        if code == 412 && st.if_match.is_some() {
            code = c
                .send(st.method, &st.path, st.body.as_ref(), None)
                .await
                .map_err(|source| BootError::Send {
                    method: st.method,
                    path: st.path.clone(),
                    source,
                })?;
        }
        if !(200..300).contains(&code) {
            return Err(BootError::Refused {
                method: st.method,
                path: st.path.clone(),
                code,
                why: st.why.clone(),
            });
        }
        log.push(format!("{} {} -> {code}", st.method, st.path));
    }
    Ok(log)
}
