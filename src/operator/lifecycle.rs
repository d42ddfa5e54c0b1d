//! A judged request's life until its expiry: its Rancher cluster made from the **recorded
//! terms** (the shape and version judged, never the live spec; only what is absent,
//! marked with the request's UID), Rancher's readiness followed, the team's access
//! granted (`access.rs`), and an edit of the spec after admission judged as a change of
//! the terms (`spec::change`). Every create passes the fence and is made only after the
//! request is read again from the API server and found still holding the same terms.
//! The end of the life (warning, expiry, deletion) is in `ending.rs`.

use kube::ResourceExt as _;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::json;

use super::access;
use super::catalogue::Marks;
use super::context::{
    Announce, Context, OperatorError, api_err, cluster_resource, condition, config_resource,
};
use super::drift;
use super::progress;
use super::resource::{
    ClusterRequest, ClusterRequestStatus, EXPIRES_LABEL, FINALIZER, Phase, REQUEST_ANNOTATION,
    REQUEST_UID_LABEL, TEAM_LABEL, Terms,
};
use super::spec::{self, Change, shown};
use super::steps::{self, format_time, parse_time};

/// The admission sentence: the first part of the message, kept through the life.
pub(super) fn head(st: &ClusterRequestStatus) -> String {
    st.message
        .as_deref()
        .unwrap_or_default()
        .split(" | ")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The message becomes `head | tail`.
pub(super) fn say(st: &mut ClusterRequestStatus, tail: &str) {
    st.message = Some(format!("{} | {tail}", head(st)));
}

pub(super) fn generation(cr: &ClusterRequest) -> i64 {
    cr.metadata.generation.unwrap_or(0)
}

/// The name of `cr`'s cluster.
pub(super) fn cluster_name(cr: &ClusterRequest) -> String {
    cr.status
        .as_ref()
        .and_then(|s| s.cluster_name.clone())
        .unwrap_or_else(|| cr.name_any())
}

/// The objects of a cluster named `name` made from `terms` that exist, each (resource,
/// name, ours).
async fn existing(
    ctx: &Context,
    cr: &ClusterRequest,
    terms: &Terms,
    name: &str,
) -> Result<Vec<(ApiResource, String, bool)>, OperatorError> {
    let uid = cr.uid().unwrap_or_default();
    let configs = ctx
        .s
        .catalogue
        .offers
        .get(&terms.shape)
        .map(|o| o.config_names(name))
        .unwrap_or_default();
    let mut wanted = vec![(cluster_resource(), name.to_string())];
    wanted.extend(configs.into_iter().map(|c| (config_resource(), c)));
    let mut out = Vec::new();
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

/// Set or remove the finalizer (a compare-and-swap on the resourceVersion); the object as
/// written.
pub(super) async fn set_finalizer(
    ctx: &Context,
    cr: &ClusterRequest,
    on: bool,
) -> Result<ClusterRequest, OperatorError> {
    let has = cr.finalizers().iter().any(|f| f == FINALIZER);
    if has == on {
        return Ok(cr.clone());
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
    ctx.fence.check()?;
    let patch = json!({"metadata": {"finalizers": fins, "resourceVersion": cr.resource_version()}});
    ctx.requests_of(cr)
        .patch(
            &cr.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map_err(api_err(format!(
            "setting the finalizer of {}",
            cr.name_any()
        )))
}

/// Rancher's readiness of a cluster object: `status.ready`, else a `Ready` condition.
pub(super) fn rancher_ready(o: &DynamicObject) -> bool {
    let st = &o.data["status"];
    st["ready"].as_bool().unwrap_or(false)
        || st["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// The request read again from the API server: still there, not being deleted, holding
/// the same terms. Anything else means the decision to create is stale.
async fn still_holding(
    ctx: &Context,
    cr: &ClusterRequest,
    terms: &Terms,
) -> Result<(), OperatorError> {
    let fresh = ctx
        .requests_of(cr)
        .get_opt(&cr.name_any())
        .await
        .map_err(api_err(format!("reading {}", cr.name_any())))?;
    let ok = fresh.as_ref().is_some_and(|f| {
        f.metadata.deletion_timestamp.is_none()
            && f.uid() == cr.uid()
            && f.status.as_ref().is_some_and(|s| {
                s.phase.is_some_and(Phase::holds) && s.terms.as_ref() == Some(terms)
            })
    });
    if ok {
        Ok(())
    } else {
        Err(OperatorError::Conflict(format!(
            "request {} (its terms or phase)",
            cr.name_any()
        )))
    }
}

/// Why the shape's objects could not be made, as the request's status says it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct CreateFailed(String);

/// Create the shape's objects of `terms` that are absent.
async fn create(
    ctx: &Context,
    cr: &ClusterRequest,
    terms: &Terms,
    name: &str,
    present: &[(ApiResource, String, bool)],
) -> Result<Result<(), CreateFailed>, OperatorError> {
    let Some(offer) = ctx.s.catalogue.offers.get(&terms.shape) else {
        return Ok(Err(CreateFailed(format!(
            "failed: shape `{}` left the catalogue before its cluster was made ({}); nothing is held",
            shown(&terms.shape),
            ctx.s.catalogue.names()
        ))));
    };
    let expires = cr
        .status
        .as_ref()
        .and_then(|s| s.expires_at.as_deref())
        .and_then(parse_time);
    let mut marks = Marks::default();
    marks.labels.insert(TEAM_LABEL.into(), terms.team.clone());
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
        REQUEST_ANNOTATION.into(),
        format!("{}/{}", cr.namespace().unwrap_or_default(), cr.name_any()),
    );
    let objects = offer.objects_for(
        name,
        &ctx.s.namespace,
        &marks,
        Some(terms.kubernetes_version.as_str()),
    );
    let mut checked = false;
    // Machine configs first: the Cluster names them.
    for o in objects.into_iter().rev() {
        let (ar, n) = if o["kind"] == "Cluster" {
            (cluster_resource(), name.to_string())
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
        if !checked {
            ctx.fence.verify().await?;
            still_holding(ctx, cr, terms).await?;
            checked = true;
        }
        ctx.fence.check()?;
        let obj: DynamicObject =
            serde_json::from_value(o).map_err(|e| OperatorError::Study(e.to_string()))?;
        match ctx.dynamic(&ar).create(&PostParams::default(), &obj).await {
            // Made since it was read (another pass): the next look checks its UID.
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => {
                return Ok(Err(CreateFailed(format!(
                    "failed: creating {} {n}: {e}",
                    ar.kind
                ))));
            }
        }
    }
    Ok(Ok(()))
}

/// Make sure the cluster exists (made from the recorded terms when absent), follow its
/// readiness, and grant the team's access once it is ready.
pub(super) async fn deliver(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<(), OperatorError> {
    if ctx.s.dry_run {
        return Ok(());
    }
    let mut st = cr.status.clone().unwrap_or_default();
    let generation = generation(cr);
    let Some(terms) = st.terms.clone() else {
        // Admitted before terms were recorded: judged again, on the terms it asks now.
        st.phase = Some(Phase::Pending);
        st.message = Some(
            "pending: admitted before the operator recorded the terms it judged; judged again"
                .into(),
        );
        ctx.write_status(cr, &st, &[], now).await?;
        ctx.wake_judge();
        return Ok(());
    };
    let cr = &set_finalizer(ctx, cr, true).await?;
    let name = cluster_name(cr);
    let present = existing(ctx, cr, &terms, &name).await?;
    if let Some((ar, n, _)) = present.iter().find(|(_, _, ours)| !ours) {
        let msg = format!(
            "failed: a {} named {n} exists and was not made for this request; rename the request (the operator neither adopts nor deletes it)",
            ar.kind
        );
        return fail(ctx, cr, st, "NameTaken", &msg, now).await;
    }
    let has_cluster = present.iter().any(|(a, _, _)| a.kind == "Cluster");
    if !has_cluster {
        if let Some(offer) = ctx.s.catalogue.offers.get(&terms.shape)
            && !spec::same_pools(&spec::terms_pools(&offer.pools), &terms.pools)
        {
            st.phase = Some(Phase::Pending);
            st.terms = None;
            st.message = Some(format!(
                "pending: shape {} changed in the catalogue after this request was admitted and before its cluster was made; judged again on the shape as it is now",
                terms.shape
            ));
            ctx.write_status(cr, &st, &[], now).await?;
            ctx.wake_judge();
            return Ok(());
        }
        if let Err(e) = create(ctx, cr, &terms, &name, &present).await? {
            return fail(ctx, cr, st, "CreateFailed", &e.0, now).await;
        }
    }
    let cluster = ctx
        .dynamic(&cluster_resource())
        .get_opt(&name)
        .await
        .map_err(api_err(format!("reading Cluster {name}")))?;
    let ready = cluster.as_ref().is_some_and(rancher_ready);
    let mut followed =
        progress::follow(ctx, &mut st, &terms, &name, cluster.as_ref(), ready, now).await?;
    let mut announce = vec![Announce::new(
        "Provisioning",
        "Provisioning",
        &format!(
            "created Rancher cluster {}/{name} from shape {} (Kubernetes {})",
            ctx.s.namespace, terms.shape, terms.kubernetes_version
        ),
        false,
    )];
    if let (Some(c), Some(offer)) = (cluster.as_ref(), ctx.s.catalogue.offers.get(&terms.shape)) {
        let broken = drift::broken(offer, &terms, c);
        drift::record(&mut st, &mut announce, &name, &broken, now, generation);
    }
    if !ready {
        st.phase = Some(Phase::Provisioning);
        say(
            &mut st,
            &format!(
                "provisioning: cluster {name} created, waiting for Rancher to report it ready"
            ),
        );
        st.set_condition(condition(
            "ClusterReady",
            false,
            "Provisioning",
            "waiting for Rancher's status.ready",
            now,
            generation,
        ));
        followed.late(&mut st, &mut announce, &name, "", now, generation);
        ctx.write_status(cr, &st, &announce, now).await?;
        followed.observe(ctx, &st, &terms.shape);
        return Ok(());
    }
    st.set_condition(condition(
        "ClusterReady",
        true,
        "ClusterReady",
        "Rancher reports the cluster ready",
        now,
        generation,
    ));
    let id = cluster
        .as_ref()
        .and_then(|c| c.data["status"]["clusterName"].as_str())
        .unwrap_or_default()
        .to_string();
    let teams = super::judge::teams(ctx).await?;
    let team = teams.by_name.get(&terms.team);
    let why_not = if !access::valid_cluster_id(&id) {
        Some((
            "NoClusterId",
            format!(
                "cluster {name} is ready; waiting for Rancher to name its management cluster (status.clusterName){}",
                if id.is_empty() {
                    String::new()
                } else {
                    format!(": `{}` is not a cluster id", shown(&id))
                }
            ),
        ))
    } else if team.is_none_or(|t| t.principals.is_empty()) {
        Some((
            "NoPrincipal",
            format!(
                "cluster {name} is ready; no access granted: team {} names no Rancher principal (the scenario's `principals`, or `{}.principals` in the quota ConfigMap)",
                terms.team, terms.team
            ),
        ))
    } else {
        None
    };
    if let Some((reason, msg)) = why_not {
        st.phase = Some(Phase::Provisioning);
        say(&mut st, &msg);
        st.set_condition(condition(
            "AccessGranted",
            false,
            reason,
            &msg,
            now,
            generation,
        ));
        followed.late(&mut st, &mut announce, &name, &msg, now, generation);
        ctx.write_status(cr, &st, &announce, now).await?;
        followed.observe(ctx, &st, &terms.shape);
        return Ok(());
    }
    let team = team.expect("checked above");
    let uid = cr.uid().unwrap_or_default();
    let request = format!("{}/{}", cr.namespace().unwrap_or_default(), cr.name_any());
    let granted = access::grant(ctx, &uid, &request, team, &id).await?;
    followed.granted(&mut st);
    let who: Vec<String> = granted
        .bindings
        .iter()
        .map(|b| format!("{} ({})", b.principal, b.role))
        .collect();
    let msg = format!(
        "ready: cluster {name} ({id}); access granted to {}; kubeconfig: {}",
        who.join(", "),
        granted.kubeconfig
    );
    st.access = Some(granted);
    st.phase = Some(Phase::Ready);
    say(&mut st, &msg);
    st.set_condition(condition(
        "AccessGranted",
        true,
        "Granted",
        &format!("granted to {}", who.join(", ")),
        now,
        generation,
    ));
    announce.push(Announce::new("Ready", "Ready", &msg, false));
    ctx.write_status(cr, &st, &announce, now).await?;
    followed.observe(ctx, &st, &terms.shape);
    Ok(())
}

async fn fail(
    ctx: &Context,
    cr: &ClusterRequest,
    mut st: ClusterRequestStatus,
    reason: &str,
    msg: &str,
    now: i64,
) -> Result<(), OperatorError> {
    let generation = generation(cr);
    st.phase = Some(Phase::Failed);
    st.message = Some(msg.to_string());
    st.set_condition(condition(
        "ClusterReady",
        false,
        reason,
        msg,
        now,
        generation,
    ));
    ctx.write_status(
        cr,
        &st,
        &[Announce::new(
            format!("Failed@{generation}"),
            "Failed",
            msg,
            true,
        )],
        now,
    )
    .await?;
    Ok(())
}

/// An edit of an admitted request's spec: the lifetime judged, anything else refused.
pub(super) async fn change(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<(), OperatorError> {
    let mut st = cr.status.clone().unwrap_or_default();
    let Some(mut terms) = st.terms.clone() else {
        return Ok(());
    };
    let generation = generation(cr);
    let teams = super::judge::teams(ctx).await?;
    let cap = ctx.s.rules.max_lifetime_h(teams.by_name.get(&terms.team));
    st.observed_generation = Some(generation);
    let mut announce = Vec::new();
    match spec::change(cr, &terms, cap) {
        Change::None => {}
        Change::Refused { reason, message } => {
            st.set_condition(condition(
                "SpecAccepted",
                false,
                reason,
                &message,
                now,
                generation,
            ));
            say(&mut st, &format!("edit refused: {message}"));
            announce.push(Announce::new(
                format!("EditRefused@{generation}"),
                "EditRefused",
                &message,
                true,
            ));
        }
        Change::Lifetime { duration, hours } => {
            let admitted = st
                .admitted_at
                .as_deref()
                .and_then(parse_time)
                .unwrap_or(now);
            let before = st.expires_at.clone().unwrap_or_default();
            let expires = admitted + (hours * 3600.0).round() as i64;
            let longer = st
                .expires_at
                .as_deref()
                .and_then(parse_time)
                .is_none_or(|e| expires > e);
            let (reason, verb) = if longer {
                ("Extended", "extended")
            } else {
                ("Shortened", "shortened")
            };
            let msg = format!(
                "lifetime {verb} to {duration} from admission: cluster {} now expires at {} (was {before}); team {} may hold it at most {} from admission",
                cluster_name(cr),
                format_time(expires),
                terms.team,
                spec::hours(cap)
            );
            terms.duration = duration;
            st.terms = Some(terms);
            st.expires_at = Some(format_time(expires));
            st.set_condition(condition(
                "SpecAccepted",
                true,
                reason,
                &msg,
                now,
                generation,
            ));
            // A warning given for the old hour is given again for the new one.
            if st.phase == Some(Phase::Expiring)
                && now < steps::warn_at(cr, expires, ctx.s.warn_before_s)
            {
                let ready = st
                    .condition("ClusterReady")
                    .is_some_and(|c| c.status == "True");
                st.phase = Some(if ready {
                    Phase::Ready
                } else {
                    Phase::Provisioning
                });
            }
            say(&mut st, &msg);
            announce.push(Announce::new(
                format!("{reason}@{generation}"),
                reason,
                &msg,
                false,
            ));
            relabel_expiry(ctx, cr, expires).await?;
        }
    }
    ctx.write_status(cr, &st, &announce, now).await?;
    Ok(())
}

/// The delivered cluster's expiry label and annotation follow a lifetime change.
async fn relabel_expiry(
    ctx: &Context,
    cr: &ClusterRequest,
    expires: i64,
) -> Result<(), OperatorError> {
    if ctx.s.dry_run {
        return Ok(());
    }
    let name = cluster_name(cr);
    let api = ctx.dynamic(&cluster_resource());
    let Some(c) = api
        .get_opt(&name)
        .await
        .map_err(api_err(format!("reading Cluster {name}")))?
    else {
        return Ok(());
    };
    if c.labels().get(REQUEST_UID_LABEL) != cr.uid().as_ref() {
        return Ok(());
    }
    ctx.fence.check()?;
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {
            "labels": {EXPIRES_LABEL: expires.to_string()},
            "annotations": {EXPIRES_LABEL: format_time(expires)},
        }})),
    )
    .await
    .map_err(api_err(format!("relabelling Cluster {name}")))?;
    Ok(())
}
