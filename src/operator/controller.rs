//! The controller: kube-runtime's `Controller` over the ClusterRequests of one namespace
//! (and the Rancher Clusters they own, so Rancher's readiness wakes their request), one
//! reconcile per request doing the step `steps::next` names.
//!
//! Safe at every restart point:
//! - judging runs under one lock and re-lists the requests from the API server (never the
//!   cache), so a request is judged once and counts every one admitted before it;
//! - a cluster's name is its request's, its objects carry the request's UID, and they are
//!   created only when absent: a restart between two creations makes no duplicate, and
//!   an object of that name without the UID is never adopted or deleted (the request
//!   fails, naming it);
//! - the expiry is a time in the status, compared at every reconcile: a restart after it
//!   passed expires the request at once;
//! - the finalizer goes only once the cluster's objects are gone.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::watcher;
use kube::{Resource as _, ResourceExt as _};
use serde_json::json;

use super::admission;
use super::catalogue::{Catalogue, Marks};
use super::metrics::Metrics;
use super::resource::{
    ClusterRequest, ClusterRequestStatus, Condition, EXPIRES_LABEL, FINALIZER, Phase,
    REQUEST_UID_LABEL, TEAM_LABEL,
};
use super::spec::{Rules, shown};
use super::steps::{self, Step, format_time};
use crate::simulate::scenario::Team;
use crate::simulate::{ScenarioInput, Study};

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

fn api_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> OperatorError {
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
    judging: tokio::sync::Mutex<()>,
    log: tokio::sync::mpsc::UnboundedSender<Transition>,
}

fn cluster_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("provisioning.cattle.io", "v1", "Cluster"),
        "clusters",
    )
}

