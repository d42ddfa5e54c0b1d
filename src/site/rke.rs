//! What every catalogue cluster's `spec` holds besides its machine pools, from site.yaml:
//! the RKE2 configuration all machines get (`rkeConfig.machineGlobalConfig`), Rancher's
//! etcd snapshot settings (`rkeConfig.etcd`) and the upgrade strategy. `render` writes it
//! into each shape's `Cluster`; `check` holds the same object to the compliance rules, so
//! what is checked is what is rendered.
//!
//! The audit policy travels as the *content* of `machineGlobalConfig.audit-policy-file`,
//! Rancher's "Method 1 (recommended)" (rancher-docs `how-to-guides/advanced-user-guides/
//! enable-api-audit-log-in-downstream-clusters.md`). Rancher's planner writes every
//! file-valued key of that list (`audit-policy-file`, `cloud-provider-config`, ...) as a
//! file in the node's plan, to `<data-dir>/etc/config-files/audit-policy-file`, and puts
//! that path in the RKE2 config in its place (rancher `pkg/capr/planner/config.go`
//! `addConfigFile`, `configFile`; `planner.go` `fileParams`); the plan's files are on the
//! node before rke2-server starts, and RKE2 only writes its own (log-nothing) policy when
//! no file is there (rke2 `pkg/podtemplate/utils.go` `writeIfNotExists`). Workers do not
//! get the key: it is a server argument, filtered out for agents (`filter.go`).

use serde_json::{Map, Value, json};

use super::compliance::Resolved;
use super::model::{Catalogue, Site};

/// RKE2's bundled ingress controllers, as `disable` names their charts. RKE2 deploys
/// ingress-nginx by default up to v1.35 and Traefik from v1.36 (rke2 `pkg/cli/types.go`
/// `IngressItems`, first item), and an upgraded cluster switches to the new default unless
/// the old chart is installed (`pkg/bootstrap/bootstrap.go` `getDefaultIngressClassFromCharts`):
/// both are disabled, so no version and no upgrade brings one back.
pub(crate) const INGRESS_CHARTS: [&str; 2] = ["rke2-ingress-nginx", "rke2-traefik"];

/// Compliance defaults of `rkeConfig.machineGlobalConfig`: etcd snapshots every 6 hours
/// kept 20 deep, the API server's audit log with its policy, RKE2's bundled ingress
/// controllers off.
fn default_global_config(compliance: &Resolved) -> Map<String, Value> {
    let v = json!({
        "etcd-snapshot-schedule-cron": "0 */6 * * *",
        "etcd-snapshot-retention": 20,
        "kube-apiserver-arg": [
            "audit-log-path=/var/lib/rancher/rke2/server/logs/audit.log",
            "audit-log-maxage=30",
            "audit-log-maxbackup=10",
            "audit-log-maxsize=100",
        ],
        "audit-policy-file": compliance.audit_policy.to_json(),
        "disable": INGRESS_CHARTS,
    });
    v.as_object().cloned().expect("an object")
}

/// Defaults of `rkeConfig.upgradeStrategy`: one control-plane node at a time, a quarter of
/// the workers, every node drained first with a 10-minute timeout per try.
fn default_upgrade_strategy() -> Map<String, Value> {
    let drain = json!({
        "enabled": true,
        "deleteEmptyDirData": true,
        "ignoreDaemonSets": true,
        "timeout": 600,
    });
    let v = json!({
        "controlPlaneConcurrency": "1",
        "workerConcurrency": "25%",
        "controlPlaneDrainOptions": drain,
        "workerDrainOptions": drain,
    });
    v.as_object().cloned().expect("an object")
}

/// Site keys over defaults; a `null` removes the default.
fn merged(
    mut base: Map<String, Value>,
    over: &std::collections::BTreeMap<String, Value>,
) -> Map<String, Value> {
    for (k, v) in over {
        if v.is_null() {
            base.remove(k);
        } else {
            base.insert(k.clone(), v.clone());
        }
    }
    base
}

/// The `spec` every shape's `Cluster` shares: credential, version and `rkeConfig` without
/// `machinePools`.
pub(crate) fn shared_spec(site: &Site, c: &Catalogue, compliance: &Resolved) -> Value {
    let global = merged(default_global_config(compliance), &c.machine_global_config);
    // Rancher's own snapshot fields, kept equal to the RKE2 arguments (Rancher writes
    // these over the global ones on etcd nodes: planner `addETCD`).
    let mut etcd = json!({});
    if let Some(cron) = global.get("etcd-snapshot-schedule-cron") {
        etcd["snapshotScheduleCron"] = cron.clone();
    }
    if let Some(n) = global
        .get("etcd-snapshot-retention")
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
    {
        etcd["snapshotRetention"] = json!(n);
    }
    if let Some(t) = site
        .compliance
        .as_ref()
        .and_then(|x| x.snapshot_target.as_ref())
    {
        etcd["s3"] = t.rancher_s3(&site.name.0, compliance.endpoint_ca.as_deref());
    }
    json!({
        "cloudCredentialSecretName": c.cloud_credential,
        "kubernetesVersion": c.kubernetes_version,
        "rkeConfig": {
            "etcd": etcd,
            "machineGlobalConfig": Value::Object(global),
            "upgradeStrategy": Value::Object(merged(default_upgrade_strategy(), &c.upgrade_strategy)),
        },
    })
}

/// The versions a catalogue cluster may run: `compliance.kubernetes_versions`, else the
/// catalogue's own.
pub(crate) fn allowed_versions(site: &Site, c: &Catalogue) -> Vec<String> {
    match site.compliance.as_ref().map(|x| &x.kubernetes_versions) {
        Some(v) if !v.is_empty() => v.clone(),
        _ => vec![c.kubernetes_version.clone()],
    }
}
