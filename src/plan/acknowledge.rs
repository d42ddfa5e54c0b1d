//! Acknowledged findings: what people have seen and accept for now ("cables come
//! tomorrow"), written per node in nodes.yaml (`annotations.acknowledged`) with a reason and
//! an optional last day.
//!
//! An acknowledged finding stays in every output, marked as such with its reason; it no
//! longer stops `plan`, `render` or `boot`, and it no longer keeps a node out of a role.
//! What would make the install itself fail (a disk the installer cannot find, Harvester's
//! own minima, a port that does not exist, text that could become a command) cannot be
//! acknowledged: [`KINDS`] says which, and why, and loading refuses such an entry at its
//! line. An acknowledgement past its day is set aside when the inputs are loaded and its
//! finding counts again; one that no longer matches anything is named, so none lingers.

use super::findings::{Finding, FindingAck, Severity};
use crate::files::yaml::{InputError, Source};
use crate::inventory::model::Acknowledged;
use crate::inventory::{Inventory, Node};
use crate::path;

/// One kind of finding: its code, what one finding of it is about (the title a grouped
/// table row shows), and why it cannot be acknowledged, when it cannot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kind {
    pub(crate) code: &'static str,
    pub(crate) title: &'static str,
    pub(crate) refused: Option<&'static str>,
}

const INSTALLER_DISK: &str = "the installer needs this disk's path and fails without it: name the disk (`rackplan discover ssh`, or its `path` in nodes.yaml) instead";
const PREFLIGHT: &str = "Harvester's installer checks this itself (preflight) and stops the install: fix the hardware, or give the node another role";
const SITE: &str = "a finding about the whole site, not one node";
const ABOUT_ACK: &str =
    "a finding about an acknowledgement: edit or remove that acknowledgement instead";

const fn kind(code: &'static str, title: &'static str) -> Kind {
    Kind {
        code,
        title,
        refused: None,
    }
}

const fn refused(code: &'static str, title: &'static str, why: &'static str) -> Kind {
    Kind {
        code,
        title,
        refused: Some(why),
    }
}