fn config_resource() -> ApiResource {
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

    fn requests(&self) -> Api<ClusterRequest> {
        Api::namespaced(self.rancher.clone(), &self.s.namespace)
    }

    fn dynamic(&self, ar: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.rancher.clone(), &self.s.namespace, ar)
    }

    async fn event(&self, cr: &ClusterRequest, warning: bool, reason: &str, note: &str) {
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
    async fn write_status(
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

fn condition(
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

/// The teams with their quotas: the scenario's, with the ConfigMap's values over them
/// (and its teams added). A value that is not a number of vCPU leaves its team without a
/// quota entry and is named in the refusal of that team's requests.
async fn teams(
    ctx: &Context,
    study_teams: &[Team],
) -> Result<(Vec<Team>, BTreeMap<String, String>), OperatorError> {
    let mut teams: Vec<Team> = study_teams
        .iter()
        .map(|t| Team {
            name: t.name.clone(),
            vcpu_quota: t.vcpu_quota,
            requests: Vec::new(),
        })
        .collect();
    let mut bad = BTreeMap::new();
    if let Some(name) = &ctx.s.quotas {
        let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(ctx.rancher.clone(), &ctx.s.namespace);
        let cm = api.get(name).await.map_err(api_err(format!(
            "reading the quota ConfigMap {}/{name}",
            ctx.s.namespace
        )))?;
        for (team, v) in cm.data.unwrap_or_default() {
            match v.trim().parse::<f64>() {
                Ok(q) if q.is_finite() && q >= 0.0 => {
                    match teams.iter_mut().find(|t| t.name == team) {
                        Some(t) => t.vcpu_quota = Some(q),
                        None => teams.push(Team {
                            name: team,
                            vcpu_quota: Some(q),
                            requests: Vec::new(),
                        }),
                    }
                }
                _ => {
                    bad.insert(
                        team.clone(),
                        format!(
                            "quota ConfigMap {}/{name}: data.{}: `{}` is not a number of vCPU",
                            ctx.s.namespace,
                            shown(&team),
                            shown(&v)
                        ),
                    );
                    teams.retain(|t| t.name != team);
                }
            }
        }
    }
    Ok((teams, bad))
}

/// Judge every pending request of the namespace, in creation order.
async fn judge_all(ctx: &Context, now: i64) -> Result<(), OperatorError> {
    let _one_at_a_time = ctx.judging.lock().await;
    let list = ctx
        .requests()
        .list(&kube::api::ListParams::default())
        .await
        .map_err(api_err("listing the ClusterRequests"))?;
    let requests = list.items;
    if !requests.iter().any(admission::needs_judging) {
        return Ok(());
    }
    let t0 = std::time::Instant::now();
    let (state, running) = super::harvester::read(&ctx.harvester, &ctx.s.harvester_origin).await?;
    ctx.metrics.observe_fleet_read(t0.elapsed().as_secs_f64());
    let mut study = Study::on_state(
        ScenarioInput::File(&ctx.s.scenario),
        &state,
        std::path::Path::new(&ctx.s.harvester_origin),
    )
    .map_err(|e| OperatorError::Study(e.to_string()))?;
    let (teams, bad) = teams(ctx, &study.scenario.teams).await?;
    study.scenario.teams = teams;
    // The requests are the truth: the scenario's own planned requests do not count.
    let verdicts = admission::judge_pending(
        &study,
        &ctx.s.catalogue,
        &ctx.s.rules,
        &requests,
        &running,
        now,
    );
    for v in verdicts {
        let cr = &requests[v.index];
        ctx.metrics.observe_admission(v.seconds);
        let generation = cr.metadata.generation.unwrap_or(0);
        let mut st = cr.status.clone().unwrap_or_default();
        let (message, reason) = match bad.get(&cr.spec.team) {
            Some(b) if !v.admitted => (format!("refused: {b}"), "InvalidQuota"),
            _ => (v.message.clone(), v.reason),
        };
        st.phase = Some(if v.admitted {
            Phase::Admitted
        } else {
            Phase::Refused
        });
        st.message = Some(if v.admitted && ctx.s.dry_run {
            format!("{message}; dry run: no cluster is created")
        } else {
            message.clone()
        });
        st.observed_generation = Some(generation);
        if v.admitted {
            st.admitted_at = Some(format_time(now));
            st.expires_at = v.expires_at.map(format_time);
            st.cluster_name = cr.metadata.name.clone();
        } else {
            st.admitted_at = None;
            st.expires_at = None;
        }
        st.set_condition(condition(
            "Admitted", v.admitted, reason, &message, now, generation,
        ));
        ctx.write_status(cr, &st, reason, now).await?;
        ctx.event(
            cr,
            !v.admitted,
            if v.admitted { "Admitted" } else { "Refused" },
            &message,
        )
        .await;
    }
    Ok(())
}

/// The objects of `cr`'s cluster that exist, each (resource, name, ours).
async fn existing(
    ctx: &Context,
    cr: &ClusterRequest,
    name: &str,
) -> Result<Vec<(ApiResource, String, bool)>, OperatorError> {
    let uid = cr.uid().unwrap_or_default();
    let mut out = Vec::new();
    let configs = ctx
        .s
        .catalogue
        .offers
        .get(&cr.spec.shape)
        .map(|o| o.config_names(name))
        .unwrap_or_default();
    let mut wanted = vec![(cluster_resource(), name.to_string())];
    wanted.extend(configs.into_iter().map(|c| (config_resource(), c)));
    for (ar, n) in wanted {
        let got = ctx
            .dynamic(&ar)
            .get_opt(&n)
            .await
            .map_err(api_err(format!("reading {} {n}", ar.kind)))?;
        if let Some(o) = got {
            let ours = o.labels().get(REQUEST_UID_LABEL).is_some_and(|u| *u == uid);
            out.push((ar, n, ours));
        }
    }
    Ok(out)
}

/// Delete what of `cr`'s cluster is ours; `true` once nothing of it is left.
async fn remove_cluster(
    ctx: &Context,
    cr: &ClusterRequest,
    name: &str,
) -> Result<bool, OperatorError> {
    let left = existing(ctx, cr, name).await?;
    let mut gone = true;
    for (ar, n, ours) in left {
        if !ours {
            continue;
        }
        gone = false;
        match ctx
            .dynamic(&ar)
            .delete(&n, &DeleteParams::background())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(api_err(format!("deleting {} {n}", ar.kind))(e)),
        }
    }
    Ok(gone)
}

async fn set_finalizer(ctx: &Context, cr: &ClusterRequest, on: bool) -> Result<(), OperatorError> {
    let has = cr.finalizers().iter().any(|f| f == FINALIZER);
    if has == on {
        return Ok(());
    }
    let mut fins: Vec<String> = cr
        .finalizers()
        .iter()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    if on {
        fins.push(FINALIZER.into());
    }
    // The resourceVersion makes this a compare-and-swap: a stale view retries.
    let patch = json!({"metadata": {"finalizers": fins, "resourceVersion": cr.resource_version()}});
    ctx.requests()
        .patch(
            &cr.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map_err(api_err(format!(
            "setting the finalizer of {}",
            cr.name_any()
        )))?;
    Ok(())
}

/// Rancher's readiness of a cluster object: `status.ready`, else a `Ready` condition.
fn rancher_ready(o: &DynamicObject) -> bool {
    let st = &o.data["status"];
    st["ready"].as_bool().unwrap_or(false)
        || st["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// Make sure the cluster exists (created from the catalogue when absent) and follow its
/// readiness.
async fn deliver(ctx: &Context, cr: &ClusterRequest, now: i64) -> Result<(), OperatorError> {
    let mut st = cr.status.clone().unwrap_or_default();
    let generation = st.observed_generation.unwrap_or(0);
    if ctx.s.dry_run {
        return Ok(());
    }
    set_finalizer(ctx, cr, true).await?;
    let name = st.cluster_name.clone().unwrap_or_else(|| cr.name_any());
    let Some(offer) = ctx.s.catalogue.offers.get(&cr.spec.shape) else {
        st.phase = Some(Phase::Failed);
        st.message = Some(format!(
            "failed: shape `{}` is no longer in the catalogue ({}); the cluster cannot be made",
            shown(&cr.spec.shape),
            ctx.s.catalogue.names()
        ));
        return ctx.write_status(cr, &st, "ShapeGone", now).await;
    };
    let present = existing(ctx, cr, &name).await?;
    if let Some((ar, n, _)) = present.iter().find(|(_, _, ours)| !ours) {
        let msg = format!(
            "failed: a {} named {n} exists and was not made for this request; rename the request (the operator neither adopts nor deletes it)",
            ar.kind
        );
        st.phase = Some(Phase::Failed);
        st.message = Some(msg.clone());
        st.set_condition(condition(
            "ClusterReady",
            false,
            "NameTaken",
            &msg,
            now,
            generation,
        ));
        ctx.write_status(cr, &st, "NameTaken", now).await?;
        ctx.event(cr, true, "Failed", &msg).await;
        return Ok(());
    }
    let expires = st.expires_at.as_deref().and_then(steps::parse_time);
    let mut marks = Marks::default();
    marks.labels.insert(TEAM_LABEL.into(), cr.spec.team.clone());
    marks
        .labels
        .insert(REQUEST_UID_LABEL.into(), cr.uid().unwrap_or_default());
    if let Some(e) = expires {
        marks.labels.insert(EXPIRES_LABEL.into(), e.to_string());
        marks
            .annotations
            .insert(EXPIRES_LABEL.into(), format_time(e));
    }
    marks.annotations.insert(
        "rackplan.io/request".into(),
        format!("{}/{}", ctx.s.namespace, cr.name_any()),
    );
    let owner = cr.controller_owner_ref(&()).map(|mut o| {
        o.block_owner_deletion = Some(true);
        o
    });
    let objects = offer.objects_for(
        &name,
        &ctx.s.namespace,
        &marks,
        cr.spec.kubernetes_version.as_deref(),
    );
    let mut created = false;
    // Machine configs first: the Cluster names them.
    for mut o in objects.into_iter().rev() {
        let (ar, n) = if o["kind"] == "Cluster" {
            (cluster_resource(), name.clone())
        } else {
            (
                config_resource(),
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        };
        if present.iter().any(|(a, x, _)| a.kind == ar.kind && *x == n) {
            continue;
        }
        if let Some(owner) = &owner {
            o["metadata"]["ownerReferences"] = json!([owner]);
        }
        let obj: DynamicObject =
            serde_json::from_value(o).map_err(|e| OperatorError::Study(e.to_string()))?;
        match ctx.dynamic(&ar).create(&PostParams::default(), &obj).await {
            Ok(_) => created = true,
            // Made since it was read (another pass): the next reconcile checks its UID.
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => {
                let msg = format!("failed: creating {} {n}: {e}", ar.kind);
                st.phase = Some(Phase::Failed);
                st.message = Some(msg.clone());
                ctx.write_status(cr, &st, "CreateFailed", now).await?;
                ctx.event(cr, true, "Failed", &msg).await;
                return Ok(());
            }
        }
    }
    if created {
        ctx.event(
            cr,
            false,
            "Provisioning",
            &format!(
                "created Rancher cluster {}/{name} from shape {}",
                ctx.s.namespace, cr.spec.shape
            ),
        )
        .await;
    }
    let cluster = ctx
        .dynamic(&cluster_resource())
        .get_opt(&name)
        .await
        .map_err(api_err(format!("reading Cluster {name}")))?;
    let ready = cluster.as_ref().is_some_and(rancher_ready);
    let admitted = st.message.clone().unwrap_or_default();
    let admitted = admitted.split(" | ").next().unwrap_or_default().to_string();
    if ready {
        st.phase = Some(Phase::Ready);
        st.message = Some(format!(
            "{admitted} | ready: Rancher reports cluster {name} ready"
        ));
        st.set_condition(condition(
            "ClusterReady",
            true,
            "ClusterReady",
            "Rancher reports the cluster ready",
            now,
            generation,
        ));
    } else {
        st.phase = Some(Phase::Provisioning);
        st.message = Some(format!(
            "{admitted} | provisioning: cluster {name} created, waiting for Rancher to report it ready"
        ));
        st.set_condition(condition(
            "ClusterReady",
            false,
            "Provisioning",
            "waiting for Rancher's status.ready",
            now,
            generation,
        ));
    }
    let was = cr.status.as_ref().and_then(|s| s.phase);
    ctx.write_status(
        cr,
        &st,
        if ready {
            "ClusterReady"
        } else {
            "Provisioning"
        },
        now,
    )
    .await?;
    if ready && was != Some(Phase::Ready) {
        ctx.event(
            cr,
            false,
            "Ready",
            &format!("Rancher reports cluster {name} ready"),
        )
        .await;
    }
    Ok(())
}

async fn warn(ctx: &Context, cr: &ClusterRequest, now: i64) -> Result<(), OperatorError> {
    let mut st = cr.status.clone().unwrap_or_default();
    let e = st.expires_at.clone().unwrap_or_default();
    let name = st.cluster_name.clone().unwrap_or_else(|| cr.name_any());
    let left = steps::parse_time(&e).map_or(0, |t| t - now).max(0);
    let msg = format!(
        "expiring: cluster {name} is deleted at {e} (in {}); save what it holds",
        human(left)
    );
    let head = st.message.clone().unwrap_or_default();
    let head = head.split(" | ").next().unwrap_or_default().to_string();
    st.phase = Some(Phase::Expiring);
    st.message = Some(format!("{head} | {msg}"));
    ctx.write_status(cr, &st, "Expiring", now).await?;
    ctx.event(cr, true, "Expiring", &msg).await;
    Ok(())
}

fn human(s: i64) -> String {
    if s >= 86_400 {
        format!("{:.1} d", s as f64 / 86_400.0)
    } else if s >= 3600 {
        format!("{:.1} h", s as f64 / 3600.0)
    } else {
        format!("{} min", (s + 59) / 60)
    }
}

/// `true` when done (Expired written); `false` while the cluster is still going.
async fn expire(ctx: &Context, cr: &ClusterRequest, now: i64) -> Result<bool, OperatorError> {
    let mut st = cr.status.clone().unwrap_or_default();
    let generation = st.observed_generation.unwrap_or(0);
    let name = st.cluster_name.clone().unwrap_or_else(|| cr.name_any());
    let e = st.expires_at.clone().unwrap_or_default();
    let head = st.message.clone().unwrap_or_default();
    let head = head.split(" | ").next().unwrap_or_default().to_string();
    if !ctx.s.dry_run && !remove_cluster(ctx, cr, &name).await? {
        if st.phase != Some(Phase::Expiring)
            || !st
                .message
                .as_deref()
                .unwrap_or_default()
                .contains("deleting")
        {
            st.phase = Some(Phase::Expiring);
            st.message = Some(format!(
                "{head} | expiring: lifetime over at {e}, deleting cluster {name}"
            ));
            ctx.write_status(cr, &st, "LifetimeOver", now).await?;
            ctx.event(
                cr,
                false,
                "Expiring",
                &format!("lifetime over at {e}: deleting Rancher cluster {name}"),
            )
            .await;
        }
        return Ok(false);
    }
    let msg = if ctx.s.dry_run {
        format!("expired at {e}; dry run: cluster {name} is not deleted")
    } else {
        format!("expired at {e}: cluster {name} deleted")
    };
    st.phase = Some(Phase::Expired);
    st.message = Some(format!("{head} | {msg}"));
    st.set_condition(condition(
        "Expired",
        true,
        "LifetimeOver",
        &msg,
        now,
        generation,
    ));
    // The cluster is gone: the finalizer has nothing left to guard. It goes first, so a
    // request seen Expired holds no finalizer (a crash in between retries from here).
    if !ctx.s.dry_run {
        set_finalizer(ctx, cr, false).await?;
    }
    ctx.write_status(cr, &st, "LifetimeOver", now).await?;
    ctx.event(cr, false, "Expired", &msg).await;
    Ok(true)
}

async fn cleanup(ctx: &Context, cr: &ClusterRequest) -> Result<Action, OperatorError> {
    if !cr.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Action::await_change());
    }
    let name = cr
        .status
        .as_ref()
        .and_then(|s| s.cluster_name.clone())
        .unwrap_or_else(|| cr.name_any());
    if ctx.s.dry_run || remove_cluster(ctx, cr, &name).await? {
        set_finalizer(ctx, cr, false).await?;
        return Ok(Action::await_change());
    }
    Ok(Action::requeue(Duration::from_secs(2)))
}

/// One reconcile of one request.
pub async fn reconcile(
    cr: Arc<ClusterRequest>,
    ctx: Arc<Context>,
) -> Result<Action, OperatorError> {
    ctx.metrics.reconciled();
    let now = ctx.s.clock.now()?;
    let warn_s = ctx.s.warn_before_s;
    // Wake at the next warning or expiry, or at the resync at the latest.
    let soon = |cr: &ClusterRequest| {
        let resync = ctx.s.resync;
        let t = steps::wake_in(cr, now, warn_s).map_or(resync, |s| {
            Duration::from_secs(u64::try_from(s).unwrap_or(0)).min(resync)
        });
        Action::requeue(t.max(Duration::from_millis(200)))
    };
    match steps::next(&cr, now, warn_s) {
        Step::Cleanup => cleanup(&ctx, &cr).await,
        Step::Judge => {
            judge_all(&ctx, now).await?;
            Ok(Action::requeue(Duration::from_millis(200)))
        }
        Step::Deliver => {
            deliver(&ctx, &cr, now).await?;
            Ok(soon(&cr))
        }
        Step::Warn => {
            warn(&ctx, &cr, now).await?;
            Ok(Action::requeue(Duration::from_millis(200)))
        }
        Step::Expire => {
            if expire(&ctx, &cr, now).await? {
                Ok(Action::await_change())
            } else {
                Ok(Action::requeue(Duration::from_secs(1)))
            }
        }
        Step::Idle => Ok(soon(&cr)),
    }
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "the signature kube-runtime's Controller::run asks for"
)]
fn error_policy(cr: Arc<ClusterRequest>, e: &OperatorError, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconcile_error();
    tracing::warn!(request = %cr.name_any(), error = %e, "reconcile failed; retrying");
    Action::requeue(Duration::from_secs(3))
}

/// Run the controller until `stop` resolves.
pub async fn run(
    ctx: Arc<Context>,
    stop: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let requests = ctx.requests();
    let clusters = ctx.dynamic(&cluster_resource());
    let controller = Controller::new(requests, watcher::Config::default())
        .owns_with(clusters, cluster_resource(), watcher::Config::default())
        .graceful_shutdown_on(stop);
    let store = controller.store();
    let metrics = ctx.metrics.clone();
    let phases = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            metrics.set_phases(
                store
                    .state()
                    .iter()
                    .map(|r| r.status.as_ref().and_then(|s| s.phase)),
            );
        }
    });
    controller
        .run(reconcile, error_policy, ctx)
        .for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "controller");
            }
        })
        .await;
    phases.abort();
}
