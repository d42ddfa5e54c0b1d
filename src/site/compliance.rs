//! `compliance:`: what every cluster the catalogue delivers keeps (the reference design's
//! "backed up, audited, compliant with corporate policy"): the API servers' audit policy,
//! an S3-compatible target the etcd snapshots go to, and the Kubernetes versions allowed.
//!
//! Files it names (the policy, the target's CA) are read when the site loads, so a bad one
//! is an input error at its own line, and every later stage sees their checked contents.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::audit::{self, AuditPolicy};
use crate::files::yaml::{InputError, Seg, Source};
use crate::path;

/// The `compliance:` block of site.yaml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Compliance {
    /// A file (relative to site.yaml) holding the `audit.k8s.io/v1` Policy every catalogue
    /// cluster's API servers log by. Absent: rackplan's policy (metadata for everything,
    /// request bodies for changes to workloads and RBAC, never the bodies of Secrets,
    /// ConfigMaps or TokenReviews, nothing for health checks, events and lease renewals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) audit_policy: Option<String>,
    /// An S3-compatible store every catalogue cluster sends its etcd snapshots to. Absent:
    /// snapshots stay on the control-plane VMs' disks, and are lost with them (at expiry,
    /// or in an incident).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot_target: Option<SnapshotTarget>,
    /// Kubernetes versions clusters may run: exact (`v1.33.5+rke2r1`) or a release line
    /// (`v1.33`, `v1.33.5`). Absent: the catalogue's own version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) kubernetes_versions: Vec<String>,
}

/// Rancher's `rkeConfig.etcd.s3` (rancher `pkg/apis/rke.cattle.io/v1/etcdsnapshot_types.go`
/// `ETCDSnapshotS3`), which Rancher turns into RKE2's `etcd-s3-*` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotTarget {
    /// `host[:port]` of the S3 API, without a scheme (RKE2's `etcd-s3-endpoint`); absent:
    /// Amazon S3 (`s3.amazonaws.com`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint: Option<String>,
    /// The bucket (3 to 63 lowercase letters, digits, `.` and `-`).
    pub(crate) bucket: String,
    /// The folder inside the bucket; default: the site's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) folder: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) region: Option<String>,
    /// `<namespace>:<name>` of the Rancher cloud credential (an S3 credential: access key
    /// and secret key) Rancher reads the keys from.
    pub(crate) cloud_credential: String,
    /// A PEM file (relative to site.yaml) with the CA that signed the endpoint's
    /// certificate, when a public CA did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) endpoint_ca: Option<String>,
    /// Snapshots kept in the bucket per etcd node (Rancher v2.14 and later; older
    /// versions keep `etcd-snapshot-retention` there too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) retention: Option<u32>,
}

/// The compliance settings with the files they name read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The policy the catalogue delivers (rackplan's, or the site's file).
    pub(crate) audit_policy: AuditPolicy,
    /// Where it came from, for messages: `rackplan's default` or the file.
    pub(crate) audit_policy_origin: String,
    /// The endpoint CA's PEM text.
    pub(crate) endpoint_ca: Option<String>,
}

impl SnapshotTarget {
    /// `rkeConfig.etcd.s3` for this target.
    pub(crate) fn rancher_s3(&self, site_name: &str, ca: Option<&str>) -> serde_json::Value {
        let mut s3 = serde_json::json!({
            "bucket": self.bucket,
            "cloudCredentialName": self.cloud_credential,
            "folder": self.folder.as_deref().unwrap_or(site_name),
        });
        if let Some(e) = &self.endpoint {
            s3["endpoint"] = e.clone().into();
        }
        if let Some(r) = &self.region {
            s3["region"] = r.clone().into();
        }
        if let Some(ca) = ca {
            s3["endpointCA"] = ca.into();
        }
        if let Some(n) = self.retention {
            s3["retention"] = n.into();
        }
        s3
    }
}

