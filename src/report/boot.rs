//! `boot`: per node, the plan read off its BMC (every request with its body and why), what
//! `--yes` refuses, what was done, and whether anything was sent. A dry run prints the same
//! lines the run prints, but for what was done: what `--yes` will do, refusals included.
//! Request paths longer than the terminal break after a `/`, bodies between their fields,
//! so nothing wraps in the middle of a word.

use serde::Serialize;
use serde_json::Value;

use super::grid::{Style, style};
use crate::bootstrap::boot::Action;
use crate::bootstrap::boot::run::NodeResult;

/// `boot --output json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct BootJson<'a> {
    pub(crate) dry_run: bool,
    pub(crate) nodes: &'a [NodeResult],
}

/// A JSON body on one line with a space after each `,` and `:`, so it wraps between fields.
fn spaced(v: &Value) -> String {
    match v {
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), spaced(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Array(a) => format!("[{}]", a.iter().map(spaced).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// `head` then `path`, broken after a `/` wherever the line would pass `width`; each
/// continuation starts with `hang`.
fn path_lines(head: &str, path: &str, hang: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = head.to_string();
    for seg in path.split_inclusive('/') {
        let fits = line.chars().count() + seg.chars().count() <= width;
        if !fits && line != head && line != hang {
            out.push_str(&line);
            out.push('\n');
            line = hang.to_string();
        }
        line.push_str(seg);
    }
    out.push_str(&line);
    out
}

pub(crate) fn boot_text(results: &[NodeResult], dry_run: bool) -> String {
    let width = match style() {
        Style::Boxed(w) => usize::from(w),
        Style::Plain => usize::MAX,
    };
    let mut out = String::new();
    for r in results {
        out.push_str(&format!("{} (BMC {})\n", r.node, r.bmc));
        if let Some(p) = &r.plan {
            let what = if p.action == Action::Bios {
                "BIOS settings"
            } else {
                "virtual media"
            };
            out.push_str(&format!(
                "  system {}, {what} {}, power {}\n",
                p.system, p.slot, p.power_state
            ));
            for (i, st) in p.steps.iter().enumerate() {
                let tag = st
                    .if_match
                    .as_ref()
                    .map(|t| format!(" [If-Match {t}]"))
                    .unwrap_or_default();
                let head = format!("  {}. {} ", i + 1, st.method);
                out.push_str(&path_lines(&head, &st.path, "       ", width));
                out.push_str(&tag);
                out.push('\n');
                if let Some(b) = &st.body {
                    out.push_str(&format!("     body {}\n", spaced(b)));
                }
                out.push_str(&format!("     {}\n", st.why));
            }
            for n in &p.notes {
                out.push_str(&format!("  note: {n}\n"));
            }
            if let Some(n) = &p.nothing_to_do {
                out.push_str(&format!("  nothing to do: {n}\n"));
            }
        }
        for f in &r.forced_past {
            out.push_str(&format!("  gate overridden by --force: {f}\n"));
        }
        if let Some(why) = &r.refused {
            out.push_str(&format!("  refused, nothing is sent: {why}\n"));
        }
        for d in &r.done {
            out.push_str(&format!("  done: {d}\n"));
        }
        if let Some(e) = r.error.as_ref().filter(|e| r.refused.as_ref() != Some(*e)) {
            out.push_str(&format!("  FAILED: {e}\n"));
        }
    }
    if dry_run {
        let reads: usize = results.iter().map(|r| r.requests).sum();
        let planned = |r: &&NodeResult| r.plan.is_some() && r.error.is_none();
        let refused = results.iter().filter(|r| r.refused.is_some()).count();
        let idle = results
            .iter()
            .filter(planned)
            .filter(|r| r.refused.is_none())
            .filter(|r| r.plan.as_ref().is_some_and(|p| p.steps.is_empty()))
            .count();
        let act = results
            .iter()
            .filter(planned)
            .filter(|r| r.refused.is_none())
            .count()
            - idle;
        let mut will = vec![format!("carries out the plan of {act} node(s)")];
        if refused > 0 {
            will.push(format!("refuses {refused}"));
        }
        if idle > 0 {
            will.push(format!("has nothing to do at {idle}"));
        }
        out.push_str(&format!(
            "dry run: {reads} read-only request(s) (GETs, and a session login and logout where the BMC needs one) read the plan; nothing was changed. --yes {}\n",
            will.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_path_breaks_after_a_slash_and_a_body_between_fields() {
        let p =
            "/redfish/v1/Systems/System.Embedded.1/VirtualMedia/1/Actions/VirtualMedia.InsertMedia";
        let text = path_lines("  1. POST ", p, "       ", 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert_eq!(text.replace("\n       ", ""), format!("  1. POST {p}"));
        assert_eq!(
            path_lines("  1. GET ", "/redfish/v1", "  ", 80),
            "  1. GET /redfish/v1"
        );
        assert_eq!(
            spaced(&serde_json::json!({"Boot": {"A": "Once", "B": true}, "L": [1, 2]})),
            r#"{"Boot": {"A": "Once", "B": true}, "L": [1, 2]}"#
        );
    }
}
