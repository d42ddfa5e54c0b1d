//! Calibration of the control-plane model (`simulate::control_plane`) on a real
//! kube-apiserver and etcd on 127.0.0.1 (`../shared/tools/kube-apiserver.sh`; kubeconfig
//! from `RACKPLAN_TEST_KUBECONFIG`, else the path the tests default to; etcd's client
//! address from `RACKPLAN_BENCH_ETCD`, default `127.0.0.1:12379`, its metrics on the
//! client port + 2 as the script starts it).
//!
//! In a namespace of its own, it creates what each VM of a Harvester fleet puts in etcd:
//! a VirtualMachine and its VirtualMachineInstance (KubeVirt's CRDs are generated in code,
//! so keep-all stand-ins as `tests/support/kube.rs` loads them), the virt-launcher Pod,
//! the PersistentVolumeClaim and PersistentVolume, the Longhorn Volume, Engine and three
//! Replicas (Longhorn's shipped CRDs) and the VolumeAttachment, each with its status
//! written through the status subresource as controllers write it. Volume and Replica are
//! the real Longhorn v1.10.1 captures of the reference data, PV and VolumeAttachment the
//! support bundle's, renamed; the rest are synthetic objects with the fields Harvester,
//! KubeVirt and Longhorn set.
//!
//! 1. At increasing counts of VMs, it reads etcd's stored bytes per object (the values
//!    and keys under the namespace, read back from etcd), the database size in use and on
//!    disk (`etcd_mvcc_db_total_size_in_*`), and the latency of a LIST and a GET.
//! 2. At increasing offered write rates (status patches of the Volumes, which Longhorn's
//!    engine monitor writes in steady state), the achieved rate, the client's p50/p99,
//!    the API server's p99 for those PATCHes (`apiserver_request_duration_seconds`) and
//!    etcd's WAL fsyncs per write and their p99 (`etcd_disk_wal_fsync_duration_seconds`).
//! 3. It fits the per-object sizes and the latency knee (the highest rate served in full
//!    with the p99 under 1 s, Kubernetes' SLO for mutating calls), writes them to
//!    `target/control-plane-calibration.json`, and deletes everything it created.
//!
//! The database in use is read before the API server compacts (every 5 minutes, to the
//! revision of its previous compaction), so each object's two revisions are both in it:
//! the figure fitted is the database bytes per key and value byte written, each revision
//! counted (the first one's size from the object's JSON as created, times the kind's
//! stored bytes per JSON byte).
//!
//! Bounded: at most `RACKPLAN_BENCH_CP_VMS` VMs (default 300), rate steps of 8 s each up
//! to 1,600 writes/s, stopped once a step falls short; a deadline of 10 minutes. The
//! server is shared: other clients' writes show as keys the bench did not make, and the
//! 1-minute load average is recorded per step.
//! Run: `cargo bench --bench control_plane`.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures_util::StreamExt as _;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use rackplan::live::metrics::{Histogram, parse};
use serde_json::{Value, json};

const LABEL: &str = "rackplan.io/bench";
const STEP: Duration = Duration::from_secs(8);
const RATES: [f64; 12] = [
    25.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 400.0, 600.0, 800.0, 1200.0, 1600.0,
];
const DEADLINE: Duration = Duration::from_secs(600);
const IN_FLIGHT: usize = 256;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn reference() -> PathBuf {
    repo().join("../shared/reference")
}

fn kubeconfig() -> PathBuf {
    std::env::var_os("RACKPLAN_TEST_KUBECONFIG")
        .map_or_else(|| PathBuf::from("/tmp/kapi/kubeconfig"), PathBuf::from)
}

fn yaml_docs(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

/// The support bundle writes empty strings as `"null"`: back to `""`.
fn unnull(v: &mut Value) {
    match v {
        Value::String(s) if s == "null" => s.clear(),
        Value::Array(a) => a.iter_mut().for_each(unnull),
        Value::Object(m) => m.values_mut().for_each(unnull),
        _ => {}
    }
}

/// An object of the reference data ready to be created again: server-set metadata and
/// finalizers gone.
fn template(mut v: Value) -> Value {
    unnull(&mut v);
    if let Some(m) = v["metadata"].as_object_mut() {
        for k in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
            "managedFields",
            "finalizers",
            "ownerReferences",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            m.remove(k);
        }
    }
    v
}

