//! The team's access to its cluster, through Rancher: one `management.cattle.io/v3`
//! `ClusterRoleTemplateBinding` per principal of the team, in the namespace named after
//! Rancher's management cluster id (`c-m-...`, the provisioning Cluster's
//! `status.clusterName`), with `clusterName` the same id, the team's role template
//! (`cluster-member` by default) and the principal as `groupPrincipalName` or
//! `userPrincipalName` (Rancher v2.14 `pkg/apis/management.cattle.io/v3/authz_types.go`;
//! Rancher builds its own bindings the same way, `pkg/provisioningv2/kubeconfig/manager.go`).
//! Each member then makes a kubeconfig of their own with their own Rancher token
//! (`POST /v3/clusters/<id>?action=generateKubeconfig`); the operator never reads, copies
//! or hands out the cluster's admin kubeconfig (`status.clientSecretName`).
//!
//! A binding's name is derived from the request's UID, the principal and the role, and it
//! carries the request's UID label: a restart never makes a second one, and a binding the
//! operator did not make is never touched. Bindings go before the cluster does.

use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};
use serde_json::{Value, json};
use sha2::Digest as _;

use super::context::{Context, OperatorError, api_err};
use super::resource::{Access, AccessBinding, REQUEST_ANNOTATION, REQUEST_UID_LABEL, TEAM_LABEL};
use super::teams::{PrincipalKind, TeamConfig, principal_kind};

pub(super) fn binding_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("management.cattle.io", "v3", "ClusterRoleTemplateBinding"),
        "clusterroletemplatebindings",
    )
}

/// Whether `id` can be Rancher's management cluster id (a namespace name).
pub fn valid_cluster_id(id: &str) -> bool {
    crate::site::types::is_dns_label(id, 63)
}

/// The binding's name for one principal and role of one request.
pub fn binding_name(uid: &str, principal: &str, role: &str) -> String {
    let d = sha2::Sha256::digest(format!("{uid}\n{principal}\n{role}").as_bytes());
    let h: String = d[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("rackplan-{h}")
}

/// The binding object for `principal` (a valid principal id).
pub fn binding_object(
    cluster_id: &str,
    name: &str,
    principal: &str,
    role: &str,
    uid: &str,
    team: &str,
    request: &str,
) -> Value {
    let subject = match principal_kind(principal) {
        Ok(PrincipalKind::User) => "userPrincipalName",
        _ => "groupPrincipalName",
    };
    json!({
        "apiVersion": "management.cattle.io/v3",
        "kind": "ClusterRoleTemplateBinding",
        "metadata": {
            "name": name,
            "namespace": cluster_id,
            "labels": {REQUEST_UID_LABEL: uid, TEAM_LABEL: team},
            "annotations": {REQUEST_ANNOTATION: request},
        },
        "clusterName": cluster_id,
        "roleTemplateName": role,
        subject: principal,
    })
}

/// How a member of the team gets in, in words.
pub fn instructions(rancher_url: Option<&str>, cluster_id: &str) -> (Option<String>, String) {
    let base = rancher_url.map(|u| u.trim_end_matches('/').to_string());
    let ui = base
        .as_ref()
        .map(|b| format!("{b}/dashboard/c/{cluster_id}/explorer"));
    let kubeconfig = format!(
        "with your own Rancher API token: POST {}/v3/clusters/{cluster_id}?action=generateKubeconfig (or \"Download KubeConfig\" on the cluster in Rancher's UI); the reply's `config` is a kubeconfig of your own",
        base.as_deref().unwrap_or("<rancher>")
    );
    (ui, kubeconfig)
}

/// Make the team's bindings on `cluster_id` (those missing), and say what was granted.
pub(super) async fn grant(
    ctx: &Context,
    uid: &str,
    request: &str,
    team: &TeamConfig,
    cluster_id: &str,
) -> Result<Access, OperatorError> {
    let api = kube::Api::<DynamicObject>::namespaced_with(
        ctx.rancher.clone(),
        cluster_id,
        &binding_resource(),
    );
    let mut bindings = Vec::new();
    for p in &team.principals {
        let name = binding_name(uid, p, &team.role);
        let existing = api.get_opt(&name).await.map_err(api_err(format!(
            "reading ClusterRoleTemplateBinding {cluster_id}/{name}"
        )))?;
        match existing {
            Some(o) if o.labels().get(REQUEST_UID_LABEL).is_some_and(|u| u == uid) => {}
            Some(_) => {
                return Err(OperatorError::Config {
                    what: format!("ClusterRoleTemplateBinding {cluster_id}/{name}"),
                    message:
                        "exists and was not made for this request; the operator leaves it alone"
                            .into(),
                });
            }
            None => {
                ctx.fence.check()?;
                let obj: DynamicObject = serde_json::from_value(binding_object(
                    cluster_id, &name, p, &team.role, uid, &team.name, request,
                ))
                .map_err(|e| OperatorError::Study(e.to_string()))?;
                match api.create(&PostParams::default(), &obj).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(s)) if s.code == 409 => {}
                    Err(e) => {
                        return Err(api_err(format!(
                            "creating ClusterRoleTemplateBinding {cluster_id}/{name}"
                        ))(e));
                    }
                }
            }
        }
        bindings.push(AccessBinding {
            namespace: cluster_id.to_string(),
            name,
            principal: p.clone(),
            role: team.role.clone(),
        });
    }
    let (ui, kubeconfig) = instructions(ctx.s.rancher_url.as_deref(), cluster_id);
    Ok(Access {
        cluster_id: cluster_id.to_string(),
        bindings,
        ui,
        kubeconfig,
    })
}

