//! How far a delivery got, from Rancher's CAPI `Machine` objects of its cluster.
//!
//! Rancher makes one `cluster.x-k8s.io` `MachineDeployment` per machine pool, in the
//! cluster's namespace, whose machines carry `cluster.x-k8s.io/cluster-name` (the CAPI
//! cluster is named as the provisioning Cluster) and one label per role,
//! `rke.cattle.io/etcd-role`, `rke.cattle.io/control-plane-role`,
//! `rke.cattle.io/worker-role` = `"true"` (rancher
//! `pkg/controllers/provisioningv2/provisioningcluster/template.go` `machineDeployments`
//! and `capiCluster`; the labels in `pkg/capr/common.go`). CAPI fills each machine's
//! status: its infrastructure ready once the node driver's VM has an address
//! (`status.infrastructureReady`, the `InfrastructureReady` condition; v1beta2's
//! `status.initialization.infrastructureProvisioned`), and its node's health once the
//! node has joined (`NodeHealthy`, v1beta2's `NodeReady`; `status.phase` `Running`).
//!
//! The milestones follow Rancher's planner (`pkg/capr/planner/planner.go` `Process`,
//! `initnode.go` `electInitNode`, `planentry.go` `canBeInitNode`): the init node is an
//! etcd machine whose infrastructure is ready; the other etcd and control-plane machines
//! join once it publishes its join URL; worker-only machines get their plan only after
//! the control plane is ready. So in a first provisioning the first etcd machine whose
//! node is healthy is the init node. (Rancher marks the init node with
//! `rke.cattle.io/init-node` on the machine's plan Secret, not on the Machine: the
//! operator reads no Secrets, and takes a Machine's own label only when one is set.)

use std::sync::Arc;

use futures_util::StreamExt as _;
use kube::ResourceExt as _;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::Value;

use super::context::{Context, OperatorError, api_err};
use super::resource::{ClusterRequest, Phase};
use crate::simulate::delivery::Milestone;

/// The label CAPI puts on every machine of a cluster.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
const ETCD_ROLE: &str = "rke.cattle.io/etcd-role";
const CONTROL_PLANE_ROLE: &str = "rke.cattle.io/control-plane-role";
const WORKER_ROLE: &str = "rke.cattle.io/worker-role";
const INIT_NODE: &str = "rke.cattle.io/init-node";

/// `cluster.x-k8s.io/v1beta1` `Machine`.
pub fn machine_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta1", "Machine"),
        "machines",
    )
}

/// What one machine says of itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineState {
    pub etcd: bool,
    pub control_plane: bool,
    pub worker: bool,
    /// Labelled `rke.cattle.io/init-node: "true"` (when Rancher copies it there).
    pub init_node: bool,
    pub infrastructure: bool,
    /// Its node has joined and is healthy.
    pub node: bool,
}

fn condition_true(st: &Value, path: &str, types: &[&str]) -> Option<bool> {
    let cs = st.pointer(path)?.as_array()?;
    let mut seen = None;
    for c in cs {
        if types.iter().any(|t| c["type"] == *t) {
            let ok = c["status"] == "True";
            seen = Some(seen.unwrap_or(false) || ok);
        }
    }
    seen
}

/// One Machine's roles and progress, from its labels and status.
pub fn state(m: &Value) -> MachineState {
    let label = |k: &str| m["metadata"]["labels"][k] == "true";
    let st = &m["status"];
    let infra_cond = condition_true(st, "/conditions", &["InfrastructureReady"])
        .or_else(|| condition_true(st, "/v1beta2/conditions", &["InfrastructureReady"]));
    let infrastructure = st["infrastructureReady"].as_bool() == Some(true)
        || st
            .pointer("/initialization/infrastructureProvisioned")
            .and_then(Value::as_bool)
            == Some(true)
        || infra_cond == Some(true);
    let node_cond = condition_true(st, "/conditions", &["NodeHealthy", "NodeReady"])
        .or_else(|| condition_true(st, "/v1beta2/conditions", &["NodeReady", "NodeHealthy"]));
    let node = match node_cond {
        Some(ok) => ok,
        // No node condition at all: the phase CAPI gives once the node reference is set.
        None => st["phase"] == "Running" && !st["nodeRef"].is_null(),
    };
    MachineState {
        etcd: label(ETCD_ROLE),
        control_plane: label(CONTROL_PLANE_ROLE),
        worker: label(WORKER_ROLE),
        init_node: label(INIT_NODE),
        infrastructure,
        node,
    }
}

