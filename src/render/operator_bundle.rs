//! `operator/`: what the request operator needs in the clusters, written beside the
//! catalogue it delivers from.
//!
//! Rancher's cluster takes the `ClusterRequest` CRD; the operator's ServiceAccount with a
//! ClusterRole for what spans namespaces (requests and their status and finalizers in the
//! team namespaces, the namespaces' team labels, events on the requests, the team's
//! `ClusterRoleTemplateBinding`s in each delivered cluster's `c-m-...` namespace) and a
//! Role in the catalogue's namespace for the rest (the Rancher Clusters and machine
//! configs it makes and deletes, their etcd snapshot records, its Lease, the quota
//! ConfigMap by name); and one namespace per team of the catalogue's scenario, labelled
//! `rackplan.io/team: <team>`, where a Role lets the team's principals (bound as RBAC
//! groups, or users for `local://u-...`) make, read, change and delete ClusterRequests and
//! nothing else: who may spend a team's quota is decided by the API server's RBAC, not by
//! what a request says. Harvester's cluster takes a ClusterRole that only reads the fleet
//! (the kinds a dump holds). When Rancher and Harvester are one cluster,
//! `kubectl apply -k operator/` applies it all; else the ClusterRole and its binding go to
//! Harvester, bound to the identity of the operator's Harvester kubeconfig.

use serde_json::{Value, json};

use super::manifests::SITE_LABEL;
use super::offers::Offers;
use super::operator_deploy::{self, DeployError};
use crate::operator::teams::{PrincipalKind, principal_kind};
use crate::site::Site;

/// Name of the ServiceAccount, the Role, the ClusterRole and the Lease.
pub(crate) const NAME: &str = "rackplan-operator";
/// The ConfigMap of team quotas the Role may read.
pub(crate) const QUOTAS: &str = "rackplan-quotas";
/// The Role and RoleBinding of each team namespace.
pub(crate) const REQUESTER: &str = "rackplan-requester";

/// One team's namespace and who may make requests there.
#[derive(Debug, Clone)]
pub(crate) struct TeamNamespace {
    pub(crate) team: String,
    pub(crate) namespace: String,
    pub(crate) principals: Vec<String>,
}

