//! The input file formats: each one's JSON Schema (from the Rust type that reads it), and
//! its reference page (keys, types, defaults, a worked example) built from that schema.

use std::fmt::Write as _;

use serde_json::Value;

/// One input file format: its schema file, the type's schema, a title and a worked example.
pub(crate) struct Format {
    pub(crate) file: &'static str,
    pub(crate) title: &'static str,
    pub(crate) what: &'static str,
    pub(crate) schema: Value,
    pub(crate) example: &'static str,
}

fn schema<T: schemars::JsonSchema>(id: &str, title: &str) -> Value {
    let mut s = serde_json::to_value(schemars::schema_for!(T)).expect("a schema is JSON");
    if let Some(o) = s.as_object_mut() {
        o.insert("$id".into(), Value::from(id));
        o.insert("title".into(), Value::from(title));
    }
    s
}

/// Every input file rackplan reads, in the order a newcomer meets them.
pub(crate) fn formats() -> Vec<Format> {
    vec![
        Format {
            file: "site",
            title: "site.yaml",
            what: "What the site decides: networks, install source, secrets references, Longhorn settings, images and the catalogue.",
            schema: schema::<crate::site::Site>("site.schema.json", "rackplan site.yaml"),
            example: include_str!("../../inventory/example/site.yaml"),
        },
        Format {
            file: "bmcs",
            title: "bmcs.yaml",
            what: "The BMCs `discover redfish` crawls, with their credentials (by reference) and TLS trust.",
            schema: schema::<crate::redfish::config::BmcsFile>(
                "bmcs.schema.json",
                "rackplan bmcs.yaml",
            ),
            example: include_str!("../../inventory/example/bmcs.yaml"),
        },
        Format {
            file: "ssh",
            title: "ssh.yaml",
            what: "The hosts `discover ssh` probes, the user and the key to log in with.",
            schema: schema::<crate::discover::ssh::site_file::SshFile>(
                "ssh.schema.json",
                "rackplan ssh.yaml",
            ),
            example: "# yaml-language-server: $schema=../../docs/schemas/ssh.schema.json\nuser: root\nhosts:\n  - host: 10.10.0.21\n  - host: 10.10.0.22\n    port: 2222\n",
        },
        Format {
            file: "nodes",
            title: "nodes.yaml",
            what: "The inventory: one record per server as discovery found it, and the `annotations` people add (rack, role, labels), which rediscovery never touches.",
            schema: schema::<crate::inventory::Inventory>(
                "nodes.schema.json",
                "rackplan nodes.yaml",
            ),
            example: include_str!("../../inventory/example/nodes.yaml"),
        },
        Format {
            file: "profile",
            title: "profiles/<role>.yaml",
            what: "A role profile: the minimum hardware of a role and which ports serve which network.",
            schema: schema::<crate::profile::Profile>(
                "profile.schema.json",
                "rackplan role profile",
            ),
            example: include_str!("../../profiles/compute.yaml"),
        },
        Format {
            file: "allocations",
            title: "allocations.yaml",
            what: "The lock `plan` writes: node to role, hostname, address and password salt. Edit only to release a node (`plan --release`).",
            schema: schema::<crate::plan::allocations::Lock>(
                "allocations.schema.json",
                "rackplan allocations.yaml",
            ),
            example: include_str!("../../inventory/example/allocations.yaml"),
        },
        Format {
            file: "scenario",
            title: "simulations/<scenario>.yaml",
            what: "A capacity scenario: the fleet, platform settings, cluster shapes, teams with quotas, failure rates and what to analyse.",
            schema: schema::<crate::simulate::scenario::Scenario>(
                "scenario.schema.json",
                "rackplan scenario",
            ),
            example: include_str!("../../simulations/reference-factory.yaml"),
        },
        Format {
            file: "request",
            title: "admit request",
            what: "One cluster request for `rackplan admit`.",
            schema: schema::<crate::simulate::scenario::RequestFile>(
                "request.schema.json",
                "rackplan admit request",
            ),
            example: "team: paiement\nshape: standard\ncount: 1\nduration: 72h\n",
        },
        Format {
            file: "clusterrequest",
            title: "ClusterRequest (rackplan.io/v1alpha1)",
            what: "A team's request for a cluster, which `rackplan operator` admits, delivers from the catalogue and removes at expiry; its CRD is rendered into `operator/`.",
            schema: schema::<crate::operator::resource::ClusterRequest>(
                "clusterrequest.schema.json",
                "rackplan ClusterRequest",
            ),
            example: "apiVersion: rackplan.io/v1alpha1\nkind: ClusterRequest\nmetadata:\n  name: paiement-review\n  namespace: fleet-default\nspec:\n  team: paiement\n  shape: standard\n  duration: 14d\n  requester: alice@example.com\n  reason: load test of the new checkout\n",
        },
    ]
}

