//! Untrusted text as a person reads it in a status, an event or a log line.

/// Text a person reads in a status or an event: shown as `"..."` with escapes, at most
/// 60 characters of it.
pub(crate) fn shown(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(60)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if s.chars().count() > 60 {
        out.push_str("...");
    }
    out
}
