//! The `ClusterRequest` custom resource (`rackplan.io/v1alpha1`): what a team asks for
//! (a catalogue shape, a lifetime, who and why) and what the operator answers in its
//! status (the phase, the sentence `rackplan admit` prints, when it was admitted and when
//! it expires, the Rancher cluster made for it, conditions with `observedGeneration`).
//!
//! Every spec field is a string with a default, so that a request the API server accepts
//! always reads here: what is wrong with it (an empty team, a duration of `-5h`, a shape
//! the catalogue does not offer) is the operator's to refuse with a located message, not
//! a decode error that would stall the watch.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group of the request and of the labels the operator writes.
pub const GROUP: &str = "rackplan.io";
/// Label on a delivered Rancher cluster, its machine configs and its access bindings: the
/// request's UID. The operator deletes only objects that carry the UID of the request it
/// is acting for.
pub const REQUEST_UID_LABEL: &str = "rackplan.io/request-uid";
/// Label: the team a cluster belongs to. On a namespace it makes the namespace the team's:
/// requests made there are that team's (set by the platform team, never by the team).
pub const TEAM_LABEL: &str = "rackplan.io/team";
/// Label: when the cluster is removed, as seconds since the epoch (a label value cannot
/// hold `:`), with the RFC 3339 time in the annotation of the same name.
pub const EXPIRES_LABEL: &str = "rackplan.io/expires-at";
/// Annotation on a delivered object: `<namespace>/<name>` of its request (owner references
/// cannot cross namespaces, so this and the UID label are the link).
pub const REQUEST_ANNOTATION: &str = "rackplan.io/request";
/// Annotation on a request: `"true"` holds its cluster past expiry and deletion.
pub const PROTECT_ANNOTATION: &str = "rackplan.io/protect";
/// The request's finalizer: the Rancher cluster is gone before the request is.
pub const FINALIZER: &str = "rackplan.io/cluster-cleanup";

/// The longest value of each string field, in bytes: the CRD's `maxLength` (the API server
/// refuses longer ones) and the operator's own check (for objects made before the bound).
pub mod limits {
    /// A team is a label value.
    pub const TEAM: usize = 63;
    pub const SHAPE: usize = 63;
    pub const VERSION: usize = 64;
    pub const DURATION: usize = 32;
    pub const REQUESTER: usize = 256;
    pub const REASON: usize = 1024;
    /// Status text the operator writes.
    pub const MESSAGE: usize = 2048;
    pub const SUMMARY: usize = 40;
    pub const NAME: usize = 253;
}

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
    printcolumn = r#"{"name":"Summary","type":"string","jsonPath":".status.summary"}"#,
    printcolumn = r#"{"name":"Message","type":"string","jsonPath":".status.message","priority":1}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRequestSpec {
    /// The team asking: the team of the namespace the request is made in (its label
    /// `rackplan.io/team`); empty means that team, another name is refused.
    #[serde(default)]
    #[schemars(length(max = 63))]
    pub team: String,
    /// A shape of the catalogue (`catalogue/<shape>.yaml` as `rackplan render` writes it).
    #[serde(default)]
    #[schemars(length(max = 63))]
    pub shape: String,
    /// A Kubernetes version other than the catalogue's, when the operator allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub kubernetes_version: Option<String>,
    /// How long the cluster lives from its admission: `72h`, `14d`, `2w`; bounded by the
    /// team's longest lifetime. Raised or lowered after admission, it is judged as an
    /// extension (never past that bound, counted from the admission) or a shortening.
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub duration: String,
    /// How long the request may wait for room when the quota or the fleet's failure
    /// headroom refuses it (`48h`); judged again whenever room may have come back.
    /// Absent: it waits until it fits or is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub max_wait: Option<String>,
    /// Who asks (a person or a ticket system).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub requester: Option<String>,
    /// Why, in the requester's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub reason: Option<String>,
}