/// One kind the bench writes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
enum K {
    Vm,
    Vmi,
    Pod,
    Pvc,
    Pv,
    Volume,
    Engine,
    Replica,
    Attachment,
}

impl K {
    const ALL: [K; 9] = [
        K::Vm,
        K::Vmi,
        K::Pod,
        K::Pvc,
        K::Pv,
        K::Volume,
        K::Engine,
        K::Replica,
        K::Attachment,
    ];

    /// (group, version, kind, plural, namespaced, etcd prefix before the name)
    fn api(self) -> (&'static str, &'static str, &'static str, &'static str, bool) {
        match self {
            K::Vm => (
                "kubevirt.io",
                "v1",
                "VirtualMachine",
                "virtualmachines",
                true,
            ),
            K::Vmi => (
                "kubevirt.io",
                "v1",
                "VirtualMachineInstance",
                "virtualmachineinstances",
                true,
            ),
            K::Pod => ("", "v1", "Pod", "pods", true),
            K::Pvc => (
                "",
                "v1",
                "PersistentVolumeClaim",
                "persistentvolumeclaims",
                true,
            ),
            K::Pv => ("", "v1", "PersistentVolume", "persistentvolumes", false),
            K::Volume => ("longhorn.io", "v1beta2", "Volume", "volumes", true),
            K::Engine => ("longhorn.io", "v1beta2", "Engine", "engines", true),
            K::Replica => ("longhorn.io", "v1beta2", "Replica", "replicas", true),
            K::Attachment => (
                "storage.k8s.io",
                "v1",
                "VolumeAttachment",
                "volumeattachments",
                false,
            ),
        }
    }

    /// The model's name for the kind (`live::census::kind_name`).
    fn name(self) -> String {
        let (g, _, k, _, _) = self.api();
        rackplan::live::census::kind_name(g, k)
    }

    /// etcd's key prefix of the kind's objects in `ns` (cluster-scoped: every object, the
    /// bench's named `<ns>-...`).
    fn etcd_prefix(self, ns: &str) -> String {
        let (g, _, _, plural, namespaced) = self.api();
        let base = if g.is_empty() || g == "storage.k8s.io" {
            format!("/registry/{plural}/")
        } else {
            format!("/registry/{g}/{plural}/")
        };
        if namespaced {
            format!("{base}{ns}/")
        } else {
            format!("{base}{ns}-")
        }
    }
}

struct Bench {
    client: kube::Client,
    /// Compact JSON bytes of each kind's object as created (without its status).
    create_json: BTreeMap<K, f64>,
    ns: String,
    etcd: String,
    vm: Value,
    vmi: Value,
    pod: Value,
    pvc: Value,
    pv: Value,
    volume: Value,
    engine: Value,
    replica: Value,
    attachment: Value,
}