/// The machine milestones reached, in order, with `expected` machines in the shape (its
/// pools' counts; 0: unknown, at least one). A milestone is reached only with those
/// before it.
pub fn reached(ms: &[MachineState], expected: u32) -> Vec<Milestone> {
    let mut out = Vec::new();
    let all = usize::try_from(expected.max(1)).unwrap_or(usize::MAX);
    if ms.len() < all {
        return out;
    }
    out.push(Milestone::MachinesCreated);
    if !ms.iter().all(|m| m.infrastructure) {
        return out;
    }
    out.push(Milestone::InfrastructureReady);
    let init = ms.iter().any(|m| m.node && (m.init_node || m.etcd));
    if !init {
        return out;
    }
    out.push(Milestone::InitNodeReady);
    let plane = |m: &&MachineState| m.etcd || m.control_plane;
    if !ms.iter().filter(plane).all(|m| m.node) {
        return out;
    }
    out.push(Milestone::ControlPlaneReady);
    if !ms.iter().filter(|m| m.worker).all(|m| m.node) {
        return out;
    }
    out.push(Milestone::WorkersReady);
    out
}

/// Where the machines stand on the way to `next`, in words (`4 of 6 machines`).
pub fn progress(ms: &[MachineState], expected: u32, next: Milestone) -> String {
    let count = |f: &dyn Fn(&MachineState) -> bool| {
        let of: Vec<&MachineState> = ms.iter().filter(|m| f(m)).collect();
        (of.len(), of)
    };
    match next {
        Milestone::MachinesCreated => format!("{} of {} machines made", ms.len(), expected),
        Milestone::InfrastructureReady => format!(
            "{} of {} machines' infrastructure ready",
            ms.iter().filter(|m| m.infrastructure).count(),
            ms.len()
        ),
        Milestone::InitNodeReady => {
            let (n, _) = count(&|m| m.etcd);
            format!("no etcd node healthy yet, of {n}")
        }
        Milestone::ControlPlaneReady => {
            let (n, of) = count(&|m| m.etcd || m.control_plane);
            let up = of.iter().filter(|m| m.node).count();
            format!("{up} of {n} etcd and control-plane nodes healthy")
        }
        Milestone::WorkersReady => {
            let (n, of) = count(&|m| m.worker);
            let up = of.iter().filter(|m| m.node).count();
            format!("{up} of {n} worker nodes healthy")
        }
        Milestone::ClusterCreated | Milestone::ClusterReady => String::new(),
    }
}

/// The machines of cluster `name`, or `None` when they cannot be read (no CAPI on this
/// API server, or no right to list them: the milestones between creation and Ready are
/// then not seen).
pub async fn read(ctx: &Context, name: &str) -> Result<Option<Vec<MachineState>>, OperatorError> {
    if !crate::site::types::is_dns_label(name, 63) {
        return Ok(None);
    }
    let lp = ListParams::default().labels(&format!("{CLUSTER_NAME_LABEL}={name}"));
    let api = ctx.dynamic(&machine_resource());
    match api.list(&lp).await {
        Ok(list) => Ok(Some(
            list.items
                .iter()
                .filter(|m: &&DynamicObject| m.metadata.deletion_timestamp.is_none())
                .map(|m| state(&serde_json::to_value(m).unwrap_or_default()))
                .collect(),
        )),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 403 => {
            tracing::debug!(cluster = %name, code = s.code, "cannot list CAPI machines");
            Ok(None)
        }
        Err(e) => Err(api_err(format!("listing the machines of cluster {name}"))(
            e,
        )),
    }
}

