//! Instants as seconds since 1970 (UTC) and back: a question's
//! creation date against a window (`score --created-after`), the GitHub search's creation-date
//! slices (`created:A..B`), a review's `reviewed_at`, the times an API writes. A calendar day
//! alone is its midnight UTC; a time without an offset is UTC (GitHub writes UTC); a time with
//! an offset is that instant.

/// The instants read and written: from year 0 to the last that `jiff`, which read and wrote them
/// before, could hold with any offset (seconds before or after are clamped when written, and a
/// date after it is not read).
const FIRST: i64 = -62_167_219_200; // 0000-01-01T00:00:00Z
const LAST: i64 = 253_402_207_200; // 9999-12-30T22:00:00Z

/// `YYYY-MM-DD` (its midnight UTC), `YYYY-MM-DDTHH:MM[:SS[.fff]]` (UTC), or either time followed
/// by `Z` or an offset (`+02:00`); `t`, `z` and a space in place of `T` are read too; a leap
/// second (`:60`) is the second before it; fractional seconds (up to nine digits) are dropped
/// (towards zero).
/// `None` for anything else.
///
/// Written here rather than read with a date crate: the worker reads a date per question and
/// per review, and `jiff`, which read them before (and still checks this function in the
/// tests), took ~25 KB of the site's gzipped wasm for time zones, spans and messages that nothing
/// here uses (issue 56).
pub fn parse_utc(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    let num = |at: usize, len: usize| -> Option<i64> {
        let digits = b.get(at..at + len)?;
        digits.iter().try_fold(0i64, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let midnight = days_from_civil(year, month, day) * 86_400;
    let rest = &b[10..];
    if rest.is_empty() {
        return (midnight <= LAST).then_some(midnight);
    }
    if !matches!(rest[0], b'T' | b't' | b' ') {
        return None;
    }
    let (hour, minute) = (num(11, 2)?, num(14, 2)?);
    if b.get(13) != Some(&b':') || hour > 23 || minute > 59 {
        return None;
    }
    let mut at = 16;
    let mut second = 0;
    let mut fraction = false;
    if b.get(at) == Some(&b':') {
        second = num(at + 1, 2)?;
        if second > 60 {
            return None;
        }
        second = second.min(59);
        at += 3;
        if matches!(b.get(at), Some(b'.' | b',')) {
            let digits = b[at + 1..]
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .count();
            if !(1..=9).contains(&digits) {
                return None;
            }
            fraction = b[at + 1..at + 1 + digits].iter().any(|d| *d != b'0');
            at += 1 + digits;
        }
    }
    let offset = match &b[at..] {
        [] => 0,
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), ..] => {
            let (h, m) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if b.get(at + 3) != Some(&b':') || b.len() != at + 6 || h > 25 || m > 59 {
                return None;
            }
            let off = h * 3600 + m * 60;
            if *sign == b'-' { -off } else { off }
        }
        _ => return None,
    };
    let secs = midnight + hour * 3600 + minute * 60 + second - offset;
    if secs > LAST {
        return None;
    }
    // The fraction is dropped towards zero, as `jiff`'s `as_second` did: an instant before 1970
    // with a fraction is the second after.
    Some(if secs < 0 && fraction { secs + 1 } else { secs })
}

/// `YYYY-MM-DDTHH:MM:SSZ`; seconds out of range (before year 0, after 9999-12-30T22:00:00Z)
/// are clamped to it.
pub fn format_utc(secs: i64) -> String {
    let secs = secs.clamp(FIRST, LAST);
    let (days, in_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    )
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a count of days since 1970-01-01 (Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
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

    /// What `jiff` reads, as this module read dates before it read them itself.
    fn by_jiff(s: &str) -> Option<i64> {
        use jiff::Timestamp;
        use jiff::civil::{Date, DateTime};
        let s = s.trim();
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
        Some(
            jiff::tz::TimeZone::UTC
                .to_timestamp(civil)
                .ok()?
                .as_second(),
        )
    }

    /// Every combination of the grammar's parts, right and wrong, reads as `jiff` reads it.
    #[test]
    fn dates_read_as_jiff_reads_them() {
        let dates = [
            "2024-01-01",
            "2024-02-29",
            "2023-02-29",
            "1900-02-29",
            "2000-02-29",
            "0000-01-01",
            "0001-01-01",
            "9999-12-31",
            "1970-01-01",
            "2024-12-31",
            "2024-04-31",
            "2024-13-01",
            "2024-00-10",
            "2024-01-00",
            "2024-01-32",
            "2024-1-01",
            "2024/01/01",
            "20240101",
        ];
        let seps = ["", "T", "t", " ", "_", "TT"];
        let times = [
            "",
            "00:00",
            "23:59",
            "24:00",
            "12:60",
            "1:00",
            "00:00:00",
            "23:59:59",
            "23:59:60",
            "23:59:61",
            "12:00:00.5",
            "12:00:00.123456789",
            "12:00:00.1234567890",
            "12:00:00,25",
            "12:00:00.",
            "12:00:00.x",
            "120000",
            "12:00:0",
        ];
        let zones = [
            "",
            "Z",
            "z",
            "+00:00",
            "-00:00",
            "+02:00",
            "-05:30",
            "+23:59",
            "+25:59",
            "+26:00",
            "+02:60",
            "+0200",
            "+02",
            "ZZ",
            "[UTC]",
            "Z[UTC]",
            " ",
            "+02:00:00",
        ];
        let mut compared = 0;
        for d in dates {
            for sep in seps {
                for t in times {
                    for z in zones {
                        let s = format!("{d}{sep}{t}{z}");
                        // Beyond the documented grammar jiff reads more (the basic format,
                        // annotations, offsets with seconds, hours alone): those are ours to refuse.
                        let documented = !d.starts_with("20240101")
                            && !t.starts_with("120000")
                            && !z.contains('[')
                            && z != "+0200"
                            && z != "+02"
                            && z != "+02:00:00";
                        let ours = parse_utc(&s);
                        if documented {
                            assert_eq!(ours, by_jiff(&s), "{s:?}");
                            compared += 1;
                        } else if ours.is_some() {
                            assert_eq!(ours, by_jiff(&s), "{s:?}");
                        }
                    }
                }
            }
        }
        assert!(compared > 20_000, "{compared}");
    }

    #[test]
    fn instants_are_written_as_jiff_writes_them() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let secs = (x % (LAST - FIRST + 1) as u64) as i64 + FIRST;
            let want = jiff::Timestamp::from_second(secs)
                .unwrap()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string();
            assert_eq!(format_utc(secs), want, "{secs}");
            assert_eq!(parse_utc(&want), Some(secs));
        }
        assert_eq!(format_utc(FIRST), "0000-01-01T00:00:00Z");
        assert_eq!(format_utc(LAST), "9999-12-30T22:00:00Z");
        assert_eq!(Some(LAST), by_jiff("9999-12-30T22:00:00Z"));
        assert_eq!(None, by_jiff("9999-12-30T22:00:01Z"));
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