/// Where a request stands.
#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Phase {
    /// Not judged yet (waiting for the requests created before it, or for the fleet to
    /// read).
    Pending,
    /// Within quota and the fleet survives every node and rack failure with it placed.
    Admitted,
    /// Over quota or without failure headroom now: judged again, in creation order,
    /// whenever room may have come back (a cluster expires or is deleted, the quota
    /// changes, the fleet changes), until `spec.maxWait`.
    Waiting,
    /// An invalid spec (stays so until the spec changes), or waited past `spec.maxWait`.
    Refused,
    /// The Rancher cluster is created and not ready yet, or its team's access is not yet
    /// granted.
    Provisioning,
    /// The Rancher cluster reports ready and the team's access is granted.
    Ready,
    /// Within the warning time before expiry, being removed at expiry, or held past it by
    /// protection.
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
            Phase::Waiting => "Waiting",
            Phase::Refused => "Refused",
            Phase::Provisioning => "Provisioning",
            Phase::Ready => "Ready",
            Phase::Expiring => "Expiring",
            Phase::Expired => "Expired",
            Phase::Failed => "Failed",
        }
    }

    pub const ALL: [Phase; 9] = [
        Phase::Pending,
        Phase::Admitted,
        Phase::Waiting,
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
    /// `Admitted`, `Judged`, `SpecAccepted`, `ClusterReady`, `AccessGranted`, `Expired`.
    #[serde(rename = "type")]
    #[schemars(length(max = 63))]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[schemars(length(max = 8))]
    pub status: String,
    /// A CamelCase word: `WithinQuotaAndHeadroom`, `QuotaExceeded`, `NoFailureHeadroom`,
    /// `InvalidSpec`, `FleetUnreadable`, `ImmutableField`, `Extended`, `Provisioning`,
    /// `ClusterReady`, `NoPrincipal`, `LifetimeOver`, `Protected`, ...
    #[schemars(length(max = 63))]
    pub reason: String,
    #[schemars(length(max = 2048))]
    pub message: String,
    /// RFC 3339.
    #[schemars(length(max = 32))]
    pub last_transition_time: String,
    #[serde(default)]
    pub observed_generation: i64,
}

/// The terms judged at admission, recorded so that delivery, quota accounting and expiry
/// use them and never the live spec (which the team may edit afterwards).
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Terms {
    /// The team whose quota it counts against (the namespace's team).
    #[schemars(length(max = 63))]
    pub team: String,
    #[schemars(length(max = 63))]
    pub shape: String,
    /// The Kubernetes version delivered: the request's, else the catalogue's.
    #[schemars(length(max = 64))]
    pub kubernetes_version: String,
    /// The lifetime granted, as the spec gave it (`72h`); extensions replace it.
    #[schemars(length(max = 32))]
    pub duration: String,
    /// The shape's resources when judged: vCPU, memory GiB and disk GiB of all its VMs.
    pub vcpu: f64,
    pub memory_gib: f64,
    pub disk_gib: f64,
    /// The shape's pools when judged.
    #[schemars(length(max = 32))]
    pub pools: Vec<TermsPool>,
    /// Judged by an operator in `--dry-run`: a live operator judges it again before it
    /// delivers anything.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dry_run: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if takes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// One pool of a shape, as judged.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TermsPool {
    #[schemars(length(max = 63))]
    pub name: String,
    pub count: u32,
    pub vcpu: f64,
    pub memory_gib: f64,
    /// One Longhorn volume per entry, GiB.
    #[schemars(length(max = 16))]
    pub disks_gib: Vec<f64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub anti_affinity: bool,
}

/// What a waiting request waits for.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    /// `Quota`, `FailureHeadroom` or `QuotaAndFailureHeadroom`.
    #[schemars(length(max = 63))]
    pub reason: String,
    /// RFC 3339: when it started waiting.
    #[schemars(length(max = 32))]
    pub since: String,
    /// RFC 3339: when it stops waiting and is refused (`spec.maxWait` after creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub until: Option<String>,
}

/// How the team reaches its cluster: Rancher role bindings for its principals, and where
/// each member gets a kubeconfig of their own. Never the cluster's admin kubeconfig.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Access {
    /// Rancher's management cluster id (`c-m-...`, the provisioning Cluster's
    /// `status.clusterName`).
    #[schemars(length(max = 63))]
    pub cluster_id: String,
    /// The `ClusterRoleTemplateBinding`s made for the team.
    #[schemars(length(max = 32))]
    pub bindings: Vec<AccessBinding>,
    /// The cluster in Rancher's UI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 512))]
    pub ui: Option<String>,
    /// How a member gets a kubeconfig: the API call made with their own Rancher token.
    #[schemars(length(max = 1024))]
    pub kubeconfig: String,
}

/// One `management.cattle.io/v3` ClusterRoleTemplateBinding.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessBinding {
    #[schemars(length(max = 63))]
    pub namespace: String,
    #[schemars(length(max = 253))]
    pub name: String,
    /// The Rancher principal: `github_team://1234`, `okta_group://platform`, `local://u-abc`.
    #[schemars(length(max = 512))]
    pub principal: String,
    /// The role template: `cluster-member` or `cluster-owner`.
    #[schemars(length(max = 63))]
    pub role: String,
}

/// A delivery's time to Ready: predicted at admission, measured as it goes.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Seconds from admission to Ready, predicted; absent when it never gets there (see
    /// `never`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never: Option<String>,
    /// The prediction with every default constant at the low, then the high end of its
    /// range (a range, not a probability interval); absent: never gets there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_seconds: Option<f64>,
    /// The promise: Ready within this many seconds of admission.
    pub target_seconds: f64,
    /// `model`, or the measured deliveries the prediction used (`median of the last 5`).
    pub predicted_from: String,
    /// The critical path, a step a line (`init node cp-1: boot to guest agent, 90 s`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 24))]
    pub critical_path: Vec<String>,
    /// Seconds after admission each milestone is predicted to be reached
    /// (`cluster-created`, `machines-created`, `infrastructure-ready`, `init-node-ready`,
    /// `control-plane-ready`, `workers-ready`, `cluster-ready`); empty when never.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub predicted_at: BTreeMap<String, f64>,
    /// Seconds after admission each milestone was seen: those above (the machine
    /// milestones from Rancher's CAPI machines), then `access-granted`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reached: BTreeMap<String, f64>,
}

