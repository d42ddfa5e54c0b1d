//! What every reconcile shares: the settings the operator runs with, its clock, the two
//! clients (Rancher's cluster for requests and clusters, Harvester's for the fleet), the
//! write fence, the team namespaces, and the status writer.
//!
//! Every status write is a compare-and-swap: it carries the `resourceVersion` of the
//! object the decision was made on, and passes the fence first (`fence.rs`); a conflict
//! means "look again". A transition's event is announced exactly once: the status write
//! that makes the transition records the announcement as pending
//! (`status.pendingEvents`), the event is then created under a name derived from the
//! request's UID and the transition (a second create, after a crash, is refused by the
//! API server as already there), and a last write moves it to `status.announced`. The
//! transition is printed only by the replica whose create succeeded.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::{Resource as _, ResourceExt as _};
use serde_json::json;
use sha2::Digest as _;

use super::catalogue::Catalogue;
use super::fence::{Fence, FenceError};
use super::metrics::Metrics;
use super::resource::{ClusterRequest, ClusterRequestStatus, Condition, Phase, limits};
use super::spec::{Rules, shown};
use super::steps::{self, format_time};

/// Where "now" comes from: the system clock, or a file holding an RFC 3339 time (for
/// rehearsing an expiry, and for the tests).
#[derive(Debug, Clone)]
pub enum Clock {
    System,
    File(PathBuf),
}

impl Clock {
    pub fn now(&self) -> Result<i64, OperatorError> {
        match self {
            Clock::System => Ok(k8s_openapi::jiff::Timestamp::now().as_second()),
            Clock::File(p) => {
                let t = std::fs::read_to_string(p).map_err(|e| OperatorError::Clock {
                    path: p.clone(),
                    message: e.to_string(),
                })?;
                steps::parse_time(t.trim()).ok_or_else(|| OperatorError::Clock {
                    path: p.clone(),
                    message: format!("`{}` is not an RFC 3339 time", shown(t.trim())),
                })
            }
        }
    }
}

/// Everything the operator is run with, resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the Rancher clusters, the quota ConfigMap and the Lease live (Rancher's
    /// cluster; the catalogue's namespace).
    pub namespace: String,
    /// Label selector of the team namespaces (each also needs `rackplan.io/team`).
    pub team_namespaces: String,
    pub catalogue: Catalogue,
    /// The scenario with the teams and their quotas, the headroom rules, the platform.
    pub scenario: PathBuf,
    /// A ConfigMap in `namespace` whose data maps team to vCPU quota (and principals,
    /// role, longest lifetime), over the scenario's.
    pub quotas: Option<String>,
    pub rules: Rules,
    pub warn_before_s: i64,
    /// Write status only: no cluster is created or deleted, no finalizer is added.
    pub dry_run: bool,
    /// Longest time between two looks at a request.
    pub resync: Duration,
    pub clock: Clock,
    pub identity: String,
    /// Names the Harvester cluster in messages.
    pub harvester_origin: String,
    /// Rancher's address, for the access instructions (`https://rancher.example.com`).
    pub rancher_url: Option<String>,
    /// How long the final etcd snapshot is waited for at expiry, seconds.
    pub snapshot_timeout_s: i64,
    /// `--delivery-target`, seconds: Ready within this of admission (else the scenario's
    /// `delivery:` target, else 15 minutes).
    pub delivery_target_s: Option<f64>,
}

/// A transition the operator announced, for the log it prints.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Transition {
    pub at: String,
    pub request: String,
    pub phase: String,
    pub reason: String,
    pub message: String,
}

