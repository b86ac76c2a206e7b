//! Instants as seconds since 1970 (UTC) and back, read and written with `jiff`: a question's
//! creation date against a window (`score --created-after`), the GitHub search's creation-date
//! slices (`created:A..B`), a review's `reviewed_at`, the times an API writes. A calendar day
//! alone is its midnight UTC; a time without an offset is UTC (GitHub writes UTC); a time with
//! an offset is that instant.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;

/// `YYYY-MM-DD` (its midnight UTC), `YYYY-MM-DDTHH:MM[:SS[.fff]]` (UTC), or either followed by
/// `Z` or an offset (`+02:00`); fractional seconds are dropped. `None` for anything else.
pub fn parse_utc(s: &str) -> Option<i64> {
    let s = s.trim();
    // A year of four digits: jiff also reads a signed six-digit year (`+002024`), which no
    // record of ours writes.
    if !s
        .get(..4)
        .is_some_and(|y| y.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    if let Ok(t) = s.parse::<Timestamp>() {
        return Some(t.as_second());
    }
    let civil = match s.parse::<DateTime>() {
        Ok(dt) => dt,
        Err(_) => s
            .parse::<Date>()
            .ok()?
            .to_datetime(jiff::civil::Time::midnight()),
    };
    Some(TimeZone::UTC.to_timestamp(civil).ok()?.as_second())
}

/// `YYYY-MM-DDTHH:MM:SSZ`; seconds out of jiff's range (before year −9999 or after 9999) are
/// clamped to it.
pub fn format_utc(secs: i64) -> String {
    let t = Timestamp::from_second(secs).unwrap_or(if secs < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    });
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_round_trip() {
        assert_eq!(parse_utc("1970-01-01"), Some(0));
        assert_eq!(parse_utc("2024-01-01"), Some(1_704_067_200));
        assert_eq!(parse_utc("2024-01-01T00:00:01Z"), Some(1_704_067_201));
        assert_eq!(parse_utc("2024-01-01T00:00:01+00:00"), Some(1_704_067_201));
        assert_eq!(parse_utc("2024-01-01T00:00:01.250Z"), Some(1_704_067_201));
        assert_eq!(parse_utc("2024-01-01T00:00:01"), Some(1_704_067_201));
        assert_eq!(parse_utc("2024-02-29T12:00:00Z"), Some(1_709_208_000));
        // An offset is that instant; a time to the minute is read.
        assert_eq!(parse_utc("2024-01-01T02:00:01+02:00"), Some(1_704_067_201));
        assert_eq!(parse_utc("2024-01-01T00:01Z"), Some(1_704_067_260));
        for s in [0, 1_704_067_200, 1_709_208_000, 4_102_444_799, -86_401] {
            assert_eq!(parse_utc(&format_utc(s)), Some(s), "{}", format_utc(s));
        }
        assert_eq!(format_utc(1_709_208_000), "2024-02-29T12:00:00Z");
        assert_eq!(format_utc(-86_401), "1969-12-30T23:59:59Z");
        let far = format_utc(i64::MAX);
        assert!(far.starts_with("9999-12-3"), "{far}");
    }

    #[test]
    fn malformed_dates_are_none() {
        for s in [
            "",
            "2024",
            "2024-1-01",
            "2023-02-29",
            "2024-13-01",
            "2024-00-10",
            "2024-01-01T25:00:00Z",
            "2024-01-01T00:00:00.x",
            "+024-01-01",
            "+002024-01-01",
            "２０２４-01-01",
            "yesterday",
        ] {
            assert_eq!(parse_utc(s), None, "{s:?}");
        }
    }
}
