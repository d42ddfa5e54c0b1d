//! Output that deploys as it is: the kustomization keeps an order Harvester's webhooks
//! accept, the Fleet bundles order themselves by `dependsOn` (Helm sorts kinds inside a
//! bundle), images carry a SHA-512 Longhorn accepts, and the Rancher catalogue reads back
//! through the simulator's importer as exactly the shapes it was rendered from.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::crds::{errors, manifests, schemas};
use crate::support::{Site, flat, repo, shared};

fn rendered() -> Site {
    let site = Site::example();
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    site
}

fn yaml(path: &Path) -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn name(d: &Value) -> &str {
    d["metadata"]["name"].as_str().unwrap()
}

/// The dependency rule Harvester's webhooks impose, checked on a sequence of objects in
/// apply order: a cluster network before the VlanConfigs on it, the VlanConfigs of a
/// cluster network before its NADs and before the storage-network setting on it, a
/// namespace before what lives in it. Returns the broken pairs.
fn order_violations(docs: &[Value]) -> Vec<String> {
    let mut bad = Vec::new();
    let pos = |pred: &dyn Fn(&Value) -> bool| -> Vec<usize> {
        docs.iter()
            .enumerate()
            .filter(|(_, d)| pred(d))
            .map(|(i, _)| i)
            .collect()
    };
    for (i, d) in docs.iter().enumerate() {
        let kind = d["kind"].as_str().unwrap();
        let mut needs: Vec<(String, Vec<usize>)> = Vec::new();
        match kind {
            "VlanConfig" => {
                let cn = d["spec"]["clusterNetwork"].as_str().unwrap().to_string();
                let c = cn.clone();
                needs.push((
                    format!("ClusterNetwork {cn}"),
                    pos(&|x| x["kind"] == "ClusterNetwork" && name(x) == c),
                ));
            }
            "NetworkAttachmentDefinition" => {
                let cn = d["metadata"]["labels"]["network.harvesterhci.io/clusternetwork"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let c = cn.clone();
                needs.push((
                    format!("VlanConfigs of {cn}"),
                    pos(&|x| {
                        x["kind"] == "VlanConfig" && x["spec"]["clusterNetwork"] == c.as_str()
                    }),
                ));
            }
            "Setting" if name(d) == "storage-network" => {
                let v: Value = serde_json::from_str(d["value"].as_str().unwrap()).unwrap();
                let cn = v["clusterNetwork"].as_str().unwrap().to_string();
                let c = cn.clone();
                needs.push((
                    format!("VlanConfigs of {cn}"),
                    pos(&|x| {
                        x["kind"] == "VlanConfig" && x["spec"]["clusterNetwork"] == c.as_str()
                    }),
                ));
            }
            _ => {}
        }
        if let Some(ns) = d["metadata"]["namespace"].as_str() {
            let n = ns.to_string();
            let p = pos(&|x| x["kind"] == "Namespace" && name(x) == n);
            if !p.is_empty() {
                needs.push((format!("Namespace {ns}"), p));
            }
        }
        for (what, at) in needs {
            assert!(
                !at.is_empty(),
                "{kind} {} needs {what}, which is not rendered",
                name(d)
            );
            if at.iter().any(|&j| j > i) {
                bad.push(format!("{kind} {} before {what}", name(d)));
            }
        }
    }
    bad
}

/// kustomize's legacy order (what `kubectl apply -k` does without sortOptions): a fixed
/// list of kinds first, the rest by group/version/kind, then namespace/name.
fn legacy_order(docs: &[Value]) -> Vec<Value> {
    const FIRST: [&str; 22] = [
        "Namespace",
        "ResourceQuota",
        "StorageClass",
        "CustomResourceDefinition",
        "ServiceAccount",
        "PodSecurityPolicy",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "ConfigMap",
        "Secret",
        "Endpoints",
        "Service",
        "LimitRange",
        "PriorityClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Deployment",
        "StatefulSet",
        "CronJob",
        "PodDisruptionBudget",
    ];
    let key = |d: &Value| {
        let kind = d["kind"].as_str().unwrap();
        let rank = FIRST.iter().position(|k| *k == kind).unwrap_or(FIRST.len());
        let gvk = format!("{}/{kind}", d["apiVersion"].as_str().unwrap());
        let nsn = format!(
            "{}/{}",
            d["metadata"]["namespace"].as_str().unwrap_or(""),
            name(d)
        );
        (
            rank,
            if rank == FIRST.len() {
                gvk
            } else {
                String::new()
            },
            nsn,
        )
    };
    let mut v = docs.to_vec();
    v.sort_by_key(key);
    v
}

/// Helm's install order inside one release: known kinds first in its list, every other
/// kind (all custom resources) after them sorted by kind name; ties keep file order.
fn helm_order(docs: &[Value]) -> Vec<Value> {
    const KNOWN: [&str; 12] = [
        "PriorityClass",
        "Namespace",
        "NetworkPolicy",
        "ResourceQuota",
        "LimitRange",
        "PodSecurityPolicy",
        "PodDisruptionBudget",
        "ServiceAccount",
        "Secret",
        "ConfigMap",
        "StorageClass",
        "PersistentVolume",
    ];
    let mut v: Vec<(usize, Value)> = docs.iter().cloned().enumerate().collect();
    v.sort_by(|(i, a), (j, b)| {
        let ka = a["kind"].as_str().unwrap();
        let kb = b["kind"].as_str().unwrap();
        let ra = KNOWN.iter().position(|k| *k == ka).unwrap_or(KNOWN.len());
        let rb = KNOWN.iter().position(|k| *k == kb).unwrap_or(KNOWN.len());
        ra.cmp(&rb)
            .then_with(|| {
                if ra == KNOWN.len() {
                    ka.cmp(kb)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then(i.cmp(j))
    });
    v.into_iter().map(|(_, d)| d).collect()
}

#[test]
fn the_kustomization_keeps_an_order_the_webhooks_accept() {
    let site = rendered();
    let dir = site.out().join("manifests");
    let k = yaml(&dir.join("kustomization.yaml"));
    assert_eq!(k["kind"], "Kustomization");
    assert_eq!(k["sortOptions"], json!({"order": "fifo"}));
    // The top level lists the bundle folders in apply order; each folder is a kustomization
    // of its own (so one bundle applies alone) listing every manifest file in it, once;
    // fleet.yaml and kustomization.yaml are not resources.
    assert_eq!(
        k["resources"],
        json!(["networks", "day0", "tenants", "images"])
    );
    for b in k["resources"].as_array().unwrap() {
        let b = b.as_str().unwrap();
        let kb = yaml(&dir.join(b).join("kustomization.yaml"));
        assert_eq!(kb["kind"], "Kustomization", "{b}");
        assert_eq!(kb["sortOptions"], json!({"order": "fifo"}), "{b}");
        let mut listed: Vec<String> = kb["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect();
        let mut on_disk: Vec<String> = std::fs::read_dir(dir.join(b))
            .unwrap()
            .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f != "fleet.yaml" && f != "kustomization.yaml")
            .collect();
        on_disk.sort();
        listed.sort();
        assert_eq!(listed, on_disk, "{b}");
    }
    let docs: Vec<Value> = manifests(&dir).into_iter().map(|(_, d)| d).collect();
    assert!(
        docs.iter()
            .any(|d| d["kind"] == "NetworkAttachmentDefinition")
    );
    assert_eq!(order_violations(&docs), Vec::<String>::new());
    // Without sortOptions, kustomize would reorder into something the webhooks refuse:
    // the check above is one that can fail.
    let legacy = order_violations(&legacy_order(&docs));
    assert!(
        legacy
            .iter()
            .any(|v| v.starts_with("NetworkAttachmentDefinition")),
        "{legacy:?}"
    );
}

#[test]
fn fleet_bundles_validate_and_deploy_in_dependency_order() {
    let site = rendered();
    let dir = site.out().join("manifests");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(shared().join("reference/rancher/fleet/fleet.yaml.schema.json"))
            .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    // bundle folder -> (fleet.yaml, its documents in file order)
    let mut bundles: BTreeMap<String, (Value, Vec<Value>)> = BTreeMap::new();
    let all = manifests(&dir);
    for (file, doc) in &all {
        let b = file.split('/').next().unwrap().to_string();
        let entry = bundles
            .entry(b.clone())
            .or_insert_with(|| (yaml(&dir.join(&b).join("fleet.yaml")), Vec::new()));
        entry.1.push(doc.clone());
    }
    assert_eq!(
        bundles.keys().cloned().collect::<Vec<_>>(),
        ["day0", "images", "networks", "tenants"]
    );
    for (b, (fy, docs)) in &bundles {
        let errs: Vec<String> = validator.iter_errors(fy).map(|e| e.to_string()).collect();
        assert!(errs.is_empty(), "{b}/fleet.yaml: {errs:?}");
        assert!(
            fy.get("namespace").is_none(),
            "{b}: `namespace` forbids cluster-scoped objects"
        );
        assert_eq!(fy["helm"]["takeOwnership"], true, "{b}");
        assert_eq!(fy["labels"]["rackplan.io/bundle"], b.as_str());
        // Objects that must survive removing the bundle.
        for d in docs {
            let keep = d["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep";
            let must = d["kind"] == "Namespace" || d["kind"] == "Setting" || name(d) == "mgmt";
            assert!(!must || keep, "{b}: {} {} is not kept", d["kind"], name(d));
        }
    }
    // Resolve dependsOn selectors against the bundles' labels; order the bundles so each
    // comes after what it depends on (the graph must be acyclic and every selector match).
    let deps = |fy: &Value| -> Vec<String> {
        fy["dependsOn"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                let want = d["selector"]["matchLabels"].as_object().unwrap();
                let hits: Vec<String> = bundles
                    .iter()
                    .filter(|(_, (other, _))| want.iter().all(|(k, v)| other["labels"][k] == *v))
                    .map(|(n, _)| n.clone())
                    .collect();
                assert_eq!(hits.len(), 1, "selector {want:?} matches {hits:?}");
                hits[0].clone()
            })
            .collect()
    };
    let mut done: Vec<String> = Vec::new();
    while done.len() < bundles.len() {
        let next = bundles
            .iter()
            .find(|(n, (fy, _))| !done.contains(n) && deps(fy).iter().all(|d| done.contains(d)))
            .map(|(n, _)| n.clone())
            .expect("dependsOn has a cycle");
        done.push(next);
    }
    assert_eq!(deps(&bundles["day0"].0), ["networks"]);
    assert_eq!(deps(&bundles["tenants"].0), ["day0"]);
    // Apply order as Fleet + Helm would: bundles by dependency, kinds sorted inside each.
    let applied: Vec<Value> = done
        .iter()
        .flat_map(|b| helm_order(&bundles[b].1))
        .collect();
    assert_eq!(order_violations(&applied), Vec::<String>::new());
    // And one bundle holding everything would not deploy: Helm puts the NADs and the
    // setting before the VlanConfigs.
    let flat_docs: Vec<Value> = all.iter().map(|(_, d)| d.clone()).collect();
    assert!(!order_violations(&helm_order(&flat_docs)).is_empty());
}

fn render_fails(site: &Site) -> String {
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(!site.out().exists(), "nothing is rendered");
    flat(&r.stderr)
}

#[test]
fn an_image_needs_a_sha512_checksum() {
    let site = Site::example();
    let text = site.read("site.yaml");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("checksum: sha512:"))
        .unwrap()
        .to_string();
    let sha256 =
        "    checksum: sha256:5d5b09f6dcb2d53a5fffc60c4ac0d55fabdf556069d6631545f42aa6e3500f2e";
    site.replace("site.yaml", &line, sha256);
    let e = render_fails(&site);
    assert!(e.contains("images[0].checksum"), "{e}");
    assert!(
        e.contains("sha256 checksum; Longhorn accepts SHA-512 only"),
        "{e}"
    );
    insta::assert_snapshot!(e);

    let bare64 = format!("    checksum: sha512:{}", "ab".repeat(32));
    site.replace("site.yaml", sha256, &bare64);
    let e = render_fails(&site);
    assert!(e.contains("64 hex digits, a SHA-256"), "{e}");

    let upper = format!("    checksum: sha512:{}", "AB".repeat(64));
    site.replace("site.yaml", &bare64, &upper);
    let e = render_fails(&site);
    assert!(e.contains("128 lowercase hex digits"), "{e}");

    let no_algo = format!("    checksum: {}", "ab".repeat(64));
    site.replace("site.yaml", &upper, &no_algo);
    let e = render_fails(&site);
    assert!(e.contains("no algorithm"), "{e}");

    site.replace("site.yaml", &format!("{no_algo}\n"), "");
    let e = render_fails(&site);
    assert!(
        e.contains("images[0]") && e.contains("has a URL but no checksum"),
        "{e}"
    );
}

#[test]
fn the_image_renders_as_harvester_and_longhorn_take_it() {
    let site = rendered();
    let docs = manifests(&site.out().join("manifests"));
    let (file, img) = docs
        .iter()
        .find(|(_, d)| d["kind"] == "VirtualMachineImage")
        .unwrap();
    assert_eq!(file, "images/70-images.yaml");
    let key = (
        "harvesterhci.io/v1beta1".to_string(),
        "VirtualMachineImage".to_string(),
    );
    assert_eq!(errors(&schemas()[&key], img), Vec::<String>::new());
    assert_eq!(img["metadata"]["namespace"], "harvester-public");
    assert_eq!(img["spec"]["sourceType"], "download");
    let sum = img["spec"]["checksum"].as_str().unwrap();
    assert!(
        sum.len() == 128 && sum.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
        "Longhorn's ValidateChecksumSHA512 takes the bare digits: {sum}"
    );
    let site_text = site.read("site.yaml");
    assert!(site_text.contains(&format!("sha512:{sum}")));
}

/// HarvesterConfig has no static CRD (Rancher generates it from the driver's flags): the
/// fields of driver v1.0.6, top level, every integer flag a decimal string.
fn check_harvester_config(cfg: &Value) {
    const FIELDS: [&str; 29] = [
        "vmNamespace",
        "cpuCount",
        "cpuModel",
        "memorySize",
        "reservedMemorySize",
        "diskSize",
        "diskBus",
        "imageName",
        "diskInfo",
        "networkName",
        "networkModel",
        "networkType",
        "networkInfo",
        "sshUser",
        "sshPort",
        "sshPassword",
        "keyPairName",
        "sshPrivateKeyPath",
        "userData",
        "networkData",
        "vmAffinity",
        "enableEfi",
        "enableSecureBoot",
        "enableTpm",
        "cpuPinning",
        "isolateEmulatorThread",
        "vgpuInfo",
        "cloudConfig",
        "clusterName",
    ];
    for (k, v) in cfg.as_object().unwrap() {
        if ["apiVersion", "kind", "metadata"].contains(&k.as_str()) {
            continue;
        }
        assert!(FIELDS.contains(&k.as_str()), "HarvesterConfig field {k}");
        assert!(v.is_string() || v.is_boolean(), "{k}: {v}");
    }
    for k in ["cpuCount", "memorySize"] {
        let s = cfg[k].as_str().unwrap();
        assert!(s.parse::<u64>().is_ok_and(|n| n > 0), "{k} = {s:?}");
    }
    assert!(cfg.get("spec").is_none(), "fields are top level");
}

#[test]
fn the_catalogue_reads_back_as_the_shapes_it_was_rendered_from() {
    let site = rendered();
    let scenario =
        rackplan::simulate::scenario::load(&repo().join("simulations/reference-factory.yaml"))
            .unwrap();
    let docs = manifests(&site.out().join("manifests"));
    let images: Vec<String> = docs
        .iter()
        .filter(|(_, d)| d["kind"] == "VirtualMachineImage")
        .map(|(_, d)| {
            format!(
                "{}/{}",
                d["metadata"]["namespace"].as_str().unwrap(),
                name(d)
            )
        })
        .collect();
    let nads: Vec<String> = docs
        .iter()
        .filter(|(_, d)| d["kind"] == "NetworkAttachmentDefinition")
        .map(|(_, d)| {
            format!(
                "{}/{}",
                d["metadata"]["namespace"].as_str().unwrap(),
                name(d)
            )
        })
        .collect();
    let schemas = schemas();
    let cluster_schema = &schemas[&(
        "provisioning.cattle.io/v1".to_string(),
        "Cluster".to_string(),
    )];
    let mut seen = Vec::new();
    for (shape, pools) in &scenario.shapes {
        let path = site.out().join(format!("catalogue/{shape}.yaml"));
        let text = std::fs::read_to_string(&path).unwrap();
        // The round trip: what the simulator reads is what it checked.
        let back = rackplan::simulate::scenario::pools(&text).unwrap();
        assert_eq!(&back, pools, "shape {shape}");
        let objs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        let cluster = &objs[0];
        assert_eq!(
            errors(cluster_schema, cluster),
            Vec::<String>::new(),
            "{shape}"
        );
        let rke = &cluster["spec"]["rkeConfig"];
        let g = &rke["machineGlobalConfig"];
        assert_eq!(g["etcd-snapshot-schedule-cron"], "0 */6 * * *");
        assert_eq!(g["etcd-snapshot-retention"], 20);
        assert_eq!(
            rke["etcd"]["snapshotRetention"], 20,
            "Rancher's own field agrees"
        );
        assert!(
            g["kube-apiserver-arg"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a.as_str().unwrap().starts_with("audit-log-path="))
        );
        assert_eq!(g["disable"], json!(["rke2-ingress-nginx", "rke2-traefik"]));
        let u = &rke["upgradeStrategy"];
        assert_eq!(
            (
                u["controlPlaneConcurrency"].as_str(),
                u["workerConcurrency"].as_str()
            ),
            (Some("1"), Some("25%"))
        );
        assert_eq!(u["workerDrainOptions"]["enabled"], true);
        assert!(u["workerDrainOptions"]["timeout"].as_i64().unwrap() > 0);
        let mp = rke["machinePools"].as_array().unwrap();
        assert!(
            mp.iter()
                .any(|p| p["etcdRole"] == true && p["controlPlaneRole"] == true)
        );
        assert!(mp.iter().any(|p| p["workerRole"] == true));
        for cfg in &objs[1..] {
            assert_eq!(cfg["kind"], "HarvesterConfig");
            assert_eq!(
                cfg["metadata"]["namespace"],
                cluster["metadata"]["namespace"]
            );
            check_harvester_config(cfg);
            let disks: Value = serde_json::from_str(cfg["diskInfo"].as_str().unwrap()).unwrap();
            assert!(images.contains(&disks["disks"][0]["imageName"].as_str().unwrap().to_string()));
            let nics: Value = serde_json::from_str(cfg["networkInfo"].as_str().unwrap()).unwrap();
            assert!(
                nads.contains(
                    &nics["interfaces"][0]["networkName"]
                        .as_str()
                        .unwrap()
                        .to_string()
                )
            );
            let pool = mp
                .iter()
                .find(|p| p["machineConfigRef"]["name"] == cfg["metadata"]["name"])
                .unwrap();
            if let Some(a) = cfg["vmAffinity"].as_str() {
                // Base64 of the Affinity JSON, as Rancher's UI writes it.
                let raw = base64::engine::general_purpose::STANDARD.decode(a).unwrap();
                let aff: Value = serde_json::from_slice(&raw).unwrap();
                let term =
                    &aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
                assert_eq!(term["topologyKey"], "kubernetes.io/hostname");
                assert_eq!(
                    term["labelSelector"]["matchLabels"]["harvesterhci.io/machineSetName"],
                    format!(
                        "{}-{}-{}",
                        cfg["vmNamespace"].as_str().unwrap(),
                        name(cluster),
                        pool["name"].as_str().unwrap()
                    )
                );
                assert_eq!(pool["controlPlaneRole"], true);
            }
        }
        seen.push(shape.clone());
    }
    assert_eq!(seen, ["large", "standard"]);
}

#[test]
fn other_shapes_and_overrides_round_trip_too() {
    let site = Site::example();
    // A one-pool shape with a data disk, and a shape with no anti-affinity pool.
    let scenario = std::fs::read_to_string(repo().join("simulations/reference-factory.yaml"))
        .unwrap()
        .replace(
            "shapes:\n",
            "shapes:\n  single:\n    pools:\n      - {name: all, count: 1, vcpu: 16, memory_gib: 64, disks_gib: [80, 500, 1000]}\n  flat:\n    pools:\n      - {name: a, count: 2, vcpu: 2, memory_gib: 4, disks_gib: [40]}\n      - {name: b, count: 5, vcpu: 4, memory_gib: 16, disks_gib: [40]}\n",
        );
    std::fs::write(site.tmp.path().join("simulations/mine.yaml"), scenario).unwrap();
    site.replace(
        "site.yaml",
        "  scenario: ../../simulations/reference-factory.yaml\n",
        "  scenario: ../../simulations/mine.yaml\n  shapes: [single, flat]\n  machine_global_config:\n    disable: null\n    cni: cilium\n  upgrade_strategy:\n    workerConcurrency: \"10%\"\n",
    );
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let loaded =
        rackplan::simulate::scenario::load(&site.tmp.path().join("simulations/mine.yaml")).unwrap();
    for shape in ["single", "flat"] {
        let text =
            std::fs::read_to_string(site.out().join(format!("catalogue/{shape}.yaml"))).unwrap();
        assert_eq!(
            rackplan::simulate::scenario::pools(&text).unwrap(),
            loaded.shapes[shape]
        );
        let c: Value = serde_saphyr::from_multiple::<Value>(&text)
            .unwrap()
            .remove(0);
        let g = &c["spec"]["rkeConfig"]["machineGlobalConfig"];
        assert!(g.get("disable").is_none(), "null removes a default");
        assert_eq!(g["cni"], "cilium");
        assert_eq!(g["etcd-snapshot-retention"], 20, "other defaults stay");
        assert_eq!(
            c["spec"]["rkeConfig"]["upgradeStrategy"]["workerConcurrency"],
            "10%"
        );
        let pools = c["spec"]["rkeConfig"]["machinePools"].as_array().unwrap();
        assert!(
            pools.iter().any(|p| p["etcdRole"] == true),
            "{shape}: an etcd pool"
        );
    }
    assert!(
        !site.out().join("catalogue/standard.yaml").exists(),
        "only the shapes asked for"
    );

    // A fractional vCPU cannot be a machine-driver flag: refused, naming the shape.
    let text = std::fs::read_to_string(site.tmp.path().join("simulations/mine.yaml"))
        .unwrap()
        .replace("vcpu: 16, memory_gib: 64", "vcpu: 1.5, memory_gib: 64");
    std::fs::write(site.tmp.path().join("simulations/mine.yaml"), text).unwrap();
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 2);
    let e = flat(&r.stderr);
    assert!(
        e.contains("shape `single`") && e.contains("vcpu 1.5 is not a whole number"),
        "{e}"
    );
}

#[test]
fn the_catalogue_names_what_it_needs() {
    // (site.yaml edit, words the error must hold)
    let cases: [(&str, &str, &[&str]); 4] = [
        (
            "  network: paiement\n",
            "  network: payments\n",
            &[
                "catalogue.network",
                "one of: paiement, logistique, analytics",
            ],
        ),
        (
            "  image: rke2-golden-v1-33\n",
            "  image: rke2\n",
            &["catalogue.image", "no image `rke2`"],
        ),
        (
            "reference-factory.yaml\n",
            "nope.yaml\n",
            &["catalogue.scenario", "relative to site.yaml"],
        ),
        (
            "  kubernetes_version: v1.33.5+rke2r1\n",
            "  kubernetes_version: v1.33.5+rke2r1\n  shapes: [standard, tiny]\n",
            &["catalogue.shapes[1]", "no shape `tiny`"],
        ),
    ];
    for (from, to, words) in cases {
        let site = Site::example();
        site.replace("site.yaml", from, to);
        let e = render_fails(&site);
        for w in words {
            assert!(e.contains(w), "{w}: {e}");
        }
    }
}

/// A Rancher export with a raw-JSON affinity on one pool and the UI's base64 on another,
/// wrapped in a `kind: List` as kubectl prints it, in JSON.
#[test]
fn the_importer_reads_base64_and_raw_affinity_lists_and_json() {
    let aff = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"x": "y"}}, "topologyKey": "kubernetes.io/hostname"}]}});
    let b64 = base64::engine::general_purpose::STANDARD.encode(aff.to_string());
    let cfg = |n: &str, a: &str| {
        let mut c = json!({
            "apiVersion": "rke-machine-config.cattle.io/v1", "kind": "HarvesterConfig",
            "metadata": {"name": n, "namespace": "fleet-default"},
            "cpuCount": "4", "memorySize": "8", "diskSize": "40",
        });
        // No affinity is no key; an empty string is refused below.
        if !a.is_empty() {
            c["vmAffinity"] = json!(a);
        }
        c
    };
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster",
         "metadata": {"name": "t", "namespace": "fleet-default"},
         "spec": {"rkeConfig": {"machinePools": [
            {"name": "cp", "quantity": 3, "machineConfigRef": {"kind": "HarvesterConfig", "name": "t-cp"}},
            {"name": "raw", "quantity": 2, "machineConfigRef": {"kind": "HarvesterConfig", "name": "t-raw"}},
            {"name": "none", "quantity": 1, "machineConfigRef": {"kind": "HarvesterConfig", "name": "t-none"}}]}}},
        cfg("t-cp", &b64), cfg("t-raw", &aff.to_string()), cfg("t-none", ""),
    ]});
    let pools =
        rackplan::simulate::scenario::pools(&serde_json::to_string_pretty(&list).unwrap()).unwrap();
    let anti: Vec<(String, bool)> = pools
        .iter()
        .map(|p| (p.name.clone(), p.anti_affinity))
        .collect();
    assert_eq!(
        anti,
        [
            ("cp".into(), true),
            ("raw".into(), true),
            ("none".into(), false)
        ]
    );
    // Unreadable affinity is an error naming the config, not a silent "no affinity".
    let mut bad = list.clone();
    bad["items"][1]["vmAffinity"] = json!("not base64 !!");
    let e = rackplan::simulate::scenario::pools(&bad.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("t-cp") && e.contains("vmAffinity"), "{e}");
    // An empty, numeric or mistyped affinity would drop the anti-affinity unseen: refused.
    for v in [
        json!(""),
        json!(7),
        json!("{\"podAntiAffinity\": 5}"),
        json!({"a": 1}),
    ] {
        let mut bad = list.clone();
        bad["items"][1]["vmAffinity"] = v.clone();
        let e = rackplan::simulate::scenario::pools(&bad.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("pool cp") && e.contains("vmAffinity"),
            "{v}: {e}"
        );
    }
    // Two clusters in one file: a shape imports one, and says which it found.
    let mut two = list.clone();
    let mut c2 = list["items"][0].clone();
    c2["metadata"]["name"] = json!("u");
    two["items"].as_array_mut().unwrap().push(c2);
    let e = rackplan::simulate::scenario::pools(&two.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 Clusters (t, u)"), "{e}");
}
