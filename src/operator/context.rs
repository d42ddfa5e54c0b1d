//! What every reconcile shares: the settings the operator runs with, its clock, the two
//! clients (Rancher's cluster for requests and clusters, Harvester's for the fleet), the
//! event recorder, and the status writer that stamps conditions with the generation.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Resource as _, ResourceExt as _};
use serde_json::json;

use super::catalogue::Catalogue;
use super::metrics::Metrics;
use super::resource::{ClusterRequest, ClusterRequestStatus, Condition, Phase};
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
    /// Where the requests and their clusters live (Rancher's cluster).
    pub namespace: String,
    pub catalogue: Catalogue,
    /// The scenario with the teams and their quotas, the headroom rules, the platform.
    pub scenario: PathBuf,
    /// A ConfigMap in `namespace` whose data maps team to vCPU quota, over the scenario's.
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
}

/// A transition the operator made, for the log it prints.
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
    #[error("{what}: {message}")]
    Config { what: String, message: String },
}

pub(super) fn api_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> OperatorError {
    let what = what.into();
    move |source| OperatorError::Api { what, source }
}

/// What each reconcile shares.
pub struct Context {
    pub s: Settings,
    pub rancher: kube::Client,
    pub harvester: kube::Client,
    pub metrics: Arc<Metrics>,
    recorder: Recorder,
    pub(super) judging: tokio::sync::Mutex<()>,
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

impl Context {
    pub fn new(
        s: Settings,
        rancher: kube::Client,
        harvester: kube::Client,
        metrics: Arc<Metrics>,
        log: tokio::sync::mpsc::UnboundedSender<Transition>,
    ) -> Context {
        let recorder = Recorder::new(
            rancher.clone(),
            Reporter {
                controller: "rackplan-operator".into(),
                instance: Some(s.identity.clone()),
            },
        );
        Context {
            s,
            rancher,
            harvester,
            metrics,
            recorder,
            judging: tokio::sync::Mutex::new(()),
            log,
        }
    }

    pub(super) fn requests(&self) -> Api<ClusterRequest> {
        Api::namespaced(self.rancher.clone(), &self.s.namespace)
    }

    pub(super) fn dynamic(&self, ar: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.rancher.clone(), &self.s.namespace, ar)
    }

    pub(super) async fn event(&self, cr: &ClusterRequest, warning: bool, reason: &str, note: &str) {
        let note: String = note.chars().take(1000).collect();
        let ev = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.into(),
            note: Some(note),
            action: reason.into(),
            secondary: None,
        };
        if let Err(e) = self.recorder.publish(&ev, &cr.object_ref(&())).await {
            tracing::warn!(error = %e, request = %cr.name_any(), "cannot publish the event");
        }
    }

    /// Write `status` and log the transition when the phase changed.
    pub(super) async fn write_status(
        &self,
        cr: &ClusterRequest,
        status: &ClusterRequestStatus,
        reason: &str,
        now: i64,
    ) -> Result<(), OperatorError> {
        let before = cr.status.as_ref().and_then(|s| s.phase);
        if cr.status.as_ref() == Some(status) {
            return Ok(());
        }
        self.requests()
            .patch_status(
                &cr.name_any(),
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .map_err(api_err(format!("writing the status of {}", cr.name_any())))?;
        if before != status.phase {
            let _ = self.log.send(Transition {
                at: format_time(now),
                request: format!("{}/{}", self.s.namespace, cr.name_any()),
                phase: status.phase.map_or("", Phase::as_str).into(),
                reason: reason.into(),
                message: status.message.clone().unwrap_or_default(),
            });
        }
        Ok(())
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
        message: message.chars().take(2000).collect(),
        last_transition_time: format_time(now),
        observed_generation: generation,
    }
}
