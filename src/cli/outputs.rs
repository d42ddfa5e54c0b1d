//! The JSON Schema of every command's `--output json` document, from the Rust type that
//! prints it, with the `schema_version` each document opens with. `rackplan docs` writes
//! them as `docs/schemas/output/<command>.schema.json`.

use serde_json::{Value, json};

use crate::report::SCHEMA_VERSION;

/// One output's schema: the type's, with `$id`, a title and `schema_version` required.
fn schema<T: schemars::JsonSchema>(name: &str, title: &str) -> (String, Value) {
    // What serializing writes (fields skipped when empty are not required), not what
    // deserializing would need.
    let generator = schemars::generate::SchemaSettings::default()
        .for_serialize()
        .into_generator();
    let mut s =
        serde_json::to_value(generator.into_root_schema_for::<T>()).expect("a schema is JSON");
    let version = json!({
        "description": "The version of this document's shape: raised when a field is removed or changes meaning",
        "type": "integer",
        "const": SCHEMA_VERSION,
    });
    if let Some(o) = s.as_object_mut() {
        o.insert(
            "$id".into(),
            Value::from(format!("output/{name}.schema.json")),
        );
        o.insert("title".into(), Value::from(title));
        match o.get_mut("properties").and_then(Value::as_object_mut) {
            Some(p) => {
                p.insert("schema_version".into(), version);
            }
            None => {
                o.insert("properties".into(), json!({"schema_version": version}));
            }
        }
        let required = o.entry("required").or_insert_with(|| json!([]));
        if let Some(r) = required.as_array_mut() {
            r.insert(0, Value::from("schema_version"));
        }
    }
    (name.to_string(), s)
}

/// Every command's JSON document, by the name its schema file takes.
pub(crate) fn output_schemas() -> Vec<(String, Value)> {
    use crate::report::{boot, check, discover, docs, error};
    use crate::simulate::questions;
    vec![
        schema::<check::CheckJson<'static>>("check", "rackplan check --output json"),
        schema::<crate::plan::cabling::CablingReport>(
            "check-cabling",
            "rackplan check --cabling --output json",
        ),
        schema::<crate::render::CatalogueReview>(
            "check-catalogue",
            "rackplan check --catalogue --output json",
        ),
        schema::<crate::plan::allocate::PlanOutcome>("plan", "rackplan plan --output json"),
        schema::<crate::render::RenderOutcome>("render", "rackplan render --output json"),
        schema::<discover::RedfishJson<'static>>(
            "discover-redfish",
            "rackplan discover redfish --output json",
        ),
        schema::<discover::SshJson<'static>>("discover-ssh", "rackplan discover ssh --output json"),
        schema::<crate::simulate::Report>("simulate", "rackplan simulate --output json"),
        schema::<questions::DrainReport>(
            "simulate-drain",
            "rackplan simulate --from-cluster PATH --drain NODES --output json",
        ),
        schema::<questions::UpgradeReport>(
            "simulate-upgrade",
            "rackplan simulate --upgrade --output json",
        ),
        schema::<questions::Decision>("admit", "rackplan admit --output json"),
        schema::<crate::bootstrap::status::Status>("status", "rackplan status --output json"),
        schema::<crate::operator::Transition>(
            "operator",
            "rackplan operator --output json (one JSON line per transition)",
        ),
        schema::<crate::scaffold::Outcome>("init", "rackplan init --output json"),
        schema::<docs::DocsOutcome>("docs", "rackplan docs --output json"),
        schema::<boot::BootJson<'static>>("boot", "rackplan boot --output json"),
        schema::<error::ErrorJson<'static>>(
            "error",
            "Any command's error with --output json (exit 2)",
        ),
    ]
}
