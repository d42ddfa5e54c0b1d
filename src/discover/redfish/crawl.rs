//! The Redfish walk: ServiceRoot -> Systems -> Processors, Memory, Storage/Drives
//! (SimpleStorage, Chassis Drives as fallbacks), EthernetInterfaces; the systems' Chassis ->
//! NetworkAdapters -> Ports (NetworkPorts as fallback); the systems' Managers; the volumes
//! drives link to, the Bios resource (its registry only where needed) and the GPUs of an
//! accelerator baseboard beside a single host (see `walk_more`).
//!
//! Only what the inventory needs is fetched, following `@odata.id` links (never building
//! paths from ids). Independent branches run concurrently; the [`Fetch`] implementation
//! caps requests in flight per BMC, so the walk keeps that many requests busy. A link that
//! 404s, a stub or a malformed member costs only that resource (it becomes a note); only
//! the ServiceRoot and the Systems collection are fatal.

use std::collections::BTreeSet;
use std::sync::Mutex;

use futures_util::future::join_all;
use serde_json::Value;

use crate::redfish::fetch::{Fetch, FetchError, link};

/// Everything read for one host system.
#[derive(Debug, Clone, Default)]
pub struct RawSystem {
    pub system: Value,
    pub processors: Vec<Value>,
    /// DIMMs; fetched when `$expand` makes it one request, or when MemorySummary is missing.
    pub memory: Option<Vec<Value>>,
    pub drives: Vec<Value>,
    /// The Storage documents the drives were listed in (controllers, RAID abilities).
    pub storages: Vec<Value>,
    /// The volumes the drives link to (RAID logical drives, pass-through devices).
    pub volumes: Vec<Value>,
    pub simple_storage: Vec<Value>,
    pub ethernet: Vec<Value>,
    /// (adapter, port, is the deprecated NetworkPort schema)
    pub ports: Vec<(Value, Value, bool)>,
    pub chassis: Vec<Value>,
    pub managers: Vec<Value>,
    /// The system's `Bios` resource.
    pub bios: Option<Value>,
    /// Its attribute registry, read only where the attribute names are opaque codes.
    pub bios_registry: Option<Value>,
    /// Processors of accelerator baseboards the BMC exposes as systems of their own (the
    /// HGX board of a DGX), counted with the one host beside them.
    pub accelerators: Vec<Value>,
    /// Memory documents those accelerators link to (GPU memory).
    pub accelerator_memory: Vec<Value>,
    /// The PCIe devices GPU processors without a model link to (their card's name).
    pub gpu_devices: Vec<Value>,
    /// HPE's Oem `PCIDevices`, read when no processor is a GPU (iLO lists its GPUs there
    /// only).
    pub oem_pci_devices: Vec<Value>,
    /// Dell iDRAC's Oem switch connection view (`DellSwitchConnection`: the switch's
    /// chassis MAC and port per NIC port FQDD), read on Dell systems.
    pub switch_connections: Vec<Value>,
}

#[derive(Debug, Clone, Default)]
pub struct RawBmc {
    pub root: Value,
    pub systems: Vec<RawSystem>,
    pub notes: Vec<String>,
    /// Resources that exist but could not be read (5xx, timeout, bad JSON; not 404).
    pub(crate) failed: Vec<(String, String)>,
}

/// The inventory sections of a system whose resources failed to read: "storage", "nics",
/// "cpu", "memory", with the first error of each. Their facts from this run are partial.
pub(crate) fn degraded_sections(
    system: &Value,
    failed: &[(String, String)],
) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for (key, section) in [
        ("Storage", "storage"),
        ("SimpleStorage", "storage"),
        ("EthernetInterfaces", "nics"),
        ("Processors", "cpu"),
        ("Memory", "memory"),
    ] {
        let Some(prefix) = system.get(key).and_then(link) else {
            continue;
        };
        if out.iter().any(|(s, _)| *s == section) {
            continue;
        }
        if let Some((p, e)) = failed.iter().find(|(p, _)| p.starts_with(&prefix)) {
            out.push((section, format!("{p}: {e}")));
        }
    }
    out
}