/// Check `compliance:` and read the files it names (relative to `dir`).
pub(crate) fn resolve(
    c: Option<&Compliance>,
    src: &Source,
    dir: &Path,
) -> Result<Resolved, InputError> {
    let c = c.cloned().unwrap_or_default();
    let at = |p: Vec<Seg>, msg: String, hint: &str| src.error_at(&p, msg, Some(hint.into()));
    for (i, v) in c.kubernetes_versions.iter().enumerate() {
        if !v.starts_with('v') || v.len() < 3 || v.contains(char::is_whitespace) {
            return Err(at(
                path!["compliance", "kubernetes_versions", i],
                format!("`{v}` is not a Kubernetes version"),
                "write an RKE2 version (`v1.33.5+rke2r1`) or a release line (`v1.33`)",
            ));
        }
    }
    let (audit_policy, audit_policy_origin) = match &c.audit_policy {
        None => (
            audit::default_policy(),
            "rackplan's default policy".to_string(),
        ),
        Some(rel) => {
            let file = dir.join(rel);
            if !file.is_file() {
                return Err(at(
                    path!["compliance", "audit_policy"],
                    format!("no audit policy file at {}", file.display()),
                    "the path is relative to site.yaml; leave the key out for rackplan's policy",
                ));
            }
            let text = crate::files::yaml::read_input(&file)?;
            (audit::load(&file, &text)?, file.display().to_string())
        }
    };
    let mut endpoint_ca = None;
    if let Some(t) = &c.snapshot_target {
        target(t, &at)?;
        if let Some(rel) = &t.endpoint_ca {
            let file = dir.join(rel);
            let key = path!["compliance", "snapshot_target", "endpoint_ca"];
            if !file.is_file() {
                return Err(at(
                    key,
                    format!("no CA file at {}", file.display()),
                    "the path is relative to site.yaml",
                ));
            }
            let pem = crate::files::yaml::read_input(&file)?;
            if !pem.contains("-----BEGIN CERTIFICATE-----") {
                return Err(at(
                    key,
                    format!("{} holds no PEM certificate", file.display()),
                    "give the CA certificate in PEM (`-----BEGIN CERTIFICATE-----`)",
                ));
            }
            endpoint_ca = Some(pem);
        }
    }
    Ok(Resolved {
        audit_policy,
        audit_policy_origin,
        endpoint_ca,
    })
}

fn target(
    t: &SnapshotTarget,
    at: &impl Fn(Vec<Seg>, String, &str) -> InputError,
) -> Result<(), InputError> {
    let key = |k: &str| path!["compliance", "snapshot_target", k];
    let b = &t.bucket;
    let bucket_ok = (3..=63).contains(&b.len())
        && b.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && b.starts_with(|c: char| c.is_ascii_alphanumeric())
        && b.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !bucket_ok {
        return Err(at(
            key("bucket"),
            format!("`{b}` is not an S3 bucket name"),
            "3 to 63 lowercase letters, digits, `.` and `-`, starting and ending with a letter or digit",
        ));
    }
    if let Some(e) = &t.endpoint
        && (e.contains("://") || e.contains('/') || e.is_empty() || e.contains(char::is_whitespace))
    {
        return Err(at(
            key("endpoint"),
            format!("`{e}` is not `host[:port]`"),
            "RKE2 takes the S3 endpoint without a scheme or path, e.g. `s3.example.net:9000`; it speaks HTTPS",
        ));
    }
    if t.cloud_credential
        .split_once(':')
        .is_none_or(|(a, b)| a.is_empty() || b.is_empty() || b.contains(':'))
    {
        return Err(at(
            key("cloud_credential"),
            format!("`{}` is not `<namespace>:<name>`", t.cloud_credential),
            "Rancher names cloud credentials like `cattle-global-data:cc-abcde`",
        ));
    }
    if let Some(f) = &t.folder
        && (f.is_empty() || f.starts_with('/') || f.contains(char::is_whitespace))
    {
        return Err(at(
            key("folder"),
            format!("`{f}` is not a folder name"),
            "a relative path inside the bucket, e.g. `etcd/example`",
        ));
    }
    Ok(())
}
