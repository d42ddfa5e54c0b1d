//! `rackplan init`: the files written and kept, the roles found, and what to do next.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::profile::Role;
use crate::scaffold::Outcome;

pub(crate) fn text(outcome: &Outcome) -> String {
    let mut s = String::new();
    for w in &outcome.written {
        let _ = writeln!(s, "wrote {w}");
    }
    for k in &outcome.kept {
        let _ = writeln!(s, "kept  {k} (exists)");
    }
    if !outcome.roles.is_empty() {
        let mut count = BTreeMap::<Role, usize>::new();
        for r in outcome.roles.values() {
            *count.entry(*r).or_default() += 1;
        }
        let _ = writeln!(
            s,
            "roles: {}",
            count
                .iter()
                .map(|(r, n)| format!("{n} {r}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !outcome.role_gaps.is_empty() {
        let nodes = std::path::Path::new(&outcome.dir).join("nodes.yaml");
        let _ = writeln!(
            s,
            "Harvester needs 3 management nodes, and these nodes could not be made one:"
        );
        for g in &outcome.role_gaps {
            let _ = writeln!(s, "  {g}");
        }
        let _ = writeln!(
            s,
            "choose them yourself: set `annotations.role: management` (or compute, witness) on a node in {}, then run `rackplan init {} --from {}` again; `check` holds each node to its role's profile",
            nodes.display(),
            outcome.dir,
            nodes.display()
        );
    }
    for r in &outcome.remaining {
        let _ = writeln!(s, "not fixable by a profile: {r}");
    }
    if !outcome.remaining.is_empty() {
        let _ = writeln!(
            s,
            "what is only temporary (a cable not in yet) can be acknowledged per node in nodes.yaml, `annotations: {{acknowledged: [{{finding: link-down, reason: cables on Tuesday, until: 2027-01-20}}]}}`: `check` shows it as acknowledged and plan and render go on"
        );
    }
    let _ = writeln!(s, "next:");
    for n in &outcome.next {
        let _ = writeln!(s, "  {n}");
    }
    s
}
