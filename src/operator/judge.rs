//! One judging pass, run by one task (so passes never overlap, and the wake-ups that
//! arrive during a pass make exactly one more): the requests of every team namespace are
//! listed once, in pages, from the API server (never the cache: a verdict must count
//! every request admitted before it), the fleet is read from Harvester, and every request
//! that needs it is judged in creation order (`admission.rs`). Before the verdicts are
//! written, what they counted is checked again: the Lease is read back (`fence.rs`) and
//! the quota ConfigMap must be the one read (else the pass starts over); each verdict is
//! then written as a compare-and-swap on the resourceVersion listed, and a conflict ends
//! the pass (the next one judges again). A fleet that cannot be read leaves the requests
//! `Pending` with a `Judged=False, FleetUnreadable` condition that says why and what
//! happens next.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::ResourceExt as _;
use kube::api::{Api, ListParams};

use super::admission::{self, Outcome, Pass};
use super::context::{Announce, Context, OperatorError, api_err, condition};
use super::resource::{ClusterRequest, Phase, Waiting};
use super::spec::shrink;
use super::steps::format_time;
use super::teams::{Teams, team_of_namespace};
use crate::simulate::{ScenarioInput, Study};

/// Requests listed per page.
const PAGE: u32 = 50;
/// Most requests read in one pass.
const MAX_REQUESTS: usize = 100_000;
/// Passes started over (the quota changed while judging) before giving up until the next
/// wake-up.
const ATTEMPTS: usize = 3;

/// Every request of the team namespaces, shrunk (`spec::shrink`).
async fn list_requests(
    ctx: &Context,
    namespaces: &BTreeMap<String, String>,
) -> Result<Vec<ClusterRequest>, OperatorError> {
    let api: Api<ClusterRequest> = Api::all(ctx.rancher.clone());
    let mut params = ListParams::default().limit(PAGE);
    let mut out = Vec::new();
    let mut pages = 0;
    loop {
        pages += 1;
        let page = api
            .list(&params)
            .await
            .map_err(api_err("listing the ClusterRequests"))?;
        for mut cr in page.items {
            if namespaces.contains_key(&cr.namespace().unwrap_or_default()) {
                shrink(&mut cr);
                out.push(cr);
            }
        }
        if out.len() > MAX_REQUESTS {
            return Err(OperatorError::Config {
                what: "the ClusterRequests".into(),
                message: format!("more than {MAX_REQUESTS} in the team namespaces"),
            });
        }
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => params.continue_token = Some(c),
            _ => {
                ctx.metrics.pass(pages);
                return Ok(out);
            }
        }
    }
}

/// The quota ConfigMap's data and resourceVersion (none when no ConfigMap is named).
async fn quotas(
    ctx: &Context,
) -> Result<Option<(BTreeMap<String, String>, Option<String>)>, OperatorError> {
    let Some(name) = &ctx.s.quotas else {
        return Ok(None);
    };
    let api: Api<ConfigMap> = Api::namespaced(ctx.rancher.clone(), &ctx.s.namespace);
    let cm = api.get(name).await.map_err(api_err(format!(
        "reading the quota ConfigMap {}/{name}",
        ctx.s.namespace
    )))?;
    Ok(Some((
        cm.data.clone().unwrap_or_default(),
        cm.metadata.resource_version,
    )))
}

/// The teams as the last judging pass read them, else as the scenario and the ConfigMap
/// say now.
pub(super) async fn teams(ctx: &Context) -> Result<Teams, OperatorError> {
    if let Some(t) = ctx.cached_teams() {
        return Ok(t);
    }
    let t = teams_now(ctx).await?;
    ctx.set_teams(t.clone());
    Ok(t)
}

/// The teams as the scenario and the quota ConfigMap say now.
pub async fn teams_now(ctx: &Context) -> Result<Teams, OperatorError> {
    let loaded = crate::simulate::scenario::load(&ctx.s.scenario)
        .map_err(|e| OperatorError::Study(e.to_string()))?;
    Ok(read_teams(ctx, &loaded.scenario.teams).await?.0)
}

/// The teams as the scenario and the ConfigMap say now.
async fn read_teams(
    ctx: &Context,
    scenario_teams: &[crate::simulate::scenario::Team],
) -> Result<(Teams, Option<String>), OperatorError> {
    let q = quotas(ctx).await?;
    let source = format!(
        "quota ConfigMap {}/{}",
        ctx.s.namespace,
        ctx.s.quotas.as_deref().unwrap_or_default()
    );
    let teams = Teams::resolve(
        scenario_teams,
        q.as_ref().map(|(d, _)| (source.as_str(), d)),
    );
    Ok((teams, q.and_then(|(_, v)| v)))
}

