//! Tests only (compiled under `cfg(test)`): the boot planner over an in-memory BMC behind
//! the `Fetch` seam, one test per vendor behaviour it plans for.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::error::BootError;
use super::virtual_media::{Action, Plan, plan};
use crate::redfish::fetch::{Fetch, FetchError};

struct Mem(HashMap<String, Value>);

impl Fetch for Mem {
    async fn get(&self, path: &str) -> Result<Value, FetchError> {
        self.0
            .get(path.trim_end_matches('/'))
            .cloned()
            .ok_or(FetchError::Status(404, None))
    }
    fn expand(&self) -> bool {
        false
    }
    fn expand_failed(&self) {}
}

fn run(docs: Vec<(&str, Value)>, action: Action) -> Result<Plan, BootError> {
    let mem = Mem(docs.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(plan(&mem, "http://10.0.0.5/harvester.iso", action))
}

fn bmc(vendor: &str, system: Value, slot: Value) -> Vec<(&'static str, Value)> {
    vec![
        (
            "/redfish/v1",
            json!({"Vendor": vendor, "Systems": {"@odata.id": "/redfish/v1/Systems"}}),
        ),
        (
            "/redfish/v1/Systems",
            json!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}]}),
        ),
        ("/redfish/v1/Systems/1", system),
        (
            "/redfish/v1/Managers/1",
            json!({"VirtualMedia": {"@odata.id": "/redfish/v1/Managers/1/VirtualMedia"}}),
        ),
        (
            "/redfish/v1/Managers/1/VirtualMedia",
            json!({"Members": [{"@odata.id": "/redfish/v1/Managers/1/VirtualMedia/CD1"}]}),
        ),
        ("/redfish/v1/Managers/1/VirtualMedia/CD1", slot),
    ]
}

fn system(power: &str, targets: &[&str]) -> Value {
    json!({
        "@odata.etag": "W/\"42\"",
        "Manufacturer": "Dell Inc.",
        "PowerState": power,
        "ProcessorSummary": {"Count": 2},
        "Links": {"ManagedBy": [{"@odata.id": "/redfish/v1/Managers/1"}]},
        "Boot": {"BootSourceOverrideTarget@Redfish.AllowableValues": targets},
        "Actions": {"#ComputerSystem.Reset": {
            "target": "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset",
            "ResetType@Redfish.AllowableValues": ["On", "ForceOff", "ForceRestart", "GracefulRestart"]
        }}
    })
}

fn slot_with_insert() -> Value {
    json!({
        "MediaTypes": ["CD", "DVD"],
        "Inserted": false,
        "Actions": {
            "#VirtualMedia.InsertMedia": {"target": "/redfish/v1/Managers/1/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia"},
            "#VirtualMedia.EjectMedia": {"target": "/redfish/v1/Managers/1/VirtualMedia/CD1/Actions/VirtualMedia.EjectMedia"}
        }
    })
}

#[test]
fn a_running_host_is_inserted_overridden_with_its_etag_and_force_restarted() {
    let p = run(
        bmc(
            "Dell",
            system("On", &["None", "Pxe", "Cd", "Hdd"]),
            slot_with_insert(),
        ),
        Action::Boot,
    )
    .unwrap();
    let m: Vec<(&str, &str)> = p
        .steps
        .iter()
        .map(|s| (s.method, s.path.as_str()))
        .collect();
    assert_eq!(
        m,
        vec![
            (
                "POST",
                "/redfish/v1/Managers/1/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia"
            ),
            ("PATCH", "/redfish/v1/Systems/1"),
            ("POST", "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset"),
            ("GET", "/redfish/v1/Systems/1"),
        ]
    );
    assert_eq!(p.steps[0].body.as_ref().unwrap()["Inserted"], true);
    assert_eq!(p.steps[1].if_match.as_deref(), Some("W/\"42\""));
    assert_eq!(
        p.steps[1].body.as_ref().unwrap()["Boot"]["BootSourceOverrideMode"],
        "UEFI"
    );
    assert_eq!(
        p.steps[2].body.as_ref().unwrap()["ResetType"],
        "ForceRestart"
    );
    assert_eq!(p.power_state, "On");
}

#[test]
fn a_host_that_is_off_is_powered_on() {
    let p = run(
        bmc("Dell", system("Off", &[]), slot_with_insert()),
        Action::Boot,
    )
    .unwrap();
    assert_eq!(p.steps[2].body.as_ref().unwrap()["ResetType"], "On");
}

#[test]
fn a_slot_without_insert_media_is_mounted_by_patch() {
    let slot = json!({"MediaTypes": ["CD"], "@odata.etag": "\"7\""});
    let p = run(bmc("Lenovo", system("Off", &["Cd"]), slot), Action::Boot).unwrap();
    assert_eq!(p.steps[0].method, "PATCH");
    assert_eq!(p.steps[0].path, "/redfish/v1/Managers/1/VirtualMedia/CD1");
    assert_eq!(p.steps[0].if_match.as_deref(), Some("\"7\""));
}

#[test]
fn supermicro_gets_the_image_only() {
    let mut sys = system("Off", &["Cd"]);
    sys["Manufacturer"] = json!("Supermicro");
    let p = run(bmc("Supermicro", sys, slot_with_insert()), Action::Boot).unwrap();
    assert_eq!(
        p.steps[0].body.as_ref().unwrap(),
        &json!({"Image": "http://10.0.0.5/harvester.iso"})
    );
    assert!(
        p.notes.iter().any(|n| n.contains("Supermicro")),
        "{:?}",
        p.notes
    );
}

#[test]
fn no_cd_override_is_refused_before_anything_is_planned() {
    let e = run(
        bmc("Dell", system("On", &["Pxe", "Hdd"]), slot_with_insert()),
        Action::Boot,
    )
    .unwrap_err();
    assert!(matches!(e, BootError::NoCdOverride { .. }), "{e}");
    assert!(e.to_string().contains("`Cd` boot override"), "{e}");
}

#[test]
fn no_cd_slot_is_an_error() {
    let slot = json!({"MediaTypes": ["USBStick"]});
    let e = run(bmc("Dell", system("On", &["Cd"]), slot), Action::Boot).unwrap_err();
    assert!(matches!(e, BootError::NoCdSlot), "{e}");
    assert!(e.to_string().contains("no CD/DVD"), "{e}");
}

#[test]
fn eject_ejects_and_clears_the_override() {
    let mut slot = slot_with_insert();
    slot["Inserted"] = json!(true);
    let p = run(
        bmc("Dell", system("On", &["None", "Cd"]), slot),
        Action::Eject,
    )
    .unwrap();
    assert_eq!(p.steps.len(), 2);
    assert!(p.steps[0].path.ends_with("VirtualMedia.EjectMedia"));
    assert_eq!(
        p.steps[1].body.as_ref().unwrap()["Boot"]["BootSourceOverrideEnabled"],
        "Disabled"
    );
}
