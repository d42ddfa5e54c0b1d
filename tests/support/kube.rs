//! A real kube-apiserver and etcd on 127.0.0.1 (`../shared/tools/kube-apiserver.sh`, which
//! `.ci/run` starts), set up once per test process: the CRDs (rackplan's as `render`
//! writes it, Rancher's, Longhorn's, Harvester's and the Prometheus Operator's real ones
//! from the reference data,
//! stand-ins that keep every field for KubeVirt's VM/VMI and Rancher's HarvesterConfig,
//! whose CRDs are not shipped as YAML) and the example dump's fleet with its statuses
//! written through the status subresource, as controllers write them. Each test then works
//! in a namespace of its own, with an operator process of its own.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};

use super::{repo, shared};

pub fn kubeconfig() -> PathBuf {
    let p = std::env::var_os("RACKPLAN_TEST_KUBECONFIG")
        .map_or_else(|| PathBuf::from("/tmp/kapi/kubeconfig"), PathBuf::from);
    assert!(
        p.exists(),
        "{} not found: start the test API server with `bash ../shared/tools/kube-apiserver.sh all` (as .ci/run does), or point RACKPLAN_TEST_KUBECONFIG at its kubeconfig",
        p.display()
    );
    p
}

pub struct Kube {
    pub rt: tokio::runtime::Runtime,
    pub client: kube::Client,
}

/// (plural, namespaced) of the kinds the tests write.
fn plural(api_version: &str, kind: &str) -> (&'static str, bool) {
    match (api_version, kind) {
        ("v1", "Node") => ("nodes", false),
        ("v1", "Namespace") => ("namespaces", false),
        ("v1", "ConfigMap") => ("configmaps", true),
        ("kubevirt.io/v1", "VirtualMachine") => ("virtualmachines", true),
        ("kubevirt.io/v1", "VirtualMachineInstance") => ("virtualmachineinstances", true),
        (_, "Node") => ("nodes", true),
        (_, "Volume") => ("volumes", true),
        (_, "Replica") => ("replicas", true),
        ("harvesterhci.io/v1beta1", "Setting") => ("settings", false),
        (_, "Setting") => ("settings", true),
        (_, "ClusterRequest") => ("clusterrequests", true),
        (_, "Cluster") => ("clusters", true),
        (_, "HarvesterConfig") => ("harvesterconfigs", true),
        (_, "CustomResourceDefinition") => ("customresourcedefinitions", false),
        (_, "ClusterRoleTemplateBinding") => ("clusterroletemplatebindings", true),
        (_, "RoleTemplate") => ("roletemplates", false),
        (_, "ETCDSnapshot") => ("etcdsnapshots", true),
        ("v1", "ServiceAccount") => ("serviceaccounts", true),
        (_, "Role") => ("roles", true),
        (_, "RoleBinding") => ("rolebindings", true),
        (_, "ClusterRole") => ("clusterroles", false),
        (_, "ClusterRoleBinding") => ("clusterrolebindings", false),
        (_, "ServiceMonitor") => ("servicemonitors", true),
        (_, "PrometheusRule") => ("prometheusrules", true),
        ("cluster.x-k8s.io/v1beta1", "Machine") => ("machines", true),
        _ => panic!("no plural known for {api_version} {kind}"),
    }
}

pub fn resource(api_version: &str, kind: &str) -> (ApiResource, bool) {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (p, namespaced) = plural(api_version, kind);
    (
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), p),
        namespaced,
    )
}

impl Kube {
    pub fn api(&self, api_version: &str, kind: &str, ns: Option<&str>) -> Api<DynamicObject> {
        let (ar, namespaced) = resource(api_version, kind);
        match (namespaced, ns) {
            (true, Some(ns)) => Api::namespaced_with(self.client.clone(), ns, &ar),
            _ => Api::all_with(self.client.clone(), &ar),
        }
    }