/// Judge every request that needs it; a quota change mid-pass starts it over.
pub(super) async fn judge_all(ctx: &Context) -> Result<(), OperatorError> {
    for _ in 0..ATTEMPTS {
        if pass(ctx).await? {
            return Ok(());
        }
    }
    ctx.wake_judge();
    Ok(())
}

/// One pass; `false` when what it counted changed before it could write.
async fn pass(ctx: &Context) -> Result<bool, OperatorError> {
    ctx.fence.check()?;
    let now = ctx.s.clock.now()?;
    let namespaces = ctx.team_namespaces();
    let requests = list_requests(ctx, &namespaces).await?;
    if !requests
        .iter()
        .any(|r| admission::needs_judging(r, ctx.s.dry_run))
    {
        return Ok(true);
    }
    let inputs = match read_inputs(ctx).await {
        Ok(i) => i,
        Err(Unreadable {
            reason: Some((reason, why)),
            error,
        }) => {
            unjudged(ctx, &requests, reason, &why, now).await?;
            return Err(error);
        }
        Err(u) => return Err(u.error),
    };
    let quota_version = inputs.quota_version.clone();
    let (verdicts, requests) = judge(ctx, inputs, namespaces, requests, now).await?;
    pause_for_faults(verdicts.len()).await;
    // What the verdicts counted, checked again before they are written.
    ctx.fence.verify().await?;
    if quotas(ctx).await?.and_then(|(_, v)| v) != quota_version {
        return Ok(false);
    }
    for v in verdicts {
        let cr = &requests[v.index];
        ctx.metrics.observe_admission(v.seconds);
        match write_verdict(ctx, cr, &v, now).await {
            Ok(()) => {}
            Err(OperatorError::Api {
                source: kube::Error::Api(s),
                ..
            }) if s.code == 404 => {}
            Err(OperatorError::Conflict(what)) => {
                tracing::debug!(%what, "a request changed during the pass; judging again");
                ctx.wake_judge();
                return Ok(true);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// What a judgement reads besides the requests: the study on the fleet as it runs, the
/// teams, the quota ConfigMap's version, the VMIs running per guest cluster.
struct Inputs {
    study: Study,
    teams: Teams,
    quota_version: Option<String>,
    running: BTreeMap<String, usize>,
}

/// Why the inputs could not be read: the condition reason and sentence the waiting
/// requests are told (none when the reading failed before the fleet), and the error.
struct Unreadable {
    reason: Option<(&'static str, String)>,
    error: OperatorError,
}

impl From<OperatorError> for Unreadable {
    fn from(error: OperatorError) -> Unreadable {
        Unreadable {
            reason: None,
            error,
        }
    }
}

async fn read_inputs(ctx: &Context) -> Result<Inputs, Unreadable> {
    let t0 = std::time::Instant::now();
    let read = super::harvester::read(&ctx.harvester, &ctx.s.harvester_origin).await;
    let (state, running) = match read {
        Ok(r) => r,
        Err(e) => {
            let why = format!("cannot read the Harvester fleet: {e}");
            return Err(Unreadable {
                reason: Some(("FleetUnreadable", why)),
                error: e.into(),
            });
        }
    };
    ctx.metrics.observe_fleet_read(t0.elapsed().as_secs_f64());
    let mut study = match Study::on_state(
        ScenarioInput::File(&ctx.s.scenario),
        &state,
        std::path::Path::new(&ctx.s.harvester_origin),
    ) {
        Ok(s) => s,
        Err(e) => {
            let why = format!(
                "the scenario {} cannot be read: {e}",
                ctx.s.scenario.display()
            );
            return Err(Unreadable {
                reason: Some(("ScenarioUnreadable", why)),
                error: OperatorError::Study(e.to_string()),
            });
        }
    };
    let (teams, quota_version) = read_teams(ctx, &study.scenario.teams).await?;
    ctx.set_teams(teams.clone());
    study.scenario.teams = teams.for_study();
    Ok(Inputs {
        study,
        teams,
        quota_version,
        running,
    })
}

/// Judge `requests` on `inputs` off the async workers (the judging is CPU work: the Lease
/// keeps being renewed and the watches keep being read while it runs).
async fn judge(
    ctx: &Context,
    inputs: Inputs,
    namespaces: BTreeMap<String, String>,
    requests: Vec<ClusterRequest>,
    now: i64,
) -> Result<(Vec<admission::Verdict>, Vec<ClusterRequest>), OperatorError> {
    let (catalogue, rules, dry_run) = (ctx.s.catalogue.clone(), ctx.s.rules.clone(), ctx.s.dry_run);
    let measured = super::delivery::measured(&requests);
    let delivery_target_s = ctx.s.delivery_target_s;
    tokio::task::spawn_blocking(move || {
        let verdicts = admission::judge_pending(
            &Pass {
                study: &inputs.study,
                catalogue: &catalogue,
                rules: &rules,
                teams: &inputs.teams,
                namespaces: &namespaces,
                running: &inputs.running,
                now,
                dry_run,
                measured: &measured,
                delivery_target_s,
            },
            &requests,
        );
        (verdicts, requests)
    })
    .await
    .map_err(|e| OperatorError::Study(format!("the judging task: {e}")))
}

/// What a one-off judgement reads, as a pass reads it: the team namespaces (listed now,
/// not by the operator's watch), every request of them, the fleet and the teams.
async fn read_once(
    ctx: &Context,
) -> Result<(BTreeMap<String, String>, Vec<ClusterRequest>, Inputs), OperatorError> {
    let namespaces = team_namespaces(ctx).await?;
    let requests = list_requests(ctx, &namespaces).await?;
    let inputs = read_inputs(ctx).await.map_err(|u| u.error)?;
    Ok((namespaces, requests, inputs))
}

/// Each catalogue shape's delivery as one cluster of it admitted now would be told: the
/// model on the fleet as it runs, with this fleet's measured deliveries of the shape in
/// its place where there are some. What the portal shows beside each shape; nothing is
/// written.
pub async fn shape_deliveries(
    ctx: &Context,
) -> Result<BTreeMap<String, super::resource::Delivery>, OperatorError> {
    let (_, requests, inputs) = read_once(ctx).await?;
    let measured = super::delivery::measured(&requests);
    let (catalogue, target_s) = (ctx.s.catalogue.clone(), ctx.s.delivery_target_s);
    tokio::task::spawn_blocking(move || {
        let now = crate::simulate::delivery::FleetNow::of(&inputs.study);
        catalogue
            .offers
            .iter()
            .map(|(shape, o)| {
                let a = crate::simulate::delivery::request_answer(
                    &inputs.study,
                    &now,
                    shape,
                    &o.pools,
                    1,
                    measured.get(shape),
                );
                let d = super::delivery::predicted(&a.prediction, target_s);
                (shape.clone(), d)
            })
            .collect()
    })
    .await
    .map_err(|e| OperatorError::Study(format!("the delivery predictions: {e}")))
}

/// The team namespaces as the API server lists them now (the operator keeps them by a
/// watch; a one-off judgement lists them).
pub async fn team_namespaces(ctx: &Context) -> Result<BTreeMap<String, String>, OperatorError> {
    let api: Api<Namespace> = Api::all(ctx.rancher.clone());
    let params = ListParams::default().labels(&ctx.s.team_namespaces);
    let list = api
        .list(&params)
        .await
        .map_err(api_err("listing the team namespaces"))?;
    Ok(list.items.iter().filter_map(team_of_namespace).collect())
}

/// The judgement a request not yet made would get now, nothing written: every request of
/// the team namespaces listed and the fleet read as a pass reads them, and the candidate
/// judged with them as if created now (after every request there). What a team is shown
/// before it asks; the operator judges the request again once it is made.
pub async fn preview(
    ctx: &Context,
    mut candidate: ClusterRequest,
) -> Result<admission::Verdict, OperatorError> {
    let now = ctx.s.clock.now()?;
    let (namespaces, mut requests, inputs) = read_once(ctx).await?;
    candidate.metadata.creation_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::from_second(now)
                .map_err(|e| OperatorError::Study(format!("the time now: {e}")))?,
        ));
    candidate.metadata.uid = None;
    candidate.status = None;
    let index = requests.len();
    requests.push(candidate);
    let (verdicts, _) = judge(ctx, inputs, namespaces, requests, now).await?;
    verdicts
        .into_iter()
        .find(|v| v.index == index)
        .ok_or_else(|| OperatorError::Study("the request was not judged".into()))
}

/// Fault injection for the tests, in debug builds only: `RACKPLAN_FAULT_PAUSE_BEFORE_WRITES`
/// seconds between judging and writing, the window in which a replica may be paused
/// (SIGSTOP) past its Lease.
async fn pause_for_faults(verdicts: usize) {
    #[cfg(debug_assertions)]
    if let Some(s) = std::env::var("RACKPLAN_FAULT_PAUSE_BEFORE_WRITES")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 600.0)
    {
        tracing::warn!(
            verdicts,
            seconds = s,
            "fault injection: pausing before the verdicts are written"
        );
        tokio::time::sleep(std::time::Duration::from_secs_f64(s)).await;
    }
    #[cfg(not(debug_assertions))]
    let _ = verdicts;
}

async fn write_verdict(
    ctx: &Context,
    cr: &ClusterRequest,
    v: &admission::Verdict,
    now: i64,
) -> Result<(), OperatorError> {
    let generation = cr.metadata.generation.unwrap_or(0);
    let mut st = cr.status.clone().unwrap_or_default();
    st.observed_generation = Some(generation);
    st.set_condition(condition(
        "Judged", true, "Judged", "judged", now, generation,
    ));
    let announce;
    match v.outcome {
        Outcome::Admitted => {
            st.phase = Some(Phase::Admitted);
            st.message = Some(if ctx.s.dry_run {
                format!(
                    "{}; dry run: nothing is delivered, and a live operator judges it again",
                    v.message
                )
            } else {
                v.message.clone()
            });
            st.admitted_at = Some(format_time(now));
            st.expires_at = v.expires_at.map(format_time);
            st.cluster_name = cr.metadata.name.clone();
            st.terms.clone_from(&v.terms);
            st.waiting = None;
            st.final_snapshot = None;
            st.access = None;
            st.delivery.clone_from(&v.delivery);
            // A dry run's admission is its own transition: a live operator announces its
            // own when it judges the request again.
            let key = if ctx.s.dry_run {
                format!("Admitted@{generation}:dry-run")
            } else {
                format!("Admitted@{generation}")
            };
            announce = Announce::new(key, "Admitted", &v.message, false);
        }
        Outcome::Waiting => {
            st.phase = Some(Phase::Waiting);
            st.message = Some(v.message.clone());
            st.admitted_at = None;
            st.expires_at = None;
            st.terms = None;
            let reason = match v.reason {
                "QuotaExceeded" => "Quota",
                "NoFailureHeadroom" => "FailureHeadroom",
                _ => "QuotaAndFailureHeadroom",
            };
            st.waiting = Some(Waiting {
                reason: reason.into(),
                since: admission::waiting_since(cr, now),
                until: admission::until_text(v),
            });
            announce = Announce::new(
                format!("Waiting@{generation}:{reason}"),
                "Waiting",
                &v.message,
                true,
            );
        }
        Outcome::Refused => {
            st.phase = Some(Phase::Refused);
            st.message = Some(v.message.clone());
            st.admitted_at = None;
            st.expires_at = None;
            st.terms = None;
            st.waiting = None;
            announce = Announce::new(format!("Refused@{generation}"), "Refused", &v.message, true);
        }
    }
    st.set_condition(condition(
        "Admitted",
        v.admitted(),
        v.reason,
        &v.message,
        now,
        generation,
    ));
    ctx.write_status(cr, &st, &[announce], now).await?;
    Ok(())
}

/// The requests waiting for a judgement cannot be judged now: say why on each.
async fn unjudged(
    ctx: &Context,
    requests: &[ClusterRequest],
    reason: &str,
    why: &str,
    now: i64,
) -> Result<(), OperatorError> {
    let next = format!(
        "{why}; the request stays Pending and is judged again every {:?} until it can be",
        ctx.s.resync
    );
    for cr in requests
        .iter()
        .filter(|r| admission::needs_judging(r, ctx.s.dry_run))
    {
        let generation = cr.metadata.generation.unwrap_or(0);
        let mut st = cr.status.clone().unwrap_or_default();
        if st.phase.is_none() {
            st.phase = Some(Phase::Pending);
        }
        if st.phase == Some(Phase::Pending) {
            st.message = Some(format!("pending: {next}"));
        }
        st.set_condition(condition("Judged", false, reason, &next, now, generation));
        let a = Announce::new(format!("{reason}@{generation}"), reason, &next, true);
        match ctx.write_status(cr, &st, &[a], now).await {
            Ok(_) | Err(OperatorError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
