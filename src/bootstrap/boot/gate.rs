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

/// What the gate decided: targets to run, what `--force` overrode (by node name), and
/// the results of the targets it stopped.
pub(crate) type Split = (
    Vec<Target>,
    Vec<(String, Vec<String>)>,
    Vec<super::run::NodeResult>,
);

/// The targets split by the gate: those to run (with what `force` overrode, by name) and
/// the results of those stopped. A dry run and an eject pass the gate: neither installs.
pub(crate) fn split(
    inputs: &Inputs,
    out_dir: &Path,
    targets: Vec<Target>,
    install: bool,
    force: bool,
) -> Split {
    let findings = crate::plan::check::check(inputs).findings;
    let mut go = Vec::new();
    let mut forced = Vec::new();
    let mut stopped = Vec::new();
    for t in targets {
        let why = blockers(inputs, &findings, out_dir, &t);
        if why.is_empty() || !install {
            go.push(t);
        } else if force {
            forced.push((t.name.clone(), why));
            go.push(t);
        } else {
            stopped.push(super::run::refused(&t, &why));
        }
    }
    (go, forced, stopped)
}