    /// Create `obj` (kept when it exists), then write its status when it has one.
    pub async fn put(&self, obj: &Value) {
        let api = self.api(
            obj["apiVersion"].as_str().unwrap(),
            obj["kind"].as_str().unwrap(),
            obj["metadata"]["namespace"].as_str(),
        );
        let d: DynamicObject = serde_json::from_value(obj.clone()).unwrap();
        match api.create(&PostParams::default(), &d).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("creating {} {}: {e}", obj["kind"], obj["metadata"]["name"]),
        }
        if obj.get("status").is_some() {
            let name = obj["metadata"]["name"].as_str().unwrap();
            api.patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": obj["status"]})),
            )
            .await
            .unwrap_or_else(|e| panic!("status of {} {name}: {e}", obj["kind"]));
        }
    }

    pub fn namespace(&self, name: &str) {
        self.rt.block_on(
            self.put(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
        );
    }

    pub fn get(&self, api_version: &str, kind: &str, ns: &str, name: &str) -> Option<Value> {
        let api = self.api(api_version, kind, Some(ns));
        self.rt
            .block_on(api.get_opt(name))
            .unwrap()
            .map(|o| serde_json::to_value(o).unwrap())
    }

    pub fn list(&self, api_version: &str, kind: &str, ns: &str) -> Vec<Value> {
        let api = self.api(api_version, kind, Some(ns));
        self.rt
            .block_on(api.list(&Default::default()))
            .unwrap()
            .items
            .into_iter()
            .map(|o| serde_json::to_value(o).unwrap())
            .collect()
    }

    /// The events of a namespace (events.k8s.io/v1), oldest first.
    pub fn events(&self, ns: &str) -> Vec<Value> {
        let api: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.client.clone(), ns);
        let mut v: Vec<Value> = self
            .rt
            .block_on(api.list(&Default::default()))
            .unwrap()
            .items
            .into_iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        v.sort_by_key(|e| e["eventTime"].as_str().unwrap_or_default().to_string());
        v
    }

    pub fn create_yaml(&self, ns: &str, yaml: &str) {
        let docs: Vec<Value> = serde_saphyr::from_multiple(yaml).unwrap();
        for mut d in docs {
            d["metadata"]["namespace"] = json!(ns);
            self.rt.block_on(self.put(&d));
        }
    }

    pub fn delete(&self, api_version: &str, kind: &str, ns: &str, name: &str) {
        let api = self.api(api_version, kind, Some(ns));
        let _ = self.rt.block_on(api.delete(name, &Default::default()));
    }

    pub fn patch(
        &self,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
        patch: &Value,
        status: bool,
    ) {
        let api = self.api(api_version, kind, Some(ns));
        let p = Patch::Merge(patch.clone());
        let pp = PatchParams::default();
        if status {
            self.rt.block_on(api.patch_status(name, &pp, &p)).unwrap();
        } else {
            self.rt.block_on(api.patch(name, &pp, &p)).unwrap();
        }
    }
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

fn keep_all_crd(group: &str, kind: &str, plural: &str, version: &str, scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": [{
                "name": version, "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    })
}

