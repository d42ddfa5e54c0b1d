//! The `/dev/disk/by-id` name of a drive, derived from its Redfish identity by udev's rules,
//! so that a server without an operating system still gets an install config.
//!
//! udev (systemd `rules.d/60-persistent-storage.rules`) names whole disks:
//! - NVMe: `nvme-<model>_<serial>` from the controller's sysfs `model` and `serial`, and
//!   since systemd 254 (#26814) also `nvme-<model>_<serial>_<nsid>`. The nsid-less link exists
//!   in every systemd, so it is the path written; the `_1` form is listed beside it.
//! - SATA: `ata-<model>_<serial>` from ATA IDENTIFY (`ata_id`), and `wwn-0x<wwn>` only for a
//!   WWN of NAA type 5.
//! - SAS and RAID logical drives: `scsi-3<naa>` and `wwn-0x<naa>` from VPD page 0x83
//!   (`scsi_id`), i.e. the logical unit's NAA name.
//!
//! Character rules: `ata_id` trims the ends, turns each run of inner blanks into one `_` and
//! every character outside `[0-9A-Za-z#+-.:=@_]` into `_` (`udev_replace_whitespace`,
//! `udev_replace_chars`). NVMe strings keep leading blanks and give different escaped and
//! unescaped links for double blanks or other characters (systemd#27155), so such a model or
//! serial is a doubt, not a name.
//!
//! The bus is the drive's `Protocol`, else the one protocol its controllers support
//! (`SupportedDeviceProtocols`; none is guessed from a controller that supports two). A
//! model the BMC gives as the maker's bare part number (`MZQL27T6HBLA-00A07` with
//! `Manufacturer: Samsung`, where the OS sees `SAMSUNG MZQL27T6HBLA-00A07`) is kept as a
//! `candidate` with that doubt, never as the path (`MAKER_PREFIXES`).
//!
//! What is never guessed: a drive without serial or protocol, a model or serial longer than
//! the Identify field (the BMC did not copy it), a drive behind a RAID controller that is in
//! no volume (Redfish does not say whether the controller passes it through), a drive that
//! is one of several members of a RAID volume (the OS sees the volume), an identifier that is
//! not the logical unit's NAA name (HPE labels the LUN's NAA-6 name `UUID`; a controller's
//! SAS address is NAA type 3). Each gets a doubt saying how to settle it.

use serde_json::Value;

use crate::inventory::DerivedPath;

const BY_ID: &str = "/dev/disk/by-id/";

/// Where a drive sits: its Storage document and the volumes it belongs to.
#[derive(Debug, Default)]
pub(crate) struct Context<'a> {
    pub(crate) storage: Option<&'a Value>,
    pub(crate) volumes: Vec<&'a Value>,
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn doubt(why: impl Into<String>, from: &[&str]) -> DerivedPath {
    DerivedPath {
        doubt: Some(why.into()),
        from: from.iter().map(|s| (*s).to_string()).collect(),
        ..DerivedPath::default()
    }
}

const SETTLE: &str = "run `rackplan discover ssh` once an OS runs, or write the path `ls -l /dev/disk/by-id` shows in the installer's shell as this disk's `path` in nodes.yaml";

/// The drive's bus as Redfish states it: only `Protocol` (with `MediaType` for Dell's
/// `PCIe`), never guessed from the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bus {
    Nvme,
    Sata,
    Sas,
}

fn bus(drive: &Value, cx: &Context<'_>) -> Result<Bus, NoById> {
    let own = text(drive, "Protocol")
        .map(str::trim)
        .filter(|p| !p.is_empty());
    match own.or_else(|| storage_protocol(cx)) {
        Some("NVMe") => Ok(Bus::Nvme),
        Some("PCIe") if text(drive, "MediaType") == Some("SSD") => Ok(Bus::Nvme),
        Some("SATA") => Ok(Bus::Sata),
        Some("SAS") => Ok(Bus::Sas),
        Some(p) if !p.is_empty() => Err(NoById::UnknownProtocol(p.to_string())),
        _ => Err(NoById::NoProtocol),
    }
}