/// Every finding `check` makes, by code.
pub(crate) const KINDS: &[Kind] = &[
    refused(
        "acknowledgement-expired",
        "an acknowledgement past its last day",
        ABOUT_ACK,
    ),
    refused(
        "acknowledgement-unused",
        "an acknowledgement that matches no finding",
        ABOUT_ACK,
    ),
    refused(
        "bios-setting",
        "a BIOS setting the profile requires is off",
        "the installer's preflight needs virtualization, and Harvester refuses legacy boot: write the setting with `rackplan boot --bios`, or drop the requirement from the profile",
    ),
    kind("bios-unknown", "a BIOS setting the BMC does not show"),
    kind("bond-mixed-speed", "bond members of different speeds"),
    kind(
        "bond-one-member",
        "a bond with one port where the profile asks more",
    ),
    kind("bond-one-switch", "both bond members on one switch"),
    kind(
        "cabling-wrong-switch",
        "a port cabled to another network's switch",
    ),
    kind("cpu-cores", "fewer CPU cores than the profile"),
    kind("cpu-threads", "fewer hardware threads than the profile"),
    kind("cpu-unknown", "CPU core count unknown"),
    kind("data-disks-missing", "fewer data disks than the profile"),
    refused(
        "default-ingress",
        "a bundled ingress controller in the catalogue",
        SITE,
    ),
    refused(
        "derived-data-disk-skipchecks",
        "a derived data disk with the installer's checks off",
        "the installer would format that disk unchecked: name it from the OS (`rackplan discover ssh`) or turn the checks back on",
    ),
    refused(
        "disk-annotation-invalid",
        "a disk annotation that is not a /dev path",
        INSTALLER_DISK,
    ),
    refused(
        "disk-annotation-unknown",
        "a disk annotation that names no disk of the node",
        INSTALLER_DISK,
    ),
    refused(
        "disk-path-ambiguous",
        "a disk the BMC's data cannot name",
        INSTALLER_DISK,
    ),
    kind(
        "disk-path-disagrees",
        "the OS and the BMC name a disk differently",
    ),
    refused(
        "disk-path-unknown",
        "a disk with no known path",
        INSTALLER_DISK,
    ),
    refused(
        "duplicate-mac",
        "a MAC address on two ports",
        "two ports with one MAC break DHCP, PXE and the bond",
    ),
    refused(
        "duplicate-serial",
        "a serial number on two records",
        "a serial identifies one server: remove the stale record or correct the serial",
    ),
    refused(
        "etcd-snapshots-local",
        "etcd snapshots kept on the clusters' own VMs",
        SITE,
    ),
    refused(
        "etcd-snapshots-off",
        "etcd snapshots turned off in the catalogue",
        SITE,
    ),
    kind("firmware-drift", "nodes of one model on different firmware"),
    kind("gpus", "the node's GPUs"),
    kind("gpus-missing", "fewer or other GPUs than the profile"),
    refused(
        "harvester-min-cores",
        "fewer cores than Harvester asks for",
        PREFLIGHT,
    ),
    refused(
        "harvester-min-disk",
        "a disk smaller than Harvester accepts",
        PREFLIGHT,
    ),
    refused(
        "harvester-min-memory",
        "less memory than Harvester asks for",
        PREFLIGHT,
    ),
    refused(
        "harvester-min-nic",
        "a management port slower than Harvester asks for",
        PREFLIGHT,
    ),
    refused("image-generic", "a generic catalogue image", SITE),
    refused(
        "kubernetes-version",
        "a Kubernetes version the site does not allow",
        SITE,
    ),
    kind("link-down", "link down on a port a bond needs"),
    kind("link-slow", "a link slower than its network needs"),
    kind("link-unknown", "link state unknown"),
    kind(
        "lldp-several-neighbours",
        "several LLDP neighbours on one port",
    ),
    refused(
        "management-capable",
        "too few management-capable nodes",
        SITE,
    ),
    refused("management-count", "not three management nodes", SITE),
    kind(
        "management-spread",
        "management nodes not spread over the racks",
    ),
    refused(
        "management-zones",
        "management nodes in too few zones",
        SITE,
    ),
    kind("memory", "less memory than the profile"),
    kind("memory-unknown", "memory size unknown"),
    refused(
        "network-without-ports",
        "a network a profile gives no ports",
        SITE,
    ),
    kind(
        "network-on-slow-port",
        "a network on a port slower than planned",
    ),
    kind("nic-speed-unknown", "port speed unknown"),
    refused(
        "nic-unknown",
        "an annotated port the node does not have",
        "the bond would be built on a port that does not exist, and the install's network setup fails: fix `annotations.networks`",
    ),
    kind("no-neighbour", "no LLDP neighbour on a port"),
    refused(
        "os-disk-missing",
        "no disk fits the install disk",
        INSTALLER_DISK,
    ),
    refused("pool-exhausted", "too few management addresses", SITE),
    kind("ports-missing", "fewer ports than a network needs"),
    refused(
        "profile-missing",
        "no profile for the node's role",
        "a node is rendered against its role's profile: add the profile",
    ),
    kind("stale", "the last discovery failed"),
    refused("storage-range", "a storage range too small", SITE),
    kind(
        "storage-shares-switch",
        "the storage network on another network's switch",
    ),
    kind("switch-mtu", "a switch frame size below the network's MTU"),
    kind("switch-port-shared", "two ports on one switch port"),
    kind("switch-vlan-missing", "a VLAN missing on the switch port"),
    refused(
        "untrusted-text",
        "discovered text with a control or script character",
        "that text reaches install configs and scripts, where it could become a command: correct it",
    ),
];

/// The kind of a code (`None` for a code `check` never makes).
pub(crate) fn kind_of(code: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.code == code)
}

/// What one finding of `code` is about, for a grouped row; the code itself when unknown.
pub(crate) fn title(code: &str) -> &str {
    kind_of(code).map_or(code, |k| k.title)
}

