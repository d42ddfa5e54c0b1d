//! `rackplan operator`: the start banner (on standard error) and one line per transition.

use crate::operator::{ServiceOptions, Transition};

pub(crate) fn banner(o: &ServiceOptions) -> String {
    let s = &o.settings;
    format!(
        "rackplan operator: requests in namespace {}, shapes {} from {}, quotas from {}{}; metrics on http://{}/metrics; {}{}",
        s.namespace,
        s.catalogue.names(),
        s.catalogue.dir.display(),
        s.scenario.display(),
        s.quotas
            .as_deref()
            .map(|q| format!(" and ConfigMap {}/{q}", s.namespace))
            .unwrap_or_default(),
        o.listen,
        if o.lease.is_some() {
            format!(
                "leader election on Lease {}/rackplan-operator as {}",
                s.namespace, s.identity
            )
        } else {
            "no leader election".to_string()
        },
        if s.dry_run {
            "; DRY RUN: status only"
        } else {
            ""
        },
    )
}

/// `2027-01-01T00:00:00Z  team-paiement/ci-a  Admitted  admitted: quota ...`: the
/// transition announced (an event's reason), then its note.
pub(crate) fn transition_line(t: &Transition) -> String {
    format!(
        "{}  {}  {}  {}",
        t.at,
        super::escape::terminal(&t.request),
        t.reason,
        super::escape::terminal(&t.message)
    )
}