/// The one device protocol the drive's storage controllers support, when the drive gives
/// none: `SupportedDeviceProtocols` of the Storage resource's controllers (a controller
/// that supports NVMe and SATA says nothing about one drive).
fn storage_protocol<'a>(cx: &Context<'a>) -> Option<&'a str> {
    let storage = cx.storage?;
    let mut all: Vec<&str> = storage
        .get("StorageControllers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(std::iter::once(storage))
        .filter_map(|c| c.get("SupportedDeviceProtocols").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    all.sort_unstable();
    all.dedup();
    match all.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// Manufacturers whose drives give the OS a model string that starts with the maker's
/// name (the NVMe Identify Controller and ATA IDENTIFY model fields), while BMCs often
/// report the bare part number with the maker in `Manufacturer`: (manufacturer word, how
/// the bare part number starts, the prefix the OS sees). Sources: udev by-id names as
/// seen on hosts (`nvme-SAMSUNG_MZQL27T6HBLA-00A07_<serial>`,
/// `ata-SAMSUNG_MZ7LH1T9HMLT-00005_<serial>` in the Gigabyte capture's own Model,
/// `nvme-INTEL_SSDPE2KX040T8_<serial>`), and the makers' part-number schemes (Samsung
/// `MZ...`, Intel `SSD...`). An OEM-branded model (`Dell Ent NVMe ...`) starts with neither
/// and is the OS's string as it is.
const MAKER_PREFIXES: [(&str, &str, &str); 2] =
    [("samsung", "MZ", "SAMSUNG "), ("intel", "SSD", "INTEL ")];

/// The prefix the OS shows before a model the BMC gave bare, when the rule above says one
/// is missing.
fn missing_maker_prefix(drive: &Value, model: &str) -> Option<&'static str> {
    let maker = text(drive, "Manufacturer")?.to_ascii_lowercase();
    MAKER_PREFIXES
        .iter()
        .find(|(m, bare, prefix)| {
            maker
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == *m)
                && model.starts_with(bare)
                && !model.to_ascii_uppercase().starts_with(prefix.trim_end())
        })
        .map(|(_, _, prefix)| *prefix)
}

/// Why a drive's by-id name cannot be derived from what the BMC says (each read as the
/// first half of a doubt, followed by what to do).
#[derive(Debug, thiserror::Error)]
enum NoById {
    #[error("the BMC gives protocol `{0}`, for which udev's by-id rules are not known here")]
    UnknownProtocol(String),
    #[error(
        "the BMC gives no Protocol, so NVMe, SATA or SAS (and with it the by-id rule) is unknown"
    )]
    NoProtocol,
    #[error("the BMC gives no {0}")]
    Missing(&'static str),
    #[error("the BMC gives an empty {0}")]
    Empty(&'static str),
    #[error("{0} `{1}` holds non-ASCII characters: not the drive's own Identify string")]
    NonAscii(&'static str, String),
    #[error("{0} `{1}` is longer than the {2} characters a drive reports: the BMC reformatted it")]
    TooLong(&'static str, String, usize),
    #[error("SerialNumber `{0}` is a placeholder")]
    Placeholder(String),
    #[error(
        "{0} `{1}` starts with blanks, which udev keeps in one NVMe link and drops in the other (systemd#27155)"
    )]
    LeadingBlanks(&'static str, String),
    #[error(
        "{0} `{1}` holds padding inside it: the escaped and unescaped NVMe links differ, and the BMC's spacing may not be the drive's"
    )]
    Padding(&'static str, String),
    #[error("{0} `{1}` holds `{2}`, which udev writes differently in its two NVMe links")]
    Escaped(&'static str, String, char),
}

/// A character `udev_replace_chars` keeps.
fn kept(c: char) -> bool {
    c.is_ascii_alphanumeric() || "#+-.:=@_".contains(c)
}

/// `ata_id`'s form of an IDENTIFY string: ends trimmed, blank runs to one `_`, other
/// characters outside the kept set to `_`.
fn ata_form(s: &str) -> String {
    let mut out = String::new();
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push('_');
        }
        out.extend(word.chars().map(|c| if kept(c) { c } else { '_' }));
    }
    out
}

