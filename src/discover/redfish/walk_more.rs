//! More of the Redfish walk (see `crawl`): the volumes drives belong to, the BIOS and its
//! attribute registry, and accelerator baseboards exposed as systems of their own.

use serde_json::Value;

use super::crawl::{MAX_MEMBERS, Walk};
use crate::redfish::fetch::{Fetch, link};

impl<F: Fetch> Walk<'_, F> {
    /// The volumes drives link to, each once: whether a drive is a RAID member or passed
    /// through decides the name the OS gives it.
    pub(super) async fn volumes_of(&self, drives: &[Value], storages: &[Value]) -> Vec<Value> {
        let mut links: Vec<String> = Vec::new();
        for d in drives {
            for l in d
                .pointer("/Links/Volumes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .take(MAX_MEMBERS)
                .filter_map(link)
            {
                let key = l.trim_end_matches('/').to_ascii_lowercase();
                if !links
                    .iter()
                    .any(|x| x.trim_end_matches('/').to_ascii_lowercase() == key)
                {
                    links.push(l);
                }
            }
        }
        links.truncate(MAX_MEMBERS);
        let collections: Vec<String> = storages
            .iter()
            .filter_map(|s| s.get("Volumes").and_then(link))
            .collect();
        self.leaves_via(&links, &collections).await
    }

    /// The `Bios` resource, and its attribute registry when the attribute names alone do
    /// not say what they are (Registries -> the registry file -> its `Location`).
    pub(super) async fn bios(&self, system: &Value) -> (Option<Value>, Option<Value>) {
        let Some(mut l) = system.get("Bios").and_then(link) else {
            return (None, None);
        };
        // iLO links `/redfish/v1/systems/1/bios/` in lowercase and answers either case; a
        // case-sensitive server (a capture on disk) has it under the system's own spelling.
        if let Some(own) = system.get("@odata.id").and_then(Value::as_str) {
            let own = own.trim_end_matches('/');
            if l.len() > own.len()
                && l.is_char_boundary(own.len())
                && l[..own.len()].eq_ignore_ascii_case(own)
            {
                l = format!("{own}{}", &l[own.len()..]);
            }
        }
        let Some(bios) = self.get_leaf(&l).await else {
            return (None, None);
        };
        if !super::bios::needs_registry(&bios) {
            return (Some(bios), None);
        }
        let (Some(id), Some(coll)) = (
            bios.get("AttributeRegistry").and_then(Value::as_str),
            self.registries.as_deref(),
        ) else {
            return (Some(bios), None);
        };
        // Expanded where the BMC expands: the registry file comes with the collection.
        let Some(files) = self.first_page(coll, 1, false).await else {
            return (Some(bios), None);
        };
        let file = files
            .get("Members")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_MEMBERS)
            .filter_map(link)
            .find(|m| {
                m.trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .is_some_and(|last| last.eq_ignore_ascii_case(id))
            });
        let Some(file) = file else {
            self.note(format!("{coll}: no registry file for BIOS registry {id}"));
            return (Some(bios), None);
        };
        let Some(doc) = self.get_leaf(&file).await else {
            return (Some(bios), None);
        };
        let uri = doc
            .get("Location")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|l| l.get("Uri").and_then(Value::as_str).map(str::to_string));
        let registry = match uri {
            Some(u) => self.get_leaf(&u).await,
            None => None,
        };
        (Some(bios), registry)
    }

    /// The GPU processors of a system without CPUs, and the memory they link to.
    pub(super) async fn accelerators(&self, system: &Value) -> (Vec<Value>, Vec<Value>) {
        let procs: Vec<Value> = self
            .linked_leaves(system, "Processors")
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.get("ProcessorType").and_then(Value::as_str) == Some("GPU"))
            .collect();
        let links: Vec<String> = procs
            .iter()
            .flat_map(|p| {
                p.pointer("/Links/Memory")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(link)
            })
            .take(MAX_MEMBERS)
            .collect();
        let collections: Vec<String> = system.get("Memory").and_then(link).into_iter().collect();
        let memory = self.leaves_via(&links, &collections).await;
        (procs, memory)
    }

    /// The PCIe devices linked from GPU processors that name no model (Lenovo XCC gives
    /// `Model` null on its GPU processors, and the card's name on the linked
    /// `Chassis/*/PCIeDevices/*` as `Name`, with `Model` `N/A`).
    /// Where two or more are to be read, the chassis' `PCIeDevices` collections holding them
    /// are read expanded.
    pub(super) async fn gpu_devices(
        &self,
        processors: &[Value],
        chassis: &tokio::sync::OnceCell<Vec<Value>>,
        system: &Value,
    ) -> Vec<Value> {
        let mut links: Vec<String> = processors
            .iter()
            .filter(|p| {
                p.get("ProcessorType").and_then(Value::as_str) == Some("GPU")
                    && named_model(p).is_none()
            })
            .filter_map(|p| p.pointer("/Links/PCIeDevice").and_then(link))
            .take(MAX_MEMBERS)
            .collect();
        links.sort();
        links.dedup();
        let collections: Vec<String> = if links.len() >= 2 && self.f.expand() {
            self.chassis_docs(chassis, system)
                .await
                .iter()
                .filter_map(|c| c.get("PCIeDevices").and_then(link))
                .collect()
        } else {
            Vec::new()
        };
        self.leaves_via(&links, &collections).await
    }
}

impl<F: Fetch> Walk<'_, F> {
    /// HPE iLO's Oem `PCIDevices` when no processor is a GPU: iLO lists GPUs only there.
    pub(super) async fn oem_pci_devices(&self, system: &Value, processors: &[Value]) -> Vec<Value> {
        let any_gpu = processors
            .iter()
            .any(|p| p.get("ProcessorType").and_then(Value::as_str) == Some("GPU"));
        match system.pointer("/Oem/Hpe/Links/PCIDevices").and_then(link) {
            Some(l) if !any_gpu => self.leaf_members(&l).await,
            _ => Vec::new(),
        }
    }
}

impl<F: Fetch> Walk<'_, F> {
    /// Dell iDRAC's switch connection view, one request where the members come inline
    /// (`<system>/NetworkPorts/Oem/Dell/DellSwitchConnections`, iDRAC 9; the documented
    /// `Oem/Dell/DellSwitchConnections` of iDRAC 10 is tried when it is absent). Only on a
    /// system with `Oem.Dell`; nothing when the BMC has neither.
    pub(super) async fn dell_switch_connections(&self, system: &Value) -> Vec<Value> {
        if system.pointer("/Oem/Dell").is_none() {
            return Vec::new();
        }
        let Some(sys) = system.get("@odata.id").and_then(Value::as_str) else {
            return Vec::new();
        };
        let sys = sys.trim_end_matches('/');
        for path in [
            format!("{sys}/NetworkPorts/Oem/Dell/DellSwitchConnections"),
            format!("{sys}/Oem/Dell/DellSwitchConnections"),
        ] {
            let Some(coll) = self.get_quiet(&path).await else {
                continue;
            };
            let members: Vec<Value> = coll
                .get("Members")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if members.iter().all(|m| m.get("FQDD").is_some()) {
                return members;
            }
            return self.leaf_members(&path).await;
        }
        Vec::new()
    }
}

/// A document's `Model` when it names one (not empty, not "N/A").
pub(crate) fn named_model(doc: &Value) -> Option<&str> {
    doc.get("Model")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty() && !m.eq_ignore_ascii_case("n/a"))
}
