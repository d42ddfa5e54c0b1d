//! Small helpers for the words rackplan shows people, written once: "did you mean" hints,
//! shares as percentages, counts with separators or rounded, hours, a sentence's stop.

/// The candidate closest to `typed` when it is close enough to be a likely typo
/// (Jaro-Winkler above 0.8), for "did you mean ...?" hints.
pub(crate) fn closest<'a>(
    typed: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(typed, c), c))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|b| b.0 > 0.8)
        .map(|b| b.1)
}

/// A share as a percentage with this many decimals: (0.4312, 1) -> "43.1 %".
pub(crate) fn percent(x: f64, decimals: usize) -> String {
    format!("{:.decimals$} %", x * 100.0)
}

/// A share with one decimal: 0.4312 -> "43.1 %".
pub(crate) fn pct(x: f64) -> String {
    percent(x, 1)
}

/// A share with two significant figures: 0.0012 -> "0.12 %".
pub(crate) fn share(p: f64) -> String {
    if p <= 0.0 {
        return "0 %".into();
    }
    let v = p * 100.0;
    let decimals = (1 - v.log10().floor() as i32).clamp(0, 8) as usize;
    format!("{v:.decimals$} %")
}

/// 10000 -> 10,000.
pub(crate) fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count rounded to two significant figures, with thousands separators: 26,000.
pub(crate) fn round_count(x: f64) -> String {
    if !x.is_finite() {
        return "infinity".into();
    }
    let x = x.max(0.0);
    let rounded = if x >= 100.0 {
        let mag = 10f64.powi(x.log10().floor() as i32 - 1);
        (x / mag).round() * mag
    } else {
        x.round()
    };
    group(rounded as u64)
}

/// Hours with two decimals, or "never".
pub(crate) fn hours(h: Option<f64>) -> String {
    h.map_or_else(|| "never".into(), |h| format!("{h:.2}"))
}

/// `s` with a full stop, unless it has one.
pub(crate) fn sentence(s: &str) -> String {
    if s.ends_with('.') {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_word_and_nonsense_finds_none() {
        let words = ["hv-001", "hv-002", "storage"];
        assert_eq!(closest("hv-0001", words.iter().copied()), Some("hv-001"));
        assert_eq!(closest("storgae", words.iter().copied()), Some("storage"));
        assert_eq!(closest("zzz", words.iter().copied()), None);
        assert_eq!(closest("x", []), None);
    }

    #[test]
    fn numbers_read_aloud() {
        assert_eq!(pct(0.4312), "43.1 %");
        assert_eq!(percent(0.5, 0), "50 %");
        assert_eq!(share(0.0012), "0.12 %");
        assert_eq!(share(0.0), "0 %");
        assert_eq!(group(4_100_000), "4,100,000");
        assert_eq!(round_count(26_123.0), "26,000");
        assert_eq!(round_count(f64::INFINITY), "infinity");
        assert_eq!(hours(Some(3.356)), "3.36");
        assert_eq!(hours(None), "never");
        assert_eq!(sentence("done"), "done.");
        assert_eq!(sentence("done."), "done.");
    }
}
