//! UTC instants as seconds since 1970 and back, for the search's creation-date slices
//! (`created:A..B`) and for comparing the API's RFC 3339 times. The proleptic Gregorian
//! calendar's day numbers (Howard Hinnant's `days_from_civil`), no time zones but `Z` and
//! `+00:00`: GitHub writes UTC.

/// `YYYY-MM-DD` (midnight) or `YYYY-MM-DDTHH:MM:SS` followed by `Z`, `+00:00` or nothing, with
/// optional fractional seconds (dropped); `None` for anything else.
pub fn parse_utc(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.split_once(['T', 't', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut d = date.splitn(3, '-');
    let (y, m, day) = (d.next()?, d.next()?, d.next()?);
    if y.len() != 4 || m.len() != 2 || day.len() != 2 {
        return None;
    }
    let (y, m, day): (i64, u32, u32) = (num(y)?, num(m)?, num(day)?);
    if !(1..=12).contains(&m) || day == 0 || day > days_in_month(y, m) {
        return None;
    }
    let mut secs = days_from_civil(y, m, day) * 86_400;
    if let Some(t) = time {
        let t = t
            .strip_suffix('Z')
            .or_else(|| t.strip_suffix('z'))
            .or_else(|| t.strip_suffix("+00:00"))
            .unwrap_or(t);
        let t = t.split_once('.').map_or(t, |(whole, frac)| {
            if frac.bytes().all(|b| b.is_ascii_digit()) {
                whole
            } else {
                "bad"
            }
        });
        let mut p = t.splitn(3, ':');
        let (h, mi, se) = (p.next()?, p.next()?, p.next()?);
        if h.len() != 2 || mi.len() != 2 || se.len() != 2 {
            return None;
        }
        let (h, mi, se): (i64, i64, i64) = (num(h)?, num(mi)?, num(se)?);
        if h > 23 || mi > 59 || se > 60 {
            return None;
        }
        secs += h * 3600 + mi * 60 + se;
    }
    Some(secs)
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
    if s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
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
        assert_eq!(parse_utc("2024-02-29T12:00:00Z"), Some(1_709_208_000));
        for s in [0, 1_704_067_200, 1_709_208_000, 4_102_444_799, -86_401] {
            assert_eq!(parse_utc(&format_utc(s)), Some(s), "{}", format_utc(s));
        }
        assert_eq!(format_utc(1_709_208_000), "2024-02-29T12:00:00Z");
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
            "2024-01-01T00:00Z",
            "2024-01-01T00:00:00+02:00",
            "2024-01-01T00:00:00.x",
            "+024-01-01",
            "２０２４-01-01",
        ] {
            assert_eq!(parse_utc(s), None, "{s:?}");
        }
    }
}
