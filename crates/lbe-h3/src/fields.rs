//! The HTTP fields both tools read and write: byte ranges (RFC 9110 §14),
//! entity tags (§8.8.3), the Priority field (RFC 9218 §4) and
//! `Repr-Digest` (RFC 9530).

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use quiche::h3::NameValue;

/// The urgency of a request without a Priority field (RFC 9218 §4.1).
pub const DEFAULT_URGENCY: u8 = 3;

/// The lowest urgency: a request at this urgency marks its connection as
/// background.
pub const BACKGROUND_URGENCY: u8 = 7;

/// The value of the first field called `name` (lower case), as text.
pub fn field<'a>(headers: &'a [quiche::h3::Header], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| h.name() == name.as_bytes())
        .and_then(|h| std::str::from_utf8(h.value()).ok())
}

/// Every value of the fields called `name`, joined with `, ` as a list
/// field's lines combine (RFC 9110 §5.3).
pub fn field_list(headers: &[quiche::h3::Header], name: &str) -> Option<String> {
    let values: Vec<&str> = headers
        .iter()
        .filter(|h| h.name() == name.as_bytes())
        .filter_map(|h| std::str::from_utf8(h.value()).ok())
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// What a `Range` field asks of a representation of `size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// Send everything (no range, or one the server ignores: another unit,
    /// or several ranges, which RFC 9110 §14.2 lets a server ignore).
    Full,
    /// Bytes `start..=end`, both inside the representation.
    Part { start: u64, end: u64 },
    /// Answer 416: the range is malformed, or starts past the end.
    Unsatisfiable,
}

fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // All digits: only overflow fails, and an overflowing position is past
    // any end.
    Some(text.parse().unwrap_or(u64::MAX))
}

/// Reads a `Range` field value against a representation of `size` bytes.
pub fn parse_range(value: &str, size: u64) -> Range {
    let Some((unit, set)) = value.trim().split_once('=') else {
        return Range::Unsatisfiable;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") {
        return Range::Full;
    }
    if set.contains(',') {
        return Range::Full;
    }
    let Some((first, last)) = set.trim().split_once('-') else {
        return Range::Unsatisfiable;
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        // A suffix: the last N bytes.
        return match digits(last) {
            Some(n) if n > 0 && size > 0 => Range::Part {
                start: size - n.min(size),
                end: size - 1,
            },
            _ => Range::Unsatisfiable,
        };
    }
    let Some(start) = digits(first) else {
        return Range::Unsatisfiable;
    };
    let end = if last.is_empty() {
        u64::MAX
    } else {
        match digits(last) {
            Some(end) if end >= start => end,
            _ => return Range::Unsatisfiable,
        }
    };
    if start >= size {
        return Range::Unsatisfiable;
    }
    Range::Part {
        start,
        end: end.min(size - 1),
    }
}

/// A `Content-Range` field value: `bytes first-last/complete` or, on a
/// 416, `bytes */complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentRange {
    Part { start: u64, end: u64, size: u64 },
    Unsatisfied { size: u64 },
}

/// Reads a `Content-Range` value; `None` if malformed or of unknown length.
pub fn parse_content_range(value: &str) -> Option<ContentRange> {
    let rest = value.trim().strip_prefix("bytes ")?;
    let (range, size) = rest.split_once('/')?;
    let size = digits(size.trim())?;
    if range.trim() == "*" {
        return Some(ContentRange::Unsatisfied { size });
    }
    let (start, end) = range.trim().split_once('-')?;
    let (start, end) = (digits(start)?, digits(end)?);
    (start <= end && end < size).then_some(ContentRange::Part { start, end, size })
}

/// Whether `tag` is a strong entity tag (`"..."`, not `W/"..."`).
pub fn is_strong_etag(tag: &str) -> bool {
    let tag = tag.trim();
    tag.len() >= 2
        && tag.starts_with('"')
        && tag.ends_with('"')
        && !tag[1..tag.len() - 1].contains('"')
}

/// The strong comparison of RFC 9110 §8.8.3.2: both strong and equal.
pub fn etags_match_strongly(a: &str, b: &str) -> bool {
    is_strong_etag(a) && is_strong_etag(b) && a.trim() == b.trim()
}