use kube::ResourceExt as _;

/// Delete the bindings of request `uid` on `cluster_id`; `true` once none is left.
pub(super) async fn revoke(
    ctx: &Context,
    uid: &str,
    cluster_id: &str,
) -> Result<bool, OperatorError> {
    if !valid_cluster_id(cluster_id) {
        return Ok(true);
    }
    let api = kube::Api::<DynamicObject>::namespaced_with(
        ctx.rancher.clone(),
        cluster_id,
        &binding_resource(),
    );
    let ours = match api
        .list(&ListParams::default().labels(&format!("{REQUEST_UID_LABEL}={uid}")))
        .await
    {
        Ok(l) => l.items,
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(true),
        Err(e) => {
            return Err(api_err(format!(
                "listing the ClusterRoleTemplateBindings of {cluster_id}"
            ))(e));
        }
    };
    if ours.is_empty() {
        return Ok(true);
    }
    for b in ours {
        // The label selector found it; the label is checked again before acting.
        if b.labels().get(REQUEST_UID_LABEL).is_none_or(|u| u != uid) {
            continue;
        }
        ctx.fence.check()?;
        match api.delete(&b.name_any(), &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => {
                return Err(api_err(format!(
                    "deleting ClusterRoleTemplateBinding {cluster_id}/{}",
                    b.name_any()
                ))(e));
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binding_names_its_cluster_role_and_one_subject() {
        let g = binding_object(
            "c-m-7x2k9abc",
            "rackplan-0a",
            "github_team://1234",
            "cluster-member",
            "uid-1",
            "paiement",
            "team-paiement/ci",
        );
        assert_eq!(g["metadata"]["namespace"], "c-m-7x2k9abc");
        assert_eq!(g["clusterName"], "c-m-7x2k9abc");
        assert_eq!(g["roleTemplateName"], "cluster-member");
        assert_eq!(g["groupPrincipalName"], "github_team://1234");
        assert!(g.get("userPrincipalName").is_none());
        assert_eq!(g["metadata"]["labels"][REQUEST_UID_LABEL], "uid-1");
        let u = binding_object(
            "c-m-1",
            "n",
            "local://u-abc",
            "cluster-owner",
            "u",
            "t",
            "r",
        );
        assert_eq!(u["userPrincipalName"], "local://u-abc");
        assert!(u.get("groupPrincipalName").is_none());
        assert_eq!(
            binding_name("uid-1", "github_team://1234", "cluster-member"),
            binding_name("uid-1", "github_team://1234", "cluster-member")
        );
        assert_ne!(
            binding_name("uid-1", "github_team://1234", "cluster-member"),
            binding_name("uid-2", "github_team://1234", "cluster-member")
        );
        assert!(valid_cluster_id("c-m-7x2k9abc"));
        assert!(!valid_cluster_id("../x"));
    }

    #[test]
    fn the_instructions_name_the_ui_and_the_api_call_never_a_secret() {
        let (ui, how) = instructions(Some("https://rancher.example.com/"), "c-m-abc");
        assert_eq!(
            ui.as_deref(),
            Some("https://rancher.example.com/dashboard/c/c-m-abc/explorer")
        );
        assert!(how.contains(
            "POST https://rancher.example.com/v3/clusters/c-m-abc?action=generateKubeconfig"
        ));
        assert!(!how.contains("Secret") && !how.contains("clientSecretName"));
    }
}