/// The `# yaml-language-server` line that points an editor at a format's schema.
pub(crate) fn modeline(schema_path: &str) -> String {
    format!("# yaml-language-server: $schema={schema_path}\n")
}

fn type_of(s: &Value, defs: &Value) -> String {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        let def = &defs[name];
        if def.get("properties").is_some() {
            return "object".into();
        }
        return type_of(def, defs);
    }
    if let Some(alts) = s
        .get("anyOf")
        .or_else(|| s.get("oneOf"))
        .and_then(Value::as_array)
    {
        let mut v: Vec<String> = alts
            .iter()
            .map(|a| type_of(a, defs))
            .filter(|t| t != "null")
            .collect();
        v.dedup();
        return v.join(" or ");
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e
            .iter()
            .map(|x| format!("`{}`", x.as_str().map_or(x.to_string(), str::to_string)))
            .collect::<Vec<_>>()
            .join(", ");
    }
    if let Some(c) = s.get("const") {
        return format!("`{}`", c.as_str().map_or(c.to_string(), str::to_string));
    }
    match &s["type"] {
        Value::String(t) if t == "array" => format!("list of {}", type_of(&s["items"], defs)),
        Value::String(t) => {
            let mut t = t.clone();
            if let (Some(lo), Some(hi)) = (s.get("minimum"), s.get("maximum")) {
                t = format!("{t} {lo}..{hi}");
            }
            t
        }
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ if s.get("additionalProperties").is_some() => "map".into(),
        _ => "any".into(),
    }
}

/// Resolve a `$ref` (or an optional wrapper around one) to the object schema it names.
fn object_of<'a>(s: &'a Value, defs: &'a Value) -> Option<&'a Value> {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let d = &defs[r.rsplit('/').next().unwrap_or(r)];
        return if d.get("properties").is_some() {
            Some(d)
        } else {
            object_of(d, defs)
        };
    }
    if s.get("properties").is_some() {
        return Some(s);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array)
            && let Some(o) = alts.iter().find_map(|a| object_of(a, defs))
        {
            return Some(o);
        }
    }
    if s["type"] == "array" {
        return object_of(&s["items"], defs);
    }
    None
}

fn one_line(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

fn key_rows(obj: &Value, defs: &Value, prefix: &str, depth: usize, out: &mut String) {
    let required: Vec<&str> = obj["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(props) = obj["properties"].as_object() else {
        return;
    };
    for (k, v) in props {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let list = v["type"] == "array"
            || v.get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|x| x["type"] == "array"));
        let shown = if list {
            format!("{path}[]")
        } else {
            path.clone()
        };
        let desc = v
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| {
                v.get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| defs[r.rsplit('/').next().unwrap_or(r)]["description"].as_str())
            })
            .map(one_line)
            .unwrap_or_default();
        let default = v
            .get("default")
            .map(|d| format!("`{d}`"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| `{shown}` | {} | {} | {default} | {desc} |",
            one_line(&type_of(v, defs)),
            if required.contains(&k.as_str()) {
                "yes"
            } else {
                ""
            },
        );
        if depth < 6
            && let Some(child) = object_of(v, defs)
        {
            let child_prefix = if list { format!("{path}[]") } else { path };
            key_rows(child, defs, &child_prefix, depth + 1, out);
        }
    }
}

/// The reference page of one format.
pub(crate) fn format_page(f: &Format) -> String {
    let mut s = format!("# `{}`\n\n{}\n\n", f.title, f.what);
    let _ = writeln!(
        s,
        "Schema: [`schemas/{0}.schema.json`](../schemas/{0}.schema.json). Editors that speak the YAML language server check and complete a file that starts with\n\n    # yaml-language-server: $schema=<path to>/{0}.schema.json\n\n(`rackplan init` writes that line into the files it makes). Unknown keys are errors.\n",
        f.file
    );
    let _ = writeln!(
        s,
        "| key | type | required | default | meaning |\n|---|---|---|---|---|"
    );
    let defs = f.schema.get("$defs").cloned().unwrap_or(Value::Null);
    key_rows(&f.schema, &defs, "", 0, &mut s);
    let _ = writeln!(s, "\n## Example\n\n```yaml\n{}```", f.example);
    s
}