/// The urgency a request asks for in its Priority field (RFC 9218 §4),
/// a Structured Field dictionary such as `u=7, i`. Members with values
/// out of range or of the wrong type are ignored (§4.1); the last valid
/// `u` wins, as in any dictionary.
pub fn urgency(priority: Option<&str>) -> u8 {
    let mut urgency = DEFAULT_URGENCY;
    for member in priority.unwrap_or("").split(',') {
        // Parameters (`;...`) of a member do not matter here.
        let member = member.split(';').next().unwrap_or("").trim();
        let Some((key, value)) = member.split_once('=') else {
            continue;
        };
        if key.trim() != "u" {
            continue;
        }
        if let Ok(u) = value.trim().parse::<u8>() {
            if u <= BACKGROUND_URGENCY && value.trim().bytes().all(|b| b.is_ascii_digit()) {
                urgency = u;
            }
        }
    }
    urgency
}

/// The request field carrying a background download's deadline: whole
/// milliseconds from the request, `lbe-deadline: 600000` (docs/deadline-aware.md).
pub const DEADLINE_FIELD: &str = "lbe-deadline";
/// The trailer field carrying the sender's time per aggressiveness level,
/// seconds, comma-separated, level 0 first.
pub const TIME_IN_LEVELS_FIELD: &str = "lbe-time-in-levels";
/// Largest deadline, milliseconds (the controller's limit, 3600 s).
pub const MAX_DEADLINE_MS: u64 = 3_600_000;

/// Parses an `lbe-deadline` value: digits only, 1 to [`MAX_DEADLINE_MS`].
pub fn deadline(value: &str) -> Result<std::time::Duration, String> {
    let v = value.trim();
    match v.parse::<u64>() {
        Ok(ms) if (1..=MAX_DEADLINE_MS).contains(&ms) && v.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(std::time::Duration::from_millis(ms))
        }
        _ => Err(format!(
            "bad {DEADLINE_FIELD} '{value}': expected whole milliseconds from 1 to {MAX_DEADLINE_MS}"
        )),
    }
}

/// Whether the Priority field asks for incremental delivery (`i`).
pub fn incremental(priority: Option<&str>) -> bool {
    let mut incremental = false;
    for member in priority.unwrap_or("").split(',') {
        let member = member.split(';').next().unwrap_or("").trim();
        match member.split_once('=') {
            None if member == "i" => incremental = true,
            Some((key, value)) if key.trim() == "i" => match value.trim() {
                "?1" => incremental = true,
                "?0" => incremental = false,
                _ => {}
            },
            _ => {}
        }
    }
    incremental
}

/// A `Repr-Digest` value carrying a SHA-256 digest: `sha-256=:<base64>:`.
pub fn repr_digest(sha256: &[u8; 32]) -> String {
    format!("sha-256=:{}:", BASE64.encode(sha256))
}

