//! `$expand` in the walk. DSP0266 ("Query parameters"): `$expand=.` asks the service to put
//! in place of each reference outside a `Links` property the resource it names, and
//! `($levels=n)` to do so `n` references deep; a service advertises what it does in the
//! ServiceRoot's `ProtocolFeaturesSupported.ExpandQuery` (`NoLinks` for `.`, `Levels`,
//! `MaxLevels`). Expansion is optional, and services that do not implement a query option
//! may ignore it (iLO documents this) or refuse it (sushy-tools answers 404, iRMC
//! `QueryNotSupportedOnResource`).
//!
//! So the walk asks for an expansion only where the ServiceRoot advertises one and at a
//! depth within `MaxLevels`; a refusal (any HTTP error status, or a body that is not JSON),
//! an answer left unexpanded, or one that fails otherwise (too large, late: a note says so)
//! turns expansion off for the rest of that BMC, and whatever the answer lacks is read the
//! plain way, one resource at a time. Expanded answers pass the same caps as any other
//! (1 MiB per body, 16 MiB per BMC). Every resource an
//! expanded answer brings is kept (bounded, [`super::inline::MAX_INLINE`]) and never read again.
//!
//! Where it is used: each collection's first page (its members; the Registries collection's
//! brings the BIOS registry file); the Storage collection two levels deep (its drives with
//! it) where `MaxLevels` allows, else a Storage resource with two or more drives to read; a
//! chassis' NetworkAdapters three levels deep (their ports with them) where `MaxLevels`
//! allows; a collection holding two or more of the volumes, GPU PCIe devices or GPU memory
//! to read.

use futures_util::future::join_all;
use serde_json::Value;

use super::crawl::Walk;
use super::inline::{is_inline, key, member_of};
use crate::redfish::fetch::{Fetch, FetchError};

/// The deepest `$levels` used, whatever a BMC advertises.
const MAX_LEVELS: u64 = 6;

/// The `$levels` a BMC allows with `$expand=.`: 0 (no expansion) unless its ServiceRoot
/// advertises both `NoLinks` and `Levels`; then `MaxLevels` (1 when not given, 0 when it is
/// not a whole number).
pub(super) fn levels_advertised(root: &Value) -> u64 {
    let Some(e) = root.pointer("/ProtocolFeaturesSupported/ExpandQuery") else {
        return 0;
    };
    let yes = |k: &str| e.get(k).and_then(Value::as_bool) == Some(true);
    if !(yes("NoLinks") && yes("Levels")) {
        return 0;
    }
    match e.get("MaxLevels") {
        None | Some(Value::Null) => 1,
        Some(v) => v.as_u64().unwrap_or(0).min(MAX_LEVELS),
    }
}

