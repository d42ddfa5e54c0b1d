//! A delivered request's life after judging: its Rancher cluster created from the
//! catalogue shape (only what is absent, marked with the request's UID), its readiness
//! followed from Rancher's own status, the warning before expiry, the expiry itself
//! (background deletion, then `Expired`), and the finalizer that removes the cluster
//! before a deleted request goes. Nothing here touches an object without the request's
//! UID label and owner reference.

use std::time::Duration;

use kube::api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Resource as _, ResourceExt as _};
use serde_json::json;

use super::catalogue::Marks;
use super::context::{
    Context, OperatorError, api_err, cluster_resource, condition, config_resource,
};
use super::resource::{
    ClusterRequest, EXPIRES_LABEL, FINALIZER, Phase, REQUEST_UID_LABEL, TEAM_LABEL,
};
use super::spec::shown;
use super::steps::{self, format_time};

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
pub(super) async fn deliver(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<(), OperatorError> {
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

pub(super) async fn warn(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<(), OperatorError> {
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
pub(super) async fn expire(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<bool, OperatorError> {
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

pub(super) async fn cleanup(ctx: &Context, cr: &ClusterRequest) -> Result<Action, OperatorError> {
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
