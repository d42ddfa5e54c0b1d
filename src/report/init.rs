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
    for r in &outcome.remaining {
        let _ = writeln!(s, "not fixable by a profile: {r}");
    }
    let _ = writeln!(s, "next:");
    for n in &outcome.next {
        let _ = writeln!(s, "  {n}");
    }
    s
}