/// Why the operator stopped, or why one reconcile failed (and is retried).
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error("{}: {message}", path.display())]
    Clock { path: PathBuf, message: String },
    #[error("{what}: {source}")]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
    #[error(transparent)]
    Fleet(#[from] super::harvester::FleetReadError),
    #[error("the study: {0}")]
    Study(String),
    #[error("leader election: {0}")]
    Lease(String),
    #[error(transparent)]
    Fence(#[from] FenceError),
    #[error("{what}: {message}")]
    Config { what: String, message: String },
    /// The object changed since the decision was made: look again.
    #[error("{0} changed since it was read; looking again")]
    Conflict(String),
}

pub(super) fn api_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> OperatorError {
    let what = what.into();
    move |source| match source {
        kube::Error::Api(s) if s.code == 409 => OperatorError::Conflict(what),
        source => OperatorError::Api { what, source },
    }
}

/// One event a status write makes pending.
#[derive(Debug, Clone, PartialEq)]
pub struct Announce {
    /// What makes it unique for the request: `Admitted@2`, `Ready`, `Expiring@<time>`.
    pub key: String,
    pub reason: String,
    pub note: String,
    pub warning: bool,
}

impl Announce {
    pub fn new(key: impl Into<String>, reason: &str, note: &str, warning: bool) -> Announce {
        Announce {
            key: key.into(),
            reason: reason.into(),
            note: note.into(),
            warning,
        }
    }
}

/// What each reconcile shares.
pub struct Context {
    pub s: Settings,
    pub rancher: kube::Client,
    pub harvester: kube::Client,
    pub metrics: Arc<Metrics>,
    pub fence: Fence,
    /// Wakes the judging loop (a pass lists once and judges every request that needs it).
    pub(super) judge: tokio::sync::Notify,
    /// Team of each team namespace, kept by the namespace watch.
    pub(super) namespaces: Mutex<BTreeMap<String, String>>,
    /// The teams as the last judging pass read them.
    teams: Mutex<Option<super::teams::Teams>>,
    log: tokio::sync::mpsc::UnboundedSender<Transition>,
}

pub(super) fn cluster_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("provisioning.cattle.io", "v1", "Cluster"),
        "clusters",
    )
}

pub(super) fn config_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("rke-machine-config.cattle.io", "v1", "HarvesterConfig"),
        "harvesterconfigs",
    )
}

/// The name of a request's event for `key`: the request's name (cut to leave room) and a
/// hash of its UID and the key, so any valid request name gets its events and the same
/// transition always has the same event.
pub fn event_name(request: &str, uid: &str, key: &str) -> String {
    let digest = sha2::Sha256::digest(format!("{uid}/{key}").as_bytes());
    let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let room = limits::NAME - hash.len() - 1;
    let mut head: String = request.chars().take(room).collect();
    while head.ends_with(['-', '.']) {
        head.pop();
    }
    if head.is_empty() {
        hash
    } else {
        format!("{head}.{hash}")
    }
}

/// A few words for the status's summary column, from the status alone.
pub fn summary(st: &ClusterRequestStatus) -> String {
    let reason = |t: &str| {
        st.condition(t)
            .filter(|c| c.status != "True")
            .map(|c| c.reason.clone())
    };
    let s = match st.phase {
        None | Some(Phase::Pending) => match reason("Judged") {
            Some(r) => format!("pending: {r}"),
            None => "pending".into(),
        },
        Some(Phase::Admitted) => "admitted".into(),
        Some(Phase::Waiting) => match st.waiting.as_ref().map(|w| w.reason.as_str()) {
            Some("Quota") => "waiting for quota".into(),
            Some("FailureHeadroom") => "waiting for headroom".into(),
            _ => "waiting for quota, headroom".into(),
        },
        Some(Phase::Refused) => match st.message.as_deref().and_then(|m| {
            m.strip_prefix("refused: ")
                .and_then(|r| r.split(':').next())
                .filter(|f| f.starts_with("spec.") || f.starts_with("metadata."))
                .map(str::to_string)
        }) {
            Some(field) => format!("refused: {field}"),
            None => "refused".into(),
        },
        Some(Phase::Provisioning) => match reason("AccessGranted") {
            Some(r) => format!("ready, no access: {r}"),
            None => "provisioning".into(),
        },
        Some(Phase::Ready) => "ready, access granted".into(),
        Some(Phase::Expiring) => match reason("Expired") {
            Some(r) if r == "Protected" => "held past expiry".into(),
            _ => "expiring".into(),
        },
        Some(Phase::Expired) => "expired".into(),
        Some(Phase::Failed) => match reason("ClusterReady") {
            Some(r) => format!("failed: {r}"),
            None => "failed".into(),
        },
    };
    s.chars().take(limits::SUMMARY).collect()
}

