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
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use kube::ResourceExt as _;
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;

use super::admission;
use super::context::{Context, OperatorError, api_err, cluster_resource, condition};
use super::lifecycle::{cleanup, deliver, expire, warn};
use super::resource::{ClusterRequest, Phase};
use super::spec::shown;
use super::steps::{self, Step, format_time};
use crate::simulate::scenario::Team;
use crate::simulate::{ScenarioInput, Study};

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