/// The SHA-256 digest in a `Repr-Digest` value, if it has one; other
/// algorithms are skipped.
pub fn parse_repr_digest(value: &str) -> Option<[u8; 32]> {
    value.split(',').find_map(|member| {
        let (key, value) = member.split(';').next()?.split_once('=')?;
        if key.trim() != "sha-256" {
            return None;
        }
        let encoded = value.trim().strip_prefix(':')?.strip_suffix(':')?;
        BASE64.decode(encoded).ok()?.try_into().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_of_one_part() {
        let p = |start, end| Range::Part { start, end };
        assert_eq!(parse_range("bytes=0-9", 100), p(0, 9));
        assert_eq!(parse_range("bytes=90-", 100), p(90, 99));
        assert_eq!(parse_range("bytes=-10", 100), p(90, 99));
        assert_eq!(parse_range("bytes=-1000", 100), p(0, 99));
        assert_eq!(parse_range("bytes=50-5000", 100), p(50, 99));
        assert_eq!(parse_range(" Bytes = 1 - 2 ", 100), p(1, 2));
        assert_eq!(parse_range("bytes=99-99", 100), p(99, 99));
        assert_eq!(
            parse_range("bytes=0-99999999999999999999999", 100),
            p(0, 99)
        );
    }

    #[test]
    fn unsatisfiable_and_malformed_ranges() {
        for bad in [
            "bytes=100-",
            "bytes=100-200",
            "bytes=99999999999999999999999-",
            "bytes=-0",
            "bytes=5-3",
            "bytes=abc",
            "bytes=a-b",
            "bytes=1-x",
            "bytes=-",
            "bytes=+1-2",
            "bytes",
            "",
        ] {
            assert_eq!(parse_range(bad, 100), Range::Unsatisfiable, "{bad}");
        }
        assert_eq!(parse_range("bytes=0-", 0), Range::Unsatisfiable);
        assert_eq!(parse_range("bytes=-5", 0), Range::Unsatisfiable);
    }

    #[test]
    fn ranges_the_server_ignores() {
        assert_eq!(parse_range("items=0-5", 100), Range::Full);
        assert_eq!(parse_range("bytes=0-1,5-6", 100), Range::Full);
    }

    #[test]
    fn content_ranges() {
        assert_eq!(
            parse_content_range("bytes 10-99/100"),
            Some(ContentRange::Part {
                start: 10,
                end: 99,
                size: 100
            })
        );
        assert_eq!(
            parse_content_range("bytes */100"),
            Some(ContentRange::Unsatisfied { size: 100 })
        );
        for bad in [
            "bytes 10-99/*",
            "bytes 10-100/100",
            "bytes 9-8/100",
            "items 1-2/3",
            "bytes 1-2",
            "",
        ] {
            assert_eq!(parse_content_range(bad), None, "{bad}");
        }
    }

    #[test]
    fn entity_tags() {
        assert!(is_strong_etag("\"abc\""));
        assert!(!is_strong_etag("W/\"abc\""));
        assert!(!is_strong_etag("abc"));
        assert!(!is_strong_etag("\""));
        assert!(etags_match_strongly("\"a-1\"", "\"a-1\""));
        assert!(!etags_match_strongly("\"a-1\"", "\"a-2\""));
        assert!(!etags_match_strongly("W/\"a\"", "W/\"a\""));
    }

    #[test]
    fn priority_urgency() {
        assert_eq!(urgency(None), DEFAULT_URGENCY);
        assert_eq!(urgency(Some("u=7")), 7);
        assert_eq!(urgency(Some("u=7, i")), 7);
        assert_eq!(urgency(Some("i, u=0")), 0);
        assert_eq!(urgency(Some("u=7;x=1")), 7);
        assert_eq!(urgency(Some("u=1, u=7")), 7);
        // Out of range or of the wrong type: ignored.
        assert_eq!(urgency(Some("u=8")), DEFAULT_URGENCY);
        assert_eq!(urgency(Some("u=-1")), DEFAULT_URGENCY);
        assert_eq!(urgency(Some("u=7.0")), DEFAULT_URGENCY);
        assert_eq!(urgency(Some("u=?1")), DEFAULT_URGENCY);
        assert_eq!(urgency(Some("u=6, u=9")), 6);
        assert_eq!(urgency(Some("uu=7")), DEFAULT_URGENCY);
        assert!(incremental(Some("u=7, i")));
        assert!(!incremental(Some("u=7")));
        assert!(!incremental(Some("i=?0")));
    }

    #[test]
    fn digests_round_trip() {
        let d = [7u8; 32];
        let text = repr_digest(&d);
        assert_eq!(
            text,
            "sha-256=:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=:"
        );
        assert_eq!(parse_repr_digest(&text), Some(d));
        assert_eq!(
            parse_repr_digest(&format!("sha-512=:AAAA:, {text}")),
            Some(d)
        );
        assert_eq!(parse_repr_digest("sha-256=:AAAA:"), None);
        assert_eq!(parse_repr_digest("sha-256=AAAA"), None);
        assert_eq!(parse_repr_digest(""), None);
    }

    #[test]
    fn deadline_field() {
        use std::time::Duration;
        assert_eq!(deadline("600000"), Ok(Duration::from_secs(600)));
        assert_eq!(deadline(" 1 "), Ok(Duration::from_millis(1)));
        assert_eq!(deadline("3600000"), Ok(Duration::from_secs(3600)));
        for bad in ["0", "3600001", "10m", "+5", "-1", "", "1.5"] {
            assert_eq!(
                deadline(bad),
                Err(format!(
                    "bad lbe-deadline '{bad}': expected whole milliseconds from 1 to 3600000"
                )),
                "{bad}"
            );
        }
    }
}
