//! The last etcd snapshot of an expiring cluster, asked of Rancher before the cluster is
//! deleted: the provisioning Cluster's `spec.rkeConfig.etcdSnapshotCreate.generation` is
//! raised by one (Rancher v2.14 `pkg/apis/rke.cattle.io/v1/common_types.go`: a changed
//! generation is all it takes; the planner then runs `etcd-snapshot save` on every etcd
//! node, `pkg/capr/planner/etcdcreate.go`), and the snapshot is known by the
//! `rke.cattle.io/v1` `ETCDSnapshot` Rancher writes for it in the Cluster's namespace,
//! labelled `rke.cattle.io/cluster-name: <cluster>`
//! (`pkg/controllers/managementuser/snapshotbackpopulate/snapshotbackpopulate.go`). The new
//! one is the one whose name was not there when it was asked for: no clocks compared.
//! It is waited for a bounded time; then the deletion goes on, and the status says
//! whether the snapshot was recorded, failed or timed out. A snapshot stored `local`
//! lives on the cluster's own VMs and goes with them: the status says so.

use kube::ResourceExt as _;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::context::{Context, OperatorError, api_err, cluster_resource};

/// The label Rancher puts on a cluster's snapshot records.
pub const CLUSTER_LABEL: &str = "rke.cattle.io/cluster-name";
/// Most snapshot names remembered as "already there".
const MAX_BEFORE: usize = 128;

pub(super) fn snapshot_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("rke.cattle.io", "v1", "ETCDSnapshot"),
        "etcdsnapshots",
    )
}

/// What a snapshot record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub name: String,
    /// `s3` or `local`.
    pub storage: String,
    /// `successful`, `failed` or empty while Rancher has not said.
    pub status: String,
    pub message: String,
}

/// Read one `ETCDSnapshot` object (its `snapshotFile` sits beside `spec`, and the storage
/// is in the annotation `etcdsnapshot.rke.io/storage`).
pub fn record(o: &Value) -> Record {
    let file = &o["snapshotFile"];
    let storage = o["metadata"]["annotations"]["etcdsnapshot.rke.io/storage"]
        .as_str()
        .map(str::to_string)
        .or_else(|| {
            file["location"].as_str().map(|l| {
                if l.starts_with("s3://") {
                    "s3"
                } else {
                    "local"
                }
                .to_string()
            })
        })
        .unwrap_or_default();
    Record {
        name: o["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        storage,
        status: file["status"].as_str().unwrap_or_default().to_string(),
        message: file["message"].as_str().unwrap_or_default().to_string(),
    }
}

/// The first record in `now` whose name is not in `before` (S3 first: it outlives the
/// cluster).
pub fn new_record(now: &[Value], before: &[String]) -> Option<Record> {
    let mut fresh: Vec<Record> = now
        .iter()
        .map(record)
        .filter(|r| !before.contains(&r.name))
        .collect();
    fresh.sort_by_key(|r| (r.storage != "s3", r.name.clone()));
    fresh.into_iter().next()
}

/// The cluster's snapshot records, as JSON.
pub(super) async fn list(ctx: &Context, cluster: &str) -> Result<Vec<Value>, OperatorError> {
    let api = ctx.dynamic(&snapshot_resource());
    match api
        .list(&ListParams::default().labels(&format!("{CLUSTER_LABEL}={cluster}")))
        .await
    {
        Ok(l) => Ok(l
            .items
            .into_iter()
            .filter(|o| o.labels().get(CLUSTER_LABEL).is_some_and(|c| c == cluster))
            .map(|o| serde_json::to_value(o).unwrap_or(Value::Null))
            .collect()),
        // No ETCDSnapshot CRD on this Rancher: nothing to wait for.
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(e) => Err(api_err(format!("listing the snapshots of {cluster}"))(e)),
    }
}

/// Ask Rancher for a snapshot of `cluster`: raise its snapshot generation. Returns the
/// generation set and the names of the records already there.
pub(super) async fn request(
    ctx: &Context,
    cluster: &DynamicObject,
) -> Result<(i64, Vec<String>), OperatorError> {
    let name = cluster.name_any();
    let before: Vec<String> = list(ctx, &name)
        .await?
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
        .take(MAX_BEFORE)
        .collect();
    let current = cluster.data["spec"]["rkeConfig"]["etcdSnapshotCreate"]["generation"]
        .as_i64()
        .unwrap_or(0);
    let generation = current + 1;
    ctx.fence.check()?;
    ctx.dynamic(&cluster_resource())
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"resourceVersion": cluster.resource_version()},
                "spec": {"rkeConfig": {"etcdSnapshotCreate": {"generation": generation}}},
            })),
        )
        .await
        .map_err(api_err(format!("asking Rancher for a snapshot of {name}")))?;
    Ok((generation, before))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(name: &str, storage: &str, status: &str) -> Value {
        json!({"metadata": {"name": name, "annotations": {"etcdsnapshot.rke.io/storage": storage}},
               "snapshotFile": {"status": status, "location": if storage == "s3" {"s3://b/f"} else {"file:///var/lib/rancher/f"}}})
    }

    #[test]
    fn the_new_snapshot_is_the_one_not_there_before_s3_first() {
        let before = vec!["team-1-local-old".to_string()];
        let now = vec![
            snap("team-1-local-old", "local", "successful"),
            snap("team-1-local-new", "local", "successful"),
            snap("team-1-s3-new", "s3", "successful"),
        ];
        let r = new_record(&now, &before).unwrap();
        assert_eq!(r.name, "team-1-s3-new");
        assert_eq!(r.storage, "s3");
        assert_eq!(new_record(&now[..1], &before), None);
        let failed = record(&snap("x", "local", "failed"));
        assert_eq!(failed.status, "failed");
    }

    #[test]
    fn the_shipped_example_reads() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/reference/rancher/example-team-access-and-snapshot.yaml");
        let text = std::fs::read_to_string(&p).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        let s = docs
            .iter()
            .find(|d| d["kind"] == "ETCDSnapshot")
            .expect("an ETCDSnapshot in the example");
        let r = record(s);
        assert_eq!(r.storage, "s3");
        assert!(!r.name.is_empty());
    }
}