/// Text cut to `max` bytes at a character boundary.
pub(super) fn clamp(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

impl Context {
    pub fn new(
        s: Settings,
        rancher: kube::Client,
        harvester: kube::Client,
        metrics: Arc<Metrics>,
        fence: Fence,
        log: tokio::sync::mpsc::UnboundedSender<Transition>,
    ) -> Context {
        Context {
            s,
            rancher,
            harvester,
            metrics,
            fence,
            judge: tokio::sync::Notify::new(),
            namespaces: Mutex::new(BTreeMap::new()),
            teams: Mutex::new(None),
            log,
        }
    }

    /// The requests of one namespace.
    pub(super) fn requests_in(&self, ns: &str) -> Api<ClusterRequest> {
        Api::namespaced(self.rancher.clone(), ns)
    }

    pub(super) fn requests_of(&self, cr: &ClusterRequest) -> Api<ClusterRequest> {
        self.requests_in(&cr.namespace().unwrap_or_default())
    }

    /// Objects of `ar` in the catalogue's namespace.
    pub(super) fn dynamic(&self, ar: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.rancher.clone(), &self.s.namespace, ar)
    }

    /// The team of namespace `ns`, if it is a team namespace.
    pub(super) fn team_of(&self, ns: &str) -> Option<String> {
        self.namespaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(ns)
            .cloned()
    }

    pub(super) fn team_namespaces(&self) -> BTreeMap<String, String> {
        self.namespaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The teams as the last judging pass read them.
    pub(super) fn cached_teams(&self) -> Option<super::teams::Teams> {
        self.teams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(super) fn set_teams(&self, t: super::teams::Teams) {
        *self
            .teams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(t);
    }

    pub(super) fn wake_judge(&self) {
        self.judge.notify_one();
    }

    /// Write `status` over `cr`'s (compare-and-swap on `cr`'s resourceVersion, through the
    /// fence), with `announce` made pending, then send the pending events. Returns the
    /// object as written.
    pub(super) async fn write_status(
        &self,
        cr: &ClusterRequest,
        status: &ClusterRequestStatus,
        announce: &[Announce],
        now: i64,
    ) -> Result<ClusterRequest, OperatorError> {
        let mut st = status.clone();
        for a in announce {
            let known =
                st.announced.contains(&a.key) || st.pending_events.iter().any(|p| p.key == a.key);
            if !known {
                st.pending_events.push(super::resource::PendingEvent {
                    key: a.key.clone(),
                    reason: a.reason.clone(),
                    note: clamp(&a.note, 1000),
                    warning: a.warning,
                });
            }
        }
        st.message = st.message.map(|m| clamp(&m, limits::MESSAGE));
        for c in &mut st.conditions {
            c.message = clamp(&c.message, limits::MESSAGE);
        }
        st.summary = Some(summary(&st));
        let written = if cr.status.as_ref() == Some(&st) {
            cr.clone()
        } else {
            self.fence.check()?;
            // The whole status is replaced (a merge patch could not remove what the new
            // status leaves out); the status endpoint ignores everything else of the body,
            // and the body's resourceVersion makes it a compare-and-swap.
            let mut next = cr.clone();
            next.status = Some(st);
            self.requests_of(cr)
                .replace_status(&cr.name_any(), &PostParams::default(), &next)
                .await
                .map_err(api_err(format!(
                    "the status of {}/{}",
                    cr.namespace().unwrap_or_default(),
                    cr.name_any()
                )))?
        };
        match self.flush(&written, now).await {
            // Another look flushed them first (the events are made once either way).
            Err(OperatorError::Conflict(_)) => Ok(written),
            r => r,
        }
    }

    /// Send the events `cr`'s status holds as pending, then record them as announced.
    pub(super) async fn flush(
        &self,
        cr: &ClusterRequest,
        now: i64,
    ) -> Result<ClusterRequest, OperatorError> {
        let Some(st) = cr.status.as_ref() else {
            return Ok(cr.clone());
        };
        if st.pending_events.is_empty() {
            return Ok(cr.clone());
        }
        for p in &st.pending_events {
            self.fence.check()?;
            if self.publish(cr, p, now).await? {
                let _ = self.log.send(Transition {
                    at: format_time(now),
                    request: format!("{}/{}", cr.namespace().unwrap_or_default(), cr.name_any()),
                    phase: st.phase.map_or("", Phase::as_str).into(),
                    reason: p.reason.clone(),
                    message: p.note.clone(),
                });
            }
        }
        let mut announced = st.announced.clone();
        announced.extend(st.pending_events.iter().map(|p| p.key.clone()));
        let keep = 48;
        if announced.len() > keep {
            announced.drain(..announced.len() - keep);
        }
        let mut next = st.clone();
        next.pending_events.clear();
        next.announced = announced;
        self.fence.check()?;
        self.requests_of(cr)
            .patch_status(
                &cr.name_any(),
                &PatchParams::default(),
                &Patch::Merge(json!({
                    "metadata": {"resourceVersion": cr.resource_version()},
                    "status": {"pendingEvents": null, "announced": next.announced},
                })),
            )
            .await
            .map_err(api_err(format!(
                "the announced events of {}",
                cr.name_any()
            )))
    }

    /// Create the event; `true` when this call made it (`false`: made before).
    async fn publish(
        &self,
        cr: &ClusterRequest,
        p: &super::resource::PendingEvent,
        now: i64,
    ) -> Result<bool, OperatorError> {
        let ns = cr.namespace().unwrap_or_default();
        let uid = cr.uid().unwrap_or_default();
        let name = event_name(&cr.name_any(), &uid, &p.key);
        let at = k8s_openapi::jiff::Timestamp::from_second(now)
            .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now());
        let ev = Event {
            metadata: kube::api::ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(ns.clone()),
                ..Default::default()
            },
            event_time: Some(MicroTime(at)),
            action: Some(p.reason.clone()),
            reason: Some(p.reason.clone()),
            note: Some(clamp(&p.note, 1000)),
            regarding: Some(cr.object_ref(&())),
            reporting_controller: Some("rackplan-operator".into()),
            reporting_instance: Some(clamp(&self.s.identity, 128)),
            type_: Some(if p.warning { "Warning" } else { "Normal" }.into()),
            ..Default::default()
        };
        let api: Api<Event> = Api::namespaced(self.rancher.clone(), &ns);
        match api.create(&PostParams::default(), &ev).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => {
                // An event the API server refuses (quota, a webhook) must not stall the
                // request: it is logged and counted as sent.
                tracing::warn!(error = %e, event = %name, "cannot publish the event");
                Ok(false)
            }
        }
    }
}