/// A Model or SerialNumber as given, checked against what udev would read from the device.
fn field<'a>(
    drive: &'a Value,
    key: &'static str,
    max: usize,
    nvme: bool,
) -> Result<&'a str, NoById> {
    let Some(raw) = text(drive, key) else {
        return Err(NoById::Missing(key));
    };
    let t = raw.trim_end();
    if t.trim().is_empty() {
        return Err(NoById::Empty(key));
    }
    if !t.is_ascii() {
        return Err(NoById::NonAscii(key, t.trim().to_string()));
    }
    if t.trim().len() > max {
        return Err(NoById::TooLong(key, t.trim().to_string(), max));
    }
    if key == "SerialNumber" && crate::inventory::text::placeholder(t) {
        return Err(NoById::Placeholder(t.trim().to_string()));
    }
    if nvme {
        if t.starts_with(char::is_whitespace) {
            return Err(NoById::LeadingBlanks(key, t.to_string()));
        }
        if t.contains("  ") || t.chars().any(|c| c.is_whitespace() && c != ' ') {
            return Err(NoById::Padding(key, t.to_string()));
        }
        if let Some(c) = t.chars().find(|c| *c != ' ' && !kept(*c)) {
            return Err(NoById::Escaped(key, t.to_string(), c));
        }
    }
    Ok(t)
}

/// A NAA name in lowercase hex, when it is one of a logical unit (type 5, 16 digits, or
/// type 6, 32 digits).
fn lu_naa(raw: &str) -> Option<String> {
    let v = raw.trim().trim_start_matches("0x").to_ascii_lowercase();
    let hex = v.chars().all(|c| c.is_ascii_hexdigit());
    (hex && ((v.len() == 16 && v.starts_with('5')) || (v.len() == 32 && v.starts_with('6'))))
        .then_some(v)
}

fn identifiers(v: &Value) -> Vec<(&str, &str)> {
    v.get("Identifiers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| Some((text(i, "DurableNameFormat")?, text(i, "DurableName")?)))
        .collect()
}

/// Is the volume the drive itself passed through (Dell's `RawDevice`)?
fn raw_device(vol: &Value) -> bool {
    text(vol, "VolumeType") == Some("RawDevice") || text(vol, "RAIDType") == Some("None")
}

fn member_count(vol: &Value) -> usize {
    vol.pointer("/Links/Drives")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
        .max(
            vol.pointer("/Links/Drives@odata.count")
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize,
        )
}

fn name_of(v: &Value) -> String {
    text(v, "Name")
        .or_else(|| text(v, "Id"))
        .unwrap_or("?")
        .trim()
        .to_string()
}

/// The logical drive's name from the Volume's identifiers.
fn from_volume(vol: &Value) -> DerivedPath {
    let ids = identifiers(vol);
    let from = ["Volume.Identifiers.DurableName"];
    if let Some((_, naa)) = ids.iter().find(|(f, _)| *f == "NAA")
        && let Some(v) = lu_naa(naa)
    {
        return DerivedPath {
            path: Some(format!("{BY_ID}scsi-3{v}")),
            also: vec![format!("{BY_ID}wwn-0x{v}")],
            from: from.iter().map(|s| (*s).to_string()).collect(),
            ..DerivedPath::default()
        };
    }
    if let Some((f, val)) = ids.first() {
        let candidate = lu_naa(val).map(|v| format!("{BY_ID}scsi-3{v}"));
        let mut d = doubt(
            format!(
                "the drive is the RAID volume `{}`, whose identifier `{val}` is labelled {f}, not NAA: it may be the logical unit's name, but Redfish cannot prove it; {SETTLE}",
                name_of(vol)
            ),
            &from,
        );
        d.candidate = candidate;
        return d;
    }
    doubt(
        format!(
            "the drive is the RAID volume `{}`, which carries no identifier to name it by; {SETTLE}",
            name_of(vol)
        ),
        &[],
    )
}

/// Does the drive's storage controller build RAID volumes?
fn raid_controller(storage: &Value) -> Option<String> {
    storage
        .get("StorageControllers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| {
            c.get("SupportedRAIDTypes")
                .and_then(Value::as_array)
                .is_some_and(|t| t.iter().any(|x| x.as_str().is_some_and(|s| s != "None")))
        })
        .map(name_of)
}

