//! Timestamps as transcripts write them (RFC 3339 in UTC, `2026-02-12T15:36:09.570Z`), turned
//! into Flame's milliseconds since the epoch without a clock or a date library.

use flame_model::Timestamp;

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)`; `None` for anything else.
pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let part = text.get(from..to)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut millis = 0i64;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let mut scaled: String = fraction[..digits.min(3)].to_owned();
        while scaled.len() < 3 {
            scaled.push('0');
        }
        millis = scaled.parse().ok()?;
        rest = &fraction[digits..];
    }
    let offset_minutes = match rest {
        "Z" | "z" => 0,
        // Compared as bytes: the text comes from a transcript, and slicing it as a string at a
        // fixed offset would panic inside a multi-byte character (found by fuzzing).
        _ if rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':' =>
        {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            let two_digits = |part: Option<&str>| -> Option<i64> {
                let part = part?;
                part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
            };
            let h = two_digits(rest.get(1..3))?;
            let m = two_digits(rest.get(4..6))?;
            sign * (h * 60 + m)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_transcripts_write() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-02-12T15:36:09.570Z"), Some(1_770_910_569_570));
        assert_eq!(parse_rfc3339("2026-02-12T16:36:09.5+01:00"), Some(1_770_910_569_500));
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00.123456Z"), Some(951_868_800_123));
    }

    /// Found by fuzzing the Claude Code importer: a zone part of six bytes that are not six
    /// characters made the offset check slice inside a character and panic.
    #[test]
    fn a_zone_of_multi_byte_characters_is_refused_not_a_panic() {
        for bad in
            ["2026-02-12T15:36:09ъл3Z", "2026-02-12T15:36:09+ъ:00", "2026-02-12T15:36:09++1:+1"]
        {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_timestamp() {
        for bad in
            ["", "yesterday", "2026-13-01T00:00:00Z", "2026-02-12 15:36", "2026-02-12T15:36:09"]
        {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