/// Every acknowledgement names a finding `check` makes and that may be acknowledged; the
/// first that does not is an error at its line.
pub(crate) fn validate(inv: &Inventory, src: &Source) -> Result<(), InputError> {
    for (i, node) in inv.nodes.iter().enumerate() {
        for (j, a) in node.annotations.acknowledged.iter().enumerate() {
            let at = path!["nodes", i, "annotations", "acknowledged", j, "finding"];
            match kind_of(&a.finding) {
                None => {
                    let codes: Vec<&str> = KINDS.iter().map(|k| k.code).collect();
                    let hint = crate::words::closest(&a.finding, codes.iter().copied()).map_or_else(
                        || "give a finding's code as `rackplan check --output json` shows it (`code`), e.g. `link-down`".to_string(),
                        |c| format!("did you mean `{c}`?"),
                    );
                    return Err(src.error_at(
                        &at,
                        format!("`{}` is not a finding rackplan makes", a.finding),
                        Some(hint),
                    ));
                }
                Some(Kind {
                    refused: Some(why), ..
                }) => {
                    return Err(src.error_at(
                        &at,
                        format!("`{}` cannot be acknowledged: {why}", a.finding),
                        Some("remove this acknowledgement; `rackplan check` says how to fix the finding".into()),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// An acknowledgement set aside because its last day has passed: its node and itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expired {
    pub(crate) node: String,
    pub(crate) ack: Acknowledged,
}

/// Take the acknowledgements past their last day (`now`, seconds since the epoch) out of
/// the inventory's nodes, so that every later question (does this node meet its profile,
/// does this finding count) sees only the ones that hold.
pub(crate) fn set_aside_expired(inv: &mut Inventory, now: i64) -> Vec<Expired> {
    let mut out = Vec::new();
    for n in &mut inv.nodes {
        let (gone, kept): (Vec<Acknowledged>, Vec<Acknowledged>) =
            std::mem::take(&mut n.annotations.acknowledged)
                .into_iter()
                .partition(|a| a.expires_at().is_some_and(|t| now >= t));
        n.annotations.acknowledged = kept;
        out.extend(gone.into_iter().map(|ack| Expired {
            node: n.id.clone(),
            ack,
        }));
    }
    out
}

/// Whether `a` covers finding `f` (of its node): the same code, and its text holds `match`.
fn covers(a: &Acknowledged, f: &Finding) -> bool {
    a.finding == f.code
        && a.matching
            .as_deref()
            .is_none_or(|m| f.what.contains(m) || f.why.contains(m))
}

/// The acknowledgement of `node` that covers `f`, if any.
pub(crate) fn covering<'a>(node: &'a Node, f: &Finding) -> Option<&'a Acknowledged> {
    node.annotations.acknowledged.iter().find(|a| covers(a, f))
}

/// Mark the findings the nodes' acknowledgements cover, and add a warning for each
/// acknowledgement that covers nothing and each one that expired.
pub(crate) fn apply(findings: &mut Vec<Finding>, inv: &Inventory, expired: &[Expired]) {
    let mut extra = Vec::new();
    for node in &inv.nodes {
        let mut used = vec![false; node.annotations.acknowledged.len()];
        for f in findings.iter_mut().filter(|f| f.node == node.id) {
            if let Some(i) = node
                .annotations
                .acknowledged
                .iter()
                .position(|a| covers(a, f))
            {
                used[i] = true;
                let a = &node.annotations.acknowledged[i];
                f.acknowledged = Some(FindingAck {
                    reason: a.reason.clone(),
                    until: a.until.clone(),
                });
            }
        }
        for (a, _) in node
            .annotations
            .acknowledged
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
        {
            extra.push(Finding::new(
                &node.id,
                Severity::Warning,
                "acknowledgement-unused",
                format!("the acknowledgement of {} matches no finding", shown(a)),
                "an acknowledgement left behind would hide the next finding of that kind",
                "remove it from annotations.acknowledged in nodes.yaml",
            ));
        }
    }
    for e in expired {
        let live = findings
            .iter()
            .filter(|f| f.node == e.node && covers(&e.ack, f))
            .count();
        extra.push(Finding::new(
            &e.node,
            Severity::Warning,
            "acknowledgement-expired",
            format!(
                "the acknowledgement of {} ended on {} ({})",
                shown(&e.ack),
                e.ack.until.as_deref().unwrap_or("?"),
                e.ack.reason
            ),
            if live > 0 {
                format!("its {live} finding(s) count again")
            } else {
                "it matches no finding any more".to_string()
            },
            if live > 0 {
                "fix the finding, or give the acknowledgement a later `until` in nodes.yaml"
            } else {
                "remove it from annotations.acknowledged in nodes.yaml"
            },
        ));
    }
    findings.extend(extra);
}

/// `link-down` or `link-down matching "5c:ff:35:fe:04:b1"`.
fn shown(a: &Acknowledged) -> String {
    match &a.matching {
        Some(m) => format!("{} matching \"{m}\"", a.finding),
        None => a.finding.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code a finding is made with under src/plan (a severity, then the code as a
    /// string literal) has its kind here, so a new finding is never acknowledgeable by
    /// omission, and no kind is left over from a finding that is gone.
    #[test]
    fn every_finding_code_has_its_kind() {
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/plan")];
        let mut made = std::collections::BTreeSet::new();
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                codes_in(&std::fs::read_to_string(path).unwrap(), &mut made);
            }
        }
        assert!(made.len() > 40, "{made:?}");
        let known: std::collections::BTreeSet<String> =
            KINDS.iter().map(|k| k.code.to_string()).collect();
        assert_eq!(made, known);
    }

    /// The codes of findings made in `text`: a severity, then the code as a literal.
    fn codes_in(text: &str, made: &mut std::collections::BTreeSet<String>) {
        let mut rest = text;
        while let Some(i) = rest.find("Severity::") {
            rest = &rest[i + "Severity::".len()..];
            let after = rest.trim_start_matches(char::is_alphabetic);
            let Some(after) = after.strip_prefix(',') else {
                continue;
            };
            if let Some(lit) = after.trim_start().strip_prefix('"') {
                made.insert(lit[..lit.find('"').unwrap()].to_string());
            }
        }
    }

    fn node(acks: &str) -> (Inventory, Source) {
        let text = format!("nodes:\n  - id: SN1\n    annotations:\n      acknowledged:\n{acks}");
        crate::files::yaml::parse(std::path::Path::new("nodes.yaml"), &text).unwrap()
    }

    #[test]
    fn an_install_breaking_or_unknown_finding_is_refused_at_its_line() {
        let (inv, src) = node(
            "        - {finding: link-down, reason: cables tomorrow}\n        - {finding: disk-path-ambiguous, reason: later}\n",
        );
        let e = validate(&inv, &src).unwrap_err().to_string();
        assert!(
            e.contains("`disk-path-ambiguous` cannot be acknowledged"),
            "{e}"
        );
        assert!(e.contains("installer needs this disk's path"), "{e}");
        let (inv, src) = node("        - {finding: link-dwn, reason: x}\n");
        let e = format!(
            "{:?}",
            miette::Report::new(validate(&inv, &src).unwrap_err())
        );
        assert!(e.contains("did you mean `link-down`?"), "{e}");
        let (inv, src) = node("        - {finding: link-down, reason: x}\n");
        validate(&inv, &src).unwrap();
    }

    #[test]
    fn an_acknowledgement_covers_its_code_and_match_until_its_last_day() {
        let (mut inv, _) = node(
            "        - {finding: link-down, match: \"aa:bb\", reason: cables tomorrow, until: 2027-01-20}\n        - {finding: memory, reason: DIMMs ordered}\n",
        );
        let day = |d: &str| crate::clock::parse_at(d).unwrap();
        // On the last day it holds; the day after, it is set aside.
        assert!(set_aside_expired(&mut inv.clone(), day("2027-01-20T23:59:59Z")).is_empty());
        let gone = set_aside_expired(&mut inv, day("2027-01-21"));
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].ack.finding, "link-down");
        let f = |code: &'static str, what: &str| {
            Finding::new("SN1", Severity::Error, code, what, "", "")
        };
        let mut findings = vec![
            f("link-down", "link down on aa:bb, which the vm bond needs"),
            f(
                "memory",
                "256 GiB memory, the compute profile needs 512 GiB",
            ),
        ];
        apply(&mut findings, &inv, &gone);
        assert!(findings[0].acknowledged.is_none(), "expired: counts again");
        assert_eq!(
            findings[1].acknowledged.as_ref().unwrap().reason,
            "DIMMs ordered"
        );
        assert_eq!(findings[2].code, "acknowledgement-expired");
        assert!(
            findings[2].why.contains("1 finding(s) count again"),
            "{:?}",
            findings[2]
        );
        assert!(!super::super::findings::has_errors(&findings[1..2]));
        assert!(super::super::findings::has_errors(&findings));
        // An acknowledgement no finding matches is named.
        let mut none = vec![f("memory", "x")];
        let (inv2, _) = node("        - {finding: link-down, reason: cables}\n");
        apply(&mut none, &inv2, &[]);
        assert_eq!(none[1].code, "acknowledgement-unused");
    }
}
