//! Reading and writing `nodes.yaml`, and the merge rules discovery follows.
//!
//! Merge rules: a rediscovered node gets its facts replaced and keeps its annotations; a node
//! that discovery did not see is kept as it is; a node whose discovery failed is kept and
//! marked stale with the error. Nothing is ever dropped by discovery: removing a server from
//! the inventory is a human edit.

use std::collections::BTreeSet;
use std::path::Path;

use super::model::{Inventory, Node, Stale, normalize_mac};
use crate::files::fsio::{self, Mode};
use crate::files::yaml::{self, InputError, Source};
use crate::path;

const HEADER: &str = "# rackplan inventory: discovered facts per server.\n\
# `annotations` belong to people (rack, zone, role, labels, networks); discovery never\n\
# changes them. Everything else is rewritten by `rackplan discover`.\n";

/// Load and check `nodes.yaml`: ids unique, MACs well-formed.
pub fn load(path: &Path) -> Result<(Inventory, Source), InputError> {
    let (inv, src): (Inventory, Source) = yaml::load(path)?;
    validate(&inv, &src)?;
    Ok((inv, src))
}

/// The inventory at `path`, or an empty one when no file is there yet (a first discovery).
/// A symbolic link that is dangling or loops is an error: discovery would otherwise write a
/// fresh inventory over it and lose every annotation.
pub(crate) fn load_or_empty(path: &Path) -> Result<Inventory, InputError> {
    if yaml::input_exists(path)? {
        Ok(load(path)?.0)
    } else {
        Ok(Inventory::default())
    }
}

