//! `check`'s findings about the catalogue's promises: the compliance rules applied to what
//! every shape's `Cluster` shares (`site::rke::shared_spec`, the object `render` writes),
//! and the image the VMs boot from. An audit log path without a policy that logs, or a
//! version the site does not allow, is an error (render refuses it); snapshots that stay on
//! the cluster's own VMs, snapshots off, or the default ingress on are warnings; a generic
//! image is a note.

use serde_json::json;

use super::compliance::{Promise, Terms, Verdict, review_cluster};
use super::findings::{Finding, Severity};
use super::inputs::Inputs;
use crate::site::ImageKind;

const SITE: &str = "site";

/// The findings about the catalogue (none without one).
pub(crate) fn catalogue_findings(inputs: &Inputs) -> Vec<Finding> {
    let site = &inputs.site.site;
    let Some(c) = &site.catalogue else {
        return Vec::new();
    };
    let spec = crate::site::rke::shared_spec(site, c, &inputs.site.compliance);
    let audit_path = spec["rkeConfig"]["machineGlobalConfig"]["kube-apiserver-arg"]
        .as_array()
        .is_some_and(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .any(|s| s.starts_with("audit-log-path="))
        });
    let versions = crate::site::rke::allowed_versions(site, c);
    let checks = review_cluster(
        &json!({"spec": spec}),
        &Terms {
            versions: &versions,
        },
    );
    let mut out = Vec::new();
    for ch in checks.iter().filter(|c| c.verdict == Verdict::Broken) {
        let what = format!("catalogue clusters: {} ({})", ch.detail, ch.key);
        let f = match ch.promise {
            Promise::AuditLogged => Finding::new(
                SITE,
                if audit_path {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                "audit-policy",
                what,
                "the reference design promises audited clusters; kube-apiserver logs only what its policy says, and without a policy nothing",
                "leave `audit-policy-file` out of catalogue.machine_global_config (the compliance policy goes there), and give `compliance.audit_policy` a policy with a rule above None, or drop it for rackplan's",
            ),
            Promise::SnapshotsOffCluster => Finding::new(
                SITE,
                Severity::Warning,
                "etcd-snapshots-local",
                what,
                "snapshots on the control-plane VMs' own disks go with the VMs: at the cluster's expiry, and in an incident that takes them",
                "name an S3-compatible store under `compliance.snapshot_target` (endpoint, bucket, cloud_credential)",
            ),
            Promise::SnapshotsScheduled => Finding::new(
                SITE,
                Severity::Warning,
                "etcd-snapshots-off",
                what,
                "without snapshots a lost etcd quorum loses the cluster",
                "remove the key that disables snapshots from catalogue.machine_global_config",
            ),
            Promise::DefaultIngressOff => Finding::new(
                SITE,
                Severity::Warning,
                "default-ingress",
                what,
                "the reference design leaves ingress to each team: a bundled controller listens on every node's ports 80 and 443",
                "keep `disable` (rke2-ingress-nginx, rke2-traefik) in catalogue.machine_global_config, or set `ingress-controller: none`",
            ),
            Promise::VersionAllowed => Finding::new(
                SITE,
                Severity::Error,
                "kubernetes-version",
                what,
                "the catalogue offers a version the site does not allow, or one that is not RKE2 (the compliance settings are RKE2's)",
                "set catalogue.kubernetes_version to an RKE2 release on a line of `compliance.kubernetes_versions`",
            ),
            Promise::ExpiryEnforced | Promise::NothingInstalledAtBoot => continue,
        };
        out.push(f);
    }
    let image = match &c.image {
        Some(n) => site.images.iter().find(|i| i.name.0 == *n),
        None => site.images.first(),
    };
    if let Some(img) = image.filter(|i| i.kind == ImageKind::Generic) {
        out.push(Finding::new(
            SITE,
            Severity::Info,
            "image-generic",
            format!(
                "catalogue image `{}` is generic: every VM installs qemu-guest-agent at first boot",
                img.name
            ),
            "a boot that refreshes the package index and installs a package takes minutes and needs a reachable mirror; the reference design's prepared image boots in about 90 seconds",
            "build an image with qemu-guest-agent installed and enabled, and mark it `kind: prepared`",
        ));
    }
    out
}
