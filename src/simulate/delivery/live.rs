//! What a dump says that a delivery's time depends on: the golden images and where
//! Longhorn holds their backing files, the disks a new replica may land on, the deliveries
//! under way, and the rebuilds running. Everything read is untrusted text: names are
//! bounded, sizes must be finite and positive, and what cannot be read is left out.
//!
//! Harvester names an image's backing image `<namespace>-<name>` (older releases) or
//! `vmi-<uid>` (harvester `pkg/util`, `GetBackingImage`, which tries both); a backing
//! image's `status.diskFileStatusMap` holds its file's state per disk UUID
//! (longhorn-manager `k8s/pkg/apis/longhorn/v1beta2/backingimage.go`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::live::LiveState;

/// One golden image of the dump.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiveImage {
    /// `namespace/name`.
    pub(crate) id: String,
    pub(crate) display_name: Option<String>,
    pub(crate) size_bytes: Option<f64>,
    /// The backing image's disks with a ready file, when its backing image is in the dump.
    pub(crate) ready_disks: Option<BTreeSet<String>>,
}

/// The dump's facts for delivery.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveFacts {
    pub(crate) images: Vec<LiveImage>,
    /// UUIDs of the disks a new replica may land on.
    pub(crate) disks: BTreeSet<String>,
    /// Nodes holding those disks.
    pub(crate) nodes: u32,
    /// Shapes of the ClusterRequests being delivered (Admitted, Provisioning).
    pub(crate) in_flight: Vec<String>,
    /// Attached volumes short of a healthy replica: each rebuilds one.
    pub(crate) rebuilding: u32,
}

const MAX_ITEMS: usize = 100_000;

fn text<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty() && s.len() <= 253 && !s.chars().any(char::is_control))
}

fn bytes(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .filter(|x: &f64| x.is_finite() && *x > 0.0)
}

fn is(o: &Value, group: &str, kind: &str) -> bool {
    o.get("kind").and_then(Value::as_str) == Some(kind)
        && o.get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|a| a.starts_with(&format!("{group}/")))
}

/// A backing image's disks with a ready file.
fn ready_disks(bi: &Value) -> BTreeSet<String> {
    bi.pointer("/status/diskFileStatusMap")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .take(MAX_ITEMS)
        .filter(|(_, st)| text(st, "/state") == Some("ready"))
        .filter(|(uuid, _)| uuid.len() <= 253)
        .map(|(uuid, _)| uuid.clone())
        .collect()
}

impl LiveFacts {
    /// The facts of `state`.
    pub fn read(state: &LiveState) -> LiveFacts {
        let objects = &state.rancher;
        let mut backing: BTreeMap<&str, (&Value, BTreeSet<String>)> = BTreeMap::new();
        for o in objects
            .iter()
            .filter(|o| is(o, "longhorn.io", "BackingImage"))
        {
            if let Some(name) = text(o, "/metadata/name") {
                backing.insert(name, (o, ready_disks(o)));
            }
        }
        let mut images = Vec::new();
        for o in objects
            .iter()
            .filter(|o| is(o, "harvesterhci.io", "VirtualMachineImage"))
            .take(MAX_ITEMS)
        {
            let Some(name) = text(o, "/metadata/name") else {
                continue;
            };
            let ns = text(o, "/metadata/namespace").unwrap_or("default");
            let legacy = format!("{ns}-{name}");
            let by_uid = text(o, "/metadata/uid").map(|u| format!("vmi-{u}"));
            let bi = backing
                .get(legacy.as_str())
                .or_else(|| by_uid.as_deref().and_then(|n| backing.get(n)));
            images.push(LiveImage {
                id: format!("{ns}/{name}"),
                display_name: text(o, "/spec/displayName").map(str::to_string),
                size_bytes: o
                    .pointer("/status/size")
                    .and_then(bytes)
                    .or_else(|| bi.and_then(|(b, _)| b.pointer("/status/size").and_then(bytes))),
                ready_disks: bi.map(|(_, d)| d.clone()),
            });
        }
        let mut disks = BTreeSet::new();
        let mut nodes = 0;
        for n in &state.longhorn_nodes {
            if !n.allow_scheduling || n.ready == Some(false) || n.schedulable == Some(false) {
                continue;
            }
            let before = disks.len();
            for d in &n.disks {
                if d.allow_scheduling
                    && d.ready != Some(false)
                    && d.schedulable != Some(false)
                    && let Some(u) = &d.uuid
                {
                    disks.insert(u.clone());
                }
            }
            if disks.len() > before {
                nodes += 1;
            }
        }
        let in_flight = objects
            .iter()
            .filter(|o| is(o, "rackplan.io", "ClusterRequest"))
            .filter(|o| matches!(text(o, "/status/phase"), Some("Admitted" | "Provisioning")))
            .map(|o| text(o, "/spec/shape").unwrap_or("?").to_string())
            .take(MAX_ITEMS)
            .collect();
        let rebuilding = state
            .volumes
            .iter()
            .filter(|v| {
                v.state.as_deref() == Some("attached")
                    && v.robustness.as_deref() == Some("degraded")
            })
            .count();
        LiveFacts {
            images,
            disks,
            nodes,
            in_flight,
            rebuilding: u32::try_from(rebuilding).unwrap_or(u32::MAX),
        }
    }

    /// The image named `name` (`namespace/name`, a bare name, or a display name); with no
    /// name, the dump's one image.
    pub(crate) fn image(&self, name: Option<&str>) -> Option<&LiveImage> {
        match name {
            Some(n) => self.images.iter().find(|i| {
                i.id == n
                    || i.id.rsplit_once('/').is_some_and(|(_, b)| b == n)
                    || i.display_name.as_deref() == Some(n)
            }),
            None if self.images.len() == 1 => self.images.first(),
            None => None,
        }
    }
}