/// The by-id name of one drive, or why there is none.
pub(crate) fn derive(drive: &Value, cx: &Context<'_>) -> DerivedPath {
    let raid: Vec<&&Value> = cx.volumes.iter().filter(|v| !raw_device(v)).collect();
    match raid.as_slice() {
        [] => {}
        [vol] if member_count(vol) <= 1 => return from_volume(vol),
        [vol] => {
            return doubt(
                format!(
                    "the drive is one of {} members of RAID volume `{}`: the OS sees the volume, not the drive; name the volume's disk in the annotation ({SETTLE})",
                    member_count(vol),
                    name_of(vol)
                ),
                &["Drive.Links.Volumes"],
            );
        }
        _ => {
            return doubt(
                format!("the drive belongs to {} RAID volumes; {SETTLE}", raid.len()),
                &["Drive.Links.Volumes"],
            );
        }
    }
    if cx.volumes.is_empty()
        && let Some(ctrl) = cx.storage.and_then(raid_controller)
    {
        return doubt(
            format!(
                "the drive sits behind RAID controller `{ctrl}` and in no volume: Redfish does not say whether the controller passes it through (then the OS sees it by its own name) or hides it; {SETTLE}"
            ),
            &["Storage.StorageControllers.SupportedRAIDTypes"],
        );
    }
    let bus = match bus(drive, cx) {
        Ok(b) => b,
        Err(why) => return doubt(format!("{why}; {SETTLE}"), &["Drive.Protocol"]),
    };
    let nvme = bus == Bus::Nvme;
    let protocol_fields: &[&str] = match text(drive, "Protocol").map(str::trim) {
        Some("PCIe") => &["Drive.Protocol", "Drive.MediaType"],
        Some(p) if !p.is_empty() => &["Drive.Protocol"],
        _ => &["Storage.StorageControllers.SupportedDeviceProtocols"],
    };
    let mut from: Vec<String> = protocol_fields.iter().map(|s| (*s).to_string()).collect();
    match bus {
        Bus::Nvme | Bus::Sata => {
            let model = field(drive, "Model", 40, nvme);
            let serial = field(drive, "SerialNumber", 20, nvme);
            let (model, serial) = match (model, serial) {
                (Ok(m), Ok(s)) => (m, s),
                (Err(why), _) | (_, Err(why)) => {
                    return doubt(
                        format!("{why}; {SETTLE}"),
                        &["Drive.Model", "Drive.SerialNumber"],
                    );
                }
            };
            from.push("Drive.Model".into());
            from.push("Drive.SerialNumber".into());
            if let Some(prefix) = missing_maker_prefix(drive, model) {
                let full = format!("{prefix}{model}");
                let candidate = if nvme {
                    format!("{BY_ID}nvme-{}_{}", full.replace(' ', "_"), serial)
                } else {
                    format!("{BY_ID}ata-{}_{}", ata_form(&full), ata_form(serial))
                };
                from.push("Drive.Manufacturer".into());
                return DerivedPath {
                    doubt: Some(format!(
                        "the BMC gives Model `{model}` without the `{}` its maker's drives show the OS (the OS's model is likely `{full}`); {SETTLE}",
                        prefix.trim_end()
                    )),
                    candidate: Some(candidate),
                    from,
                    ..DerivedPath::default()
                };
            }
            if nvme {
                let base = format!("nvme-{}_{}", model.replace(' ', "_"), serial);
                DerivedPath {
                    path: Some(format!("{BY_ID}{base}")),
                    also: vec![format!("{BY_ID}{base}_1")],
                    from,
                    ..DerivedPath::default()
                }
            } else {
                let mut also = Vec::new();
                for (f, n) in identifiers(drive) {
                    if f == "NAA"
                        && let Some(v) = lu_naa(n).filter(|v| v.len() == 16)
                    {
                        also.push(format!("{BY_ID}wwn-0x{v}"));
                    }
                }
                DerivedPath {
                    path: Some(format!(
                        "{BY_ID}ata-{}_{}",
                        ata_form(model),
                        ata_form(serial)
                    )),
                    also,
                    from,
                    ..DerivedPath::default()
                }
            }
        }
        Bus::Sas => {
            let ids = identifiers(drive);
            match ids
                .iter()
                .find_map(|(f, n)| (*f == "NAA").then(|| lu_naa(n)).flatten())
            {
                Some(v) => {
                    from.push("Drive.Identifiers.DurableName".into());
                    DerivedPath {
                        path: Some(format!("{BY_ID}scsi-3{v}")),
                        also: vec![format!("{BY_ID}wwn-0x{}", v)],
                        from,
                        ..DerivedPath::default()
                    }
                }
                None => doubt(
                    format!(
                        "a SAS drive is named by its logical unit's NAA name, and the BMC gives none{}; {SETTLE}",
                        if ids.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " (it gives {}, which is not a logical unit's NAA-5/6 name)",
                                ids.iter()
                                    .map(|(f, n)| format!("{f} {n}"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        }
                    ),
                    &["Drive.Identifiers"],
                ),
            }
        }
    }
}

#[cfg(test)]
#[path = "byid_tests.rs"]
mod tests;
