//! The reference design's promises for every cluster the catalogue delivers ("backed up,
//! audited, compliant with corporate policy", booting from a prepared image), as pure
//! rules over the Rancher objects themselves. `check` holds the site's catalogue to them,
//! `check --catalogue` lists them per shape, and the operator holds each delivered cluster
//! to them again, so an edit that drops a promise is seen (drift).
//!
//! The API, for a caller holding a `provisioning.cattle.io/v1` `Cluster` as JSON:
//! - [`review_cluster`]`(&cluster, &Terms)` gives one [`PromiseCheck`] per cluster promise,
//!   always in the order of [`Promise::CLUSTER`]: etcd snapshots scheduled, snapshots off
//!   the cluster, audit logged, default ingress off, version allowed. Each names the key
//!   that decides it (`spec.rkeConfig.etcd.s3`) and says what it found.
//! - [`drift`]`(&template, &delivered, &Terms)` gives the promises the catalogue template
//!   keeps and the delivered cluster breaks: what an edit since delivery dropped.
//! - [`review_machine_config`]`(&harvester_config)`: whether its VMs install anything at
//!   boot.
//!
//! What each rule reads follows Rancher and RKE2:
//! - snapshots: `rkeConfig.etcd` is written over `machineGlobalConfig` on etcd nodes
//!   (rancher `pkg/capr/planner/config.go` `addETCD`); without a schedule RKE2 snapshots
//!   every 12 hours and keeps 5 (k3s `etcd-snapshot-schedule-cron` and
//!   `etcd-snapshot-retention` defaults); S3 is on when any of bucket, endpoint, folder,
//!   cloud credential or region is set (`pkg/capr/planner/s3args.go` `S3Enabled`), and its
//!   keys come from the cloud credential;
//! - audit: the policy is the content of `audit-policy-file` (see `site::rke`), checked as
//!   kube-apiserver loads it (`site::audit`);
//! - ingress: the default controller of the cluster's RKE2 release must be disabled, or
//!   `ingress-controller: none` (`site::rke::INGRESS_CHARTS`);
//! - version: an RKE2 release (`v1.33.5+rke2r1`), in the allowed list when there is one.

use std::path::Path;

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::site::rke::INGRESS_CHARTS;

/// A promise the reference design makes for a delivered cluster.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Promise {
    /// etcd snapshots are taken on a schedule.
    SnapshotsScheduled,
    /// The snapshots also go to a store outside the cluster (S3).
    SnapshotsOffCluster,
    /// The API servers log by an audit policy that logs something.
    AuditLogged,
    /// RKE2's bundled ingress controller is not deployed.
    DefaultIngressOff,
    /// The Kubernetes version is an RKE2 release the site allows.
    VersionAllowed,
    /// The cluster is deleted at its expiry.
    ExpiryEnforced,
    /// The VMs install nothing at boot (the prepared image).
    NothingInstalledAtBoot,
}

impl Promise {
    /// The promises [`review_cluster`] checks, in its order.
    pub const CLUSTER: [Promise; 5] = [
        Promise::SnapshotsScheduled,
        Promise::SnapshotsOffCluster,
        Promise::AuditLogged,
        Promise::DefaultIngressOff,
        Promise::VersionAllowed,
    ];

    /// The promise in a few words, for tables.
    pub fn title(self) -> &'static str {
        match self {
            Promise::SnapshotsScheduled => "etcd snapshots scheduled",
            Promise::SnapshotsOffCluster => "snapshots leave the cluster",
            Promise::AuditLogged => "audit policy logs",
            Promise::DefaultIngressOff => "default ingress disabled",
            Promise::VersionAllowed => "version allowed",
            Promise::ExpiryEnforced => "expiry enforced",
            Promise::NothingInstalledAtBoot => "nothing installed at boot",
        }
    }
}

