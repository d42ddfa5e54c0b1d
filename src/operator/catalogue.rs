//! The catalogue the operator delivers from: the folder `rackplan render` writes
//! (`catalogue/<shape>.yaml`, a Rancher `Cluster` and its `HarvesterConfig`s per shape).
//! The pools a request is judged on are read from the same files the cluster is made
//! from, by the importer `admit` uses for Rancher exports, so what is admitted is what is
//! delivered.
//!
//! A request's cluster is the shape's objects renamed after the request: the Cluster
//! takes the request's name, each machine config `<request>-<pool>`, and the
//! anti-affinity each control-plane config carries (`harvesterhci.io/machineSetName:
//! <vmNamespace>-<cluster>-<pool>`, the label Harvester's node driver puts on each VM)
//! follows the new cluster name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::simulate::scenario::{self, Pool};

/// The label Harvester's machine driver puts on every VM of a machine set.
const MACHINE_SET_LABEL: &str = "harvesterhci.io/machineSetName";
/// Most shape files read from one folder.
const MAX_SHAPES: usize = 200;

/// Why the catalogue cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("{}: {message}", dir.display())]
    Folder { dir: PathBuf, message: String },
    #[error("{}: {message}", file.display())]
    File { file: PathBuf, message: String },
}

/// One shape on offer.
#[derive(Debug, Clone)]
pub struct Offer {
    pub shape: String,
    /// The Cluster first, then its machine configs, as rendered.
    docs: Vec<Value>,
    pub pools: Vec<Pool>,
    pub kubernetes_version: String,
    /// The namespace the objects were rendered for.
    pub namespace: String,
}

/// Every shape of a rendered catalogue folder, by name.
#[derive(Debug, Clone)]
pub struct Catalogue {
    pub dir: PathBuf,
    pub offers: BTreeMap<String, Offer>,
}