fn validate(inv: &Inventory, src: &Source) -> Result<(), InputError> {
    let mut ids = BTreeSet::new();
    for (i, node) in inv.nodes.iter().enumerate() {
        if node.id.trim().is_empty() {
            return Err(src.error_at(
                &path!["nodes", i, "id"],
                "node id is empty",
                Some("use the system serial number as the id".into()),
            ));
        }
        if !ids.insert(node.id.as_str()) {
            return Err(src.error_at(
                &path!["nodes", i, "id"],
                format!("duplicate node id `{}`", node.id),
                Some("every server needs its own id (its serial number)".into()),
            ));
        }
        if let Some(m) = node.memory_gib
            && !(m.is_finite() && (0.0..=1_048_576.0).contains(&m))
        {
            return Err(src.error_at(
                &path!["nodes", i, "memory_gib"],
                format!("{m} GiB is not a memory size"),
                Some("give a number of GiB, e.g. 512, or remove the line and rediscover".into()),
            ));
        }
        for (j, g) in node.gpus.iter().enumerate() {
            if let Some(m) = g.memory_gib
                && !(m.is_finite() && m >= 0.0)
            {
                return Err(src.error_at(
                    &path!["nodes", i, "gpus", j, "memory_gib"],
                    format!("{m} GiB is not a memory size"),
                    None,
                ));
            }
        }
        for (j, a) in node.annotations.acknowledged.iter().enumerate() {
            let at = |key: &str| path!["nodes", i, "annotations", "acknowledged", j, key];
            if a.reason.trim().is_empty() {
                return Err(src.error_at(
                    &at("reason"),
                    "an acknowledgement needs a reason",
                    Some("say why the finding is acceptable for now, e.g. `cables come on 2027-01-20`".into()),
                ));
            }
            if let Some(u) = &a.until
                && (u.contains('T') || crate::clock::parse_at(u).is_err())
            {
                return Err(src.error_at(
                    &at("until"),
                    format!("`{u}` is not a date"),
                    Some("give the last day it holds as YYYY-MM-DD (UTC)".into()),
                ));
            }
        }
        for (j, nic) in node.nics.iter().enumerate() {
            match normalize_mac(&nic.mac) {
                Some(m) if m == nic.mac => {}
                Some(m) => {
                    return Err(src.error_at(
                        &path!["nodes", i, "nics", j, "mac"],
                        format!("MAC `{}` is not in canonical form", nic.mac),
                        Some(format!("write it as `{m}` (lowercase, colon-separated)")),
                    ));
                }
                None => {
                    return Err(src.error_at(
                        &path!["nodes", i, "nics", j, "mac"],
                        format!("`{}` is not a MAC address", nic.mac),
                        Some("a MAC has six hex octets, e.g. `b8:ca:3a:6a:64:7c`".into()),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Write `nodes.yaml` atomically, nodes sorted by id so diffs stay small.
pub fn save(path: &Path, inv: &Inventory) -> Result<(), fsio::FsError> {
    let body = body(inv);
    let text = match std::fs::read_to_string(path) {
        Ok(old) => keep_comments(&old, &body),
        Err(_) => format!("{HEADER}{body}"),
    };
    fsio::write_atomic(path, text.as_bytes(), Mode::Public)
}

/// The inventory as `save` writes a new file: the header, then the nodes by id.
pub(crate) fn to_text(inv: &Inventory) -> String {
    format!("{HEADER}{}", body(inv))
}

fn body(inv: &Inventory) -> String {
    let mut sorted = inv.clone();
    sorted.nodes.sort_by(|a, b| a.id.cmp(&b.id));
    yaml::to_string(&sorted)
}

/// Where a line sits in the document: its keys from the top, sequence items named by their
/// first `key=value` (`nodes/[id=0FP95WZ]/annotations/rack`). The same place in the old and
/// the new text has the same anchor, whatever moved around it.
fn anchors(text: &str) -> Vec<Option<String>> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            out.push(None);
            continue;
        }
        let indent = line.len() - t.len();
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let (item, rest) = match t.strip_prefix("- ") {
            Some(r) => (true, r),
            None => (false, t),
        };
        let (key, value) = match rest.split_once(':') {
            Some((k, v)) if !k.contains(' ') || k.starts_with(['\'', '"']) => (k.trim(), v.trim()),
            _ => ("", rest.trim()),
        };
        if item {
            stack.push((indent, format!("[{key}={value}]")));
            if !key.is_empty() {
                stack.push((indent + 2, key.to_string()));
            }
        } else {
            stack.push((indent, key.to_string()));
        }
        out.push(Some(
            stack
                .iter()
                .map(|(_, l)| l.as_str())
                .collect::<Vec<_>>()
                .join("/"),
        ));
    }
    out
}

/// The new text with the comments people wrote into the old one: the block before the
/// first key in place of the header, and each comment line before the key (or list item)
/// it preceded. Comments whose key is gone are kept at the end.
fn keep_comments(old: &str, new: &str) -> String {
    let old_lines: Vec<&str> = old.lines().collect();
    let old_anchors = anchors(old);
    let mut header = String::new();
    let mut attached: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    let mut pending: Vec<&str> = Vec::new();
    let mut seen_content = false;
    for (line, anchor) in old_lines.iter().zip(&old_anchors) {
        match anchor {
            None if line.trim_start().starts_with('#') => {
                if seen_content {
                    pending.push(line);
                } else {
                    header.push_str(line);
                    header.push('\n');
                }
            }
            None => {}
            Some(a) => {
                seen_content = true;
                if !pending.is_empty() {
                    attached.entry(a.clone()).or_default().append(&mut pending);
                }
            }
        }
    }
    let mut out = if header.is_empty() {
        HEADER.to_string()
    } else {
        header
    };
    for (line, anchor) in new.lines().zip(anchors(new)) {
        if let Some(c) = anchor.and_then(|a| attached.remove(&a)) {
            for l in c {
                out.push_str(l);
                out.push('\n');
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    let orphans: Vec<&str> = attached.into_values().flatten().chain(pending).collect();
    if !orphans.is_empty() {
        out.push_str(
            "# Comments kept from an earlier nodes.yaml; what they stood above is gone:\n",
        );
        for l in orphans {
            out.push_str(l.trim_start());
            out.push('\n');
        }
    }
    out
}

/// What one discovery run learned.
#[derive(Debug, Default)]
pub(crate) struct Discovery {
    /// Nodes seen now, with fresh facts (their annotations are ignored).
    pub(crate) seen: Vec<Node>,
    /// Ids of known nodes that discovery tried and failed to reach, with the error.
    pub(crate) failed: Vec<(String, String)>,
}

/// Summary of a merge, for the user.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct MergeReport {
    pub added: Vec<String>,
    pub updated: Vec<String>,
    pub marked_stale: Vec<String>,
    pub untouched: Vec<String>,
    /// Nodes kept whose BMC is no longer in bmcs.yaml: "id (address)". Never deleted (a
    /// BMC taken out of the list by mistake loses nothing); people remove retired ones.
    pub orphaned: Vec<String>,
}

/// What only the OS sees (disk paths, NIC names) survives a discovery that did not ask the
/// OS: matched by drive serial (else disk id) and by MAC.
fn keep_os_view(fresh: &mut Node, old: &Node) {
    for d in &mut fresh.disks {
        if d.path.is_some() {
            continue;
        }
        let same = old.disks.iter().find(|o| match (&d.serial, &o.serial) {
            (Some(a), Some(b)) => a.trim() == b.trim(),
            _ => o.id == d.id,
        });
        if let Some(o) = same {
            d.path.clone_from(&o.path);
        }
    }
    for n in &mut fresh.nics {
        if n.name.is_none()
            && let Some(o) = old.nics.iter().find(|o| o.mac == n.mac)
        {
            n.name.clone_from(&o.name);
        }
    }
}

/// LLDP neighbours survive a discovery that did not read them, and one from the other
/// source survives a reading that saw none on that NIC (a BMC whose NIC firmware does not
/// listen to LLDP does not erase what the host's lldpd saw, nor the reverse).
fn keep_lldp(fresh: &mut Node, old: &Node) {
    let read = fresh.sources.lldp.is_some();
    let source = if fresh.sources.ssh.is_some() {
        crate::inventory::LldpSource::Ssh
    } else {
        crate::inventory::LldpSource::Redfish
    };
    for n in &mut fresh.nics {
        if n.lldp.is_some() {
            continue;
        }
        if let Some(o) = old.nics.iter().find(|o| o.mac == n.mac)
            && let Some(l) = &o.lldp
            && (!read || l.source != source)
        {
            n.lldp = Some(l.clone());
        }
    }
    if !read {
        fresh.sources.lldp.clone_from(&old.sources.lldp);
    }
}

/// Merge a discovery into an inventory; see the module docs for the rules.
pub(crate) fn merge(inv: &mut Inventory, found: Discovery, now: &str) -> MergeReport {
    let mut report = MergeReport::default();
    let mut touched = BTreeSet::new();
    for mut fresh in found.seen {
        touched.insert(fresh.id.clone());
        if let Some(old) = inv.nodes.iter_mut().find(|n| n.id == fresh.id) {
            fresh.annotations = std::mem::take(&mut old.annotations);
            keep_lldp(&mut fresh, old);
            // A source that did not take part in this run keeps its last-seen time.
            if fresh.sources.redfish.is_none() {
                fresh.sources.redfish = old.sources.redfish.take();
            }
            if fresh.sources.ssh.is_none() {
                fresh.sources.ssh = old.sources.ssh.take();
                keep_os_view(&mut fresh, old);
            }
            fresh.stale = None;
            *old = fresh;
            report.updated.push(old.id.clone());
        } else {
            fresh.annotations = Default::default();
            report.added.push(fresh.id.clone());
            inv.nodes.push(fresh);
        }
    }
    for (id, error) in found.failed {
        if let Some(old) = inv.nodes.iter_mut().find(|n| n.id == id) {
            touched.insert(id.clone());
            old.stale = Some(Stale {
                since: old
                    .stale
                    .as_ref()
                    .map_or_else(|| now.to_string(), |s| s.since.clone()),
                error,
            });
            report.marked_stale.push(id);
        }
    }
    for n in &inv.nodes {
        if !touched.contains(&n.id) {
            report.untouched.push(n.id.clone());
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::model::Annotations;

    fn node(id: &str, mem: f64) -> Node {
        Node {
            id: id.into(),
            memory_gib: Some(mem),
            ..Node::default()
        }
    }

    #[test]
    fn merge_keeps_annotations_and_unreached_nodes() {
        let mut a = node("A", 256.0);
        a.annotations = Annotations {
            rack: Some("r1".into()),
            ..Annotations::default()
        };
        let mut inv = Inventory {
            nodes: vec![a, node("B", 256.0), node("C", 256.0)],
        };
        let mut fresh_a = node("A", 512.0);
        fresh_a.annotations.rack = Some("discovery must not write this".into());
        let report = merge(
            &mut inv,
            Discovery {
                seen: vec![fresh_a, node("D", 64.0)],
                failed: vec![("B".into(), "timeout".into())],
            },
            "2026-11-29T00:00:00Z",
        );
        assert_eq!(report.added, vec!["D"]);
        assert_eq!(report.updated, vec!["A"]);
        assert_eq!(report.marked_stale, vec!["B"]);
        assert_eq!(report.untouched, vec!["C"]);
        let a = &inv.nodes[0];
        assert_eq!(a.memory_gib, Some(512.0));
        assert_eq!(a.annotations.rack.as_deref(), Some("r1"));
        assert_eq!(inv.nodes.len(), 4);
        assert_eq!(inv.nodes[1].stale.as_ref().unwrap().error, "timeout");
    }

    #[test]
    fn lldp_neighbours_survive_a_discovery_that_did_not_read_them() {
        use crate::inventory::{Lldp, LldpSource, Nic};
        let lldp = |sw: &str, source| Lldp {
            switch: Some(sw.into()),
            chassis_id: None,
            port: Some("swp1".into()),
            port_description: None,
            vlans: vec![100],
            pvid: None,
            mtu: Some(9022),
            management_address: None,
            management_vlan: None,
            seen_at: "t0".into(),
            source,
            others: Vec::new(),
        };
        let nic = |l: Option<Lldp>| Nic {
            mac: "aa:bb:cc:dd:ee:01".into(),
            lldp: l,
            ..Nic::default()
        };
        let with = |l: Option<Lldp>, read: Option<&str>, ssh: bool| {
            let mut n = node("A", 256.0);
            n.nics = vec![nic(l)];
            n.sources.lldp = read.map(str::to_string);
            n.sources.ssh = ssh.then(|| "t".to_string());
            n
        };
        let run = |old: Node, fresh: Node| {
            let mut inv = Inventory { nodes: vec![old] };
            merge(
                &mut inv,
                Discovery {
                    seen: vec![fresh],
                    failed: vec![],
                },
                "t1",
            );
            inv.nodes.remove(0)
        };
        // A BMC crawl that read no LLDP keeps the host's neighbour and its time.
        let kept = run(
            with(Some(lldp("vm-a", LldpSource::Ssh)), Some("t0"), true),
            with(None, None, false),
        );
        assert_eq!(
            kept.nics[0].lldp.as_ref().unwrap().switch.as_deref(),
            Some("vm-a")
        );
        assert_eq!(kept.sources.lldp.as_deref(), Some("t0"));
        // A BMC that reports LLDP but saw nothing does not erase what the host saw.
        let kept = run(
            with(Some(lldp("vm-a", LldpSource::Ssh)), Some("t0"), true),
            with(None, Some("t1"), false),
        );
        assert!(kept.nics[0].lldp.is_some());
        // The host reading again and seeing no neighbour: the cable is gone.
        let gone = run(
            with(Some(lldp("vm-a", LldpSource::Ssh)), Some("t0"), true),
            with(None, Some("t1"), true),
        );
        assert!(gone.nics[0].lldp.is_none());
        // A newer neighbour replaces the old one.
        let moved = run(
            with(Some(lldp("vm-a", LldpSource::Ssh)), Some("t0"), true),
            with(Some(lldp("vm-b", LldpSource::Ssh)), Some("t1"), true),
        );
        assert_eq!(
            moved.nics[0].lldp.as_ref().unwrap().switch.as_deref(),
            Some("vm-b")
        );
    }

    #[test]
    fn comments_survive_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nodes.yaml");
        let mut inv = Inventory {
            nodes: vec![node("B", 1.0), node("A", 2.0)],
        };
        save(&p, &inv).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let edited = format!(
            "# my own header\n{}",
            text.lines()
                .filter(|l| !l.starts_with("# rackplan")
                    && !l.starts_with("# `annotations`")
                    && !l.starts_with("# changes"))
                .map(|l| {
                    if l.trim_start() == "- id: B" {
                        format!("  # B is the spare in rack 2\n{l}\n")
                    } else if l.trim_start().starts_with("memory_gib: 2") {
                        format!("    # DIMMs on order\n{l}\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect::<String>()
        );
        std::fs::write(&p, edited).unwrap();
        // Rediscovery changes the facts and adds a node; the comments stay where they were.
        inv.nodes[0].memory_gib = Some(512.0);
        inv.nodes.push(node("0", 3.0));
        save(&p, &inv).unwrap();
        let after = std::fs::read_to_string(&p).unwrap();
        assert!(after.starts_with("# my own header\n"), "{after}");
        let lines: Vec<&str> = after.lines().collect();
        let b = lines
            .iter()
            .position(|l| l.trim_start() == "- id: B")
            .unwrap();
        assert_eq!(lines[b - 1].trim(), "# B is the spare in rack 2", "{after}");
        let a = lines
            .iter()
            .position(|l| l.trim_start() == "- id: A")
            .unwrap();
        let mem = lines[a..]
            .iter()
            .position(|l| l.trim_start().starts_with("memory_gib"))
            .unwrap()
            + a;
        assert_eq!(lines[mem - 1].trim(), "# DIMMs on order", "{after}");
        let (back, _) = load(&p).unwrap();
        assert_eq!(back.nodes.len(), 3);
    }

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nodes.yaml");
        let inv = Inventory {
            nodes: vec![node("B", 1.0), node("A", 2.0)],
        };
        save(&p, &inv).unwrap();
        let (back, _) = load(&p).unwrap();
        assert_eq!(back.nodes[0].id, "A");
        assert_eq!(back.nodes.len(), 2);
    }
}
