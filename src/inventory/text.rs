//! Text a BMC or host said that must never reach a config, an iPXE script or a comment:
//! control characters (a newline ends an iPXE command or a YAML comment) and iPXE's and the
//! shell's metacharacters. Discovery warns when it stores such text; `check` refuses it.

use super::model::Node;

/// A character that could turn into a command or break a file.
pub(crate) fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '$' | '{' | '}' | '\\' | '|' | '&' | ';' | '`' | '"')
}

/// `v` safe to show, and nothing in it hidden: at most 60 of its characters, each one
/// outside printable ASCII written as a visible mark (`<U+200B>`), so a control character,
/// a zero-width or bidi-control character and a look-alike letter (a Cyrillic `а` in
/// `st-а`) are all seen for what they are; `...` when it was cut. Names a switch or a BMC
/// sends (system names, port ids, serials) are ASCII in practice, so marks are rare; where
/// one shows, the name is not the ASCII one it resembles.
pub(crate) fn shown(v: &str) -> String {
    let mut out = String::with_capacity(v.len().min(64));
    for c in v.chars().take(60) {
        if c == ' ' || c.is_ascii_graphic() {
            out.push(c);
        } else {
            out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        }
    }
    if v.chars().nth(60).is_some() {
        out.push_str("...");
    }
    out
}

/// Every discovered string of a node that holds an unsafe character, by field name, with
/// the value shown safely (control characters replaced, at most 60 characters).
pub(crate) fn untrusted_fields(node: &Node) -> Vec<(String, String)> {
    let mut fields: Vec<(String, &str)> = vec![("id".into(), node.id.as_str())];
    fn opt<'a>(name: &str, v: Option<&'a String>) -> Option<(String, &'a str)> {
        v.map(|x| (name.to_string(), x.as_str()))
    }
    fields.extend(opt("serial", node.serial.as_ref()));
    fields.extend(opt("manufacturer", node.manufacturer.as_ref()));
    fields.extend(opt("model", node.model.as_ref()));
    if let Some(b) = &node.bmc {
        fields.push(("bmc.address".into(), b.address.as_str()));
        fields.extend(opt("bmc.vendor", b.vendor.as_ref()));
        fields.extend(opt("bmc.firmware", b.firmware.as_ref()));
    }
    if let Some(c) = &node.cpu {
        fields.extend(opt("cpu.model", c.model.as_ref()));
    }
    for (i, d) in node.disks.iter().enumerate() {
        fields.push((format!("disks[{i}].id"), d.id.as_str()));
        fields.extend(opt(&format!("disks[{i}].path"), d.path.as_ref()));
        fields.extend(opt(&format!("disks[{i}].model"), d.model.as_ref()));
        fields.extend(opt(&format!("disks[{i}].serial"), d.serial.as_ref()));
        if let Some(x) = &d.derived {
            fields.extend(opt(&format!("disks[{i}].derived.path"), x.path.as_ref()));
        }
    }
    for (i, n) in node.nics.iter().enumerate() {
        fields.push((format!("nics[{i}].mac"), n.mac.as_str()));
        fields.extend(opt(&format!("nics[{i}].name"), n.name.as_ref()));
        fields.extend(opt(&format!("nics[{i}].adapter"), n.adapter.as_ref()));
        if let Some(l) = &n.lldp {
            fields.extend(opt(&format!("nics[{i}].lldp.switch"), l.switch.as_ref()));
            fields.extend(opt(
                &format!("nics[{i}].lldp.chassis_id"),
                l.chassis_id.as_ref(),
            ));
            fields.extend(opt(&format!("nics[{i}].lldp.port"), l.port.as_ref()));
            fields.extend(opt(
                &format!("nics[{i}].lldp.port_description"),
                l.port_description.as_ref(),
            ));
            for (k, o) in l.others.iter().enumerate() {
                let at = |f: &str| format!("nics[{i}].lldp.others[{k}].{f}");
                fields.extend(opt(&at("switch"), o.switch.as_ref()));
                fields.extend(opt(&at("chassis_id"), o.chassis_id.as_ref()));
                fields.extend(opt(&at("port"), o.port.as_ref()));
            }
        }
    }
    for (i, g) in node.gpus.iter().enumerate() {
        fields.extend(opt(&format!("gpus[{i}].model"), g.model.as_ref()));
        fields.extend(opt(
            &format!("gpus[{i}].manufacturer"),
            g.manufacturer.as_ref(),
        ));
    }
    fields
        .into_iter()
        .filter(|(_, v)| v.chars().any(unsafe_char))
        .map(|(field, v)| (field, shown(v)))
        .collect()
}

/// Serials that firmware writes when the vendor wrote none (DMTF SMBIOS defaults and the
/// common OEM ones), compared without case.
const PLACEHOLDER_SERIALS: &[&str] = &[
    "to be filled by o.e.m.",
    "to be filled by oem",
    "default string",
    "system serial number",
    "chassis serial number",
    "not specified",
    "not applicable",
    "n/a",
    "na",
    "none",
    "null",
    "unknown",
    "invalid",
    "serial",
    "serialnumber",
    "0123456789",
    "123456789",
    "1234567890",
];

/// A serial that identifies nothing: empty, all one character, dots, or a firmware
/// placeholder. Such a serial never identifies a node.
pub(crate) fn placeholder(serial: &str) -> bool {
    let t = serial.trim();
    let lower = t.to_ascii_lowercase();
    t.is_empty()
        || t.chars().all(|c| c == t.chars().next().unwrap_or('0'))
        || t.chars().all(|c| c == '.' || c == ' ' || c == '-')
        || PLACEHOLDER_SERIALS.contains(&lower.as_str())
        || t.starts_with("01234567890123456789")
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn hidden_and_look_alike_characters_are_shown_as_marks() {
        assert_eq!(shown("leaf-a Eth1/7"), "leaf-a Eth1/7");
        // A zero-width space, a Cyrillic `а`, a right-to-left override, an escape.
        assert_eq!(shown("st-a\u{200b}"), "st-a<U+200B>");
        assert_eq!(shown("st-\u{0430}"), "st-<U+0430>");
        assert_eq!(shown("a\u{202e}b\u{1b}[2J"), "a<U+202E>b<U+001B>[2J");
        let long = "x".repeat(61);
        assert_eq!(shown(&long), format!("{}...", "x".repeat(60)));
    }
}
