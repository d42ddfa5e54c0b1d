//! The fleet as it runs, read from the Harvester cluster's API: the same kinds a
//! `kubectl get nodes,vm,vmi,nodes.longhorn.io,volumes.longhorn.io,replicas.longhorn.io,
//! settings.longhorn.io,settings.harvesterhci.io -A` dump holds, listed in pages and
//! handed to the dump decoder (`live::from_objects`), so the operator judges on exactly
//! what `rackplan simulate --from-cluster` would read. A kind the server does not serve
//! (no Longhorn CRDs, say) is left out and named by the decoder as missing.

use std::collections::BTreeMap;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Value;

use crate::live::LiveState;

/// Objects listed per request.
const PAGE: u32 = 500;
/// Most objects read in one pass (a 1,000-node fleet has some 60,000).
const MAX_OBJECTS: usize = 2_000_000;

/// The kinds read, as (group, version, kind, plural).
const KINDS: [(&str, &str, &str, &str); 8] = [
    ("", "v1", "Node", "nodes"),
    ("kubevirt.io", "v1", "VirtualMachine", "virtualmachines"),
    (
        "kubevirt.io",
        "v1",
        "VirtualMachineInstance",
        "virtualmachineinstances",
    ),
    ("longhorn.io", "v1beta2", "Node", "nodes"),
    ("longhorn.io", "v1beta2", "Volume", "volumes"),
    ("longhorn.io", "v1beta2", "Replica", "replicas"),
    ("longhorn.io", "v1beta2", "Setting", "settings"),
    ("harvesterhci.io", "v1beta1", "Setting", "settings"),
];

/// Why the fleet could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FleetReadError {
    #[error("listing {kind} on the Harvester cluster: {source}")]
    List {
        kind: String,
        #[source]
        source: kube::Error,
    },
    #[error("the Harvester cluster lists more than {MAX_OBJECTS} objects of the kinds read")]
    TooMany,
    #[error("{0}")]
    Decode(#[from] crate::live::LiveError),
}

/// Every object of the kinds read, with `apiVersion` and `kind` set on each (list items
/// of built-in kinds come without them).
pub async fn list_all(client: &kube::Client) -> Result<Vec<Value>, FleetReadError> {
    let mut out = Vec::new();
    for (group, version, kind, plural) in KINDS {
        let ar =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
        let mut params = ListParams::default().limit(PAGE);
        loop {
            let page = match api.list(&params).await {
                Ok(p) => p,
                // A kind the server does not serve: the decoder names it as missing.
                Err(kube::Error::Api(s)) if s.code == 404 => break,
                Err(source) => {
                    return Err(FleetReadError::List {
                        kind: format!("{kind} ({})", ar.api_version),
                        source,
                    });
                }
            };
            for o in page.items {
                let mut v = serde_json::to_value(&o).unwrap_or(Value::Null);
                v["apiVersion"] = Value::String(ar.api_version.clone());
                v["kind"] = Value::String(kind.to_string());
                out.push(v);
            }
            if out.len() > MAX_OBJECTS {
                return Err(FleetReadError::TooMany);
            }
            match page.metadata.continue_ {
                Some(c) if !c.is_empty() => params.continue_token = Some(c),
                _ => break,
            }
        }
    }
    Ok(out)
}

/// The fleet state from the Harvester cluster, and the VMIs running per guest cluster.
pub async fn read(
    client: &kube::Client,
    origin: &str,
) -> Result<(LiveState, BTreeMap<String, usize>), FleetReadError> {
    let objects = list_all(client).await?;
    let state = crate::live::from_objects(origin, objects)?;
    let running = running_per_cluster(&state);
    Ok((state, running))
}

/// VMIs that occupy a host, per `guestcluster.harvesterhci.io/name`.
pub fn running_per_cluster(state: &LiveState) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for v in state.vmis.iter().filter(|v| v.occupies()) {
        if let Some(c) = &v.guest_cluster {
            *m.entry(c.clone()).or_default() += 1;
        }
    }
    m
}