/// The team namespaces of a scenario's teams (`team-<name>` unless the team names one),
/// or why one cannot be made, at the team's key.
pub(crate) fn team_namespaces(
    loaded: &crate::simulate::scenario::Loaded,
) -> Result<Vec<TeamNamespace>, Box<crate::files::input_error::InputError>> {
    use crate::path;
    let mut out = Vec::new();
    for (i, t) in loaded.scenario.teams.iter().enumerate() {
        let at = |field: &str, msg: String, hint: &str| {
            Box::new(
                loaded
                    .source
                    .error_at(&path!["teams", i, field], msg, Some(hint.to_string())),
            )
        };
        if !crate::operator::teams::is_label_value(&t.name) {
            return Err(at(
                "name",
                format!("team `{}` cannot be a label value", t.name.escape_debug()),
                "at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit",
            ));
        }
        let ns = t
            .namespace
            .clone()
            .unwrap_or_else(|| format!("team-{}", t.name.to_lowercase()));
        if !crate::site::types::is_dns_label(&ns, 63) {
            return Err(at(
                "namespace",
                format!("`{}` cannot name a namespace", ns.escape_debug()),
                "lowercase letters, digits and `-`, at most 63; set `namespace:` for this team",
            ));
        }
        for (j, p) in t.principals.iter().enumerate() {
            if let Err(e) = principal_kind(p) {
                return Err(Box::new(loaded.source.error_at(
                    &path!["teams", i, "principals", j],
                    e.to_string(),
                    Some("e.g. github_team://1234, okta_group://platform, local://u-abcde".into()),
                )));
            }
        }
        if let Some(r) = &t.role
            && !crate::operator::teams::ROLES.contains(&r.as_str())
        {
            return Err(at(
                "role",
                format!("`{}` is not a role a team may be given", r.escape_debug()),
                "cluster-member or cluster-owner",
            ));
        }
        out.push(TeamNamespace {
            team: t.name.clone(),
            namespace: ns,
            principals: t.principals.clone(),
        });
    }
    Ok(out)
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn docs(site: &Site, namespace: &str, teams: &[TeamNamespace]) -> Vec<(&'static str, Vec<Value>)> {
    let labels = json!({SITE_LABEL: site.name.0, "app.kubernetes.io/name": NAME});
    let mut crd = serde_json::to_value(crate::operator::crd()).expect("the CRD serializes");
    crd["metadata"]["labels"] = labels.clone();
    let meta = |kind: &str| {
        let mut m = json!({"name": NAME, "labels": labels});
        if kind != "ClusterRole" && kind != "ClusterRoleBinding" {
            m["namespace"] = json!(namespace);
        }
        m
    };
    let rbac = "rbac.authorization.k8s.io/v1";
    let sa =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta("ServiceAccount")});
    let mut lease_rule = rule(&["coordination.k8s.io"], &["leases"], &["get", "update"]);
    lease_rule["resourceNames"] = json!([NAME]);
    let mut quota_rule = rule(&[""], &["configmaps"], &["get"]);
    quota_rule["resourceNames"] = json!([QUOTAS]);
    let role = json!({
        "apiVersion": rbac,
        "kind": "Role",
        "metadata": meta("Role"),
        "rules": [
            rule(&["provisioning.cattle.io"], &["clusters"], &["get", "list", "watch", "create", "patch", "delete"]),
            rule(&["rke-machine-config.cattle.io"], &["harvesterconfigs"], &["get", "list", "create", "delete"]),
            rule(&["rke.cattle.io"], &["etcdsnapshots"], &["get", "list"]),
            // Rancher's CAPI machines of each delivered cluster: its phases, measured.
            rule(&["cluster.x-k8s.io"], &["machines"], &["get", "list", "watch"]),
            rule(&["coordination.k8s.io"], &["leases"], &["create"]),
            lease_rule,
            quota_rule,
        ],
    });
    let subject = json!([{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}]);
    let binding = json!({
        "apiVersion": rbac,
        "kind": "RoleBinding",
        "metadata": meta("RoleBinding"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
        "subjects": subject,
    });
    let mut requests_meta = meta("ClusterRole");
    requests_meta["name"] = json!(format!("{NAME}-requests"));
    let requests = json!({
        "apiVersion": rbac,
        "kind": "ClusterRole",
        "metadata": requests_meta,
        "rules": [
            rule(&["rackplan.io"], &["clusterrequests"], &["get", "list", "watch", "patch"]),
            rule(&["rackplan.io"], &["clusterrequests/status"], &["get", "update", "patch"]),
            // Owner references with blockOwnerDeletion need it where the
            // OwnerReferencesPermissionEnforcement admission plugin runs.
            rule(&["rackplan.io"], &["clusterrequests/finalizers"], &["update"]),
            rule(&[""], &["namespaces"], &["get", "list", "watch"]),
            rule(&["events.k8s.io"], &["events"], &["create", "patch"]),
            rule(&["management.cattle.io"], &["clusterroletemplatebindings"], &["get", "list", "create", "delete"]),
        ],
    });
    let mut requests_binding_meta = meta("ClusterRoleBinding");
    requests_binding_meta["name"] = json!(format!("{NAME}-requests"));
    let requests_binding = json!({
        "apiVersion": rbac,
        "kind": "ClusterRoleBinding",
        "metadata": requests_binding_meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": format!("{NAME}-requests")},
        "subjects": subject,
    });
    let reader = json!({
        "apiVersion": rbac,
        "kind": "ClusterRole",
        "metadata": meta("ClusterRole"),
        "rules": [
            rule(&[""], &["nodes"], &["list"]),
            rule(&["kubevirt.io"], &["virtualmachines", "virtualmachineinstances"], &["list"]),
            rule(&["longhorn.io"], &["nodes", "volumes", "replicas", "settings"], &["list"]),
            rule(&["harvesterhci.io"], &["settings"], &["list"]),
        ],
    });
    let reader_binding = json!({
        "apiVersion": rbac,
        "kind": "ClusterRoleBinding",
        "metadata": meta("ClusterRoleBinding"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
        "subjects": subject,
    });
    let mut team_docs = Vec::new();
    for t in teams {
        let tl = json!({
            SITE_LABEL: site.name.0,
            "app.kubernetes.io/name": NAME,
            crate::operator::resource::TEAM_LABEL: t.team,
        });
        team_docs.push(json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": t.namespace, "labels": tl},
        }));
        team_docs.push(json!({
            "apiVersion": rbac,
            "kind": "Role",
            "metadata": {"name": REQUESTER, "namespace": t.namespace, "labels": tl},
            "rules": [
                rule(&["rackplan.io"], &["clusterrequests"], &["get", "list", "watch", "create", "update", "patch", "delete"]),
                rule(&["rackplan.io"], &["clusterrequests/status"], &["get"]),
                rule(&["", "events.k8s.io"], &["events"], &["get", "list", "watch"]),
            ],
        }));
        let subjects: Vec<Value> = t
            .principals
            .iter()
            .map(|p| match principal_kind(p) {
                Ok(PrincipalKind::User) => json!({
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "User",
                    "name": p.strip_prefix("local://").unwrap_or(p),
                }),
                _ => json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": p}),
            })
            .collect();
        if !subjects.is_empty() {
            team_docs.push(json!({
                "apiVersion": rbac,
                "kind": "RoleBinding",
                "metadata": {"name": REQUESTER, "namespace": t.namespace, "labels": tl},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": REQUESTER},
                "subjects": subjects,
            }));
        }
    }
    let mut out = vec![
        ("00-clusterrequests-crd.yaml", vec![crd]),
        (
            "10-rancher-rbac.yaml",
            vec![sa, role, binding, requests, requests_binding],
        ),
        (
            "20-harvester-fleet-reader.yaml",
            vec![reader, reader_binding],
        ),
    ];
    if !team_docs.is_empty() {
        out.push(("30-team-namespaces.yaml", team_docs));
    }
    out
}

/// The files of `operator/` (path, text), for the catalogue's namespace.
pub(crate) fn files(
    site: &Site,
    namespace: &str,
    teams: &[TeamNamespace],
    offers: &Offers,
) -> Result<Vec<(String, String)>, DeployError> {
    let header = "# The request operator (`rackplan operator`): see the README.\n\
                  # Generated by rackplan from site.yaml; re-render instead of editing.\n";
    let mut out = Vec::new();
    let mut names = Vec::new();
    let mut all = docs(site, namespace, teams);
    let target = operator_deploy::Target {
        site,
        namespace,
        name: NAME,
    };
    all.extend(operator_deploy::docs(target, offers)?);
    for (name, docs) in all {
        names.push(name);
        out.push((
            format!("operator/{name}"),
            super::manifests::yaml_stream(header, &docs),
        ));
    }
    let k = json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": names,
    });
    out.push((
        "operator/kustomization.yaml".into(),
        format!(
            "# `kubectl apply -k operator/` on Rancher's cluster (the CRD, the Role and the\n\
             # Deployment); the fleet reader goes to Harvester's cluster when it is another one.\n\
             # Generated by rackplan from site.yaml; re-render instead of editing.\n{}",
            crate::files::yaml::to_string(&k)
        ),
    ));
    out.extend(operator_deploy::extra_files(target, offers));
    Ok(out)
}
