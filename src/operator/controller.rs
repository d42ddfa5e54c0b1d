//! The controller: kube-runtime's `Controller` over the ClusterRequests of every team
//! namespace (a namespace labelled `rackplan.io/team` and matched by
//! `--team-namespaces`), woken also by the Rancher Clusters it made (linked by the
//! `rackplan.io/request` annotation: owner references cannot cross namespaces), one
//! reconcile per request doing the step `steps::next` names. Judging is one task of its
//! own (`judge.rs`): a reconcile that finds its request waiting for a judgement wakes it.
//!
//! Safe at every restart point:
//! - a cluster's name is its request's, its objects carry the request's UID, and they are
//!   created only when absent: a restart between two creations makes no duplicate, and
//!   an object of that name without the UID is never adopted or deleted (the request
//!   fails, naming it);
//! - the expiry is a time in the status, compared at every reconcile: a restart after it
//!   passed expires the request at once;
//! - the finalizer goes only once the cluster's access and objects are gone;
//! - events left pending by a crash are sent at the next look (`context.rs`).
//!
//! Bounded: the watch lists in pages and keeps only a shrunk copy of each request
//! (`spec::shrink`: no managed fields, no field past its bound).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt as _;
use kube::api::{Api, DynamicObject};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};

use super::admission::{needs_judging, wants_pass_now};
use super::context::{Context, OperatorError, cluster_resource};
use super::delivery;
use super::ending::{cleanup, expire, warn};
use super::judge;
use super::lifecycle::{change, deliver};
use super::machines;
use super::resource::{ClusterRequest, Phase, REQUEST_ANNOTATION, REQUEST_UID_LABEL};
use super::spec::shrink;
use super::steps::{self, Step};
use super::teams::team_of_namespace;

/// Requests (and namespaces) listed per page by the watches.
const WATCH_PAGE: u32 = 50;

/// One reconcile of one request.
pub async fn reconcile(
    cr: Arc<ClusterRequest>,
    ctx: Arc<Context>,
) -> Result<Action, OperatorError> {
    ctx.metrics.reconciled();
    if ctx.team_of(&cr.namespace().unwrap_or_default()).is_none() {
        // Not a team namespace (or not yet known): the namespace watch reconciles every
        // request again when one is labelled.
        return Ok(Action::await_change());
    }
    let now = ctx.s.clock.now()?;
    let warn_s = ctx.s.warn_before_s;
    // Wake at the next warning or expiry (or, delivering, the delivery target), or at the
    // resync at the latest.
    let soon = |cr: &ClusterRequest, target: Option<i64>| {
        let resync = ctx.s.resync;
        let next = [steps::wake_in(cr, now, warn_s), target.map(|s| s.max(1))]
            .into_iter()
            .flatten()
            .min();
        let t = next.map_or(resync, |s| {
            Duration::from_secs(u64::try_from(s).unwrap_or(0)).min(resync)
        });
        Action::requeue(t.max(Duration::from_millis(200)))
    };
    match steps::next(&cr, now, warn_s, ctx.s.dry_run) {
        Step::Announce => {
            ctx.flush(&cr, now).await?;
            Ok(Action::requeue(Duration::from_millis(200)))
        }
        Step::Cleanup => cleanup(&ctx, &cr, now).await,
        Step::Judge => {
            if wants_pass_now(&cr, ctx.s.dry_run) {
                ctx.wake_judge();
            }
            Ok(Action::requeue(ctx.s.resync))
        }
        Step::Change => {
            change(&ctx, &cr, now).await?;
            Ok(Action::requeue(Duration::from_millis(200)))
        }
        Step::Deliver => {
            deliver(&ctx, &cr, now).await?;
            Ok(soon(&cr, delivery::late_in(&cr, now)))
        }
        Step::Warn => {
            warn(&ctx, &cr, now).await?;
            Ok(Action::requeue(Duration::from_millis(200)))
        }
        Step::Expire => expire(&ctx, &cr, now).await,
        Step::Idle => Ok(soon(&cr, None)),
    }
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "the signature kube-runtime's Controller::run asks for"
)]
fn error_policy(cr: Arc<ClusterRequest>, e: &OperatorError, ctx: Arc<Context>) -> Action {
    if let OperatorError::Conflict(what) = e {
        tracing::debug!(request = %cr.name_any(), %what, "changed since read; looking again");
        return Action::requeue(Duration::from_millis(300));
    }
    ctx.metrics.reconcile_error();
    tracing::warn!(request = %cr.name_any(), error = %e, "reconcile failed; retrying");
    Action::requeue(Duration::from_secs(3))
}

