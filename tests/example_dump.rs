//! The shipped example dump (`simulations/live-fleet.yaml`) is one a real cluster could
//! produce: every VirtualMachine and VirtualMachineInstance validates against KubeVirt's own
//! schema (its swagger definitions, objects closed to unknown fields as
//! `kubectl --validate=strict` does), and every Longhorn and Harvester object against its
//! CRD. Tests and benchmarks built on it then see what real `kubectl get` output carries.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::crds::{errors, schemas};
use crate::support::{repo, shared};

/// KubeVirt's swagger definitions as one JSON Schema per kind, with every object that lists
/// properties closed to others.
fn kubevirt_schemas() -> BTreeMap<String, Value> {
    let path =
        shared().join("reference/kubevirt/openapi/kubevirt.io-v1-virtualmachine-vmi.swagger.json");
    let swagger: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    fn close(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.contains_key("properties") && !m.contains_key("additionalProperties") {
                    m.insert("additionalProperties".into(), Value::Bool(false));
                }
                for (_, x) in m.iter_mut() {
                    close(x);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(close),
            _ => {}
        }
    }
    let mut defs = swagger["definitions"].clone();
    close(&mut defs);
    ["VirtualMachine", "VirtualMachineInstance"]
        .into_iter()
        .map(|kind| {
            (
                kind.to_string(),
                json!({"$ref": format!("#/definitions/v1.{kind}"), "definitions": defs}),
            )
        })
        .collect()
}

fn example_objects() -> Vec<Value> {
    let text = std::fs::read_to_string(repo().join("simulations/live-fleet.yaml")).unwrap();
    let list: Value = serde_saphyr::from_str(&text).unwrap();
    list["items"].as_array().unwrap().clone()
}

#[test]
fn the_example_dump_validates_against_kubevirt_and_longhorn_schemas() {
    let kubevirt = kubevirt_schemas();
    let crds = schemas();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    for obj in example_objects() {
        let api = obj["apiVersion"].as_str().unwrap().to_string();
        let kind = obj["kind"].as_str().unwrap().to_string();
        let name = obj["metadata"]["name"].as_str().unwrap_or("?").to_string();
        let schema = if api == "kubevirt.io/v1" {
            &kubevirt[&kind]
        } else if api == "v1" {
            // Core objects have no CRD: a Node carries what the kubelet reports.
            assert_eq!(kind, "Node", "{name}");
            assert!(obj["status"]["allocatable"]["cpu"].is_string(), "{name}");
            *checked.entry(kind).or_default() += 1;
            continue;
        } else {
            crds.get(&(api.clone(), kind.clone()))
                .unwrap_or_else(|| panic!("no CRD for {api} {kind}"))
        };
        let errs = errors(schema, &obj);
        assert!(errs.is_empty(), "{kind} {name}: {errs:#?}");
        *checked.entry(kind).or_default() += 1;
    }
    assert_eq!(checked["VirtualMachine"], 60, "{checked:?}");
    assert_eq!(checked["VirtualMachineInstance"], 60, "{checked:?}");
    for kind in ["Node", "Volume", "Replica", "Setting"] {
        assert!(
            checked.get(kind).copied().unwrap_or(0) > 0,
            "{kind}: {checked:?}"
        );
    }
}

/// The schema check is one that can fail: without `spec.domain.devices` (as the example
/// once was) KubeVirt's schema refuses the object, and so does a misspelt field.
#[test]
fn kubevirt_schema_refuses_a_vmi_without_devices_or_with_a_misspelt_field() {
    let kubevirt = kubevirt_schemas();
    let vmi = example_objects()
        .into_iter()
        .find(|o| o["kind"] == "VirtualMachineInstance")
        .unwrap();
    let schema = &kubevirt["VirtualMachineInstance"];
    assert_eq!(errors(schema, &vmi), Vec::<String>::new());
    let mut bare = vmi.clone();
    bare["spec"]["domain"]
        .as_object_mut()
        .unwrap()
        .remove("devices");
    assert!(!errors(schema, &bare).is_empty());
    let mut typo = vmi;
    typo["spec"]["evictionStrategyy"] = json!("LiveMigrate");
    assert!(!errors(schema, &typo).is_empty());
}
