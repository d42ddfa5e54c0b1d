use serde_json::json;

use super::*;

/// The example site's rendered `standard` template (committed, and held to the render by
/// CI): its Cluster and its control-plane machine config.
fn example() -> (Value, Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("iso-config/example/catalogue/standard.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let docs = crate::simulate::scenario::objects(&text).unwrap();
    (docs[0].clone(), docs[1].clone())
}

const ANY: Terms<'static> = Terms { versions: &[] };

fn verdicts(checks: &[PromiseCheck]) -> Vec<(Promise, Verdict)> {
    checks.iter().map(|c| (c.promise, c.verdict)).collect()
}

#[test]
fn the_example_keeps_every_promise() {
    let (cluster, cp) = example();
    let allowed = vec!["v1.33".to_string()];
    let checks = review_cluster(&cluster, &Terms { versions: &allowed });
    assert_eq!(
        verdicts(&checks),
        Promise::CLUSTER
            .iter()
            .map(|p| (*p, Verdict::Kept))
            .collect::<Vec<_>>(),
        "{checks:#?}"
    );
    assert_eq!(checks[1].key, "spec.rkeConfig.etcd.s3");
    assert!(
        checks[1].detail.starts_with("s3://"),
        "{}",
        checks[1].detail
    );
    assert!(
        checks[2].detail.contains("logs at Metadata"),
        "{}",
        checks[2].detail
    );
    assert_eq!(checks[4].detail, "v1.33.5+rke2r1, allowed by `v1.33`");
    // The prepared image: no user-data at all.
    assert_eq!(review_machine_config(&cp).verdict, Verdict::Kept);
}

#[test]
fn a_cluster_without_its_audit_policy_and_s3_target_names_both_keys() {
    let (template, _) = example();
    let mut edited = template.clone();
    let rke = edited["spec"]["rkeConfig"].as_object_mut().unwrap();
    rke["machineGlobalConfig"]
        .as_object_mut()
        .unwrap()
        .remove("audit-policy-file");
    rke["etcd"].as_object_mut().unwrap().remove("s3");
    let broken = drift(&template, &edited, &ANY);
    let named: Vec<(Promise, &str)> = broken.iter().map(|c| (c.promise, c.key.as_str())).collect();
    assert_eq!(
        named,
        vec![
            (Promise::SnapshotsOffCluster, "spec.rkeConfig.etcd.s3"),
            (
                Promise::AuditLogged,
                "spec.rkeConfig.machineGlobalConfig.audit-policy-file"
            ),
        ]
    );
    assert!(broken.iter().all(|c| c.verdict == Verdict::Broken));
    // The audit log path is still there: the finding says why that logs nothing.
    assert!(
        broken[1]
            .detail
            .starts_with("audit-log-path is set but there is no policy"),
        "{}",
        broken[1].detail
    );
    // No edit, no drift; a template that never kept a promise is no drift either.
    assert_eq!(drift(&template, &template, &ANY), Vec::new());
    assert_eq!(drift(&edited, &edited, &ANY), Vec::new());
}

#[test]
fn a_policy_that_logs_nothing_or_does_not_load_breaks_the_audit_promise() {
    let (mut cluster, _) = example();
    let g = &mut cluster["spec"]["rkeConfig"]["machineGlobalConfig"];
    g["audit-policy-file"] =
        json!("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n");
    let c = &review_cluster(&cluster, &ANY)[2];
    assert_eq!(c.verdict, Verdict::Broken);
    assert!(c.detail.contains("logs nothing"), "{}", c.detail);
    // A path where Rancher expects the content: kube-apiserver would not start.
    cluster["spec"]["rkeConfig"]["machineGlobalConfig"]["audit-policy-file"] =
        json!("/etc/rancher/rke2/audit-policy.yaml");
    let c = &review_cluster(&cluster, &ANY)[2];
    assert_eq!(c.verdict, Verdict::Broken);
    assert!(
        c.detail.starts_with("not a policy kube-apiserver loads"),
        "{}",
        c.detail
    );
    // A per-selector policy that logs nothing breaks it too, under its own key.
    cluster["spec"]["rkeConfig"]["machineGlobalConfig"]
        .as_object_mut()
        .unwrap()
        .remove("audit-policy-file");
    cluster["spec"]["rkeConfig"]["machineSelectorConfig"] = json!([
        {"config": {"cloud-provider-name": "harvester"}},
        {"config": {"audit-policy-file": "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"}},
    ]);
    let c = &review_cluster(&cluster, &ANY)[2];
    assert_eq!(
        (c.verdict, c.key.as_str()),
        (
            Verdict::Broken,
            "spec.rkeConfig.machineSelectorConfig[1].config.audit-policy-file"
        )
    );
    // Method 2 (a file from a Secret): not in the object, so not checked.
    cluster["spec"]["rkeConfig"]["machineSelectorConfig"] = json!([]);
    cluster["spec"]["rkeConfig"]["machineGlobalConfig"]["kube-apiserver-arg"] = json!([
        "audit-policy-file=/etc/audit/policy.yaml",
        "audit-log-path=/var/log/audit.log"
    ]);
    assert_eq!(review_cluster(&cluster, &ANY)[2].verdict, Verdict::Unknown);
}

#[test]
fn snapshots_follow_rancher_and_rke2() {
    let (mut cluster, _) = example();
    cluster["spec"]["rkeConfig"]["etcd"] = json!({"disableSnapshots": true});
    let c = review_cluster(&cluster, &ANY);
    assert_eq!(
        (c[0].verdict, c[0].key.as_str(), c[1].verdict),
        (
            Verdict::Broken,
            "spec.rkeConfig.etcd.disableSnapshots",
            Verdict::Broken
        )
    );
    // No schedule anywhere: RKE2's own (every 12 hours, 5 kept) still runs.
    cluster["spec"]["rkeConfig"]["etcd"] = json!({});
    let g = cluster["spec"]["rkeConfig"]["machineGlobalConfig"]
        .as_object_mut()
        .unwrap();
    g.remove("etcd-snapshot-schedule-cron");
    g.remove("etcd-snapshot-retention");
    let c = review_cluster(&cluster, &ANY);
    assert_eq!(c[0].verdict, Verdict::Kept);
    assert!(c[0].detail.contains("0 */12 * * *"), "{}", c[0].detail);
    // S3 on (a bucket) but no credential: no keys reach RKE2.
    cluster["spec"]["rkeConfig"]["etcd"] =
        json!({"s3": {"bucket": "b", "endpoint": "s3.example.net"}});
    let c = &review_cluster(&cluster, &ANY)[1];
    assert_eq!(
        (c.verdict, c.key.as_str()),
        (
            Verdict::Broken,
            "spec.rkeConfig.etcd.s3.cloudCredentialName"
        )
    );
    // The bucket from the credential: not in the object.
    cluster["spec"]["rkeConfig"]["etcd"] =
        json!({"s3": {"cloudCredentialName": "cattle-global-data:cc-s3"}});
    assert_eq!(review_cluster(&cluster, &ANY)[1].verdict, Verdict::Unknown);
}

#[test]
fn the_default_ingress_depends_on_the_release() {
    let (mut cluster, _) = example();
    let g = &mut cluster["spec"]["rkeConfig"]["machineGlobalConfig"];
    g["disable"] = json!(["rke2-ingress-nginx"]);
    assert_eq!(review_cluster(&cluster, &ANY)[3].verdict, Verdict::Kept);
    // v1.36 deploys Traefik by default.
    cluster["spec"]["kubernetesVersion"] = json!("v1.36.1+rke2r1");
    let c = &review_cluster(&cluster, &ANY)[3];
    assert_eq!(c.verdict, Verdict::Broken);
    assert!(c.detail.contains("rke2-traefik"), "{}", c.detail);
    cluster["spec"]["rkeConfig"]["machineGlobalConfig"]["ingress-controller"] = json!("none");
    assert_eq!(review_cluster(&cluster, &ANY)[3].verdict, Verdict::Kept);
    cluster["spec"]["rkeConfig"]["machineGlobalConfig"]["ingress-controller"] = json!(["traefik"]);
    let c = &review_cluster(&cluster, &ANY)[3];
    assert_eq!(
        (c.verdict, c.key.as_str()),
        (
            Verdict::Broken,
            "spec.rkeConfig.machineGlobalConfig.ingress-controller"
        )
    );
}

#[test]
fn versions_are_rke2_releases_on_the_allowed_lines() {
    let (mut cluster, _) = example();
    let lines = vec!["v1.32".to_string(), "v1.33.5+rke2r2".to_string()];
    let terms = Terms { versions: &lines };
    let c = &review_cluster(&cluster, &terms)[4];
    assert_eq!(c.verdict, Verdict::Broken);
    assert!(c.detail.contains("not among the allowed"), "{}", c.detail);
    cluster["spec"]["kubernetesVersion"] = json!("v1.32.9+rke2r1");
    assert_eq!(review_cluster(&cluster, &terms)[4].verdict, Verdict::Kept);
    // `v1.3` is not a line of v1.32.
    let short = vec!["v1.3".to_string()];
    assert_eq!(
        review_cluster(&cluster, &Terms { versions: &short })[4].verdict,
        Verdict::Broken
    );
    cluster["spec"]["kubernetesVersion"] = json!("v1.32.9+k3s1");
    assert_eq!(review_cluster(&cluster, &ANY)[4].verdict, Verdict::Broken);
}

#[test]
fn boot_time_installs_are_found_in_cloud_config_and_scripts() {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let generic = json!({"userData": b64(crate::render::catalogue::GENERIC_USER_DATA)});
    let c = review_machine_config(&generic);
    assert_eq!(c.verdict, Verdict::Broken);
    assert!(c.detail.contains("qemu-guest-agent"), "{}", c.detail);
    assert!(c.detail.contains("package_update"), "{}", c.detail);
    // Raw (not base64) text is read as it is, as the driver does.
    let raw = json!({"userData": "#cloud-config\nruncmd:\n  - apt-get install -y nginx\n"});
    assert_eq!(review_machine_config(&raw).verdict, Verdict::Broken);
    let script = json!({"userData": b64("#!/bin/sh\ncurl -sfL https://get.example | sh\n")});
    assert_eq!(review_machine_config(&script).verdict, Verdict::Broken);
    let quiet = json!({"userData": b64("#cloud-config\nruncmd:\n  - [systemctl, enable, --now, qemu-guest-agent.service]\n")});
    assert_eq!(review_machine_config(&quiet).verdict, Verdict::Kept);
}
