//! Civil dates (proleptic Gregorian, UTC) as whole seconds since 1970-01-01: the one place
//! dates are computed, so every report and request reads them the same way.

/// A date or moment that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}`: give a date as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)")]
pub struct BadDate(pub(crate) String);

/// The Julian day number of 1970-01-01.
const EPOCH_JULIAN_DAY: i64 = 2_440_588;

/// A calendar date, when it exists (the `time` crate's range: years -9999 to 9999).
fn date(y: i64, m: u32, d: u32) -> Option<time::Date> {
    let month = time::Month::try_from(u8::try_from(m).ok()?).ok()?;
    time::Date::from_calendar_date(i32::try_from(y).ok()?, month, u8::try_from(d).ok()?).ok()
}

/// A date as days since 1970-01-01 (proleptic Gregorian); `None` for a date that does not
/// exist (30 February) or lies outside years -9999 to 9999.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> Option<i64> {
    date(y, m, d).map(|d| i64::from(d.to_julian_day()) - EPOCH_JULIAN_DAY)
}

/// Days since 1970-01-01 -> (year, month, day), held to years -9999 to 9999 (a moment
/// outside reads as the nearest end of that range).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let (lo, hi) = (
        time::Date::MIN.to_julian_day(),
        time::Date::MAX.to_julian_day(),
    );
    let jd = i32::try_from(
        z.saturating_add(EPOCH_JULIAN_DAY)
            .clamp(i64::from(lo), i64::from(hi)),
    )
    .unwrap_or(hi);
    let d = time::Date::from_julian_day(jd).unwrap_or(time::Date::MAX);
    (
        i64::from(d.year()),
        u32::from(u8::from(d.month())),
        u32::from(d.day()),
    )
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
    let days = days_from_civil(y, m, d).ok_or_else(bad)?;
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
    Ok(days * 86_400 + secs)
}

/// Seconds since the epoch -> `YYYY-MM-DDTHH:MM:SSZ`, or the date alone at midnight.
pub fn format_at(t: i64, date_only: bool) -> String {
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
        assert_eq!(days_from_civil(1970, 1, 1), Some(0));
        assert_eq!(days_from_civil(2000, 3, 1), Some(11_017));
        assert_eq!(days_from_civil(2027, 2, 29), None);
        for z in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), Some(z));
        }
        // Far moments are held to the calendar's range, never a panic.
        assert_eq!(civil_from_days(i64::MAX), (9999, 12, 31));
        assert_eq!(civil_from_days(i64::MIN), (-9999, 1, 1));
        assert!(format_at(i64::MAX / 2, false).starts_with("9999-12-31T"));
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