impl Bench {
    fn api(&self, k: K) -> Api<DynamicObject> {
        let (g, v, kind, plural, namespaced) = k.api();
        let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(g, v, kind), plural);
        if namespaced {
            Api::namespaced_with(self.client.clone(), &self.ns, &ar)
        } else {
            Api::all_with(self.client.clone(), &ar)
        }
    }

    /// Every object of VM `i`, with its status (written after the object).
    fn objects(&self, i: usize) -> Vec<(K, Value)> {
        let ns = &self.ns;
        let vm = format!("vm-{i:05}");
        let vol = format!("{ns}-pvc-{i:05}");
        let named = |t: &Value, name: &str| {
            let mut o = t.clone();
            o["metadata"]["name"] = json!(name);
            o["metadata"]["labels"][LABEL] = json!(ns);
            o
        };
        let mut out = Vec::new();
        let mut m = named(&self.vm, &vm);
        m["metadata"]["namespace"] = json!(ns);
        out.push((K::Vm, m));
        let mut m = named(&self.vmi, &vm);
        m["metadata"]["namespace"] = json!(ns);
        out.push((K::Vmi, m));
        let mut m = named(&self.pod, &format!("virt-launcher-{vm}-x7k2p"));
        m["metadata"]["namespace"] = json!(ns);
        out.push((K::Pod, m));
        let mut m = named(&self.pvc, &format!("{vm}-disk-0-l4xqz"));
        m["metadata"]["namespace"] = json!(ns);
        m["spec"]["volumeName"] = json!(vol);
        out.push((K::Pvc, m));
        let mut m = named(&self.pv, &vol);
        m["spec"]["csi"]["volumeHandle"] = json!(vol);
        out.push((K::Pv, m));
        let mut m = named(&self.volume, &vol);
        m["metadata"]["namespace"] = json!(ns);
        out.push((K::Volume, m));
        let mut m = named(&self.engine, &format!("{vol}-e-0"));
        m["metadata"]["namespace"] = json!(ns);
        m["spec"]["volumeName"] = json!(vol);
        out.push((K::Engine, m));
        for r in 0..3 {
            let mut m = named(&self.replica, &format!("{vol}-r-{r:08x}"));
            m["metadata"]["namespace"] = json!(ns);
            m["spec"]["volumeName"] = json!(vol);
            out.push((K::Replica, m));
        }
        let mut m = named(&self.attachment, &format!("{ns}-csi-{i:05}"));
        m["spec"]["source"]["persistentVolumeName"] = json!(vol);
        out.push((K::Attachment, m));
        out
    }

    async fn create(&self, k: K, obj: Value) -> Result<(), String> {
        let api = self.api(k);
        let status = obj.get("status").cloned();
        let name = obj["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let d: DynamicObject = serde_json::from_value(obj).map_err(|e| e.to_string())?;
        match api.create(&PostParams::default(), &d).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(format!("{k:?} {name}: {e}")),
        }
        if let Some(st) = status {
            api.patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": st})),
            )
            .await
            .map_err(|e| format!("{k:?} {name} status: {e}"))?;
        }
        Ok(())
    }

    /// GET a page of the API server (`/metrics`, `/version`).
    async fn raw(&self, path: &str) -> String {
        let mut req = kube::core::Request::new("/version")
            .get("version", &Default::default())
            .unwrap();
        *req.uri_mut() = path.parse().unwrap();
        self.client.request_text(req).await.unwrap_or_default()
    }
}