async fn setup(k: &Kube) {
    let r = shared().join("reference");
    let mut crds =
        yaml_docs(&repo().join("iso-config/example/operator/00-clusterrequests-crd.yaml"));
    for f in [
        r.join("rancher/crds/provisioning.cattle.io_clusters.yaml"),
        r.join("rancher/crds/management.cattle.io_clusterroletemplatebindings.yaml"),
        r.join("rancher/crds/management.cattle.io_roletemplates.yaml"),
        r.join("rancher/crds/rke.cattle.io_etcdsnapshots.yaml"),
        r.join("longhorn/crds/nodes.longhorn.io.yaml"),
        r.join("longhorn/crds/volumes.longhorn.io.yaml"),
        r.join("longhorn/crds/replicas.longhorn.io.yaml"),
        r.join("longhorn/crds/settings.longhorn.io.yaml"),
        r.join("harvester/crds/harvesterhci.io_settings.yaml"),
        r.join("prometheus-operator/crds/monitoring.coreos.com_servicemonitors.yaml"),
        r.join("prometheus-operator/crds/monitoring.coreos.com_prometheusrules.yaml"),
    ] {
        crds.extend(yaml_docs(&f));
    }
    crds.push(keep_all_crd(
        "kubevirt.io",
        "VirtualMachine",
        "virtualmachines",
        "v1",
        "Namespaced",
    ));
    crds.push(keep_all_crd(
        "kubevirt.io",
        "VirtualMachineInstance",
        "virtualmachineinstances",
        "v1",
        "Namespaced",
    ));
    // Rancher's CAPI machines: no upstream CRD in the reference data, so one that keeps
    // every field (the operator reads labels and status only).
    crds.push(keep_all_crd(
        "cluster.x-k8s.io",
        "Machine",
        "machines",
        "v1beta1",
        "Namespaced",
    ));
    crds.push(keep_all_crd(
        "rke-machine-config.cattle.io",
        "HarvesterConfig",
        "harvesterconfigs",
        "v1",
        "Namespaced",
    ));
    let api: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(k.client.clone());
    let mut names = Vec::new();
    for c in crds {
        let name = c["metadata"]["name"].as_str().unwrap().to_string();
        let ours = name.ends_with(".rackplan.io");
        let mut typed: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
            serde_json::from_value(c).unwrap();
        match api.create(&PostParams::default(), &typed).await {
            Ok(_) => {}
            // rackplan's own CRD follows the code (a server kept from an earlier run may
            // hold an older one); the reference CRDs are kept as they are.
            Err(kube::Error::Api(s)) if s.code == 409 && ours => {
                let old = api.get(&name).await.unwrap();
                typed.metadata.resource_version = old.metadata.resource_version;
                api.replace(&name, &PostParams::default(), &typed)
                    .await
                    .unwrap_or_else(|e| panic!("CRD {name}: {e}"));
            }
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => panic!("CRD {name}: {e}"),
        }
        names.push(name);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for n in &names {
        loop {
            let c = api.get(n).await.unwrap();
            let ok = c
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if ok {
                break;
            }
            assert!(Instant::now() < deadline, "CRD {n} not established");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // The fleet: namespaces first, then every object with its status.
    let fleet = yaml_docs(&repo().join("simulations/live-fleet.yaml"));
    let items = fleet[0]["items"].as_array().unwrap().clone();
    let mut nss: Vec<String> = items
        .iter()
        .filter_map(|i| i["metadata"]["namespace"].as_str().map(str::to_string))
        .collect();
    nss.sort();
    nss.dedup();
    for ns in nss {
        k.put(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .await;
    }
    let puts = items.iter().map(|i| k.put(i));
    futures_util::future::join_all(puts).await;
}

/// A client of the test API server acting with `token` (a static token user the API
/// server was started with, or a service account token).
pub fn client_with_token(k: &Kube, token: &str) -> kube::Client {
    let path = kubeconfig();
    let _g = k.rt.enter();
    k.rt.block_on(async {
        let mut kc = kube::config::Kubeconfig::read_from(&path).unwrap();
        for u in &mut kc.auth_infos {
            if let Some(a) = u.auth_info.as_mut() {
                a.token = Some(token.to_string().into());
            }
        }
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        kube::Client::try_from(cfg).unwrap()
    })
}

/// A kubeconfig file for the test API server with `token` in place of the admin's.
pub fn kubeconfig_with_token(dir: &Path, token: &str) -> PathBuf {
    let text = std::fs::read_to_string(kubeconfig()).unwrap();
    let mut v: Value = serde_saphyr::from_str(&text).unwrap();
    for u in v["users"].as_array_mut().unwrap() {
        u["user"] = json!({"token": token});
    }
    let out = dir.join(format!(
        "kubeconfig-{:x}",
        token.len() ^ std::process::id() as usize
    ));
    std::fs::write(&out, serde_json::to_string(&v).unwrap()).unwrap();
    out
}

/// The static token users of the test API server (`.ci/run` starts it with them).
pub mod users {
    /// In group `local://g-paiement`.
    pub const ALICE: &str = "rackplan-test-alice";
    /// In group `local://g-logistique`.
    pub const BOB: &str = "rackplan-test-bob";
}

/// The API server with the CRDs and the fleet in place (once per test process).
pub fn cluster() -> &'static Kube {
    static K: OnceLock<Kube> = OnceLock::new();
    K.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let path = kubeconfig();
        let client = rt.block_on(async {
            let kc = kube::config::Kubeconfig::read_from(&path).unwrap();
            let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            kube::Client::try_from(cfg).unwrap()
        });
        let k = Kube { rt, client };
        k.rt.block_on(setup(&k));
        k
    })
}

/// Wait until `f` gives `Some`, at most `secs` seconds.
pub fn wait_for<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {secs} s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One call the API server's audit log recorded on a ClusterRequest: who made it (the
/// authenticated user, and the user impersonated if any), what and the answer's code.
#[derive(Debug, Clone, PartialEq)]
pub struct Audited {
    pub user: String,
    pub impersonated: Option<String>,
    pub verb: String,
    pub namespace: String,
    pub name: String,
    pub code: i64,
}

/// The ClusterRequest calls in namespace `ns` the API server's audit log holds (the
/// `RACKPLAN_TEST_AUDIT_LOG` file `.ci/run` starts it with). Panics, saying how, when the
/// server was started without one: the test is about what the server saw.
pub fn audited(ns: &str) -> Vec<Audited> {
    let path = std::env::var_os("RACKPLAN_TEST_AUDIT_LOG")
        .expect("RACKPLAN_TEST_AUDIT_LOG: start the API server with its audit log as .ci/run does");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the API server's audit log {}: {e}", path.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| {
            e["stage"] == "ResponseComplete"
                && e["objectRef"]["resource"] == "clusterrequests"
                && e["objectRef"]["namespace"] == ns
        })
        .map(|e| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
            Audited {
                user: s(&e["user"]["username"]),
                impersonated: e["impersonatedUser"]["username"]
                    .as_str()
                    .map(str::to_string),
                verb: s(&e["verb"]),
                namespace: s(&e["objectRef"]["namespace"]),
                name: s(&e["objectRef"]["name"]),
                code: e["responseStatus"]["code"].as_i64().unwrap_or(0),
            }
        })
        .collect()
}

