//! Recording trust-on-first-use pins back into `bmcs.yaml`, keeping the file as people
//! wrote it: the pin is inserted into the BMC's own entry (replacing its
//! `trust_on_first_use: true` line when there is one), comments and order untouched.

/// Insert `pin` into the block of the entry whose `address:` is `address`. Returns the new
/// text, or `None` when the entry is not written in block style (the caller then rewrites
/// the whole file).
pub(crate) fn record(text: &str, address: &str, pin: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let is_addr = |l: &str| {
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        t.strip_prefix("address:").is_some_and(|v| {
            let v = v.split(" #").next().unwrap_or(v);
            v.trim().trim_matches('"').trim_matches('\'') == address
        })
    };
    let start = lines.iter().position(|l| is_addr(l))?;
    let entry_indent = lines[start].len() - lines[start].trim_start().len();
    let key_indent = if lines[start].trim_start().starts_with("- ") {
        entry_indent + 2
    } else {
        entry_indent
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| {
            let ind = l.len() - l.trim_start().len();
            !l.trim().is_empty()
                && (ind < key_indent || (ind == entry_indent && l.trim_start().starts_with("- ")))
        })
        .map_or(lines.len(), |i| start + 1 + i);
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    if let Some(i) =
        (start..end).find(|&i| lines[i].trim_start().starts_with("trust_on_first_use:"))
    {
        let ind = lines[i].len() - lines[i].trim_start().len();
        out[i] = format!(
            "{}pin_sha256: \"{pin}\"  # recorded on first use",
            " ".repeat(ind)
        );
    } else if (start..end).any(|i| lines[i].trim_start().starts_with("tls:")) {
        return None;
    } else {
        out.insert(
            end,
            format!(
                "{}tls: {{pin_sha256: \"{pin}\"}}  # recorded on first use",
                " ".repeat(key_indent)
            ),
        );
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    Some(s)
}

/// The new text of bmcs.yaml with every pin of `recorded` (by entry index) written into its
/// entry, or `None` when nothing changes. Entries written in block style are edited in
/// place, keeping comments and order; otherwise the whole file is rewritten from `file`.
pub(crate) fn write_back(
    text: &str,
    file: &super::config::BmcsFile,
    recorded: &[(usize, String)],
) -> Option<String> {
    let mut out = text.to_string();
    let mut rewrite_all = false;
    let mut whole = file.clone();
    for (i, pin) in recorded {
        let Some(entry) = whole.bmcs.get_mut(*i) else {
            continue;
        };
        match record(&out, &entry.address, pin) {
            Some(t) => out = t,
            None => rewrite_all = true,
        }
        let tls = entry.tls.get_or_insert_with(Default::default);
        tls.pin_sha256 = Some(pin.clone());
        tls.trust_on_first_use = false;
    }
    if rewrite_all {
        out = crate::files::yaml::to_string(&whole);
    }
    (out != text).then_some(out)
}

/// Pins recorded against the entries of `then` (bmcs.yaml as the run read it), moved to
/// the entries of `now` (the file as it is at write time) by address; a BMC removed from
/// the file meanwhile loses its pin.
pub(crate) fn remap(
    then: &super::config::BmcsFile,
    now: &super::config::BmcsFile,
    recorded: Vec<(usize, String)>,
) -> Vec<(usize, String)> {
    recorded
        .into_iter()
        .filter_map(|(i, pin)| {
            let addr = &then.bmcs.get(i)?.address;
            now.bmcs
                .iter()
                .position(|e| e.address == *addr)
                .map(|j| (j, pin))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_into_the_right_entry() {
        let text = "bmcs:\n  - address: https://a:1\n    rack: r1\n  # next\n  - address: https://b:2\n    rack: r2\n";
        let out = record(text, "https://b:2", "aa:bb").unwrap();
        assert_eq!(
            out,
            "bmcs:\n  - address: https://a:1\n    rack: r1\n  # next\n  - address: https://b:2\n    rack: r2\n    tls: {pin_sha256: \"aa:bb\"}  # recorded on first use\n"
        );
    }

    #[test]
    fn replaces_the_first_use_flag() {
        let text = "bmcs:\n- address: https://a:1\n  tls:\n    trust_on_first_use: true\n- address: https://b:2\n";
        let out = record(text, "https://a:1", "cc").unwrap();
        assert!(
            out.contains(
                "  tls:\n    pin_sha256: \"cc\"  # recorded on first use\n- address: https://b:2"
            ),
            "{out}"
        );
    }

    #[test]
    fn flow_style_is_left_to_the_caller() {
        assert!(record("bmcs: [{address: \"https://a:1\"}]\n", "https://a:1", "x").is_none());
    }
}
