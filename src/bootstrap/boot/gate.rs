//! The safety gate in front of `boot --yes`: a node is booted into the installer only when
//! it is planned (it has an allocation), rendered (its install config exists in the output
//! folder) and has no error finding. `--force` overrides the gate, and the result says so.

use std::path::Path;

use super::targets::Target;
use crate::plan::{Finding, Inputs};

/// Why `target` may not be booted; empty when it may.
pub(crate) fn blockers(
    inputs: &Inputs,
    findings: &[Finding],
    out_dir: &Path,
    target: &Target,
) -> Vec<String> {
    let mut why = Vec::new();
    let Some(a) = inputs.lock.get(&target.node) else {
        why.push("it is not planned (run `rackplan plan`)".to_string());
        return why;
    };
    if !out_dir
        .join("nodes")
        .join(&a.hostname)
        .join("config.yaml")
        .is_file()
    {
        why.push(format!(
            "it has no rendered install config in {} (run `rackplan render`)",
            out_dir.display()
        ));
    }
    let errors = findings
        .iter()
        .filter(|f| f.node == target.node && f.blocks())
        .count();
    if errors > 0 {
        why.push(format!(
            "it has {errors} error finding(s) (see `rackplan check --site DIR`)"
        ));
    }
    why
}

/// One target as the gate judged it: what `--yes` will refuse (nothing is sent to its BMC
/// but the read-only requests that plan it), and what `--force` overrode.
#[derive(Debug, Clone)]
pub(crate) struct Judged {
    pub(crate) target: Target,
    pub(crate) refused: Option<String>,
    pub(crate) forced_past: Vec<String>,
}

/// Every target judged. `install` (a boot into the installer, dry run or not: a dry run
/// shows what `--yes` will do) is gated; an eject and a BIOS write pass.
pub(crate) fn judge(
    inputs: &Inputs,
    out_dir: &Path,
    targets: Vec<Target>,
    install: bool,
    force: bool,
) -> Vec<Judged> {
    let findings = crate::plan::check::check(inputs).findings;
    targets
        .into_iter()
        .map(|t| {
            let why = if install {
                blockers(inputs, &findings, out_dir, &t)
            } else {
                Vec::new()
            };
            let (refused, forced_past) = if why.is_empty() {
                (None, Vec::new())
            } else if force {
                (None, why)
            } else {
                (
                    Some(format!(
                        "not booted: {} (--force boots it anyway)",
                        why.join("; ")
                    )),
                    Vec::new(),
                )
            };
            Judged {
                target: t,
                refused,
                forced_past,
            }
        })
        .collect()
}
