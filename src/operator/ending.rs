//! The end of a delivered request's life: the warning before expiry, the expiry itself
//! (a final etcd snapshot asked of Rancher and waited for a bounded time, the team's
//! access removed, the Rancher cluster deleted, its machine configs only once the cluster
//! is gone, then `Expired`), and the finalizer that does the same removal before a deleted
//! request goes. A request annotated `rackplan.io/protect: "true"` is held at both: it
//! stays `Expiring` (and keeps counting against its team's quota) until the annotation
//! goes. Nothing here touches an object without the request's UID label.

use std::time::Duration;

use kube::ResourceExt as _;
use kube::api::{DeleteParams, ListParams};
use kube::runtime::controller::Action;

use super::access;
use super::context::{
    Announce, Context, OperatorError, api_err, cluster_resource, condition, config_resource,
};
use super::lifecycle::{cluster_name, generation, rancher_ready, say, set_finalizer};
use super::resource::{
    ClusterRequest, FINALIZER, FinalSnapshot, PROTECT_ANNOTATION, Phase, REQUEST_UID_LABEL,
};
use super::snapshot;
use super::steps::{self, format_time, parse_time, protected};

pub(super) async fn warn(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<(), OperatorError> {
    let mut st = cr.status.clone().unwrap_or_default();
    let e = st.expires_at.clone().unwrap_or_default();
    let name = cluster_name(cr);
    let left = steps::parse_time(&e).map_or(0, |t| t - now).max(0);
    let msg = format!(
        "expiring: cluster {name} is deleted at {e} (in {}); save what it holds, or extend spec.duration within the team's longest lifetime",
        human(left)
    );
    st.phase = Some(Phase::Expiring);
    say(&mut st, &msg);
    ctx.write_status(
        cr,
        &st,
        &[Announce::new(
            format!("Expiring@{e}"),
            "Expiring",
            &msg,
            true,
        )],
        now,
    )
    .await?;
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

/// Remove the request's access, then its cluster, then (once the cluster is gone) its
/// machine configs; `true` once nothing of it is left.
async fn remove(ctx: &Context, cr: &ClusterRequest) -> Result<bool, OperatorError> {
    let uid = cr.uid().unwrap_or_default();
    let name = cluster_name(cr);
    let clusters = ctx.dynamic(&cluster_resource());
    let cluster = clusters
        .get_opt(&name)
        .await
        .map_err(api_err(format!("reading Cluster {name}")))?;
    let ours = cluster
        .as_ref()
        .filter(|c| c.labels().get(REQUEST_UID_LABEL).is_some_and(|u| *u == uid));
    // Access first: the id is the one recorded, else the one the cluster reports.
    let id = cr
        .status
        .as_ref()
        .and_then(|s| s.access.as_ref())
        .map(|a| a.cluster_id.clone())
        .or_else(|| {
            ours.and_then(|c| c.data["status"]["clusterName"].as_str().map(str::to_string))
        });
    if let Some(id) = id
        && !access::revoke(ctx, &uid, &id).await?
    {
        return Ok(false);
    }
    if ours.is_some() {
        ctx.fence.check()?;
        match clusters.delete(&name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(api_err(format!("deleting Cluster {name}"))(e)),
        }
        return Ok(false);
    }
    // The cluster is gone: its machine configs may go (Rancher no longer needs them to
    // tear the machines down).
    let configs = ctx.dynamic(&config_resource());
    let left = match configs
        .list(&ListParams::default().labels(&format!("{REQUEST_UID_LABEL}={uid}")))
        .await
    {
        Ok(l) => l.items,
        Err(kube::Error::Api(s)) if s.code == 404 => Vec::new(),
        Err(e) => return Err(api_err("listing the machine configs")(e)),
    };
    let mut gone = true;
    for c in left {
        if c.labels().get(REQUEST_UID_LABEL).is_none_or(|u| *u != uid) {
            continue;
        }
        gone = false;
        ctx.fence.check()?;
        match configs
            .delete(&c.name_any(), &DeleteParams::background())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => {
                return Err(api_err(format!(
                    "deleting HarvesterConfig {}",
                    c.name_any()
                ))(e));
            }
        }
    }
    Ok(gone)
}

/// Hold a protected request: say so once (per hour of expiry, or per deletion).
async fn hold(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
    deleting: bool,
) -> Result<(), OperatorError> {
    let mut st = cr.status.clone().unwrap_or_default();
    let e = st.expires_at.clone().unwrap_or_default();
    let name = cluster_name(cr);
    let (key, msg) = if deleting {
        (
            "Protected@deletion".to_string(),
            format!(
                "deletion held: cluster {name} is protected by the annotation {PROTECT_ANNOTATION}=true; remove the annotation and the request and its cluster go"
            ),
        )
    } else {
        (
            format!("Protected@{e}"),
            format!(
                "lifetime over at {e}; cluster {name} is kept because of the annotation {PROTECT_ANNOTATION}=true and still counts against team quota; remove the annotation and it is deleted"
            ),
        )
    };
    if !deleting {
        st.phase = Some(Phase::Expiring);
    }
    say(&mut st, &msg);
    st.set_condition(condition(
        "Expired",
        false,
        "Protected",
        &msg,
        now,
        generation(cr),
    ));
    ctx.write_status(cr, &st, &[Announce::new(key, "Protected", &msg, true)], now)
        .await?;
    Ok(())
}

/// The final snapshot's progress: `true` once it is settled (recorded, failed, timed
/// out or skipped).
async fn final_snapshot(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<bool, OperatorError> {
    let mut st = cr.status.clone().unwrap_or_default();
    if st
        .final_snapshot
        .as_ref()
        .is_some_and(|f| f.outcome.is_some())
    {
        return Ok(true);
    }
    let name = cluster_name(cr);
    let uid = cr.uid().unwrap_or_default();
    let e = st.expires_at.clone().unwrap_or_default();
    let Some(asked) = st.final_snapshot.clone() else {
        let cluster = ctx
            .dynamic(&cluster_resource())
            .get_opt(&name)
            .await
            .map_err(api_err(format!("reading Cluster {name}")))?
            .filter(|c| c.labels().get(REQUEST_UID_LABEL).is_some_and(|u| *u == uid));
        let was_ready = st
            .condition("ClusterReady")
            .is_some_and(|c| c.status == "True");
        let skip = match &cluster {
            None => Some("skipped: no cluster to snapshot"),
            Some(c) if !was_ready && !rancher_ready(c) => {
                Some("skipped: the cluster never became ready")
            }
            _ => None,
        };
        if let Some(why) = skip {
            st.final_snapshot = Some(FinalSnapshot {
                requested_at: format_time(now),
                outcome: Some(why.into()),
                ..FinalSnapshot::default()
            });
            ctx.write_status(cr, &st, &[], now).await?;
            return Ok(true);
        }
        let (generation, before) =
            snapshot::request(ctx, cluster.as_ref().expect("checked")).await?;
        let msg = format!(
            "expiring: lifetime over at {e}; a final etcd snapshot of cluster {name} is asked of Rancher (generation {generation}), waited for at most {} before the deletion",
            human(ctx.s.snapshot_timeout_s)
        );
        st.phase = Some(Phase::Expiring);
        st.final_snapshot = Some(FinalSnapshot {
            requested_at: format_time(now),
            generation,
            before,
            ..FinalSnapshot::default()
        });
        say(&mut st, &msg);
        ctx.write_status(
            cr,
            &st,
            &[Announce::new(
                "SnapshotRequested",
                "SnapshotRequested",
                &msg,
                false,
            )],
            now,
        )
        .await?;
        return Ok(false);
    };
    let records = snapshot::list(ctx, &name).await?;
    let found = snapshot::new_record(&records, &asked.before);
    let since = parse_time(&asked.requested_at).map_or(0, |t| now - t);
    let mut f = asked;
    let (outcome, note, warning) = match found {
        Some(r) if r.status == "successful" => {
            let where_ = if r.storage == "s3" {
                "stored in S3, it outlives the cluster".to_string()
            } else {
                "stored locally on the cluster's own VMs: it goes with them (name an S3 target for the catalogue to keep snapshots)".to_string()
            };
            f.snapshot = Some(r.name.clone());
            f.storage = Some(r.storage.clone());
            (
                "recorded".to_string(),
                format!(
                    "final etcd snapshot {} of cluster {name} recorded; {where_}",
                    r.name
                ),
                r.storage != "s3",
            )
        }
        Some(r) if r.status == "failed" => {
            f.snapshot = Some(r.name.clone());
            f.storage = Some(r.storage.clone());
            let m = format!("failed: {}", super::spec::shown(&r.message));
            (
                m.clone(),
                format!(
                    "the final etcd snapshot of cluster {name} {m}; the cluster is deleted without it"
                ),
                true,
            )
        }
        _ if since >= ctx.s.snapshot_timeout_s => {
            let m = format!("timed out after {}", human(since));
            (
                m.clone(),
                format!(
                    "no final etcd snapshot of cluster {name} was recorded: {m}; the cluster is deleted without it"
                ),
                true,
            )
        }
        _ => return Ok(false),
    };
    f.outcome = Some(outcome);
    st.final_snapshot = Some(f);
    say(&mut st, &note);
    ctx.write_status(
        cr,
        &st,
        &[Announce::new(
            "FinalSnapshot",
            "FinalSnapshot",
            &note,
            warning,
        )],
        now,
    )
    .await?;
    Ok(true)
}

/// What to do after one look at an expired request.
pub(super) async fn expire(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<Action, OperatorError> {
    if protected(cr) {
        hold(ctx, cr, now, false).await?;
        return Ok(Action::requeue(ctx.s.resync));
    }
    let mut st = cr.status.clone().unwrap_or_default();
    let name = cluster_name(cr);
    let e = st.expires_at.clone().unwrap_or_default();
    if ctx.s.dry_run {
        let msg = format!("expired at {e}; dry run: cluster {name} is not deleted");
        st.phase = Some(Phase::Expired);
        say(&mut st, &msg);
        ctx.write_status(
            cr,
            &st,
            &[Announce::new("Expired", "Expired", &msg, false)],
            now,
        )
        .await?;
        return Ok(Action::await_change());
    }
    if !final_snapshot(ctx, cr, now).await? {
        return Ok(Action::requeue(Duration::from_secs(2)));
    }
    if !remove(ctx, cr).await? {
        if st.phase != Some(Phase::Expiring)
            || !st
                .message
                .as_deref()
                .unwrap_or_default()
                .contains("deleting")
        {
            st.phase = Some(Phase::Expiring);
            let msg =
                format!("expiring: lifetime over at {e}; access removed, deleting cluster {name}");
            say(&mut st, &msg);
            ctx.write_status(
                cr,
                &st,
                &[Announce::new("Deleting", "Deleting", &msg, false)],
                now,
            )
            .await?;
        }
        return Ok(Action::requeue(Duration::from_secs(1)));
    }
    let snap = st
        .final_snapshot
        .as_ref()
        .and_then(|f| f.outcome.clone())
        .map(|o| format!("; final snapshot: {o}"))
        .unwrap_or_default();
    let msg = format!("expired at {e}: access removed, cluster {name} deleted{snap}");
    st.phase = Some(Phase::Expired);
    say(&mut st, &msg);
    st.set_condition(condition(
        "Expired",
        true,
        "LifetimeOver",
        &msg,
        now,
        generation(cr),
    ));
    // The cluster is gone: the finalizer has nothing left to guard. It goes first, so a
    // request seen Expired holds no finalizer (a crash in between retries from here).
    let cr = set_finalizer(ctx, cr, false).await?;
    ctx.write_status(
        &cr,
        &st,
        &[Announce::new("Expired", "Expired", &msg, false)],
        now,
    )
    .await?;
    ctx.wake_judge();
    Ok(Action::await_change())
}

/// A deleted request: its access and cluster go first (unless protected).
pub(super) async fn cleanup(
    ctx: &Context,
    cr: &ClusterRequest,
    now: i64,
) -> Result<Action, OperatorError> {
    if !cr.finalizers().iter().any(|f| f == FINALIZER) {
        return Ok(Action::await_change());
    }
    if protected(cr) {
        hold(ctx, cr, now, true).await?;
        return Ok(Action::requeue(ctx.s.resync));
    }
    // A dry run never removes a cluster, so it never lets a request go without one.
    if ctx.s.dry_run {
        return Ok(Action::await_change());
    }
    if remove(ctx, cr).await? {
        set_finalizer(ctx, cr, false).await?;
        ctx.wake_judge();
        return Ok(Action::await_change());
    }
    Ok(Action::requeue(Duration::from_secs(2)))
}
