//! Civil dates (proleptic Gregorian, UTC) as whole seconds since 1970-01-01: the one place
//! dates are computed, so every report and request reads them the same way.

/// A date or moment that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: give a date as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)")]
pub struct BadDate(pub(crate) String);

/// A date as days since 1970-01-01 (proleptic Gregorian).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 -> (year, month, day).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A moment in whole seconds since the epoch, from `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS][Z]`.
pub fn parse_at(s: &str) -> Result<i64, BadDate> {
    let bad = || BadDate(s.to_string());
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, ""));
    let mut it = date.split('-');
    let (Some(y), Some(m), Some(d), None) = (it.next(), it.next(), it.next(), it.next()) else {
        return Err(bad());
    };
    let (y, m, d): (i64, u32, u32) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1..=12).contains(&m) || d == 0 || civil_from_days(days_from_civil(y, m, d)) != (y, m, d) {
        return Err(bad());
    }
    let mut secs = 0i64;
    let time = time.trim_end_matches('Z');
    if !time.is_empty() {
        let parts: Vec<&str> = time.split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let limits = [24, 60, 61];
        for (i, p) in parts.iter().enumerate() {
            let v: i64 = p.parse().map_err(|_| bad())?;
            if !(0..limits[i]).contains(&v) {
                return Err(bad());
            }
            secs += v * [3600, 60, 1][i];
        }
    }
    Ok(days_from_civil(y, m, d) * 86_400 + secs)
}

/// Seconds since the epoch -> `YYYY-MM-DDTHH:MM:SSZ`, or the date alone at midnight.
pub(crate) fn format_at(t: i64, date_only: bool) -> String {
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    if date_only && s == 0 {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    }
}
/// Seconds since the epoch as RFC 3339 UTC.
pub(crate) fn rfc3339(secs: u64) -> String {
    format_at(i64::try_from(secs).unwrap_or(i64::MAX / 2), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for z in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(
            format_at(parse_at("2027-02-27").unwrap() + 72 * 3600, false),
            "2027-03-02T00:00:00Z"
        );
        assert_eq!(
            format_at(parse_at("2028-02-28T12:30Z").unwrap() + 24 * 3600, false),
            "2028-02-29T12:30:00Z"
        );
        assert!(parse_at("2027-02-30").is_err());
        assert!(parse_at("2027-13-01").is_err());
        assert!(parse_at("27-1").is_err());
    }
}
