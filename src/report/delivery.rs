//! A delivery prediction in words: the time to Ready against the target, the critical
//! path as a table, the pre-flight as sentences. `admit` prints one; the review's
//! delivery section (`findings/delivery.rs`) lays out one per shape.

use super::grid::table;
use crate::simulate::delivery::{DeliveryAnswer, Prediction, Preflight, Severity};

/// `45 s`, `6 min 44 s`, `1 h 5 min`.
pub(crate) fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 if s.is_multiple_of(60) => format!("{} min", s / 60),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// `6:44`: minutes and seconds since admission.
fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

/// `6 min 44 s, within`, `never`.
pub(crate) fn verdict(p: &Prediction) -> String {
    match p.total_s {
        Some(t) => format!(
            "{}, {}",
            duration(t),
            if p.within_target { "within" } else { "past" }
        ),
        None => "never".into(),
    }
}

/// `4 min 10 s to 11 min 2 s`, `4 min 10 s to never`.
pub(crate) fn range(p: &Prediction) -> String {
    let end = |x: Option<f64>| x.map_or_else(|| "never".to_string(), duration);
    format!("{} to {}", end(p.low_s), end(p.high_s))
}

/// The lines that open a prediction: the answer against the target, then the range.
pub(crate) fn headline(p: &Prediction) -> Vec<String> {
    let mut out = match (p.total_s, &p.never) {
        (Some(t), _) => vec![format!(
            "ready {} after admission: {} the {} target [{}]",
            duration(t),
            if p.within_target { "within" } else { "past" },
            duration(p.target_s),
            p.target_from
        )],
        (None, why) => vec![format!(
            "never ready: {}",
            why.as_deref().unwrap_or("the model finds no end")
        )],
    };
    if p.total_s.is_some() {
        out.push(format!(
            "range {} (every constant at the low, then the high end of its range)",
            range(p)
        ));
    }
    let defaults: Vec<&str> = p
        .inputs
        .iter()
        .filter(|i| i.from.starts_with("default"))
        .map(|i| i.input.as_str())
        .collect();
    if !defaults.is_empty() {
        out.push(format!(
            "defaults for: {} (--output json gives every input with its source)",
            defaults.join(", ")
        ));
    }
    if let Some(m) = &p.measured {
        out.push(m.clone());
    }
    out
}

/// The critical path: step (and machine), when, and the source of its duration.
pub(crate) fn path_rows(p: &Prediction) -> Vec<Vec<String>> {
    p.critical_path
        .iter()
        .map(|s| {
            vec![
                match &s.machine {
                    Some(m) => format!("{} ({m})", s.what),
                    None => s.what.clone(),
                },
                format!("{}-{}", clock(s.start_s), clock(s.end_s)),
                s.source.clone(),
            ]
        })
        .collect()
}

pub(crate) const PATH_HEAD: [&str; 3] = ["step", "when", "from"];

/// `blocks`, `delays`, `risk`.
pub(crate) fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Blocks => "blocks",
        Severity::Delays => "delays",
        Severity::Risk => "risk",
    }
}

/// The pre-flight as sentences: each stall with its weight and source.
pub(crate) fn preflight_lines(f: &Preflight) -> Vec<String> {
    f.stalls
        .iter()
        .map(|s| format!("{}: {} [{}].", severity(s.severity), s.message, s.source))
        .collect()
}

/// `admit`'s delivery block.
pub(crate) fn admit_block(d: &DeliveryAnswer) -> String {
    let p = &d.prediction;
    let mut s = String::new();
    for (i, l) in headline(p).iter().enumerate() {
        s.push_str(if i == 0 { "delivery  " } else { "          " });
        s.push_str(l);
        s.push('\n');
    }
    if !p.critical_path.is_empty() {
        let mut t = table(&PATH_HEAD);
        for r in path_rows(p) {
            t.add_row(r);
        }
        s.push_str(&format!("critical path\n{t}\n"));
    }
    s.push_str("pre-flight\n");
    for l in preflight_lines(&d.preflight) {
        s.push_str(&format!("  - {l}\n"));
    }
    for n in &d.preflight.not_checked {
        s.push_str(&format!("  not checked: {n}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(45.0), "45 s");
        assert_eq!(duration(900.0), "15 min");
        assert_eq!(duration(404.4), "6 min 44 s");
        assert_eq!(duration(3900.0), "1 h 5 min");
        assert_eq!(clock(404.0), "6:44");
        assert_eq!(clock(5.0), "0:05");
    }
}
