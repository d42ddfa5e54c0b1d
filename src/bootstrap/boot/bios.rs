//! `boot --bios`: the BIOS attributes `check` names written through Redfish, read back.
//!
//! The plan is read off the BMC (DMTF Bios schema): the host system's `Bios` resource, its
//! `@Redfish.Settings.SettingsObject` (the pending-settings resource a PATCH goes to: Dell
//! `Bios/Settings`, HPE `bios/settings/`), the apply times it supports
//! (`SupportedApplyTimes`; `OnReset` is asked for where offered, as the settings are only
//! read at the next boot anyway), and the attribute registry's `ReadOnly` where the BMC
//! links one. An attribute the BIOS does not list, or that the registry marks read-only
//! (HPE's `SecureBootStatus`), is refused, never sent. One PATCH carries every change, with
//! the resource's ETag as If-Match where it gives one. After it, the pending resource and
//! the current one are read again and each attribute reported as applied (current holds
//! the value), pending (the settings resource holds it: applied at the next reset) or not
//! taken.

use serde_json::{Map, Value, json};

use super::error::BootError;
use super::virtual_media::{Plan, Step, get, host_system, s};
use crate::plan::bios::BiosChange;
use crate::redfish::fetch::{Fetch, link};

/// The attribute registry's entries for the BIOS's registry name, when the BMC links it
/// under `/redfish/v1/Registries` (each member's `Location[].Uri`).
async fn registry(c: &impl Fetch, name: &str) -> Option<Vec<Value>> {
    if name.is_empty() {
        return None;
    }
    let regs = c.get("/redfish/v1/Registries").await.ok()?;
    for m in regs
        .get("Members")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(l) = link(m) else { continue };
        let Ok(file) = c.get(&l).await else { continue };
        let id = s(&file, "Id");
        let registry = s(&file, "Registry");
        let matches = |x: &str| {
            !x.is_empty()
                && (x.eq_ignore_ascii_case(name)
                    || name
                        .to_ascii_lowercase()
                        .starts_with(&x.to_ascii_lowercase()))
        };
        if !(matches(&id) || matches(&registry)) {
            continue;
        }
        for loc in file
            .get("Location")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(uri) = loc.get("Uri").and_then(Value::as_str) else {
                continue;
            };
            if let Ok(doc) = c.get(uri).await
                && let Some(a) = doc
                    .pointer("/RegistryEntries/Attributes")
                    .and_then(Value::as_array)
            {
                return Some(a.clone());
            }
        }
    }
    None
}