impl Catalogue {
    /// Read `dir/*.yaml`; a file that is not one shape's template is an error naming it.
    pub fn read(dir: &Path) -> Result<Catalogue, CatalogueError> {
        let folder = |message: String| CatalogueError::Folder {
            dir: dir.to_path_buf(),
            message,
        };
        let entries = std::fs::read_dir(dir).map_err(|e| {
            folder(format!(
                "cannot read the catalogue folder: {e}; give the `catalogue` folder `rackplan render` writes"
            ))
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(folder(
                "no .yaml file: run `rackplan render` for a site with a `catalogue:`".into(),
            ));
        }
        if files.len() > MAX_SHAPES {
            return Err(folder(format!(
                "{} files; a catalogue holds at most {MAX_SHAPES} shapes",
                files.len()
            )));
        }
        let mut offers = BTreeMap::new();
        let mut namespace: Option<String> = None;
        for f in files {
            let offer = read_offer(&f)?;
            if let Some(ns) = &namespace
                && *ns != offer.namespace
            {
                return Err(CatalogueError::File {
                    file: f,
                    message: format!(
                        "namespace `{}` differs from the other shapes' `{ns}`: render the catalogue again",
                        offer.namespace
                    ),
                });
            }
            namespace = Some(offer.namespace.clone());
            if offers.contains_key(&offer.shape) {
                return Err(CatalogueError::File {
                    file: f,
                    message: format!("a second file for shape `{}`", offer.shape),
                });
            }
            offers.insert(offer.shape.clone(), offer);
        }
        Ok(Catalogue {
            dir: dir.to_path_buf(),
            offers,
        })
    }

    /// The namespace every shape was rendered for.
    pub fn namespace(&self) -> &str {
        self.offers
            .values()
            .next()
            .map_or("fleet-default", |o| o.namespace.as_str())
    }

    /// The shapes on offer, for messages.
    pub fn names(&self) -> String {
        self.offers.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

impl Offer {
    /// The shape's Rancher `Cluster` as rendered.
    pub fn cluster(&self) -> &Value {
        &self.docs[0]
    }
}

fn read_offer(f: &Path) -> Result<Offer, CatalogueError> {
    let fail = |message: String| CatalogueError::File {
        file: f.to_path_buf(),
        message,
    };
    let text = crate::files::yaml::read_input(f).map_err(|e| fail(e.to_string()))?;
    let docs = scenario::objects(&text).map_err(|e| fail(e.to_string()))?;
    let pools = scenario::pools(&text).map_err(|e| fail(e.to_string()))?;
    let cluster = docs
        .iter()
        .find(|d| d["kind"] == "Cluster")
        .ok_or_else(|| fail("no Cluster".into()))?;
    let shape = cluster["metadata"]["labels"][crate::vocab::SHAPE_LABEL]
        .as_str()
        .or_else(|| cluster["metadata"]["name"].as_str())
        .ok_or_else(|| fail("the Cluster has no name".into()))?
        .to_string();
    let namespace = cluster["metadata"]["namespace"]
        .as_str()
        .unwrap_or("fleet-default")
        .to_string();
    let kubernetes_version = cluster["spec"]["kubernetesVersion"]
        .as_str()
        .ok_or_else(|| fail("the Cluster has no spec.kubernetesVersion".into()))?
        .to_string();
    let mut ordered = vec![cluster.clone()];
    ordered.extend(
        docs.iter()
            .filter(|d| d["kind"] == "HarvesterConfig")
            .cloned(),
    );
    Ok(Offer {
        shape,
        docs: ordered,
        pools,
        kubernetes_version,
        namespace,
    })
}

/// What a delivered cluster is labelled and annotated with.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

impl Offer {
    /// The shape's objects for a cluster named `name` in `namespace`, marked, with the
    /// Kubernetes version given (else the shape's).
    pub fn objects_for(
        &self,
        name: &str,
        namespace: &str,
        marks: &Marks,
        version: Option<&str>,
    ) -> Vec<Value> {
        let old = self.docs[0]["metadata"]["name"]
            .as_str()
            .unwrap_or(&self.shape)
            .to_string();
        let mut out = Vec::with_capacity(self.docs.len());
        let mut renamed = BTreeMap::new();
        for d in &self.docs[1..] {
            let mut d = d.clone();
            let cfg_old = d["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let cfg_new = match cfg_old.strip_prefix(&format!("{old}-")) {
                Some(pool) => format!("{name}-{pool}"),
                None => format!("{name}-{cfg_old}"),
            };
            if let Some(raw) = d["vmAffinity"].as_str()
                && let Some(fixed) = rename_machine_sets(raw, &old, name)
            {
                d["vmAffinity"] = json!(fixed);
            }
            set_meta(&mut d, &cfg_new, namespace, marks);
            renamed.insert(cfg_old, cfg_new);
            out.push(d);
        }
        let mut c = self.docs[0].clone();
        set_meta(&mut c, name, namespace, marks);
        if let Some(v) = version {
            c["spec"]["kubernetesVersion"] = json!(v);
        }
        if let Some(pools) = c["spec"]["rkeConfig"]["machinePools"].as_array_mut() {
            for p in pools {
                let r = &mut p["machineConfigRef"]["name"];
                if let Some(new) = r.as_str().and_then(|n| renamed.get(n)) {
                    *r = json!(new);
                }
            }
        }
        out.insert(0, c);
        out
    }

    /// The names of the machine configs `objects_for(name)` makes.
    pub fn config_names(&self, name: &str) -> Vec<String> {
        self.objects_for(name, "", &Marks::default(), None)[1..]
            .iter()
            .filter_map(|d| d["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    }
}

fn set_meta(d: &mut Value, name: &str, namespace: &str, marks: &Marks) {
    let m = &mut d["metadata"];
    m["name"] = json!(name);
    m["namespace"] = json!(namespace);
    for (k, v) in &marks.labels {
        m["labels"][k] = json!(v);
    }
    for (k, v) in &marks.annotations {
        m["annotations"][k] = json!(v);
    }
}

/// A base64 `vmAffinity` whose machine-set selector names `<ns>-<old>-<pool>`, renamed to
/// `<ns>-<new>-<pool>`; `None` when it names none or does not decode.
fn rename_machine_sets(raw: &str, old: &str, new: &str) -> Option<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let bytes = b64.decode(raw.trim()).ok()?;
    let mut v: Value = serde_json::from_slice(&bytes).ok()?;
    let mut changed = false;
    walk(&mut v, &mut |k, x| {
        if k == MACHINE_SET_LABEL
            && let Some(s) = x.as_str()
            && let Some(i) = s.find(&format!("-{old}-"))
        {
            let (ns, rest) = s.split_at(i);
            let pool = &rest[old.len() + 2..];
            *x = json!(format!("{ns}-{new}-{pool}"));
            changed = true;
        }
    });
    changed.then(|| b64.encode(serde_json::to_string(&v).unwrap_or_default()))
}

fn walk(v: &mut Value, f: &mut dyn FnMut(&str, &mut Value)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                f(k, x);
                walk(x, f);
            }
        }
        Value::Array(a) => {
            for x in a {
                walk(x, f);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Catalogue {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("iso-config/example/catalogue");
        Catalogue::read(&dir).unwrap()
    }

    #[test]
    fn the_rendered_catalogue_reads_to_its_shapes_and_pools() {
        let c = example();
        assert_eq!(c.names(), "large, standard");
        assert_eq!(c.namespace(), "fleet-default");
        let s = &c.offers["standard"];
        assert_eq!(s.pools.len(), 2);
        assert_eq!(s.pools[0].count, 3);
        assert!((s.pools[1].vcpu - 8.0).abs() < 1e-9);
        assert_eq!(s.kubernetes_version, "v1.33.5+rke2r1");
    }

    #[test]
    fn a_request_cluster_is_the_shape_renamed_with_its_affinity() {
        let c = example();
        let mut marks = Marks::default();
        marks.labels.insert(TEAM.into(), "paiement".into());
        let objs = c.offers["standard"].objects_for(
            "team-a-ci",
            "fleet-default",
            &marks,
            Some("v1.32.9+rke2r1"),
        );
        assert_eq!(objs.len(), 3);
        assert_eq!(objs[0]["metadata"]["name"], "team-a-ci");
        assert_eq!(objs[0]["metadata"]["labels"][TEAM], "paiement");
        assert_eq!(objs[0]["spec"]["kubernetesVersion"], "v1.32.9+rke2r1");
        let refs: Vec<&str> = objs[0]["spec"]["rkeConfig"]["machinePools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["machineConfigRef"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(refs, ["team-a-ci-cp", "team-a-ci-workers"]);
        assert_eq!(objs[1]["metadata"]["name"], "team-a-ci-cp");
        let aff = scenario::decode_affinity(objs[1]["vmAffinity"].as_str().unwrap()).unwrap();
        assert!(
            aff.to_string().contains("\"default-team-a-ci-cp\""),
            "{aff}"
        );
        // The renamed objects import to the same pools.
        let text: String = objs
            .iter()
            .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
            .collect();
        let pools = scenario::pools(&text).unwrap();
        assert_eq!(pools.len(), 2);
        assert!(pools[0].anti_affinity);
        assert_eq!(
            c.offers["standard"].config_names("x"),
            ["x-cp", "x-workers"]
        );
    }

    const TEAM: &str = crate::operator::resource::TEAM_LABEL;

    #[test]
    fn a_folder_without_templates_is_refused_with_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let e = Catalogue::read(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("run `rackplan render`"), "{e}");
        std::fs::write(tmp.path().join("x.yaml"), "kind: ConfigMap\n").unwrap();
        let e = Catalogue::read(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("x.yaml"), "{e}");
    }
}