/// The request a Rancher cluster of ours belongs to.
fn owner_of(c: &DynamicObject) -> Option<ObjectRef<ClusterRequest>> {
    c.labels().get(REQUEST_UID_LABEL)?;
    let (ns, name) = c.annotations().get(REQUEST_ANNOTATION)?.split_once('/')?;
    (crate::site::types::is_dns_label(ns, 63) && !name.is_empty())
        .then(|| ObjectRef::new(name).within(ns))
}

/// Keep `ctx`'s map of team namespaces, and say when it changed.
async fn watch_namespaces(ctx: Arc<Context>, changed: tokio::sync::mpsc::UnboundedSender<()>) {
    let api: Api<Namespace> = Api::all(ctx.rancher.clone());
    let cfg = watcher::Config::default()
        .labels(&ctx.s.team_namespaces)
        .page_size(WATCH_PAGE);
    let mut building: Option<BTreeMap<String, String>> = None;
    let mut events = watcher(api, cfg).default_backoff().boxed();
    while let Some(ev) = events.next().await {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => {
                tracing::warn!(error = %e, "watching the team namespaces");
                continue;
            }
        };
        let mut map = ctx
            .namespaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match ev {
            watcher::Event::Init => building = Some(BTreeMap::new()),
            watcher::Event::InitApply(n) => {
                if let (Some(b), Some((k, v))) = (building.as_mut(), team_of_namespace(&n)) {
                    b.insert(k, v);
                }
            }
            watcher::Event::InitDone => {
                if let Some(b) = building.take() {
                    *map = b;
                }
            }
            watcher::Event::Apply(n) => {
                map.remove(&n.name_any());
                if let Some((k, v)) = team_of_namespace(&n) {
                    map.insert(k, v);
                }
            }
            watcher::Event::Delete(n) => {
                map.remove(&n.name_any());
            }
        }
        drop(map);
        let _ = changed.send(());
        ctx.wake_judge();
    }
}

/// The judging task: a pass when woken, and at each resync while a request waits.
async fn judge_loop(ctx: Arc<Context>, store: Store<ClusterRequest>) {
    loop {
        let woken = tokio::select! {
            () = ctx.judge.notified() => true,
            () = tokio::time::sleep(ctx.s.resync) => false,
        };
        if !woken
            && !store
                .state()
                .iter()
                .any(|r| needs_judging(r, ctx.s.dry_run))
        {
            continue;
        }
        if let Err(e) = judge::judge_all(&ctx).await {
            ctx.metrics.reconcile_error();
            tracing::warn!(error = %e, "judging pass failed; judged again at the next resync");
            if matches!(e, OperatorError::Fence(_)) {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// Run the controller until `stop` resolves.
pub async fn run(
    ctx: Arc<Context>,
    stop: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let (ns_tx, mut ns_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let namespaces = tokio::spawn(watch_namespaces(ctx.clone(), ns_tx));
    let all_again = futures_util::stream::poll_fn(move |cx| ns_rx.poll_recv(cx));

    let (reader, writer) = reflector::store();
    let (machine_tx, mut machine_rx) = tokio::sync::mpsc::unbounded_channel();
    let machine_watch = tokio::spawn(machines::watch(ctx.clone(), reader.clone(), machine_tx));
    let machine_woken = futures_util::stream::poll_fn(move |cx| machine_rx.poll_recv(cx));
    let requests = watcher(
        Api::<ClusterRequest>::all(ctx.rancher.clone()),
        watcher::Config::default().page_size(WATCH_PAGE),
    )
    .default_backoff()
    .modify(shrink)
    .reflect(writer)
    .applied_objects();
    let clusters = ctx.dynamic(&cluster_resource());
    let controller = Controller::for_stream(requests, reader)
        .watches_with(
            clusters,
            cluster_resource(),
            watcher::Config::default()
                .labels(REQUEST_UID_LABEL)
                .page_size(WATCH_PAGE),
            |c| owner_of(&c),
        )
        .reconcile_all_on(all_again)
        .reconcile_on(machine_woken)
        .graceful_shutdown_on(stop);
    let store = controller.store();
    let judging = tokio::spawn(judge_loop(ctx.clone(), store.clone()));
    let counting = ctx.clone();
    let phases = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let teams = counting.team_namespaces();
            let ours: Vec<_> = store
                .state()
                .into_iter()
                .filter(|r| teams.contains_key(&r.namespace().unwrap_or_default()))
                .collect();
            counting
                .metrics
                .set_phases(ours.iter().map(|r| r.status.as_ref().and_then(|s| s.phase)));
            let late = ours
                .iter()
                .filter(|r| {
                    r.status.as_ref().is_some_and(|s| {
                        matches!(s.phase, Some(Phase::Admitted | Phase::Provisioning))
                            && s.condition("DeliveryLate")
                                .is_some_and(|c| c.status == "True")
                    })
                })
                .count();
            counting.metrics.set_late(late as u64);
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
    machine_watch.abort();
    judging.abort();
    namespaces.abort();
}