/// Members read from one collection: far above any server's parts, far below what a
/// hostile BMC could list.
pub(crate) const MAX_MEMBERS: usize = 1024;

pub(super) struct Walk<'a, F: Fetch> {
    pub(super) f: &'a F,
    notes: Mutex<Vec<String>>,
    failed: Mutex<Vec<(String, String)>>,
    seen: Mutex<BTreeSet<String>>,
    /// Whether `$expand` works here: decided by the first collection that asks, while the
    /// others wait for the verdict, so a service that advertises it but refuses it costs
    /// one wasted request, not one per collection.
    pub(super) expand_verdict: tokio::sync::Mutex<Option<bool>>,
    /// The resources expanded answers brought (`expand`): never read again.
    pub(super) inline: Mutex<super::inline::Inline>,
    /// The ServiceRoot's `Registries` link.
    pub(super) registries: Option<String>,
}

impl<F: Fetch> Walk<'_, F> {
    pub(super) fn note(&self, s: String) {
        self.notes.lock().expect("not poisoned").push(s);
    }

    /// GET a resource that may well not exist (a vendor's Oem path): `None` without a note.
    pub(super) async fn get_quiet(&self, path: &str) -> Option<Value> {
        self.f.get(path).await.ok().filter(Value::is_object)
    }

    /// GET a resource, unless an expanded answer brought it; failures become notes and
    /// `None`.
    pub(super) async fn get(&self, path: &str) -> Option<Value> {
        if let Some(v) = self.inline_doc(path) {
            return Some(v);
        }
        self.got(path, self.f.get(path).await)
    }

    pub(super) async fn get_leaf(&self, path: &str) -> Option<Value> {
        if let Some(v) = self.inline_doc(path) {
            return Some(v);
        }
        self.got(path, self.f.get_leaf(path).await)
    }

    fn got(&self, path: &str, r: Result<Value, FetchError>) -> Option<Value> {
        match r {
            Ok(v) if v.is_object() => Some(v),
            Ok(_) => {
                self.note(format!("{path}: not a JSON object; skipped"));
                None
            }
            Err(e) => {
                if !matches!(e, FetchError::Status(404, _)) {
                    self.failed
                        .lock()
                        .expect("not poisoned")
                        .push((path.to_string(), e.to_string()));
                }
                self.note(format!("{path}: {e}; skipped"));
                None
            }
        }
    }

    /// Member documents of a collection: expanded inline where the service does it,
    /// otherwise fetched concurrently. Follows `Members@odata.nextLink`.
    async fn members(&self, path: &str) -> Vec<Value> {
        self.members_of(path, false, 1).await
    }

    pub(super) async fn leaf_members(&self, path: &str) -> Vec<Value> {
        self.members_of(path, true, 1).await
    }

    /// The members, the first page expanded `levels` deep where the BMC expands.
    async fn members_of(&self, path: &str, leaves: bool, levels: u64) -> Vec<Value> {
        let mut docs = Vec::new();
        let mut next = Some(path.to_string());
        let mut pages = 0;
        while let Some(page) = next.take() {
            pages += 1;
            if pages > 64 {
                self.note(format!("{path}: more than 64 pages; stopped"));
                break;
            }
            let coll = if pages == 1 && self.f.expand() {
                self.first_page(&page, levels, leaves).await
            } else {
                self.get(&page).await
            };
            let Some(coll) = coll else { break };
            docs.extend(self.member_docs(&coll, leaves).await);
            next = coll
                .get("Members@odata.nextLink")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        docs
    }

    /// The member documents of one collection page: inline where the service expanded
    /// them, otherwise fetched concurrently. A member seen before (iLO repeats links in
    /// another case) is skipped.
    async fn member_docs(&self, coll: &Value, leaves: bool) -> Vec<Value> {
        let mut docs = Vec::new();
        let mut links = Vec::new();
        let members = coll
            .get("Members")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        if members.len() >= MAX_MEMBERS {
            let id = coll
                .get("@odata.id")
                .and_then(Value::as_str)
                .unwrap_or("a collection");
            self.note(format!(
                "{}: {MAX_MEMBERS} members or more; only the first {MAX_MEMBERS} are read (no server has that many parts)",
                crate::redfish::origin::shown(id),
            ));
        }
        for m in members.iter().take(MAX_MEMBERS) {
            let Some(id) = link(m) else { continue };
            if !self
                .seen
                .lock()
                .expect("not poisoned")
                .insert(id.to_ascii_lowercase())
            {
                continue;
            }
            if super::inline::is_inline(m) {
                docs.push(m.clone());
            } else {
                links.push(id);
            }
        }
        let fetched = join_all(links.iter().map(|l| async move {
            if leaves {
                self.get_leaf(l).await
            } else {
                self.get(l).await
            }
        }))
        .await;
        docs.extend(fetched.into_iter().flatten());
        docs
    }

    /// The members of a collection if `$expand` works here (one request), else `None`
    /// without a plain fetch.
    async fn expanded_only(&self, page: &str) -> Option<Vec<Value>> {
        let doc = self.expanded(page, 1, true).await?;
        let members = doc.get("Members").and_then(Value::as_array)?;
        let inline: Vec<Value> = members
            .iter()
            .filter(|m| super::inline::is_inline(m))
            .cloned()
            .collect();
        (inline.len() == members.len()).then_some(inline)
    }

    /// The first page of a collection: as an expanded answer brought it when its members
    /// came with it, else expanded `levels` deep when the service can (asked as a leaf when
    /// its members are leaves: expanded, it leads to no further request), else plain.
    pub(super) async fn first_page(&self, page: &str, levels: u64, leaves: bool) -> Option<Value> {
        if let Some(v) = self.inline_doc(page)
            && v.get("Members")
                .and_then(Value::as_array)
                .is_some_and(|m| m.iter().all(super::inline::is_inline))
        {
            return Some(v);
        }
        match self.expanded(page, levels, leaves).await {
            Some(v) => Some(v),
            None => self.get(page).await,
        }
    }

    pub(super) async fn linked_leaves(&self, doc: &Value, key: &str) -> Option<Vec<Value>> {
        let l = doc.get(key).and_then(link)?;
        Some(self.leaf_members(&l).await)
    }

    async fn system(&self, system: Value) -> RawSystem {
        let chassis_docs = tokio::sync::OnceCell::new();
        let processors = async {
            let procs = self
                .linked_leaves(&system, "Processors")
                .await
                .unwrap_or_default();
            let devices = self.gpu_devices(&procs, &chassis_docs, &system).await;
            let oem = self.oem_pci_devices(&system, &procs).await;
            (procs, (devices, oem))
        };
        let memory = async {
            let summary = system
                .pointer("/MemorySummary/TotalSystemMemoryGiB")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let l = system.get("Memory").and_then(link)?;
            if summary <= 0.0 {
                Some(self.leaf_members(&l).await)
            } else {
                // DIMMs only when one expanded request brings them all: the summary is the
                // number we use; the DIMMs are a cross-check.
                self.expanded_only(&l).await
            }
        };
        let storage = self.storage(&system);
        let ethernet = async {
            self.linked_leaves(&system, "EthernetInterfaces")
                .await
                .unwrap_or_default()
        };
        let chassis = self.chassis(&system, &chassis_docs);
        let managers = async {
            let links: Vec<String> = system
                .pointer("/Links/ManagedBy")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(link)
                .collect();
            if links.is_empty() {
                Vec::new()
            } else {
                join_all(links.iter().map(|l| self.get_leaf(l)))
                    .await
                    .into_iter()
                    .flatten()
                    .collect()
            }
        };
        let bios = self.bios(&system);
        let switches = self.dell_switch_connections(&system);
        let (
            (processors, (gpu_devices, oem_pci_devices)),
            memory,
            (drives, storages, volumes, simple_storage),
            ethernet,
            (chassis, ports),
            managers,
            (bios, bios_registry),
            switch_connections,
        ) = tokio::join!(
            processors, memory, storage, ethernet, chassis, managers, bios, switches
        );
        RawSystem {
            system,
            processors,
            memory,
            drives,
            storages,
            volumes,
            simple_storage,
            ethernet,
            ports,
            chassis,
            managers,
            bios,
            bios_registry,
            accelerators: Vec::new(),
            accelerator_memory: Vec::new(),
            gpu_devices,
            oem_pci_devices,
            switch_connections,
        }
    }

    /// Drives from Storage, with their Storage documents and the volumes they link to;
    /// SimpleStorage only when Storage gave none.
    async fn storage(&self, system: &Value) -> (Vec<Value>, Vec<Value>, Vec<Value>, Vec<Value>) {
        let mut drives = Vec::new();
        let mut kept = Vec::new();
        // Two levels deep where the BMC allows it: the drives come with their Storage.
        let storages = match system.get("Storage").and_then(link) {
            Some(l) => Some(self.members_of(&l, false, 2).await),
            None => None,
        };
        if let Some(storages) = storages {
            let per = join_all(storages.iter().map(|s| async move {
                // Each drive once, however often the captures list it.
                let links: Vec<String> = s
                    .get("Drives")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .take(MAX_MEMBERS)
                    .filter_map(link)
                    .filter(|l| {
                        self.seen
                            .lock()
                            .expect("not poisoned")
                            .insert(l.to_ascii_lowercase())
                    })
                    .collect();
                if let Some(id) = s.get("@odata.id").and_then(link) {
                    self.expand_holder(&id, &links).await;
                }
                join_all(links.iter().map(|l| self.get_leaf(l)))
                    .await
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
            }))
            .await;
            drives = per.into_iter().flatten().collect();
            kept = storages;
        }
        let volumes = self.volumes_of(&drives, &kept).await;
        let usable = drives.iter().any(|d| {
            d.get("CapacityBytes")
                .and_then(Value::as_u64)
                .is_some_and(|c| c > 0)
        });
        let simple = if usable {
            Vec::new()
        } else {
            self.linked_leaves(system, "SimpleStorage")
                .await
                .unwrap_or_default()
        };
        (drives, kept, volumes, simple)
    }

    /// The system's chassis and their adapter ports (Ports first; NetworkPorts when Ports
    /// carry no MAC). Chassis Drives when the system exposed no drive at all is left to
    /// `chassis_drives`.
    async fn chassis(
        &self,
        system: &Value,
        docs: &tokio::sync::OnceCell<Vec<Value>>,
    ) -> (Vec<Value>, Vec<(Value, Value, bool)>) {
        let chassis = self.chassis_docs(docs, system).await.clone();
        // Three levels deep where the BMC allows it: each adapter's ports come with it (two
        // levels bring nothing more than one).
        let levels = if self.f.expand_max_levels() >= 3 {
            3
        } else {
            1
        };
        let per = join_all(chassis.iter().map(|c| async move {
            let Some(l) = c.get("NetworkAdapters").and_then(link) else {
                return Vec::new();
            };
            let adapters = self.members_of(&l, false, levels).await;
            let per_adapter = join_all(adapters.into_iter().map(|a| async move {
                let mut out = Vec::new();
                if let Some(ports) = self.linked_leaves(&a, "Ports").await {
                    out.extend(ports.into_iter().map(|p| (a.clone(), p, false)));
                }
                let has_mac = out.iter().any(|(_, p, _)| {
                    p.pointer("/Ethernet/AssociatedMACAddresses/0")
                        .and_then(Value::as_str)
                        .is_some()
                });
                if !has_mac && let Some(ports) = self.linked_leaves(&a, "NetworkPorts").await {
                    out.extend(ports.into_iter().map(|p| (a.clone(), p, true)));
                }
                out
            }))
            .await;
            per_adapter.into_iter().flatten().collect::<Vec<_>>()
        }))
        .await;
        (chassis, per.into_iter().flatten().collect())
    }

    /// The system's chassis (read once, for whichever branch asks first).
    pub(super) async fn chassis_docs<'c>(
        &self,
        docs: &'c tokio::sync::OnceCell<Vec<Value>>,
        system: &Value,
    ) -> &'c Vec<Value> {
        docs.get_or_init(|| async {
            let links: Vec<String> = system
                .pointer("/Links/Chassis")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(link)
                .collect();
            if links.is_empty() {
                self.members("/redfish/v1/Chassis").await
            } else {
                join_all(links.iter().map(|l| self.get(l)))
                    .await
                    .into_iter()
                    .flatten()
                    .collect()
            }
        })
        .await
    }

    async fn chassis_drives(&self, chassis: &[Value]) -> Vec<Value> {
        join_all(
            chassis
                .iter()
                .map(|c| async move { self.linked_leaves(c, "Drives").await.unwrap_or_default() }),
        )
        .await
        .into_iter()
        .flatten()
        .collect()
    }
}

