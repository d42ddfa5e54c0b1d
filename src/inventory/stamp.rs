//! When a record was discovered: now, and seconds since the epoch, as RFC 3339 UTC.

/// The current time as RFC 3339 UTC (`2026-11-29T17:36:59Z`), for `sources` and `stale`.
pub(crate) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Seconds since the epoch as RFC 3339 UTC.
pub(crate) fn rfc3339(secs: u64) -> String {
    crate::clock::rfc3339(secs)
}

#[cfg(test)]
mod time_tests {
    #[test]
    fn rfc3339_known_points() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_973_819), "2026-11-29T17:36:59Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
