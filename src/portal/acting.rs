//! The Kubernetes calls the portal makes for a user, each with a client built for the
//! request from the base configuration (the API server's address and CA) and the user's
//! own bearer token in place of any credential the base carries. What the user may see
//! and do is what the API server's RBAC answers for that token: nothing here filters.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::operator::ClusterRequest;
use crate::operator::resource::{GROUP, PROTECT_ANNOTATION};

/// Most requests listed in one team namespace.
const MAX_LISTED: u32 = 500;

/// What the API server said (or that it could not be asked), in the words a page shows.
#[derive(Debug, thiserror::Error)]
pub enum ApiFailure {
    /// The token was not accepted: sign in again.
    #[error("the API server did not accept your token ({0})")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// The API server refused the object (422, 400).
    #[error("{0}")]
    Invalid(String),
    /// No answer, or an answer that is not the API's.
    #[error("the API server cannot be reached: {0}")]
    Down(String),
}

impl ApiFailure {
    /// The HTTP status the page is served with.
    pub fn status(&self) -> u16 {
        match self {
            ApiFailure::Unauthorized(_) => 401,
            ApiFailure::Forbidden(_) => 403,
            ApiFailure::NotFound(_) => 404,
            ApiFailure::Conflict(_) => 409,
            ApiFailure::Invalid(_) => 422,
            ApiFailure::Down(_) => 502,
        }
    }
}

fn failure(e: kube::Error) -> ApiFailure {
    match e {
        kube::Error::Api(s) => match s.code {
            401 => ApiFailure::Unauthorized(s.message),
            403 => ApiFailure::Forbidden(s.message),
            404 => ApiFailure::NotFound(s.message),
            409 => ApiFailure::Conflict(s.message),
            400 | 422 => ApiFailure::Invalid(s.message),
            _ => ApiFailure::Down(format!("{} {}", s.code, s.message)),
        },
        // The client's own errors never carry the token (it travels in a header only).
        other => ApiFailure::Down(other.to_string()),
    }
}

/// Is `token` shaped like a bearer token (printable ASCII, no space, bounded)? Anything
/// else is refused before it reaches a header.
pub fn token_shaped(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= super::session::MAX_TOKEN
        && token.bytes().all(|b| b.is_ascii_graphic())
}

/// A client acting as the user of `token`.
pub fn client_as(base: &kube::Config, token: &str) -> Result<kube::Client, ApiFailure> {
    let mut cfg = base.clone();
    cfg.auth_info = kube::config::AuthInfo {
        token: Some(token.to_string().into()),
        ..Default::default()
    };
    kube::Client::try_from(cfg).map_err(|e| ApiFailure::Down(e.to_string()))
}

/// A client acting as the user a proxy asserted: the impersonator's credentials, with
/// `Impersonate-User` and `Impersonate-Group` on every call.
pub fn client_impersonating(
    impersonator: &kube::Config,
    who: &super::proxy::Proxied,
) -> Result<kube::Client, ApiFailure> {
    let mut cfg = impersonator.clone();
    cfg.auth_info.impersonate = Some(who.user.clone());
    cfg.auth_info.impersonate_groups = Some(who.groups.clone());
    kube::Client::try_from(cfg).map_err(|e| ApiFailure::Down(e.to_string()))
}

/// Of `namespaces` (namespace, team), those where the user may create ClusterRequests,
/// by a SelfSubjectAccessReview each. A token the API server does not accept is
/// `Unauthorized`.
pub async fn teams_of(
    client: &kube::Client,
    namespaces: &[(String, String)],
) -> Result<Vec<(String, String)>, ApiFailure> {
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let mut out = Vec::new();
    for (ns, team) in namespaces {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(ns.clone()),
                    verb: Some("create".into()),
                    group: Some(GROUP.into()),
                    resource: Some("clusterrequests".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(failure)?;
        if answer.status.is_some_and(|s| s.allowed) {
            out.push((ns.clone(), team.clone()));
        }
    }
    Ok(out)
}

/// The requests of one namespace, as the user may list them.
pub async fn list(client: &kube::Client, ns: &str) -> Result<Vec<ClusterRequest>, ApiFailure> {
    let api: Api<ClusterRequest> = Api::namespaced(client.clone(), ns);
    let mut items = api
        .list(&ListParams::default().limit(MAX_LISTED))
        .await
        .map_err(failure)?
        .items;
    items.sort_by(|a, b| {
        b.metadata
            .creation_timestamp
            .cmp(&a.metadata.creation_timestamp)
    });
    Ok(items)
}

pub async fn get(
    client: &kube::Client,
    ns: &str,
    name: &str,
) -> Result<ClusterRequest, ApiFailure> {
    let api: Api<ClusterRequest> = Api::namespaced(client.clone(), ns);
    api.get(name).await.map_err(failure)
}

pub async fn create(client: &kube::Client, cr: &ClusterRequest) -> Result<(), ApiFailure> {
    let ns = cr.metadata.namespace.clone().unwrap_or_default();
    let api: Api<ClusterRequest> = Api::namespaced(client.clone(), &ns);
    api.create(&PostParams::default(), cr)
        .await
        .map(drop)
        .map_err(failure)
}

/// A new lifetime, counted from admission (the operator grants it within the team's cap).
pub async fn extend(
    client: &kube::Client,
    ns: &str,
    name: &str,
    duration: &str,
) -> Result<(), ApiFailure> {
    patch(client, ns, name, &json!({"spec": {"duration": duration}})).await
}

/// Hold the cluster past its expiry and deletion (`true`), or stop holding it.
pub async fn protect(
    client: &kube::Client,
    ns: &str,
    name: &str,
    on: bool,
) -> Result<(), ApiFailure> {
    let value = if on { json!("true") } else { json!(null) };
    patch(
        client,
        ns,
        name,
        &json!({"metadata": {"annotations": {PROTECT_ANNOTATION: value}}}),
    )
    .await
}

pub async fn delete(client: &kube::Client, ns: &str, name: &str) -> Result<(), ApiFailure> {
    let api: Api<ClusterRequest> = Api::namespaced(client.clone(), ns);
    api.delete(name, &DeleteParams::default())
        .await
        .map(drop)
        .map_err(failure)
}

async fn patch(
    client: &kube::Client,
    ns: &str,
    name: &str,
    body: &serde_json::Value,
) -> Result<(), ApiFailure> {
    let api: Api<ClusterRequest> = Api::namespaced(client.clone(), ns);
    api.patch(name, &PatchParams::default(), &Patch::Merge(body))
        .await
        .map(drop)
        .map_err(failure)
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_token_shaped_value_reaches_a_header() {
        assert!(super::token_shaped("rackplan-test-alice"));
        assert!(super::token_shaped("eyJhbGciOi.J9.x_-"));
        for bad in ["", "a b", "a\nb", "tökén", &"x".repeat(3000)] {
            assert!(!super::token_shaped(bad), "{bad:?}");
        }
    }
}