/// The last etcd snapshot asked of Rancher before the cluster is deleted at expiry.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FinalSnapshot {
    /// RFC 3339, on the operator's clock.
    #[schemars(length(max = 32))]
    pub requested_at: String,
    /// The `spec.rkeConfig.etcdSnapshotCreate.generation` set on the Rancher cluster.
    pub generation: i64,
    /// The cluster's `ETCDSnapshot` objects that existed when it was asked (so the new
    /// one is told apart without comparing clocks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128))]
    pub before: Vec<String>,
    /// The `rke.cattle.io/v1` ETCDSnapshot that records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub snapshot: Option<String>,
    /// Where it was stored: `s3` or `local` (a local snapshot goes with the cluster's VMs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub storage: Option<String>,
    /// `recorded`, `failed: ...`, `timed out after ...`, or `skipped: ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub outcome: Option<String>,
}

/// An event to send for a transition.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingEvent {
    #[schemars(length(max = 128))]
    pub key: String,
    #[schemars(length(max = 63))]
    pub reason: String,
    #[schemars(length(max = 1024))]
    pub note: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub warning: bool,
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
    #[schemars(length(max = 2048))]
    pub message: Option<String>,
    /// A few words for `kubectl get clusterrequests` (the message is the wide column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 40))]
    pub summary: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub admitted_at: Option<String>,
    /// RFC 3339: when the cluster is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 32))]
    pub expires_at: Option<String>,
    /// The Rancher `provisioning.cattle.io/v1` Cluster made for the request (in the
    /// catalogue's namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub cluster_name: Option<String>,
    /// What was judged at admission: what is delivered, counted and expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms: Option<Terms>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_snapshot: Option<FinalSnapshot>,
    /// The delivery's predicted and measured time to Ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<Delivery>,
    /// Events a status write made pending: sent, then moved to `announced` (a crash in
    /// between sends them at the next look, under the same event name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub pending_events: Vec<PendingEvent>,
    /// The transitions whose event was sent (`Admitted@1`, `Ready`, ...), so each is
    /// announced once, across restarts too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub announced: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
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

/// The spec fields that cannot change once a request is admitted (its terms are
/// recorded), as (field, CEL expression of the field in `self` or `oldSelf`).
const IMMUTABLE: [(&str, &str); 3] = [
    ("team", "X.spec.team"),
    ("shape", "X.spec.shape"),
    (
        "kubernetesVersion",
        "(has(X.spec.kubernetesVersion) ? X.spec.kubernetesVersion : '')",
    ),
];

/// The CustomResourceDefinition, as `render` writes it and the tests apply it: the
/// derived schema (every string bounded) with CEL rules at the root that make the judged
/// terms immutable once recorded. API servers before v1.25 ignore the rules; the
/// operator refuses such an edit anyway.
pub fn crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    use kube::CustomResourceExt as _;
    let mut c = serde_json::to_value(ClusterRequest::crd()).expect("the CRD serializes");
    let rules: Vec<serde_json::Value> = IMMUTABLE
        .iter()
        .map(|(field, expr)| {
            let now = expr.replace('X', "self");
            let before = expr.replace('X', "oldSelf");
            serde_json::json!({
                "rule": format!(
                    "!has(oldSelf.status) || !has(oldSelf.status.terms) || {now} == {before}"
                ),
                "message": format!(
                    "spec.{field} cannot change once the request is admitted (status.terms records what was judged); make a new request instead"
                ),
            })
        })
        .collect();
    c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] =
        serde_json::Value::Array(rules);
    serde_json::from_value(c).expect("the CRD deserializes")
}

/// An RFC 3339 time as seconds since the epoch.
pub fn parse_time(s: &str) -> Option<i64> {
    s.parse::<k8s_openapi::jiff::Timestamp>()
        .ok()
        .map(k8s_openapi::jiff::Timestamp::as_second)
}

/// Seconds since the epoch as RFC 3339 (UTC, whole seconds).
pub fn format_time(t: i64) -> String {
    crate::clock::format_at(t, false)
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
        assert_eq!(
            cols,
            ["Team", "Shape", "Phase", "Expires", "Summary", "Message"]
        );
        let cel = v["schema"]["openAPIV3Schema"]["x-kubernetes-validations"].to_string();
        assert!(cel.contains("self.spec.team == oldSelf.spec.team"), "{cel}");
        let reason = &v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["reason"];
        assert_eq!(reason["maxLength"], 1024, "{reason}");
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
