//! The device paths an install config names: `install.device` and `install.data_disk`.
//!
//! The installer resolves them on the live ISO (harvester-installer `checkDevice`,
//! pkg/console/validator.go): a path that does not exist stops the install before anything
//! is written, a path that exists but names another disk installs there. A path is taken from
//! the person's annotation, else the OS's own view (`discover ssh`), else the name derived
//! from the BMC's drive identity (udev's rules; see `discover::redfish::byid`). An annotation
//! must be an absolute `/dev/` path of a disk in the node's inventory; a disk the profile
//! uses that cannot be named is an error that says why and how to settle it.
//!
//! With `skipchecks` the installer never checks the data disk: `harv-install` runs
//! `mkfs.ext4 -F` on it after the OS disk was written, so a derived data disk (not seen by
//! the OS, not confirmed by a person) is refused together with `skip_preflight_checks`.

use super::findings::{Finding, Severity};
use crate::inventory::{Disk, Node, PathOrigin};
use crate::profile::{Profile, Role, select_disks};

fn label(d: &Disk) -> String {
    let mut s = d.id.clone();
    let extra: Vec<&str> = [d.model.as_deref(), d.serial.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    if !extra.is_empty() {
        s.push_str(&format!(" ({})", extra.join(" ")));
    }
    s
}

/// Findings about one annotation (`install_device` or `data_disk`).
fn annotation(node: &Node, key: &str, value: &str) -> Option<Finding> {
    let id = node.id.as_str();
    let known: Vec<&str> = node.disks.iter().flat_map(Disk::known_paths).collect();
    if known.contains(&value) {
        return None;
    }
    let by_id = node.disks.iter().find(|d| d.id == value);
    let fix = match by_id.and_then(Disk::device_path) {
        Some((p, _)) => format!("set `annotations.{key}: {p}` (the path of disk `{value}`)"),
        None if known.is_empty() => format!(
            "run `rackplan discover ssh` so the OS's disk paths are known, then set `annotations.{key}` to one of them"
        ),
        None => format!(
            "set `annotations.{key}` to one of: {} (or run `rackplan discover ssh` to learn the OS's paths)",
            known.join(", ")
        ),
    };
    if !value.starts_with("/dev/") || value.contains("/../") || value.ends_with("/..") {
        return Some(Finding::new(
            id,
            Severity::Error,
            "disk-annotation-invalid",
            format!("annotations.{key} `{value}` is not an absolute /dev/ path"),
            if by_id.is_some() {
                "that is the BMC's id of a disk; the installer needs the device path Linux gives it"
            } else {
                "the installer opens the path as given; anything but a /dev/ path fails the install"
            },
            fix,
        ));
    }
    Some(Finding::new(
        id,
        Severity::Error,
        "disk-annotation-unknown",
        format!("annotations.{key} {value} is not in this node's inventory"),
        "no disk of this node is known by that path, so nothing says it is the disk the profile means; a path that exists but names another disk is overwritten",
        fix,
    ))
}

/// Why a disk has no path: the derivation's doubt, or no data at all.
fn unnamed(node: &Node, d: &Disk, what: &str, key: &str) -> Finding {
    let id = node.id.as_str();
    match d.derived.as_ref().and_then(|x| x.doubt.as_deref()) {
        Some(doubt) => {
            let likely = d
                .derived
                .as_ref()
                .and_then(|x| x.candidate.as_deref())
                .map(|c| {
                    format!("; or, once confirmed, set `annotations.{key}: {c}` (the likely name)")
                })
                .unwrap_or_default();
            Finding::new(
                id,
                Severity::Error,
                "disk-path-ambiguous",
                format!("{what} {} cannot be named from the BMC's data", label(d)),
                doubt.to_string(),
                format!(
                    "run `rackplan discover ssh` once an OS runs, or write the path the installer's shell shows (`ls -l /dev/disk/by-id`) as this disk's `path` in nodes.yaml{likely}"
                ),
            )
        }
        None => Finding::new(
            id,
            Severity::Error,
            "disk-path-unknown",
            format!("{what} {} has no OS device path", label(d)),
            "the install config needs a stable /dev/disk/by-id path; neither the OS nor the BMC gave one",
            format!(
                "run `rackplan discover redfish` or `rackplan discover ssh`, or set `annotations.{key}`"
            ),
        ),
    }
}

/// Where the OS and the BMC name a disk differently: the OS wins, and people learn that the
/// derivation did not hold for this drive.
fn disagreement(node: &Node, d: &Disk) -> Option<Finding> {
    let os = d.path.as_deref()?;
    let derived = d.derived.as_ref()?;
    let want = derived.path.as_deref()?;
    let family = |p: &str| {
        p.rsplit('/')
            .next()
            .and_then(|n| n.split(['-', '.']).next())
            .map(str::to_string)
    };
    if os == want || derived.also.iter().any(|a| a == os) || family(os) != family(want) {
        return None;
    }
    Some(Finding::new(
        &node.id,
        Severity::Warning,
        "disk-path-disagrees",
        format!(
            "disk {}: the OS names it {os}, the BMC's data gives {want}",
            label(d)
        ),
        "the OS's own name is used; the BMC reports this drive's model or serial differently from the drive itself, so paths derived for other nodes of this model may not exist",
        "run `rackplan discover ssh` on the other nodes of this model, or set their annotations from what the OS shows",
    ))
}

/// Every device-path finding of one node held against its profile.
pub(crate) fn disk_paths(node: &Node, p: &Profile, skipchecks: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let ann = &node.annotations;
    for (key, value) in [
        ("install_device", ann.install_device.as_deref()),
        ("data_disk", ann.data_disk.as_deref()),
    ] {
        if let Some(v) = value {
            out.extend(annotation(node, key, v));
        }
    }
    out.extend(node.disks.iter().filter_map(|d| disagreement(node, d)));
    let disks = select_disks(node, p);
    if ann.install_device.is_none()
        && let Some(d) = disks.os.map(|i| &node.disks[i])
        && d.device_path().is_none()
    {
        out.push(unnamed(node, d, "install disk", "install_device"));
    }
    if p.role == Role::Witness || ann.data_disk.is_some() {
        return out;
    }
    if let Some(d) = disks.data.first().map(|&i| &node.disks[i]) {
        match d.device_path() {
            None => out.push(unnamed(node, d, "data disk", "data_disk")),
            Some((path, PathOrigin::Derived)) if skipchecks => out.push(Finding::new(
                &node.id,
                Severity::Error,
                "derived-data-disk-skipchecks",
                format!(
                    "data disk {} would be rendered as {path}, derived from the BMC's data, while site.yaml sets `harvester.skip_preflight_checks: true`",
                    label(d)
                ),
                "with skipchecks the installer never checks the data disk: a path that does not exist aborts the install after the OS disk was overwritten, and one that names another disk is formatted",
                "set `skip_preflight_checks: false`, or confirm the path: run `rackplan discover ssh`, or set `annotations.data_disk` to it once you have seen it in the installer's shell",
            )),
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{DerivedPath, Disk};
    use crate::profile::{ByteSize, CpuSpec, DiskSpec, MemorySpec};

    fn profile() -> Profile {
        Profile {
            role: Role::Management,
            description: String::new(),
            cpu: CpuSpec {
                min_cores: 1,
                min_threads: None,
            },
            memory: MemorySpec { min_gib: 1.0 },
            os_disk: DiskSpec {
                min_size: ByteSize(1),
                protocol: None,
            },
            data_disks: None,
            networks: Vec::new(),
            bios: Default::default(),
            gpus: None,
        }
    }

    const LIKELY: &str = "/dev/disk/by-id/scsi-3600508b1001c9f462df9151c6f566a7a";

    fn hpe() -> Node {
        Node {
            id: "n".into(),
            disks: vec![Disk {
                id: "0".into(),
                capacity_bytes: Some(960_197_124_096),
                derived: Some(DerivedPath {
                    doubt: Some("labelled UUID, not NAA".into()),
                    candidate: Some(LIKELY.into()),
                    ..DerivedPath::default()
                }),
                ..Disk::default()
            }],
            ..Node::default()
        }
    }

    #[test]
    fn a_doubt_is_an_error_until_a_person_confirms_the_likely_name() {
        let f = disk_paths(&hpe(), &profile(), false);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].code, "disk-path-ambiguous");
        assert!(f[0].fix.contains(LIKELY), "{}", f[0].fix);
        let mut confirmed = hpe();
        confirmed.annotations.install_device = Some(LIKELY.into());
        assert_eq!(disk_paths(&confirmed, &profile(), false), Vec::new());
        let mut other = hpe();
        other.annotations.install_device = Some("/dev/disk/by-id/wwn-0x5000".into());
        let f = disk_paths(&other, &profile(), false);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, "disk-annotation-unknown");
        assert!(f[0].fix.contains(LIKELY));
    }
}