pub(super) fn condition(
    type_: &str,
    ok: bool,
    reason: &str,
    message: &str,
    now: i64,
    generation: i64,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: if ok { "True" } else { "False" }.into(),
        reason: reason.into(),
        message: clamp(message, limits::MESSAGE),
        last_transition_time: format_time(now),
        observed_generation: generation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_fit_any_request_name_and_are_one_per_transition() {
        let long = "a".repeat(253);
        let n = event_name(&long, "uid-1", "Refused@1");
        assert_eq!(n.len(), 253, "{n}");
        assert_eq!(n, event_name(&long, "uid-1", "Refused@1"));
        assert_ne!(n, event_name(&long, "uid-1", "Refused@2"));
        assert_ne!(n, event_name(&long, "uid-2", "Refused@1"));
        let cut = format!("{}-{}", "b".repeat(236), "c".repeat(16));
        let m = event_name(&cut, "u", "k");
        assert!(!m.contains("-."), "{m}");
        assert!(event_name("ci-a", "u", "Admitted@1").starts_with("ci-a."));
    }

    #[test]
    fn the_summary_fits_its_column() {
        let mut st = ClusterRequestStatus {
            phase: Some(Phase::Refused),
            message: Some("refused: spec.duration: `-5h` does not start".into()),
            ..Default::default()
        };
        assert_eq!(summary(&st), "refused: spec.duration");
        st.phase = Some(Phase::Ready);
        assert_eq!(summary(&st), "ready, access granted");
        for p in Phase::ALL {
            st.phase = Some(p);
            assert!(summary(&st).len() <= limits::SUMMARY);
        }
    }

    #[test]
    fn clamping_keeps_whole_characters() {
        assert_eq!(clamp("abc", 5), "abc");
        assert_eq!(clamp("ééééé", 7), "éé...");
    }
}