/// Whether an object keeps a promise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Kept,
    Broken,
    /// What decides it is not in the object (e.g. a policy file Rancher copies from a
    /// Secret): not checked.
    Unknown,
}

/// One promise held against one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PromiseCheck {
    pub promise: Promise,
    pub verdict: Verdict,
    /// The key that decides it, as a path into the object (`spec.rkeConfig.etcd.s3`).
    pub key: String,
    /// What was found there, in words.
    pub detail: String,
}

/// What the site (or the operator) holds clusters to beyond the object itself.
#[derive(Debug, Clone, Copy)]
pub struct Terms<'a> {
    /// Kubernetes versions allowed: exact, or a release line (`v1.33`); empty: any RKE2
    /// release.
    pub versions: &'a [String],
}

const RKE: &str = "spec.rkeConfig";

fn global_key(k: &str) -> String {
    format!("{RKE}.machineGlobalConfig.{k}")
}

fn etcd_key(k: &str) -> String {
    format!("{RKE}.etcd.{k}")
}

fn check(promise: Promise, verdict: Verdict, key: String, detail: String) -> PromiseCheck {
    PromiseCheck {
        promise,
        verdict,
        key,
        detail,
    }
}

/// A config value as a list of strings: a list, or a comma-separated string.
fn words(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .flat_map(|s| s.split(','))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// (major, minor) of an RKE2 release `v1.33.5+rke2r1`; `None` for anything else.
fn rke2_release(v: &str) -> Option<(u32, u32)> {
    let (ver, build) = v.strip_prefix('v')?.split_once('+')?;
    let rev = build.strip_prefix("rke2r")?;
    if rev.is_empty() || !rev.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut parts = ver.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u32>().ok()?;
    parts.next().is_none().then_some((major, minor))
}

/// True when `entry` allows `version`: the same, or a release line of it (`v1.33`).
fn allows(entry: &str, version: &str) -> bool {
    version == entry
        || version
            .strip_prefix(entry)
            .is_some_and(|rest| rest.starts_with(['.', '+']))
}

/// Hold a Rancher `Cluster` (JSON) to the cluster promises, in [`Promise::CLUSTER`] order.
pub fn review_cluster(cluster: &Value, terms: &Terms<'_>) -> Vec<PromiseCheck> {
    let empty = Map::new();
    let global = cluster
        .pointer("/spec/rkeConfig/machineGlobalConfig")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let etcd = cluster
        .pointer("/spec/rkeConfig/etcd")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let version = cluster
        .pointer("/spec/kubernetesVersion")
        .and_then(Value::as_str);
    vec![
        snapshots_scheduled(global, etcd),
        snapshots_off_cluster(global, etcd),
        audit_logged(cluster, global),
        ingress_off(global, version),
        version_allowed(version, terms),
    ]
}

/// The key that turns snapshots off, if one does.
fn snapshots_disabled(global: &Map<String, Value>, etcd: &Map<String, Value>) -> Option<String> {
    if etcd.get("disableSnapshots").and_then(Value::as_bool) == Some(true) {
        Some(etcd_key("disableSnapshots"))
    } else if truthy(global.get("etcd-disable-snapshots")) {
        Some(global_key("etcd-disable-snapshots"))
    } else {
        None
    }
}

fn snapshots_scheduled(global: &Map<String, Value>, etcd: &Map<String, Value>) -> PromiseCheck {
    let p = Promise::SnapshotsScheduled;
    if let Some(key) = snapshots_disabled(global, etcd) {
        return check(
            p,
            Verdict::Broken,
            key,
            "etcd snapshots are disabled".into(),
        );
    }
    let (cron, key) = match (
        text(etcd.get("snapshotScheduleCron")),
        text(global.get("etcd-snapshot-schedule-cron")),
    ) {
        (Some(c), _) => (Some(c), etcd_key("snapshotScheduleCron")),
        (None, Some(c)) => (Some(c), global_key("etcd-snapshot-schedule-cron")),
        (None, None) => (None, format!("{RKE}.etcd")),
    };
    let retention = etcd
        .get("snapshotRetention")
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
        .or_else(|| {
            global
                .get("etcd-snapshot-retention")
                .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
        });
    match cron {
        Some(c) if !(c.starts_with('@') || c.split_whitespace().count() == 5) => check(
            p,
            Verdict::Broken,
            key,
            format!("`{c}` is not a cron schedule (five fields, or @every/@hourly/...)"),
        ),
        Some(c) => check(
            p,
            Verdict::Kept,
            key,
            format!(
                "`{c}`, {} kept on each etcd node",
                retention.map_or_else(|| "RKE2's default 5".into(), |n| n.to_string())
            ),
        ),
        None => check(
            p,
            Verdict::Kept,
            key,
            format!(
                "RKE2's default schedule `0 */12 * * *`, {} kept on each etcd node",
                retention.map_or_else(|| "5".into(), |n| n.to_string())
            ),
        ),
    }
}

fn snapshots_off_cluster(global: &Map<String, Value>, etcd: &Map<String, Value>) -> PromiseCheck {
    let p = Promise::SnapshotsOffCluster;
    if let Some(key) = snapshots_disabled(global, etcd) {
        return check(
            p,
            Verdict::Broken,
            key,
            "no snapshots are taken, so none leave the cluster".into(),
        );
    }
    let s3 = etcd.get("s3").and_then(Value::as_object);
    let field = |k: &str| s3.and_then(|m| text(m.get(k)));
    let enabled = [
        "bucket",
        "endpoint",
        "folder",
        "cloudCredentialName",
        "region",
    ]
    .iter()
    .any(|k| field(k).is_some());
    if !enabled {
        return check(
            p,
            Verdict::Broken,
            etcd_key("s3"),
            "no S3 target: snapshots stay on the control-plane VMs' disks and are lost with them (at expiry, or in an incident)".into(),
        );
    }
    let Some(cred) = field("cloudCredentialName") else {
        return check(
            p,
            Verdict::Broken,
            etcd_key("s3.cloudCredentialName"),
            "S3 without a cloud credential: Rancher hands RKE2 no access keys, so uploads fail"
                .into(),
        );
    };
    let endpoint = field("endpoint").unwrap_or("s3.amazonaws.com");
    let folder = field("folder").map(|f| format!("/{f}")).unwrap_or_default();
    match field("bucket") {
        Some(b) => check(
            p,
            Verdict::Kept,
            etcd_key("s3"),
            format!("s3://{b}{folder} at {endpoint} (credential {cred})"),
        ),
        None => check(
            p,
            Verdict::Unknown,
            etcd_key("s3.bucket"),
            format!(
                "no bucket: the one named by credential {cred} (its defaultBucket) is used; not in the Cluster, not checked"
            ),
        ),
    }
}

/// One `audit-policy-file` value held to kube-apiserver's loading rules.
fn policy_verdict(key: String, value: &Value) -> PromiseCheck {
    let p = Promise::AuditLogged;
    let Some(t) = value.as_str() else {
        return check(
            p,
            Verdict::Broken,
            key,
            "not text: Rancher writes this value to the policy file".into(),
        );
    };
    match crate::site::audit::load(Path::new(&key), t) {
        Err(e) => check(
            p,
            Verdict::Broken,
            key,
            format!(
                "not a policy kube-apiserver loads ({}: {}); kube-apiserver does not start with it",
                e.key, e.message
            ),
        ),
        Ok(policy) => match policy.first_logging_rule() {
            Some(i) => check(
                p,
                Verdict::Kept,
                key,
                format!(
                    "an audit.k8s.io/v1 Policy of {} rules; rule {} logs at {:?}",
                    policy.rules.len(),
                    i + 1,
                    policy.rules[i].level
                ),
            ),
            None => check(
                p,
                Verdict::Broken,
                key,
                "the policy logs nothing: no rule above None before a rule that matches every request at None".into(),
            ),
        },
    }
}

fn audit_logged(cluster: &Value, global: &Map<String, Value>) -> PromiseCheck {
    let p = Promise::AuditLogged;
    let selectors = cluster
        .pointer("/spec/rkeConfig/machineSelectorConfig")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    // Per-selector policies override the global one on their machines: each must log.
    let mut found: Vec<PromiseCheck> = selectors
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            s.pointer("/config/audit-policy-file").map(|v| {
                policy_verdict(
                    format!("{RKE}.machineSelectorConfig[{i}].config.audit-policy-file"),
                    v,
                )
            })
        })
        .collect();
    if let Some(v) = global.get("audit-policy-file") {
        found.insert(0, policy_verdict(global_key("audit-policy-file"), v));
    }
    if let Some(bad) = found.iter().find(|c| c.verdict == Verdict::Broken) {
        return bad.clone();
    }
    if let Some(first) = found.into_iter().next() {
        return first;
    }
    let args = words(global.get("kube-apiserver-arg"));
    if args.iter().any(|a| a.starts_with("audit-policy-file=")) {
        return check(
            p,
            Verdict::Unknown,
            global_key("kube-apiserver-arg"),
            "a policy file on the nodes (machineSelectorFiles): its content is not in the Cluster, not checked".into(),
        );
    }
    let detail = if args.iter().any(|a| a.starts_with("audit-log-path=")) {
        "audit-log-path is set but there is no policy: kube-apiserver logs nothing"
    } else {
        "no audit policy: kube-apiserver logs nothing"
    };
    check(
        p,
        Verdict::Broken,
        global_key("audit-policy-file"),
        detail.into(),
    )
}