/// The plan for writing `changes` on this BMC's host. `cannot` (what discovery could not
/// resolve into a value to write) becomes notes.
pub(crate) async fn plan(
    c: &impl Fetch,
    changes: &[BiosChange],
    cannot: &[String],
) -> Result<Plan, BootError> {
    let (vendor, sys_path, sys) = host_system(c).await?;
    let bios_path = sys
        .get("Bios")
        .and_then(link)
        .ok_or_else(|| BootError::NoBios {
            why: "the system links no Bios resource".into(),
        })?;
    let bios = get(c, &bios_path).await?;
    let settings = bios
        .pointer("/@Redfish.Settings/SettingsObject")
        .and_then(link)
        .ok_or_else(|| BootError::NoBios {
            why: format!("{bios_path} names no @Redfish.Settings.SettingsObject to write to"),
        })?;
    let apply: Vec<String> = bios
        .pointer("/@Redfish.Settings/SupportedApplyTimes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let attrs = bios
        .get("Attributes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let entries = registry(c, &s(&bios, "AttributeRegistry")).await;
    let read_only = |a: &str| {
        entries.as_ref().is_some_and(|e| {
            e.iter().any(|x| {
                x.get("AttributeName").and_then(Value::as_str) == Some(a)
                    && x.get("ReadOnly").and_then(Value::as_bool) == Some(true)
            })
        })
    };
    let mut notes: Vec<String> = cannot.iter().map(|c| format!("not written: {c}")).collect();
    let mut body = Map::new();
    for ch in changes {
        let now = attrs.get(&ch.attribute);
        if now.is_none() {
            notes.push(format!(
                "refused: {} ({}) is not an attribute of {bios_path}",
                ch.attribute, ch.setting
            ));
            continue;
        }
        if read_only(&ch.attribute)
            || crate::discover::redfish::bios::READ_ONLY.contains(&ch.attribute.as_str())
        {
            notes.push(format!(
                "refused: {} ({}) is read-only in the BMC's attribute registry: set it in BIOS setup",
                ch.attribute, ch.setting
            ));
            continue;
        }
        if now.and_then(Value::as_str) == Some(ch.to.as_str()) {
            notes.push(format!("{} is already {}", ch.attribute, ch.to));
            continue;
        }
        // Integers stay integers (AMI boards' 0/1 attributes).
        let value = match (now, ch.to.parse::<i64>()) {
            (Some(Value::Number(_)), Ok(n)) => json!(n),
            _ => json!(ch.to),
        };
        notes.push(format!(
            "{} ({}): {} -> {}",
            ch.attribute,
            ch.setting,
            now.map_or_else(
                || "?".into(),
                |v| v.as_str().map_or_else(|| v.to_string(), str::to_string)
            ),
            ch.to
        ));
        body.insert(ch.attribute.clone(), value);
    }
    let mut steps = Vec::new();
    if !body.is_empty() {
        let mut patch = json!({"Attributes": Value::Object(body)});
        if apply.iter().any(|a| a == "OnReset") {
            patch["@Redfish.SettingsApplyTime"] = json!({"ApplyTime": "OnReset"});
        }
        let etag = bios
            .pointer("/@Redfish.Settings/ETag")
            .or_else(|| bios.get("@odata.etag"))
            .and_then(Value::as_str)
            .map(str::to_string);
        steps.push(Step {
            method: "PATCH",
            path: settings.clone(),
            body: Some(patch),
            if_match: etag,
            why: "write the BIOS attributes to the pending settings (applied at the next reset)"
                .into(),
        });
    }
    let nothing_to_do = steps.is_empty().then(|| {
        if notes
            .iter()
            .any(|n| n.starts_with("refused:") || n.starts_with("not written:"))
        {
            "no BIOS setting that needs changing can be written here (the notes say why)"
                .to_string()
        } else {
            "every BIOS setting the node's profile requires is already as required".to_string()
        }
    });
    Ok(Plan {
        action: super::virtual_media::Action::Bios,
        nothing_to_do,
        system: sys_path,
        vendor: if vendor.is_empty() {
            s(&sys, "Manufacturer")
        } else {
            vendor
        },
        power_state: s(&sys, "PowerState"),
        slot: settings,
        steps,
        notes,
    })
}

/// After the PATCH: each written attribute as the BMC now shows it.
pub(crate) async fn read_back(c: &impl Fetch, plan: &Plan) -> Result<Vec<String>, BootError> {
    let Some(step) = plan.steps.first() else {
        return Ok(Vec::new());
    };
    let pending = get(c, &plan.slot).await?;
    let sys = get(c, &plan.system).await?;
    let current = match sys.get("Bios").and_then(link) {
        Some(p) => get(c, &p).await?,
        None => Value::Null,
    };
    let mut out = Vec::new();
    let written = step
        .body
        .as_ref()
        .and_then(|b| b.get("Attributes"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (a, want) in &written {
        let now = current.pointer(&format!("/Attributes/{a}"));
        let next = pending.pointer(&format!("/Attributes/{a}"));
        out.push(if now == Some(want) {
            format!("{a}: applied ({want})")
        } else if next == Some(want) {
            format!(
                "{a}: pending {want} (current {}), applied at the next reset",
                now.map_or_else(|| "?".into(), Value::to_string)
            )
        } else {
            format!(
                "{a}: not taken: the BMC shows pending {} and current {}",
                next.map_or_else(|| "nothing".into(), Value::to_string),
                now.map_or_else(|| "nothing".into(), Value::to_string)
            )
        });
    }
    Ok(out)
}
