//! Time as the helper writes and reads it.

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch (no date crate for one timestamp).
pub fn rfc3339_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Seconds since the epoch of an RFC 3339 timestamp (`2026-11-25T23:50:12.345Z`, or with
/// an offset `+01:00`), as PuppetDB and other services write them; fractions are dropped.
/// `None` for anything else, or a time before the epoch.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let (date, rest) = text.split_once(['T', 't', ' '])?;
    let mut ymd = date.splitn(3, '-');
    let year: i64 = digits(ymd.next()?, 4)?;
    let month: i64 = digits(ymd.next()?, 2)?;
    let day: i64 = digits(ymd.next()?, 2)?;
    if rest.len() < 8 {
        return None;
    }
    let (clock, zone) = rest.split_at(8);
    let mut hms = clock.splitn(3, ':');
    let hour: i64 = digits(hms.next()?, 2)?;
    let minute: i64 = digits(hms.next()?, 2)?;
    let second: i64 = digits(hms.next()?, 2)?;
    let zone = match zone.strip_prefix('.') {
        Some(fraction) => {
            let end = fraction
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(fraction.len());
            if end == 0 {
                return None;
            }
            &fraction[end..]
        }
        None => zone,
    };
    let offset = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = match zone.chars().next()? {
                '+' => 1,
                '-' => -1,
                _ => return None,
            };
            let (h, m) = zone[1..].split_once(':')?;
            let (h, m): (i64, i64) = (digits(h, 2)?, digits(m, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let secs =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    u64::try_from(secs).ok()
}

/// Exactly `len` ASCII digits.
fn digits(text: &str, len: usize) -> Option<i64> {
    if text.len() != len || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's days_from_civil: days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_145_400), "2026-11-20T03:30:00Z");
    }

    #[test]
    fn parsed_timestamps() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(
            parse_rfc3339("2026-11-20T03:30:00.123Z"),
            Some(1_795_145_400)
        );
        assert_eq!(
            parse_rfc3339("2026-11-20T04:30:00+01:00"),
            Some(1_795_145_400)
        );
        assert_eq!(
            parse_rfc3339("2026-11-20T02:00:00-01:30"),
            Some(1_795_145_400)
        );
        for bad in [
            "",
            "2026-11-20",
            "2026-11-20T03:30:00",
            "2026-13-20T03:30:00Z",
            "2026-02-29T03:30:00Z",
            "2026-11-20T24:00:00Z",
            "2026-11-20T03:30:00.Z",
            "2026-11-20T03:30:00+0100",
            "1969-12-31T23:59:59Z",
            "+026-11-20T03:30:00Z",
            "2026-11-20T03:30:00Zjunk",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn parsing_undoes_writing() {
        for secs in [0, 59, 86_399, 951_782_400, 1_795_145_400, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&rfc3339_utc(secs)), Some(secs));
        }
    }
}