/// A plain HTTP/1.0 exchange with etcd on 127.0.0.1 (its metrics, its JSON gateway).
fn etcd_http(addr: &str, method: &str, path: &str, body: &str) -> String {
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let _ = write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

fn metrics_addr(etcd: &str) -> String {
    let (host, port) = etcd.rsplit_once(':').unwrap();
    format!("{host}:{}", port.parse::<u16>().unwrap() + 2)
}

/// etcd's gauges of interest: (db total, db in use, keys).
fn etcd_gauges(etcd: &str) -> (f64, f64, f64, String) {
    let text = etcd_http(&metrics_addr(etcd), "GET", "/metrics", "");
    let s = parse(&text, |n| {
        n.starts_with("etcd_mvcc_db_total_size")
            || n == "etcd_debugging_mvcc_keys_total"
            || n == "etcd_server_version"
    });
    let get = |n: &str| s.iter().find(|x| x.name == n).map_or(f64::NAN, |x| x.value);
    let version = s
        .iter()
        .find(|x| x.name == "etcd_server_version")
        .map(|x| x.label("server_version").to_string())
        .unwrap_or_default();
    (
        get("etcd_mvcc_db_total_size_in_bytes"),
        get("etcd_mvcc_db_total_size_in_use_in_bytes"),
        get("etcd_debugging_mvcc_keys_total"),
        version,
    )
}

fn fsync_histogram(etcd: &str) -> Histogram {
    let text = etcd_http(&metrics_addr(etcd), "GET", "/metrics", "");
    let s = parse(&text, |n| {
        n == "etcd_disk_wal_fsync_duration_seconds_bucket"
    });
    Histogram::of(&s, "etcd_disk_wal_fsync_duration_seconds", |_| true).unwrap_or_default()
}

/// (objects, mean key bytes, mean value bytes) stored under a prefix.
fn stored(etcd: &str, prefix: &str) -> (usize, f64, f64) {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut end = prefix.as_bytes().to_vec();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    let body = json!({"key": b64.encode(prefix), "range_end": b64.encode(&end)}).to_string();
    let reply: Value =
        serde_json::from_str(&etcd_http(etcd, "POST", "/v3/kv/range", &body)).unwrap_or_default();
    let decoded = |v: &Value| {
        v.as_str()
            .and_then(|s| b64.decode(s).ok())
            .map_or(0, |b| b.len())
    };
    let kvs = reply["kvs"].as_array().cloned().unwrap_or_default();
    let n = kvs.len();
    let keys: usize = kvs.iter().map(|kv| decoded(&kv["key"])).sum();
    let values: usize = kvs.iter().map(|kv| decoded(&kv["value"])).sum();
    let d = n.max(1) as f64;
    (n, keys as f64 / d, values as f64 / d)
}

fn pctl(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

/// Delete every object the bench made (its finalizers first: no controller runs here to
/// remove `pvc-protection` and `pv-protection`).
async fn delete_objects(b: &Bench) {
    let lp = ListParams::default().labels(&format!("{LABEL}={}", b.ns));
    for k in K::ALL {
        let api = b.api(k);
        if let Ok(l) = api.list(&lp).await {
            for o in l.items {
                let name = o.metadata.name.clone().unwrap_or_default();
                if o.metadata
                    .finalizers
                    .as_ref()
                    .is_some_and(|f| !f.is_empty())
                {
                    let _ = api
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
                        )
                        .await;
                }
            }
        }
        let _ = api.delete_collection(&DeleteParams::default(), &lp).await;
    }
}

fn patch_histogram(text: &str) -> Histogram {
    let s = parse(text, |n| n == "apiserver_request_duration_seconds_bucket");
    Histogram::of(&s, "apiserver_request_duration_seconds", |x| {
        x.label("verb") == "PATCH" && x.label("resource") == "volumes"
    })
    .unwrap_or_default()
}

fn templates(ns: &str) -> Value {
    let r = reference();
    let volume = template(
        yaml_docs(&r.join("harvester/live-objects/longhorn-v1.10.1-volume-attached-healthy.yaml"))
            .remove(0),
    );
    let replica = template(
        yaml_docs(&r.join("harvester/live-objects/longhorn-v1.10.1-replicas-running.list.yaml"))
            .remove(0)["items"][0]
            .clone(),
    );
    let bundle = r.join("harvester/support-bundle-sample/yamls/cluster");
    let pv = template(
        yaml_docs(&bundle.join("v1/persistentvolumes.yaml")).remove(0)["items"][0].clone(),
    );
    let attachment = template(
        yaml_docs(&bundle.join("storage.k8s.io/v1/volumeattachments.yaml")).remove(0)["items"][0]
            .clone(),
    );
    json!({
        "volume": volume, "replica": replica, "pv": pv, "attachment": attachment,
        "vm": synthetic::vm(ns), "vmi": synthetic::vmi(ns), "pod": synthetic::pod(ns),
        "pvc": synthetic::pvc(ns), "engine": synthetic::engine(),
    })
}

#[path = "control_plane/synthetic.rs"]
mod synthetic;

async fn ensure_crds(client: &kube::Client) -> Vec<String> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let r = reference();
    let mut crds = Vec::new();
    for f in ["volumes", "replicas", "engines"] {
        crds.extend(yaml_docs(
            &r.join(format!("longhorn/crds/{f}.longhorn.io.yaml")),
        ));
    }
    for (kind, plural) in [
        ("VirtualMachine", "virtualmachines"),
        ("VirtualMachineInstance", "virtualmachineinstances"),
    ] {
        crds.push(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.kubevirt.io")},
            "spec": {
                "group": "kubevirt.io",
                "scope": "Namespaced",
                "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                }],
            },
        }));
    }
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut created = Vec::new();
    for c in crds {
        let name = c["metadata"]["name"].as_str().unwrap().to_string();
        let typed: CustomResourceDefinition = serde_json::from_value(c).unwrap();
        match api.create(&PostParams::default(), &typed).await {
            Ok(_) => created.push(name.clone()),
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("CRD {name}: {e}"),
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ok = api
                .get(&name)
                .await
                .ok()
                .and_then(|c| c.status)
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if ok {
                break;
            }
            assert!(Instant::now() < deadline, "CRD {name} not established");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    created
}

/// One count level: what etcd stores per object and how reads scale.
async fn size_level(b: &Bench, vms: usize, base: (f64, f64, f64)) -> Value {
    let (total, in_use, keys, _) = etcd_gauges(&b.etcd);
    let mut kinds = serde_json::Map::new();
    let mut stored_sum = 0.0;
    let mut written_sum = 0.0;
    let mut objects = 0usize;
    for k in K::ALL {
        let (n, key, value) = stored(&b.etcd, &k.etcd_prefix(&b.ns));
        // The object as the API server returns it, as compact JSON without managedFields:
        // what a dump's census measures.
        let api = b.api(k);
        let list = api
            .list(
                &ListParams::default()
                    .labels(&format!("{LABEL}={}", b.ns))
                    .limit(20),
            )
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        let json_mean = if list.is_empty() {
            f64::NAN
        } else {
            list.iter()
                .map(|o| {
                    let mut v = serde_json::to_value(o).unwrap();
                    if let Some(m) = v["metadata"].as_object_mut() {
                        m.remove("managedFields");
                    }
                    rackplan::live::census::json_len(&v) as f64
                })
                .sum::<f64>()
                / list.len() as f64
        };
        stored_sum += n as f64 * (key + value);
        // Each object was written twice: created without its status, then its status
        // written; the first revision as JSON times the kind's stored bytes per JSON byte.
        let create_json = b.create_json.get(&k).copied().unwrap_or(0.0);
        written_sum += n as f64 * (2.0 * key + value + create_json * value / json_mean);
        objects += n;
        kinds.insert(
            k.name(),
            json!({"objects": n, "key_bytes": key, "value_bytes": value, "json_bytes": json_mean,
                   "value_per_json": value / json_mean}),
        );
    }
    // Reads at this count: a LIST of every Volume of the namespace, and a GET of one.
    let vols = b.api(K::Volume);
    let t = Instant::now();
    let listed = vols
        .list(&ListParams::default())
        .await
        .map_or(0, |l| l.items.len());
    let list_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let _ = vols.get(&format!("{}-pvc-00000", b.ns)).await;
    let get_s = t.elapsed().as_secs_f64();
    let d_in_use = in_use - base.1;
    json!({
        "vms": vms,
        "objects": objects,
        "db_total_bytes": total,
        "db_in_use_bytes": in_use,
        "db_in_use_growth_bytes": d_in_use,
        "db_total_growth_bytes": total - base.0,
        "keys_added": keys - base.2,
        "stored_key_and_value_bytes": stored_sum,
        "db_in_use_per_stored_byte": d_in_use / stored_sum.max(1.0),
        "written_key_and_value_bytes": written_sum,
        "db_in_use_per_written_byte": d_in_use / written_sum.max(1.0),
        "db_in_use_per_object": d_in_use / objects.max(1) as f64,
        "list_volumes": listed,
        "list_volumes_s": list_s,
        "get_volume_s": get_s,
        "kinds": kinds,
    })
}

/// One rate step: status patches of the Volumes at `rate` per second for `STEP`.
async fn rate_step(b: &Arc<Bench>, rate: f64, vms: usize, seq: &mut u64) -> Value {
    let before = patch_histogram(&b.raw("/metrics").await);
    let fs_before = fsync_histogram(&b.etcd);
    let sem = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    let lat = Arc::new(std::sync::Mutex::new(Vec::<f64>::new()));
    let errors = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    let mut owed = 0.0;
    let mut sent = 0usize;
    let mut handles = Vec::new();
    while start.elapsed() < STEP {
        tick.tick().await;
        owed += rate * 0.01;
        while owed >= 1.0 {
            owed -= 1.0;
            let Ok(permit) = sem.clone().try_acquire_owned() else {
                // The server is behind by IN_FLIGHT requests: this one is not sent.
                continue;
            };
            *seq += 1;
            let n = *seq;
            let name = format!("{}-pvc-{:05}", b.ns, (n as usize) % vms);
            let (b2, lat2, err2) = (b.clone(), lat.clone(), errors.clone());
            sent += 1;
            handles.push(tokio::spawn(async move {
                let t = Instant::now();
                let p = json!({"status": {"actualSize": 20_466_663_424u64 + n, "lastBackupAt": format!("2026-07-02T16:{:02}:{:02}Z", (n / 60) % 60, n % 60)}});
                let r = b2
                    .api(K::Volume)
                    .patch_status(&name, &PatchParams::default(), &Patch::Merge(p))
                    .await;
                if r.is_err() {
                    err2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                } else {
                    lat2.lock().unwrap().push(t.elapsed().as_secs_f64());
                }
                drop(permit);
            }));
        }
    }
    let offered_window = start.elapsed().as_secs_f64();
    for h in handles {
        let _ = h.await;
    }
    let all = start.elapsed().as_secs_f64();
    let after = patch_histogram(&b.raw("/metrics").await);
    let fs = fsync_histogram(&b.etcd).minus(&fs_before);
    let mut l = lat.lock().unwrap().clone();
    let done = l.len();
    let server = after.minus(&before);
    json!({
        "load_average": load_average(),
        "offered_per_s": rate,
        "sent": sent,
        "achieved_per_s": done as f64 / all,
        "served_share": done as f64 / (rate * offered_window),
        "errors": errors.load(std::sync::atomic::Ordering::Relaxed),
        "client_p50_s": pctl(&mut l, 0.5),
        "client_p99_s": pctl(&mut l, 0.99),
        "server_patch_p99_s": server.quantile(0.99),
        "server_patches": server.count(),
        "wal_fsyncs": fs.count(),
        "wal_fsyncs_per_write": fs.count() / (done.max(1) as f64),
        "wal_fsync_p99_s": fs.quantile(0.99),
    })
}

async fn cleanup(b: &Bench, created_crds: &[String]) {
    use k8s_openapi::api::core::v1::Namespace;
    delete_objects(b).await;
    let nss: Api<Namespace> = Api::all(b.client.clone());
    let _ = nss.delete(&b.ns, &DeleteParams::default()).await;
    // No namespace controller runs on this server: finalize it by hand, once it is empty.
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": b.ns}, "spec": {"finalizers": []}});
    let _ = nss
        .replace_subresource("finalize", &b.ns, &PostParams::default(), &body)
        .await;
    if !created_crds.is_empty() {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let api: Api<CustomResourceDefinition> = Api::all(b.client.clone());
        for c in created_crds {
            let _ = api.delete(c, &DeleteParams::default()).await;
        }
    }
}

/// The 1-minute load average: other work on the machine shares its CPUs with the server.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(f64::NAN)
}

