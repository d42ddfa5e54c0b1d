//! Every rendered manifest validates against the real CRD schemas (openAPIV3Schema) in the
//! shared reference folder, plus Harvester's webhook rules that the schemas do not hold.
//!
//! The API server prunes fields a structural schema does not list, so a misspelt field would
//! vanish silently; like `kubectl --validate=strict`, we treat unknown fields as errors by
//! closing every object schema that lists properties.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Site, shared};

/// Translate the OpenAPI 3.0 dialect of CRDs into JSON Schema.
fn to_json_schema(s: &Value) -> Value {
    let mut out = match s {
        Value::Object(m) => {
            let mut o = serde_json::Map::new();
            for (k, v) in m {
                let v = match k.as_str() {
                    "properties" | "patternProperties" => Value::Object(
                        v.as_object()
                            .unwrap()
                            .iter()
                            .map(|(k, v)| (k.clone(), to_json_schema(v)))
                            .collect(),
                    ),
                    "items" | "additionalProperties" if v.is_object() => to_json_schema(v),
                    "allOf" | "anyOf" | "oneOf" => {
                        Value::Array(v.as_array().unwrap().iter().map(to_json_schema).collect())
                    }
                    _ => v.clone(),
                };
                o.insert(k.clone(), v);
            }
            o
        }
        other => return other.clone(),
    };
    if out.remove("x-kubernetes-int-or-string") == Some(Value::Bool(true)) {
        out.remove("type");
        out.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    if out.remove("nullable") == Some(Value::Bool(true))
        && let Some(t) = out.get("type").cloned()
    {
        out.insert("type".into(), json!([t, "null"]));
    }
    let preserve = out.remove("x-kubernetes-preserve-unknown-fields") == Some(Value::Bool(true));
    if out.contains_key("properties") && !out.contains_key("additionalProperties") && !preserve {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(out)
}

/// (apiVersion, kind) -> JSON Schema, for every served version of every reference CRD.
pub fn schemas() -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for dir in [
        "reference/harvester/crds",
        "reference/longhorn/crds",
        "reference/rancher/crds",
    ] {
        for e in std::fs::read_dir(shared().join(dir)).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
            for crd in docs.into_iter().filter(|d| !d.is_null()) {
                let group = crd["spec"]["group"].as_str().unwrap().to_string();
                let kind = crd["spec"]["names"]["kind"].as_str().unwrap().to_string();
                for v in crd["spec"]["versions"].as_array().unwrap() {
                    if v["served"] == json!(false) {
                        continue;
                    }
                    let api = format!("{group}/{}", v["name"].as_str().unwrap());
                    let mut schema = to_json_schema(&v["schema"]["openAPIV3Schema"]);
                    // apiVersion/kind/metadata are always allowed at the top.
                    if let Some(p) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                        p.entry("apiVersion").or_insert(json!({"type": "string"}));
                        p.entry("kind").or_insert(json!({"type": "string"}));
                        p.entry("metadata").or_insert(json!({"type": "object"}));
                    }
                    out.insert((api, kind.clone()), schema);
                }
            }
        }
    }
    out
}

/// Every document under `manifests/`, in the order kustomize builds them with `fifo`:
/// depth-first through the kustomizations, each resource a file or a folder with its own
/// kustomization. (file under `manifests/`, document).
pub fn manifests(dir: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    kustomize(dir, "", &mut out);
    out
}

fn kustomize(root: &Path, sub: &str, out: &mut Vec<(String, Value)>) {
    let here = root.join(sub);
    let k: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(here.join("kustomization.yaml")).unwrap())
            .unwrap();
    for r in k["resources"].as_array().unwrap() {
        let r = r.as_str().unwrap();
        let rel = if sub.is_empty() {
            r.to_string()
        } else {
            format!("{sub}/{r}")
        };
        if root.join(&rel).is_dir() {
            kustomize(root, &rel, out);
            continue;
        }
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        for d in docs {
            out.push((rel.clone(), d));
        }
    }
}

/// Core objects have no CRD; the rendered Namespaces are checked by hand.
fn check_core(file: &str, doc: &Value) -> bool {
    if doc["apiVersion"] != "v1" {
        return false;
    }
    assert_eq!(doc["kind"], "Namespace", "{file}: unexpected core object");
    let m = doc["metadata"].as_object().unwrap();
    let name = m["name"].as_str().unwrap();
    assert!(
        name.len() <= 63
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{file}: namespace {name}"
    );
    assert!(
        doc.as_object()
            .unwrap()
            .keys()
            .all(|k| ["apiVersion", "kind", "metadata"].contains(&k.as_str())),
        "{file}: {doc}"
    );
    true
}