fn ingress_off(global: &Map<String, Value>, version: Option<&str>) -> PromiseCheck {
    let p = Promise::DefaultIngressOff;
    let chosen = words(global.get("ingress-controller"));
    if !chosen.is_empty() {
        let deployed: Vec<&String> = chosen.iter().filter(|c| *c != "none").collect();
        return if deployed.is_empty() {
            check(
                p,
                Verdict::Kept,
                global_key("ingress-controller"),
                "`ingress-controller: none`".into(),
            )
        } else {
            check(
                p,
                Verdict::Broken,
                global_key("ingress-controller"),
                format!(
                    "RKE2 deploys {}",
                    deployed
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        };
    }
    let release = version.and_then(rke2_release);
    // The default controller of the release: ingress-nginx up to v1.35, Traefik from v1.36.
    let needed: Vec<&str> = match release {
        Some(r) if r < (1, 36) => vec![INGRESS_CHARTS[0]],
        Some(_) => vec![INGRESS_CHARTS[1]],
        None => INGRESS_CHARTS.to_vec(),
    };
    let disabled = words(global.get("disable"));
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|c| !disabled.iter().any(|d| d == c))
        .collect();
    let of = version.map_or_else(|| "the cluster's RKE2".to_string(), |v| format!("RKE2 {v}"));
    if missing.is_empty() {
        check(
            p,
            Verdict::Kept,
            global_key("disable"),
            format!("disables {} ({of}'s default)", needed.join(" and ")),
        )
    } else {
        check(
            p,
            Verdict::Broken,
            global_key("disable"),
            format!(
                "{of} deploys {} by default and `disable` does not name it",
                missing.join(" and ")
            ),
        )
    }
}

fn version_allowed(version: Option<&str>, terms: &Terms<'_>) -> PromiseCheck {
    let p = Promise::VersionAllowed;
    let key = "spec.kubernetesVersion".to_string();
    let Some(v) = version else {
        return check(p, Verdict::Broken, key, "no version".into());
    };
    if rke2_release(v).is_none() {
        return check(
            p,
            Verdict::Broken,
            key,
            format!(
                "`{v}` is not an RKE2 release (`v1.33.5+rke2r1`): the audit, snapshot and ingress settings are RKE2's"
            ),
        );
    }
    if terms.versions.is_empty() {
        return check(p, Verdict::Kept, key, format!("RKE2 {v}"));
    }
    match terms.versions.iter().find(|e| allows(e, v)) {
        Some(e) if e == v => check(p, Verdict::Kept, key, format!("{v}, allowed")),
        Some(e) => check(p, Verdict::Kept, key, format!("{v}, allowed by `{e}`")),
        None => check(
            p,
            Verdict::Broken,
            key,
            format!(
                "{v} is not among the allowed: {}",
                terms.versions.join(", ")
            ),
        ),
    }
}

/// The promises `template` keeps and `delivered` breaks: each named by the delivered
/// cluster's key, in [`Promise::CLUSTER`] order. Empty when nothing was dropped.
pub fn drift(template: &Value, delivered: &Value, terms: &Terms<'_>) -> Vec<PromiseCheck> {
    let kept: Vec<Promise> = review_cluster(template, terms)
        .into_iter()
        .filter(|c| c.verdict == Verdict::Kept)
        .map(|c| c.promise)
        .collect();
    review_cluster(delivered, terms)
        .into_iter()
        .filter(|c| c.verdict == Verdict::Broken && kept.contains(&c.promise))
        .collect()
}

/// Package managers and fetch-and-run idioms in a boot command.
const INSTALLERS: [&str; 10] = [
    "apt-get install",
    "apt install",
    "yum install",
    "dnf install",
    "zypper in",
    "zypper install",
    "apk add",
    "snap install",
    "| sh",
    "| bash",
];

/// Whether a `rke-machine-config.cattle.io/v1` `HarvesterConfig`'s VMs install anything at
/// boot, from its `userData` (base64 when it decodes cleanly, else the text itself, as
/// the machine driver reads it).
pub fn review_machine_config(config: &Value) -> PromiseCheck {
    let p = Promise::NothingInstalledAtBoot;
    let key = "userData".to_string();
    let Some(raw) = text(config.get("userData")) else {
        return check(
            p,
            Verdict::Kept,
            key,
            "no user-data: nothing runs at boot".into(),
        );
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(raw.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_else(|| raw.to_string());
    let mut found = Vec::new();
    let commands: Vec<String> = if decoded.trim_start().starts_with("#!") {
        decoded.lines().map(str::to_string).collect()
    } else {
        match crate::files::yaml::parse::<Value>(Path::new("userData"), &decoded) {
            Ok((doc, _)) => {
                let packages = words(doc.get("packages"));
                if !packages.is_empty() {
                    found.push(format!("installs {} (`packages`)", packages.join(", ")));
                }
                for k in ["package_update", "package_upgrade"] {
                    if truthy(doc.get(k)) {
                        found.push(format!("`{k}: true`"));
                    }
                }
                ["runcmd", "bootcmd"]
                    .iter()
                    .filter_map(|k| doc.get(*k).and_then(Value::as_array))
                    .flatten()
                    .map(|c| match c {
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" "),
                        other => other.as_str().unwrap_or_default().to_string(),
                    })
                    .collect()
            }
            Err(e) => {
                return check(
                    p,
                    Verdict::Unknown,
                    key,
                    format!("user-data that is neither cloud-config nor a script: {e}"),
                );
            }
        }
    };
    for c in &commands {
        if INSTALLERS.iter().any(|i| c.contains(i)) {
            found.push(format!("runs `{}`", c.trim()));
        }
    }
    if found.is_empty() {
        check(p, Verdict::Kept, key, "user-data installs nothing".into())
    } else {
        check(
            p,
            Verdict::Broken,
            key,
            format!("at boot, user-data {}", found.join("; ")),
        )
    }
}

#[cfg(test)]
#[path = "compliance_tests.rs"]
mod tests;