/// `#ComputerSystem.v1_16_0.ComputerSystem`: the namespace before the version names the
/// schema (`#AMIComputerSystem.v1_0_0.Capabilities` is something else).
fn is_system(v: &Value) -> bool {
    v.get("@odata.type")
        .and_then(Value::as_str)
        .and_then(|t| t.trim_start_matches('#').split('.').next())
        .is_some_and(|ns| ns == "ComputerSystem")
}

/// Walk one BMC. Errors only when the service itself cannot be read.
pub async fn crawl<F: Fetch>(
    f: &F,
    root: Value,
    prefetched: Option<Value>,
) -> Result<RawBmc, FetchError> {
    let w = Walk {
        f,
        notes: Mutex::new(Vec::new()),
        failed: Mutex::new(Vec::new()),
        seen: Mutex::new(BTreeSet::new()),
        expand_verdict: tokio::sync::Mutex::new(None),
        inline: Mutex::default(),
        registries: root.get("Registries").and_then(link),
    };
    let systems_link = root
        .get("Systems")
        .and_then(link)
        .unwrap_or_else(|| "/redfish/v1/Systems".into());
    // The Systems collection is fetched directly so its failure is fatal and visible. The
    // caller may have fetched the standard path already, together with the ServiceRoot.
    let first = match prefetched {
        Some(v) if systems_link == "/redfish/v1/Systems" => v,
        _ => f.get(&systems_link).await?,
    };
    if !first.is_object() {
        return Err(FetchError::BadJson(
            "the Systems collection is not an object".into(),
        ));
    }
    let docs = w.member_docs(&first, false).await;
    let mut systems: Vec<Value> = Vec::new();
    for d in docs {
        if is_system(&d) {
            systems.push(d);
        } else {
            let id = d.get("@odata.id").and_then(Value::as_str).unwrap_or("?");
            w.note(format!("{id}: not a ComputerSystem; skipped"));
        }
    }
    // Host systems: those with CPUs. A BMC that also exposes a GPU baseboard or similar as a
    // "system" (HGX) keeps only the host; a lone system is kept even when empty.
    let count = |s: &Value| {
        s.pointer("/ProcessorSummary/Count")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let mut boards: Vec<Value> = Vec::new();
    if systems.iter().any(|s| count(s) > 0) {
        let (hosts, others): (Vec<_>, Vec<_>) = systems.into_iter().partition(|s| count(s) > 0);
        for o in others {
            let id = o.get("@odata.id").and_then(Value::as_str).unwrap_or("?");
            if hosts.len() == 1 {
                w.note(format!(
                    "{id}: a system without CPUs beside the host (a GPU baseboard); its GPUs are counted with the host"
                ));
                boards.push(o);
            } else {
                w.note(format!(
                    "{id}: a system without CPUs beside several hosts; skipped (which host it serves is unknown)"
                ));
            }
        }
        systems = hosts;
    }
    // The accelerator boards are read beside the host, not after it.
    let (mut raw, boards) = tokio::join!(
        join_all(systems.into_iter().map(|s| w.system(s))),
        join_all(boards.iter().map(|b| w.accelerators(b)))
    );
    if let Some(host) = raw.first_mut() {
        for (procs, memory) in boards {
            host.accelerators.extend(procs);
            host.accelerator_memory.extend(memory);
        }
    }
    for r in &mut raw {
        let has_drives = r
            .drives
            .iter()
            .chain(r.simple_storage.iter())
            .next()
            .is_some();
        if !has_drives {
            r.drives = w.chassis_drives(&r.chassis).await;
        }
    }
    let notes = w.notes.into_inner().expect("not poisoned");
    let failed = w.failed.into_inner().expect("not poisoned");
    Ok(RawBmc {
        root,
        systems: raw,
        notes,
        failed,
    })
}

pub use super::mockup_dir::MockupDir;