fn machine() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_default();
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|k| k.parse::<f64>().ok())
                })
        })
        .map_or(f64::NAN, |k| k / 1024.0 / 1024.0);
    json!({
        "cpus": std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        "cpu_model": cpu,
        "memory_gib": (mem_gib * 10.0).round() / 10.0,
    })
}

/// The knee: the highest offered rate served in full (95 % or more) with the client p99
/// under 1 s; `None` when even the first step is not.
fn knee(steps: &[Value]) -> Option<f64> {
    steps
        .iter()
        .take_while(|s| {
            s["served_share"].as_f64().unwrap_or(0.0) >= 0.95
                && s["client_p99_s"].as_f64().unwrap_or(f64::INFINITY) <= 1.0
        })
        .filter_map(|s| s["offered_per_s"].as_f64())
        .last()
}

async fn run() -> Value {
    let t0 = Instant::now();
    let path = kubeconfig();
    assert!(
        path.exists(),
        "{} not found: start the API server (bash ../shared/tools/kube-apiserver.sh all) or set RACKPLAN_TEST_KUBECONFIG",
        path.display()
    );
    let kc = kube::config::Kubeconfig::read_from(&path).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(cfg).unwrap();
    let etcd = std::env::var("RACKPLAN_BENCH_ETCD").unwrap_or_else(|_| "127.0.0.1:12379".into());
    assert!(
        etcd.starts_with("127."),
        "RACKPLAN_BENCH_ETCD must be on 127.0.0.0/8: {etcd}"
    );
    let max_vms: usize = std::env::var("RACKPLAN_BENCH_CP_VMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
        .clamp(10, 2000);
    let created_crds = ensure_crds(&client).await;
    let ns = format!("rackplan-bench-cp-{}", std::process::id());
    // Everything that can fail is read before the namespace exists.
    let t = templates(&ns);
    let version: Value = {
        let mut req = kube::core::Request::new("/version")
            .get("version", &Default::default())
            .unwrap();
        *req.uri_mut() = "/version".parse().unwrap();
        serde_json::from_str(&client.request_text(req).await.unwrap()).unwrap_or_default()
    };
    {
        use k8s_openapi::api::core::v1::Namespace;
        let nss: Api<Namespace> = Api::all(client.clone());
        let n: Namespace =
            serde_json::from_value(json!({"metadata": {"name": ns, "labels": {LABEL: ns}}}))
                .unwrap();
        nss.create(&PostParams::default(), &n).await.unwrap();
    }
    let mut b = Bench {
        client,
        create_json: BTreeMap::new(),
        etcd: etcd.clone(),
        vm: t["vm"].clone(),
        vmi: t["vmi"].clone(),
        pod: t["pod"].clone(),
        pvc: t["pvc"].clone(),
        pv: t["pv"].clone(),
        volume: t["volume"].clone(),
        engine: t["engine"].clone(),
        replica: t["replica"].clone(),
        attachment: t["attachment"].clone(),
        ns: ns.clone(),
    };
    for (k, mut o) in b.objects(0) {
        if let Some(m) = o.as_object_mut() {
            m.remove("status");
        }
        b.create_json
            .insert(k, rackplan::live::census::json_len(&o) as f64);
    }
    let b = Arc::new(b);
    let (db0, use0, keys0, etcd_version) = etcd_gauges(&etcd);
    println!(
        "control-plane calibration: kube-apiserver {}, etcd {etcd_version}, namespace {ns}",
        version["gitVersion"].as_str().unwrap_or("?")
    );
    let levels: Vec<usize> = [max_vms / 4, max_vms / 2, max_vms]
        .into_iter()
        .filter(|&n| n > 0)
        .collect();
    let mut made = 0usize;
    let mut sizes = Vec::new();
    let mut failed = None;
    for &target in &levels {
        if t0.elapsed() > DEADLINE / 2 {
            break;
        }
        let tc = Instant::now();
        let objs: Vec<(K, Value)> = (made..target).flat_map(|i| b.objects(i)).collect();
        let count = objs.len();
        let results: Vec<Result<(), String>> = futures_util::stream::iter(objs)
            .map(|(k, o)| {
                let b = b.clone();
                async move { b.create(k, o).await }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        if let Some(e) = results.into_iter().find_map(Result::err) {
            failed = Some(e);
            break;
        }
        let secs = tc.elapsed().as_secs_f64();
        made = target;
        let mut level = size_level(&b, made, (db0, use0, keys0)).await;
        level["create_objects_per_s"] = json!(count as f64 / secs);
        println!(
            "  {made:>5} VMs, {:>6} objects: etcd in use +{:.1} MiB ({:.0} bytes per object, {:.2} x the keys and values stored, {:.2} x those of both revisions written), LIST of {} Volumes {:.3} s, GET {:.4} s, created at {:.0} objects/s",
            level["objects"],
            level["db_in_use_growth_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
            level["db_in_use_per_object"].as_f64().unwrap_or(0.0),
            level["db_in_use_per_stored_byte"].as_f64().unwrap_or(0.0),
            level["db_in_use_per_written_byte"].as_f64().unwrap_or(0.0),
            level["list_volumes"],
            level["list_volumes_s"].as_f64().unwrap_or(0.0),
            level["get_volume_s"].as_f64().unwrap_or(0.0),
            count as f64 / secs,
        );
        sizes.push(level);
    }
    let mut steps = Vec::new();
    if made > 0 && failed.is_none() {
        let mut seq = 0u64;
        for rate in RATES {
            if t0.elapsed() + STEP * 2 > DEADLINE {
                break;
            }
            let s = rate_step(&b, rate, made, &mut seq).await;
            println!(
                "  {rate:>6.0} writes/s offered: {:>6.1} achieved ({:.0} %, {} errors), client p50 {:.4} s p99 {:.4} s, API server PATCH p99 {} s, WAL fsyncs per write {:.2} (p99 {} s), load {:.1}",
                s["achieved_per_s"].as_f64().unwrap_or(0.0),
                s["served_share"].as_f64().unwrap_or(0.0) * 100.0,
                s["errors"],
                s["client_p50_s"].as_f64().unwrap_or(f64::NAN),
                s["client_p99_s"].as_f64().unwrap_or(f64::NAN),
                s["server_patch_p99_s"]
                    .as_f64()
                    .map_or("-".into(), |v| format!("{v:.3}")),
                s["wal_fsyncs_per_write"].as_f64().unwrap_or(f64::NAN),
                s["wal_fsync_p99_s"]
                    .as_f64()
                    .map_or("-".into(), |v| format!("{v:.4}")),
                s["load_average"].as_f64().unwrap_or(f64::NAN),
            );
            let short = s["served_share"].as_f64().unwrap_or(0.0) < 0.7
                || s["client_p99_s"].as_f64().unwrap_or(f64::INFINITY) > 5.0;
            steps.push(s);
            if short {
                break;
            }
        }
    }
    let tclean = Instant::now();
    cleanup(&b, &created_crds).await;
    let (db1, use1, _, _) = etcd_gauges(&etcd);
    println!(
        "  deleted the namespace and its objects in {:.1} s (etcd file {:.1} MiB, in use {:.1} MiB after; a file grows until defragmented)",
        tclean.elapsed().as_secs_f64(),
        db1 / 1048576.0,
        use1 / 1048576.0
    );
    if let Some(e) = &failed {
        println!("  creation stopped: {e}");
    }
    // The fit: per-kind etcd bytes at the largest level, and the knee.
    let last = sizes.last().cloned().unwrap_or_default();
    let mut per_kind = BTreeMap::new();
    if let Some(k) = last["kinds"].as_object() {
        for (name, v) in k {
            per_kind.insert(
                name.clone(),
                json!({
                    "etcd_bytes": v["key_bytes"].as_f64().unwrap_or(0.0) + v["value_bytes"].as_f64().unwrap_or(0.0),
                    "json_bytes": v["json_bytes"],
                    "value_per_json": v["value_per_json"],
                }),
            );
        }
    }
    let k = knee(&steps);
    let cores = machine()["cpus"].as_f64().unwrap_or(1.0);
    let fit = json!({
        "per_kind": per_kind,
        "db_in_use_per_stored_byte": last["db_in_use_per_stored_byte"],
        "db_in_use_per_written_byte": last["db_in_use_per_written_byte"],
        "knee_writes_per_s": k,
        "vcpu_per_1000_writes": k.map(|k| cores / k * 1000.0),
    });
    println!(
        "  fit: knee {} writes/s on {cores} CPUs ({} vCPU per 1,000 writes/s); etcd in use per key and value byte written {:.2}",
        k.map_or("below the first step".into(), |k| format!("{k:.0}")),
        k.map_or("-".into(), |k| format!("{:.1}", cores / k * 1000.0)),
        last["db_in_use_per_written_byte"]
            .as_f64()
            .unwrap_or(f64::NAN),
    );
    for (name, v) in &per_kind {
        println!(
            "    {name:<40} {:>6.0} bytes in etcd, {:>6.0} as JSON ({:.2})",
            v["etcd_bytes"].as_f64().unwrap_or(0.0),
            v["json_bytes"].as_f64().unwrap_or(f64::NAN),
            v["value_per_json"].as_f64().unwrap_or(f64::NAN),
        );
    }
    json!({
        "machine": machine(),
        "kube_apiserver": version["gitVersion"],
        "etcd": etcd_version,
        "vms": made,
        "sizes": sizes,
        "rates": steps,
        "fit": fit,
        "failed": failed,
        "seconds": t0.elapsed().as_secs_f64(),
    })
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(run());
    let dir = repo().join("target");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("control-plane-calibration.json");
    std::fs::write(&file, serde_json::to_string_pretty(&out).unwrap()).unwrap();
    println!("  written: {}", file.display());
}