impl<F: Fetch> Walk<'_, F> {
    /// A resource an expanded answer already brought.
    pub(super) fn inline_doc(&self, path: &str) -> Option<Value> {
        self.inline.lock().expect("not poisoned").get(path)
    }

    /// The BMC advertised `$expand` but refused it or left an answer unexpanded: ask for
    /// no more expansions.
    fn expand_off(&self, verdict: &mut Option<bool>) {
        *verdict = Some(false);
        self.f.expand_failed();
    }

    /// `path` expanded `levels` deep (at most `MaxLevels`), its resources kept; `None`
    /// when the BMC does not expand or this answer could not be had (too large, no answer
    /// in time: noted): then the caller reads the plain way, and the BMC is asked no more
    /// expansions. The first
    /// expansion of a BMC is asked alone, so one that refuses costs one request, not one
    /// per branch of the walk. A `leaf` expansion (one whose answer leads to no further
    /// request) waits behind those that do, as leaf documents do.
    pub(super) async fn expanded(&self, path: &str, levels: u64, leaf: bool) -> Option<Value> {
        if !self.f.expand() {
            return None;
        }
        let levels = levels.clamp(1, self.f.expand_max_levels().max(1));
        let mut verdict = self.expand_verdict.lock().await;
        match *verdict {
            Some(false) => return None,
            Some(true) => drop(verdict),
            None => {
                // The others wait for this one: it goes first.
                let got = self.ask_expanded(path, levels, false, &mut verdict).await;
                if got.is_some() && verdict.is_none() {
                    *verdict = Some(true);
                }
                return got;
            }
        }
        let got = self.ask_expanded(path, levels, leaf, &mut None).await;
        if !self.f.expand() {
            // Refused or left unexpanded after an earlier success: settle it for the other
            // branches.
            *self.expand_verdict.lock().await = Some(false);
        }
        got
    }

    async fn ask_expanded(
        &self,
        path: &str,
        levels: u64,
        leaf: bool,
        verdict: &mut Option<bool>,
    ) -> Option<Value> {
        let query = format!("{path}?$expand=.($levels={levels})");
        let answer = if leaf {
            self.f.get_leaf(&query).await
        } else {
            self.f.get(&query).await
        };
        let doc = match answer {
            Ok(v) if v.is_object() => v,
            // A refusal (any HTTP error status, a body that is not JSON).
            Ok(_) | Err(FetchError::Status(..) | FetchError::BadJson(_)) => {
                self.expand_off(verdict);
                return None;
            }
            Err(e) => {
                self.note(format!(
                    "{path}: {e} when asked expanded; read the plain way, and nothing more asked expanded"
                ));
                self.expand_off(verdict);
                return None;
            }
        };
        // A collection whose members came back as bare references was not expanded: its
        // plain answer is still good, but nothing more is asked expanded.
        let members = doc.get("Members").and_then(Value::as_array);
        if members.is_some_and(|m| !m.is_empty() && !m.iter().any(is_inline)) {
            self.expand_off(verdict);
        }
        self.inline.lock().expect("not poisoned").keep(&doc);
        Some(doc)
    }

    /// The expansion of a resource holding `wanted` as references (a Storage resource and
    /// its drives), asked only when two or more of them are not at hand. An answer that
    /// brings none of them turns expansion off.
    pub(super) async fn expand_holder(&self, holder: &str, wanted: &[String]) {
        if !self.f.expand() || self.missing(wanted.iter()) < 2 {
            return;
        }
        if self.expanded(holder, 1, false).await.is_some()
            && self.missing(wanted.iter()) == wanted.len()
        {
            self.expand_off(&mut *self.expand_verdict.lock().await);
        }
    }

    fn missing<'a>(&self, links: impl Iterator<Item = &'a String>) -> usize {
        let inline = self.inline.lock().expect("not poisoned");
        links.filter(|l| !inline.has(l)).count()
    }

    /// The documents `links` name, in their order, each read once: first, every one of
    /// `collections` holding two or more of those not at hand as members is read expanded
    /// (one request for them all); the rest one by one.
    pub(super) async fn leaves_via(&self, links: &[String], collections: &[String]) -> Vec<Value> {
        if self.f.expand() {
            let mut asked: Vec<String> = Vec::new();
            for c in collections {
                let k = key(c);
                if asked.iter().any(|a| key(a) == k) {
                    continue;
                }
                if self.missing(links.iter().filter(|l| member_of(l, c))) >= 2 {
                    asked.push(c.clone());
                }
            }
            join_all(asked.iter().map(|c| self.expanded(c, 1, true))).await;
        }
        join_all(links.iter().map(|l| self.get_leaf(l)))
            .await
            .into_iter()
            .flatten()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::levels_advertised;
    use crate::discover::redfish::inline::{Inline, member_of};

    #[test]
    fn levels_follow_what_the_root_advertises() {
        let root = |e: serde_json::Value| json!({"ProtocolFeaturesSupported": {"ExpandQuery": e}});
        let all = json!({"NoLinks": true, "Levels": true});
        assert_eq!(levels_advertised(&json!({})), 0);
        assert_eq!(levels_advertised(&root(all.clone())), 1);
        for (max, levels) in [(json!(1), 1), (json!(5), 5), (json!(99), 6), (json!(0), 0)] {
            let mut e = all.clone();
            e["MaxLevels"] = max;
            assert_eq!(levels_advertised(&root(e)), levels);
        }
        let mut e = all.clone();
        e["MaxLevels"] = json!("two");
        assert_eq!(levels_advertised(&root(e)), 0, "not a number: no expansion");
        // `.` (NoLinks) and `$levels` are what the walk asks for: both must be advertised.
        assert_eq!(levels_advertised(&root(json!({"NoLinks": true}))), 0);
        assert_eq!(
            levels_advertised(&root(json!({"ExpandAll": true, "Levels": true}))),
            0
        );
    }

    #[test]
    fn members_are_one_segment_below_their_collection() {
        assert!(member_of(
            "/redfish/v1/Chassis/1/PCIeDevices/slot_4",
            "/redfish/v1/Chassis/1/PCIeDevices/"
        ));
        assert!(member_of(
            "/redfish/v1/systems/1/memory/a",
            "/redfish/v1/Systems/1/Memory"
        ));
        assert!(!member_of(
            "/redfish/v1/Chassis/1/PCIeDevices/slot_4/Functions/1",
            "/redfish/v1/Chassis/1/PCIeDevices"
        ));
        assert!(!member_of(
            "/redfish/v1/Chassis/1/PCIeDevicesX/a",
            "/redfish/v1/Chassis/1/PCIeDevices"
        ));
        assert!(!member_of(
            "/redfish/v1/Chassis/1/PCIeDevices",
            "/redfish/v1/Chassis/1/PCIeDevices"
        ));
    }

    #[test]
    fn resources_nested_past_four_are_not_kept() {
        let res = |id: &str, inner: serde_json::Value| json!({"@odata.id": id, "@odata.type": "#X.v1_0_0.X", "Inner": inner});
        let doc = res(
            "/a",
            res(
                "/a/b",
                res("/a/b/c", res("/a/b/c/d", res("/a/b/c/d/e", json!(null)))),
            ),
        );
        let mut kept = Inline::default();
        kept.keep(&doc);
        for id in ["/a", "/A/b/", "/a/b/c", "/a/b/c/d"] {
            assert!(kept.has(id), "{id}");
        }
        assert!(!kept.has("/a/b/c/d/e"));
        // A bare reference is not a resource.
        kept.keep(&json!({"Members": [{"@odata.id": "/f"}]}));
        assert!(!kept.has("/f"));
    }
}
