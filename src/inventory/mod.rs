//! The inventory: one record per physical server, discovered facts kept apart from what
//! people annotate.
//!
//! `model` is plain serde data with the exact field names of `nodes.yaml`; `store` reads and
//! writes the file (atomically, through `fsio`). Discovery modules (Redfish, SSH) produce
//! records; the merge rules that keep annotations live with the store.

pub mod model;
pub mod store;

pub use model::{
    Annotations, Bmc, Cpu, Disk, Gpu, Inventory, LinkState, Media, Nic, Node, Protocol, Sources,
    Stale,
};

/// The current time as RFC 3339 UTC (`2026-11-29T17:36:59Z`), for `sources` and `stale`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Seconds since the epoch as RFC 3339 UTC (civil-from-days, proleptic Gregorian).
pub fn rfc3339(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
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