pub fn errors(schema: &Value, doc: &Value) -> Vec<String> {
    let v = jsonschema::validator_for(schema).unwrap();
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn rendered() -> (Site, Vec<(String, Value)>) {
    let site = Site::example();
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let docs = manifests(&site.out().join("manifests"));
    (site, docs)
}

#[test]
fn every_manifest_validates_against_its_crd() {
    let schemas = schemas();
    assert!(
        schemas.len() >= 9,
        "reference CRDs not found under {}",
        shared().display()
    );
    let (_site, docs) = rendered();
    assert!(docs.len() >= 14, "{}", docs.len());
    for kind in ["Namespace", "VirtualMachineImage", "VlanConfig", "Setting"] {
        assert!(
            docs.iter().any(|(_, d)| d["kind"] == kind),
            "no {kind} rendered"
        );
    }
    for (file, doc) in &docs {
        if check_core(file, doc) {
            continue;
        }
        let key = (
            doc["apiVersion"].as_str().unwrap().to_string(),
            doc["kind"].as_str().unwrap().to_string(),
        );
        let schema = schemas
            .get(&key)
            .unwrap_or_else(|| panic!("{file}: no CRD for {key:?}"));
        let errs = errors(schema, doc);
        assert!(errs.is_empty(), "{file} {key:?}: {errs:#?}");
    }
}

#[test]
fn the_validator_catches_a_misspelt_field() {
    let schemas = schemas();
    let (_site, docs) = rendered();
    let (_, vc) = docs
        .iter()
        .find(|(_, d)| d["kind"] == "VlanConfig")
        .unwrap();
    let mut bad = vc.clone();
    let uplink = bad["spec"]["uplink"].as_object_mut().unwrap();
    let la = uplink.remove("linkAttributes").unwrap();
    uplink.insert("linkAtributes".into(), la);
    let schema = &schemas[&(
        "network.harvesterhci.io/v1beta1".to_string(),
        "VlanConfig".to_string(),
    )];
    assert!(!errors(schema, &bad).is_empty());
    let mut bad = vc.clone();
    bad["spec"]["uplink"]["bondOptions"]["mode"] = json!("lacp");
    assert!(
        !errors(schema, &bad).is_empty(),
        "bond mode enum is enforced"
    );
}

#[test]
fn harvester_rules_the_schemas_do_not_hold() {
    let (_site, docs) = rendered();
    let mut cn_mtu: BTreeMap<String, i64> = BTreeMap::new();
    let mut cluster_networks = Vec::new();
    for (_, d) in &docs {
        match d["kind"].as_str().unwrap() {
            "ClusterNetwork" => {
                let name = d["metadata"]["name"].as_str().unwrap();
                assert!(name.len() <= 12, "cluster network {name} longer than 12");
                cluster_networks.push(name.to_string());
            }
            "VlanConfig" => {
                let cn = d["spec"]["clusterNetwork"].as_str().unwrap();
                assert_eq!(
                    d["metadata"]["labels"]["network.harvesterhci.io/clusternetwork"],
                    cn
                );
                assert_ne!(cn, "mgmt");
                let mtu = d["spec"]["uplink"]["linkAttributes"]["mtu"]
                    .as_i64()
                    .unwrap();
                assert!(mtu == 0 || (576..=9000).contains(&mtu));
                let prev = cn_mtu.insert(cn.to_string(), mtu);
                assert!(prev.is_none_or(|p| p == mtu), "one MTU per cluster network");
                assert_eq!(d["spec"]["uplink"]["nics"].as_array().unwrap().len(), 2);
            }
            _ => {}
        }
    }
    for (_, d) in docs
        .iter()
        .filter(|(_, d)| d["kind"] == "NetworkAttachmentDefinition")
    {
        let cfg: Value = serde_json::from_str(d["spec"]["config"].as_str().unwrap()).unwrap();
        let cn = d["metadata"]["labels"]["network.harvesterhci.io/clusternetwork"]
            .as_str()
            .unwrap();
        assert_eq!(cfg["bridge"], format!("{cn}-br"));
        assert_eq!(cfg["type"], "bridge");
        assert_eq!(
            cfg["mtu"].as_i64(),
            cn_mtu.get(cn).copied(),
            "NAD MTU equals its cluster network's"
        );
        let vlan = cfg["vlan"].as_i64().unwrap();
        assert!((1..=4094).contains(&vlan));
        assert_eq!(
            d["metadata"]["labels"]["network.harvesterhci.io/vlan-id"],
            vlan.to_string()
        );
    }
    let paiement = docs
        .iter()
        .find(|(_, d)| {
            d["kind"] == "NetworkAttachmentDefinition" && d["metadata"]["name"] == "paiement"
        })
        .unwrap();
    let cfg: Value = serde_json::from_str(paiement.1["spec"]["config"].as_str().unwrap()).unwrap();
    assert_eq!(
        (cfg["vlan"].as_i64(), cfg["bridge"].as_str()),
        (Some(412), Some("vm-workload-br"))
    );

    let sn = docs
        .iter()
        .find(|(_, d)| d["metadata"]["name"] == "storage-network")
        .unwrap();
    let raw = sn.1["value"].as_str().unwrap();
    let v: Value = serde_json::from_str(raw).unwrap();
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        raw,
        "minified canonical JSON"
    );
    let range: ipnet::Ipv4Net = v["range"].as_str().unwrap().parse().unwrap();
    assert_eq!(range.network(), range.addr());
    assert!(range.prefix_len() >= 16);
    assert!(cluster_networks.contains(&v["clusterNetwork"].as_str().unwrap().to_string()));

    let lh = docs
        .iter()
        .find(|(_, d)| d["metadata"]["name"] == "concurrent-replica-rebuild-per-node-limit")
        .unwrap();
    assert_eq!(lh.1["value"], "2");
    assert_eq!(lh.1["metadata"]["namespace"], "longhorn-system");
    let mgmt = docs
        .iter()
        .find(|(_, d)| d["metadata"]["name"] == "mgmt")
        .unwrap();
    assert_eq!(
        mgmt.1["metadata"]["annotations"]["network.harvesterhci.io/uplink-mtu"],
        "9000"
    );
}
