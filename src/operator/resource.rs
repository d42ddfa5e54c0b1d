//! The `ClusterRequest` custom resource (`rackplan.io/v1alpha1`): what a team asks for
//! (a catalogue shape, a lifetime, who and why) and what the operator answers in its
//! status (the phase, the sentence `rackplan admit` prints, when it was admitted and when
//! it expires, the Rancher cluster made for it, conditions with `observedGeneration`).
//!
//! Every spec field is a string with a default, so that a request the API server accepts
//! always reads here: what is wrong with it (an empty team, a duration of `-5h`, a shape
//! the catalogue does not offer) is the operator's to refuse with a located message, not
//! a decode error that would stall the watch.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group of the request and of the labels the operator writes.
pub const GROUP: &str = "rackplan.io";
/// Label on a delivered Rancher cluster and its machine configs: the request's UID. The
/// operator deletes only objects that carry the UID of the request it is acting for.
pub const REQUEST_UID_LABEL: &str = "rackplan.io/request-uid";
/// Label: the team the cluster belongs to.
pub const TEAM_LABEL: &str = "rackplan.io/team";
/// Label: when the cluster is removed, as seconds since the epoch (a label value cannot
/// hold `:`), with the RFC 3339 time in the annotation of the same name.
pub const EXPIRES_LABEL: &str = "rackplan.io/expires-at";
/// The request's finalizer: the Rancher cluster is gone before the request is.
pub const FINALIZER: &str = "rackplan.io/cluster-cleanup";

/// What a team asks for.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "rackplan.io",
    version = "v1alpha1",
    kind = "ClusterRequest",
    namespaced,
    status = "ClusterRequestStatus",
    shortname = "creq",
    category = "rackplan",
    printcolumn = r#"{"name":"Team","type":"string","jsonPath":".spec.team"}"#,
    printcolumn = r#"{"name":"Shape","type":"string","jsonPath":".spec.shape"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Expires","type":"string","jsonPath":".status.expiresAt"}"#,
    printcolumn = r#"{"name":"Message","type":"string","jsonPath":".status.message","priority":0}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRequestSpec {
    /// The team asking; its vCPU quota is the site's (the catalogue scenario's `teams`) or
    /// the quota ConfigMap's.
    #[serde(default)]
    pub team: String,
    /// A shape of the catalogue (`catalogue/<shape>.yaml` as `rackplan render` writes it).
    #[serde(default)]
    pub shape: String,
    /// A Kubernetes version other than the catalogue's, when the operator allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// How long the cluster lives: `72h`, `14d`, `2w`; bounded by the operator's
    /// `--max-lifetime`.
    #[serde(default)]
    pub duration: String,
    /// Who asks (a person or a ticket system).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester: Option<String>,
    /// Why, in the requester's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Where a request stands.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Phase {
    /// Not judged yet (waiting for the requests created before it).
    Pending,
    /// Within quota and the fleet survives every node and rack failure with it placed.
    Admitted,
    /// Over quota, no failure headroom, or an invalid spec; stays so until the spec changes.
    Refused,
    /// The Rancher cluster is created and not ready yet.
    Provisioning,
    /// The Rancher cluster reports ready.
    Ready,
    /// Within the warning time before expiry, or being removed at expiry.
    Expiring,
    /// Removed at expiry; the request stays as the record.
    Expired,
    /// The cluster cannot be delivered (a name taken by a cluster the operator did not
    /// create, or an error the API server gives for the objects).
    Failed,
}

impl Phase {
    /// The phases that hold quota and headroom.
    pub fn holds(self) -> bool {
        matches!(
            self,
            Phase::Admitted | Phase::Provisioning | Phase::Ready | Phase::Expiring
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Admitted => "Admitted",
            Phase::Refused => "Refused",
            Phase::Provisioning => "Provisioning",
            Phase::Ready => "Ready",
            Phase::Expiring => "Expiring",
            Phase::Expired => "Expired",
            Phase::Failed => "Failed",
        }
    }

    pub const ALL: [Phase; 8] = [
        Phase::Pending,
        Phase::Admitted,
        Phase::Refused,
        Phase::Provisioning,
        Phase::Ready,
        Phase::Expiring,
        Phase::Expired,
        Phase::Failed,
    ];
}

/// One condition, as Kubernetes conditions read (`metav1.Condition`'s fields).
#[derive(Deserialize, Serialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Admitted`, `ClusterReady` or `Expired`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase word: `WithinQuotaAndHeadroom`, `QuotaExceeded`, `NoFailureHeadroom`,
    /// `InvalidSpec`, `Provisioning`, `ClusterReady`, `LifetimeOver`, ...
    pub reason: String,
    pub message: String,
    /// RFC 3339.
    pub last_transition_time: String,
    #[serde(default)]
    pub observed_generation: i64,
}

/// What the operator answers.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRequestStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// The sentence `rackplan admit` gives: the quota (used, asked, allowed) or the
    /// failure that would strand VMs and what would fix it; then what happened since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted_at: Option<String>,
    /// RFC 3339: when the cluster is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The Rancher `provisioning.cattle.io/v1` Cluster made for the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The spec generation the phase answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl ClusterRequestStatus {
    /// Set (or replace) the condition of `c.type_`, keeping its transition time when its
    /// status did not change.
    pub fn set_condition(&mut self, c: Condition) {
        match self.conditions.iter_mut().find(|x| x.type_ == c.type_) {
            Some(x) => {
                let keep = x.status == c.status;
                let at = x.last_transition_time.clone();
                *x = c;
                if keep {
                    x.last_transition_time = at;
                }
            }
            None => self.conditions.push(c),
        }
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
}

/// The CustomResourceDefinition, as `render` writes it and the tests apply it.
pub fn crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    use kube::CustomResourceExt as _;
    ClusterRequest::crd()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crd_names_its_group_kind_columns_and_status() {
        let c = serde_json::to_value(crd()).unwrap();
        assert_eq!(c["metadata"]["name"], "clusterrequests.rackplan.io");
        let v = &c["spec"]["versions"][0];
        assert_eq!(v["name"], "v1alpha1");
        assert!(v["subresources"]["status"].is_object());
        let cols: Vec<&str> = v["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(cols, ["Team", "Shape", "Phase", "Expires", "Message"]);
        let phases = &v["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["phase"];
        assert!(phases.to_string().contains("Expiring"), "{phases}");
    }

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_holds() {
        let mut s = ClusterRequestStatus::default();
        let c = |status: &str, at: &str, reason: &str| Condition {
            type_: "ClusterReady".into(),
            status: status.into(),
            reason: reason.into(),
            message: String::new(),
            last_transition_time: at.into(),
            observed_generation: 1,
        };
        s.set_condition(c("False", "t1", "Provisioning"));
        s.set_condition(c("False", "t2", "Waiting"));
        assert_eq!(s.conditions.len(), 1);
        assert_eq!(s.conditions[0].last_transition_time, "t1");
        assert_eq!(s.conditions[0].reason, "Waiting");
        s.set_condition(c("True", "t3", "ClusterReady"));
        assert_eq!(s.conditions[0].last_transition_time, "t3");
    }
}
