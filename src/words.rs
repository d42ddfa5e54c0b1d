//! Small helpers for the words rackplan shows people, written once.

/// The candidate closest to `typed` when it is close enough to be a likely typo
/// (Jaro-Winkler above 0.8), for "did you mean ...?" hints.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(typed, c), c))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|b| b.0 > 0.8)
        .map(|b| b.1)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_typo_finds_its_word_and_nonsense_finds_none() {
        let words = ["hv-001", "hv-002", "storage"];
        assert_eq!(closest("hv-0001", words.iter().copied()), Some("hv-001"));
        assert_eq!(closest("storgae", words.iter().copied()), Some("storage"));
        assert_eq!(closest("zzz", words.iter().copied()), None);
        assert_eq!(closest("x", []), None);
    }
}