/// Wait until the audit log of namespace `ns` holds a call `f` accepts (the log is written
/// as calls complete), at most 20 s.
pub fn wait_audited(ns: &str, what: &str, f: impl Fn(&Audited) -> bool) -> Audited {
    wait_for(20, what, || audited(ns).into_iter().find(|a| f(a)))
}

/// A running `rackplan operator`; killed when dropped. Its stdout (the transitions) and
/// stderr are kept in files.
pub struct Operator {
    child: Child,
    pub out: PathBuf,
    pub err: PathBuf,
    pub metrics: String,
}

/// How an operator process is started beyond its flags.
#[derive(Default)]
pub struct Launch<'a> {
    /// A command the operator runs under (`prlimit --nofile=256 --`).
    pub wrapper: &'a [&'a str],
    pub env: &'a [(&'a str, &'a str)],
    /// Its kubeconfig; the admin's when absent.
    pub kubeconfig: Option<PathBuf>,
}

impl Operator {
    pub fn start(
        dir: &Path,
        ns: &str,
        catalogue: &Path,
        scenario: &Path,
        extra: &[&str],
    ) -> Operator {
        Self::launch(dir, ns, catalogue, scenario, extra, &Launch::default())
    }

    pub fn launch(
        dir: &Path,
        ns: &str,
        catalogue: &Path,
        scenario: &Path,
        extra: &[&str],
        how: &Launch<'_>,
    ) -> Operator {
        // Each replica its own files (a test may run two side by side).
        let port = super::sushy::free_port();
        let out = dir.join(format!("operator-{port}.out"));
        let err = dir.join(format!("operator-{port}.err"));
        let bin = env!("CARGO_BIN_EXE_rackplan");
        let mut cmd = match how.wrapper.split_first() {
            Some((w, rest)) => {
                let mut c = Command::new(w);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.args([
            "operator",
            "--namespace",
            ns,
            "--resync-seconds",
            "1",
            "--lease-seconds",
            "5",
        ])
        .arg("--kubeconfig")
        .arg(how.kubeconfig.clone().unwrap_or_else(kubeconfig))
        .arg("--catalogue")
        .arg(catalogue)
        .arg("--scenario")
        .arg(scenario)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(extra)
        .env("RUST_LOG", "warn")
        .envs(how.env.iter().copied())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
        let child = cmd.spawn().expect("start rackplan operator");
        let metrics = format!("127.0.0.1:{port}");
        let op = Operator {
            child,
            out,
            err,
            metrics,
        };
        let m = op.metrics.clone();
        wait_for(30, "the operator's /healthz", || {
            http_get(&m, "/healthz").filter(|b| b.contains("ok"))
        });
        op
    }

    /// Send a signal (`STOP`, `CONT`, `TERM`).
    pub fn signal(&self, sig: &str) {
        let _ = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status();
    }

    /// The process's peak resident memory, KiB (`VmHWM`).
    pub fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    pub fn stop(mut self) -> (String, String) {
        // SIGTERM: a clean stop (the lease is handed back).
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.stdout(), self.stderr())
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().unwrap()
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain HTTP/1.0 GET on 127.0.0.1; the body.
pub fn http_get(addr: &str, path: &str) -> Option<String> {
    use std::io::Write as _;
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    body.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}
