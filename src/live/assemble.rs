//! Assembling the typed objects of a dump into the fleet state, and the findings for what
//! does not add up (a VMI on a node the dump does not have, a replica on an unknown disk, a
//! volume with fewer replicas than it asks for).

/// Lookups by name (never iterated).
type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type Set<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

use super::decode::{Item, Prepared};
use super::objects::{LiveState, Missing};

/// Adds typed objects as they come; `finish` records what is missing and what does not
/// add up.
#[derive(Default)]
pub(crate) struct Builder {
    s: LiveState,
    /// Keys of the objects added (foldhash: randomly seeded like the standard hasher, and
    /// cheaper on a dump's hundreds of thousands of keys).
    seen: Set<String>,
    newest: Option<i64>,
}

impl Builder {
    pub(crate) fn insert(&mut self, p: Prepared) {
        if let Some(k) = p.key
            && !self.seen.insert(k)
        {
            return;
        }
        self.newest = self.newest.max(p.stamp);
        let s = &mut self.s;
        if let Some(e) = p.census {
            s.census.add(e);
        }
        s.notes.extend(p.notes);
        match p.item {
            Item::Node(x) => s.nodes.push(x),
            Item::Vmi(x) => s.vmis.push(x),
            Item::Vm(x) => s.vms.push(x),
            Item::LonghornNode(x) => s.longhorn_nodes.push(x),
            Item::Volume(x) => s.volumes.push(x),
            Item::Replica(x) => s.replicas.push(x),
            Item::LonghornSetting(k, v) => {
                s.settings.longhorn.insert(k, v);
            }
            Item::HarvesterSetting(k, v) => {
                s.settings.harvester.insert(k, v);
            }
            Item::Rancher(v) => s.rancher.push(v),
            Item::Skipped(m) => s.skipped.push(m),
            Item::Note(m) => s.notes.push(m),
            Item::Nothing => {}
        }
    }

    pub(crate) fn finish(self, notes: Vec<String>) -> LiveState {
        release(self.seen);
        let mut s = self.s;
        s.newest_object = self.newest.map(|t| crate::clock::format_at(t, false));
        let mut all = notes;
        all.append(&mut s.notes);
        s.notes = all;
        complete(s)
    }
}

/// Frees what was read from a dump on a thread of its own: hundreds of thousands of small
/// allocations, freed while the caller goes on (the process may end first, which frees
/// them all at once).
pub(crate) fn release<T: Send + 'static>(x: T) {
    let _ = std::thread::Builder::new()
        .name("release".into())
        .spawn(move || drop(x));
}

/// The kinds no object was read for, and the findings.
fn complete(mut s: LiveState) -> LiveState {
    for (kind, needed_for, present) in [
        (
            "Node (v1)",
            "every analysis: the hosts",
            !s.nodes.is_empty(),
        ),
        (
            "VirtualMachineInstance (kubevirt.io/v1)",
            "headroom, drain: what runs where",
            !s.vmis.is_empty(),
        ),
        (
            "Node (longhorn.io)",
            "storage headroom, rebuild: the disks",
            !s.longhorn_nodes.is_empty(),
        ),
        (
            "Volume (longhorn.io)",
            "rebuild, risk: the volumes",
            !s.volumes.is_empty(),
        ),
        (
            "Replica (longhorn.io)",
            "rebuild, drain: where the replicas are",
            !s.replicas.is_empty(),
        ),
    ] {
        if !present {
            s.missing.push(Missing { kind, needed_for });
        }
    }
    findings(&mut s);
    s
}

/// What does not add up, in three independent parts judged in parallel and given in order.
fn findings(s: &mut LiveState) {
    let st = &*s;
    let (mut f, (disks, volumes)) = rayon::join(
        || vmis_without_nodes(st),
        || rayon::join(|| replicas_without_disks(st), || volumes_short(st)),
    );
    f.extend(disks);
    f.extend(volumes);
    s.findings = f;
}

/// Running VMIs on a node the dump has no Node for, or on none.
fn vmis_without_nodes(s: &LiveState) -> Vec<String> {
    let nodes: Set<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut f = Vec::new();
    if !nodes.is_empty() {
        for v in s.vmis.iter().filter(|v| v.occupies()) {
            match &v.node {
                Some(n) if !nodes.contains(n.as_str()) => f.push(format!(
                    "VMI {}/{} runs on node {n}, which the dump has no Node for",
                    v.namespace, v.name
                )),
                None => f.push(format!(
                    "VMI {}/{} is {} but names no node",
                    v.namespace,
                    v.name,
                    v.phase.as_deref().unwrap_or("?")
                )),
                _ => {}
            }
        }
    }
    f
}

/// Replicas on a disk no Longhorn Node lists.
fn replicas_without_disks(s: &LiveState) -> Vec<String> {
    let mut f = Vec::new();
    if !s.longhorn_nodes.is_empty() {
        let disks: Set<(&str, &str)> = s
            .longhorn_nodes
            .iter()
            .flat_map(|n| {
                n.disks
                    .iter()
                    .filter_map(|d| Some((n.name.as_str(), d.uuid.as_deref()?)))
            })
            .collect();
        for r in &s.replicas {
            if let (Some(n), Some(d)) = (&r.node, &r.disk_uuid)
                && !disks.contains(&(n.as_str(), d.as_str()))
            {
                f.push(format!(
                    "replica {} is on disk {d} of node {n}, which no Longhorn Node lists",
                    r.name
                ));
            }
        }
    }
    f
}

/// Attached volumes with fewer running replicas than they ask for.
fn volumes_short(s: &LiveState) -> Vec<String> {
    let mut f = Vec::new();
    if !s.replicas.is_empty() {
        let mut healthy: Map<&str, u32> = Map::default();
        for r in &s.replicas {
            if let Some(v) = &r.volume
                && r.state.as_deref() == Some("running")
            {
                *healthy.entry(v.as_str()).or_default() += 1;
            }
        }
        for v in &s.volumes {
            let want = v.replicas.unwrap_or(0);
            let have = healthy.get(v.name.as_str()).copied().unwrap_or(0);
            let attached = v.state.as_deref() == Some("attached");
            if attached && have < want {
                f.push(format!(
                    "volume {} asks for {want} replicas and has {have} running ({})",
                    v.name,
                    v.robustness.as_deref().unwrap_or("robustness unknown")
                ));
            }
        }
    }
    f
}