/// Wake the request whose delivery a machine belongs to whenever a machine of the
/// catalogue's namespace changes, so each milestone is seen when Rancher reaches it, not
/// at the next resync. Without CAPI (or the right to watch machines) it waits and tries
/// again, quietly: the milestones are then seen at each look.
pub async fn watch(
    ctx: Arc<Context>,
    requests: Store<ClusterRequest>,
    wake: tokio::sync::mpsc::UnboundedSender<ObjectRef<ClusterRequest>>,
) {
    let api = ctx.dynamic(&machine_resource());
    let cfg = watcher::Config::default()
        .labels(CLUSTER_NAME_LABEL)
        .page_size(50);
    let mut events = watcher::watcher(api, cfg)
        .default_backoff()
        .applied_objects()
        .boxed();
    while let Some(ev) = events.next().await {
        let m = match ev {
            Ok(m) => m,
            Err(e) => {
                tracing::debug!(error = %e, "watching the CAPI machines");
                continue;
            }
        };
        let Some(cluster) = m.labels().get(CLUSTER_NAME_LABEL) else {
            continue;
        };
        for r in requests.state() {
            let delivering = r.status.as_ref().is_some_and(|s| {
                matches!(s.phase, Some(Phase::Admitted | Phase::Provisioning))
                    && s.cluster_name.as_deref().unwrap_or(&r.name_any()) == cluster
            });
            if delivering {
                let _ = wake.send(ObjectRef::from_obj(r.as_ref()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn machine(roles: &[&str], status: &Value) -> Value {
        let labels: serde_json::Map<String, Value> = roles
            .iter()
            .map(|r| (format!("rke.cattle.io/{r}-role"), json!("true")))
            .collect();
        json!({"metadata": {"labels": labels}, "status": status})
    }

    #[test]
    fn a_machine_reads_its_roles_infrastructure_and_node_in_either_api_version() {
        let m = machine(
            &["etcd", "control-plane"],
            &json!({"phase": "Provisioned", "infrastructureReady": true}),
        );
        let s = state(&m);
        assert!(s.etcd && s.control_plane && !s.worker && s.infrastructure && !s.node);
        let v1beta2 = machine(
            &["worker"],
            &json!({"initialization": {"infrastructureProvisioned": true},
                    "conditions": [{"type": "NodeReady", "status": "True"}]}),
        );
        let s = state(&v1beta2);
        assert!(s.worker && s.infrastructure && s.node);
        let unhealthy = machine(
            &["worker"],
            &json!({"phase": "Running", "nodeRef": {"name": "n"},
                    "conditions": [{"type": "InfrastructureReady", "status": "True"},
                                   {"type": "NodeHealthy", "status": "False"}]}),
        );
        let s = state(&unhealthy);
        assert!(s.infrastructure && !s.node);
        let running = machine(
            &["worker"],
            &json!({"phase": "Running", "nodeRef": {"name": "n"}}),
        );
        assert!(state(&running).node);
    }

    #[test]
    fn milestones_follow_ranchers_order() {
        let cp = |infra, node| MachineState {
            etcd: true,
            control_plane: true,
            infrastructure: infra,
            node,
            ..MachineState::default()
        };
        let w = |infra, node| MachineState {
            worker: true,
            infrastructure: infra,
            node,
            ..MachineState::default()
        };
        use Milestone::*;
        assert_eq!(reached(&[cp(true, false)], 2), Vec::<Milestone>::new());
        assert_eq!(
            reached(&[cp(true, false), w(false, false)], 2),
            [MachinesCreated]
        );
        assert_eq!(
            reached(&[cp(true, false), w(true, false)], 2),
            [MachinesCreated, InfrastructureReady]
        );
        let three = [cp(true, true), cp(true, false), w(true, false)];
        assert_eq!(
            reached(&three, 3),
            [MachinesCreated, InfrastructureReady, InitNodeReady]
        );
        assert_eq!(
            progress(&three, 3, ControlPlaneReady),
            "1 of 2 etcd and control-plane nodes healthy"
        );
        let plane = [cp(true, true), cp(true, true), w(true, false)];
        assert_eq!(reached(&plane, 3).last(), Some(&ControlPlaneReady));
        assert_eq!(
            progress(&plane, 3, WorkersReady),
            "0 of 1 worker nodes healthy"
        );
        // A worker's node never counts as the init node.
        assert_eq!(
            reached(&[cp(true, false), w(true, true)], 2).last(),
            Some(&InfrastructureReady)
        );
        let done = [cp(true, true), w(true, true)];
        assert_eq!(reached(&done, 2).last(), Some(&WorkersReady));
        assert_eq!(
            progress(&done[..1], 2, MachinesCreated),
            "1 of 2 machines made"
        );
    }
}
