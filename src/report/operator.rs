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
/// transition announced (an event's reason), then its note; one line, for a log file or a
/// pipe.
pub(crate) fn transition_line(t: &Transition) -> String {
    format!(
        "{}  {}  {}  {}",
        t.at,
        super::escape::terminal(&t.request),
        t.reason,
        super::escape::terminal(&t.message)
    )
}

/// A transition for a terminal `width` columns wide: the line wrapped between words, each
/// continuation under the request (after the time), so the times stay a column of their
/// own; a word longer than the line stays whole.
pub(crate) fn transition_lines(t: &Transition, width: usize) -> String {
    let hang = if width >= 60 {
        t.at.chars().count() + 2
    } else {
        4
    };
    let pad = " ".repeat(hang);
    let mut out = String::new();
    // The time, the request and the transition stay together; then the message's words.
    let mut cur = format!(
        "{}  {}  {}",
        t.at,
        super::escape::terminal(&t.request),
        t.reason
    );
    let mut sep = "  ";
    for w in super::wrap::tokens(&super::escape::terminal(&t.message)) {
        if cur.chars().count() + sep.len() + w.chars().count() > width && cur != pad {
            out.push_str(&cur);
            out.push('\n');
            cur.clone_from(&pad);
        } else {
            cur.push_str(sep);
        }
        cur.push_str(&w);
        sep = " ";
    }
    out.push_str(&cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admitted() -> Transition {
        Transition {
            at: "2027-01-01T00:00:00Z".into(),
            request: "fleet-default/paiement-review".into(),
            phase: "Admitted".into(),
            reason: "Admitted".into(),
            message: "admitted: quota 0 vCPU used + 36 requested = 36 of 80 allowed (within); headroom: node and rack failures pass with the request".into(),
        }
    }

    #[test]
    fn a_transition_wraps_between_words_under_the_request() {
        let text = transition_lines(&admitted(), 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(
            text.lines()
                .skip(1)
                .all(|l| l.starts_with(&" ".repeat(22)) && !l[22..].starts_with(' ')),
            "{text}"
        );
        // The words are the one-line form's, in order.
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&text), words(&transition_line(&admitted())));
        insta::assert_snapshot!(text);
    }
}
