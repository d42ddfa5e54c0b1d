//! `boot`: per node, the plan read off its BMC (every request with why), what was done, and
//! whether anything was sent.

use serde::Serialize;

use crate::bootstrap::boot::run::NodeResult;

/// `boot --output json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct BootJson<'a> {
    pub(crate) dry_run: bool,
    pub(crate) nodes: &'a [NodeResult],
}

pub(crate) fn boot_text(results: &[NodeResult], dry_run: bool) -> String {
    let mut out = String::new();
    for r in results {
        out.push_str(&format!("{} (BMC {})\n", r.node, r.bmc));
        if let Some(p) = &r.plan {
            out.push_str(&format!(
                "  system {}, virtual media {}, power {}\n",
                p.system, p.slot, p.power_state
            ));
            for st in &p.steps {
                let body = st
                    .body
                    .as_ref()
                    .map(|b| format!(" {b}"))
                    .unwrap_or_default();
                let tag = st
                    .if_match
                    .as_ref()
                    .map(|t| format!(" [If-Match {t}]"))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "  {} {}{body}{tag}\n      {}\n",
                    st.method, st.path, st.why
                ));
            }
            for n in &p.notes {
                out.push_str(&format!("  note: {n}\n"));
            }
        }
        for f in &r.forced_past {
            out.push_str(&format!("  gate overridden by --force: {f}\n"));
        }
        for d in &r.done {
            out.push_str(&format!("  done: {d}\n"));
        }
        if let Some(e) = &r.error {
            out.push_str(&format!("  FAILED: {e}\n"));
        }
    }
    if dry_run {
        let reads: usize = results.iter().map(|r| r.requests).sum();
        out.push_str(&format!(
            "dry run: {reads} read-only request(s) (GETs, and a session login and logout where the BMC needs one) read the plan; nothing was changed. Add --yes to carry it out\n"
        ));
    }
    out
}
