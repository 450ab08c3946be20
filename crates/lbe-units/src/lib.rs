//! Sizes, rates and durations as every quiche-lbe tool reads and writes
//! them: the one parser for each (`lbe-netem`, `lbe-lab`, `quic-bulk`,
//! `h3-fetch`, `qlog-analysis` and `lbe-cc`'s spec parameters all call it).
//!
//! # Grammar
//!
//! A quantity is a decimal number (digits, one optional `.`, `_` allowed
//! between digits), optional spaces, and a unit:
//!
//! | quantity | units | limits |
//! | --- | --- | --- |
//! | size, bytes | none or `B`; `kB`/`KB`, `MB`, `GB`, `TB` (×1000); `KiB`, `MiB`, `GiB`, `TiB` (×1024) | 0 to [`MAX_SIZE_BYTES`] (1 TiB) |
//! | rate, bits per second | `bit`, `kbit`, `mbit`, `gbit`, `tbit`, or `bps`, `kbps`, `mbps`, `gbps`, `tbps`, or `b/s`, `kb/s`…; any case | above 0, at most [`MAX_RATE_BPS`] (100 Gbit/s) |
//! | duration | `ns`, `us` (`µs`), `ms`, `s`, `m` (`min`), `h` | 0 to [`MAX_DURATION`] (1 h) |
//!
//! A capital `B` is a byte and a lowercase `b` a bit, in every form: a size
//! takes a capital `B` (`375kB` is 375 000 bytes), and `375kb`, kilobits,
//! is refused as a size rather than guessed at; a rate is always bits per
//! second, `20Mbps` included (unlike `tc`, where `bps` means bytes per
//! second). Rates have no byte forms.
//!
//! Errors are one line: what was given, what was wrong, and the forms or
//! limits allowed. No input makes a parser panic.
#![forbid(unsafe_code)]

use std::time::Duration;

/// Largest size accepted, bytes (1 TiB).
pub const MAX_SIZE_BYTES: u64 = 1 << 40;

/// Largest rate accepted, bits per second (100 Gbit/s): beyond it
/// serialisation times drop under a nanosecond per byte, and no tool here
/// sends or emulates that fast.
pub const MAX_RATE_BPS: u64 = 100_000_000_000;

/// Largest duration accepted (1 hour): RTTs, buffers, run and window
/// lengths, timeouts.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);

const SIZE_FORMS: &str =
    "a number with an optional unit B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 50MB)";
const RATE_FORMS: &str = "a number with a unit bit, kbit, mbit, gbit or tbit (e.g. 20mbit)";
const DURATION_FORMS: &str = "a number with a unit ns, us, ms, s, m or h (e.g. 30s)";

/// Splits `12.5MB` into `(12.5, "MB")`.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(end);
    let number: f64 = number.replace('_', "").parse().ok()?;
    number.is_finite().then_some((number, unit.trim()))
}

fn unit_error(kind: &str, text: &str, unit: &str, forms: &str) -> String {
    if unit.is_empty() {
        format!("bad {kind} '{text}': missing unit; expected {forms}")
    } else {
        format!("bad {kind} '{text}': unknown unit '{unit}'; expected {forms}")
    }
}

/// A size in bytes (see the grammar in the crate docs).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let err = || format!("bad size '{text}': expected {SIZE_FORMS}");
    let (number, unit) = split_number(text).ok_or_else(err)?;
    let scale: f64 = match unit {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0_f64.powi(4),
        _ if unit.ends_with('b') => {
            return Err(format!(
            "bad size '{text}': '{unit}' is bits, a size takes a capital B; expected {SIZE_FORMS}"
        ))
        }
        _ => return Err(unit_error("size", text, unit, SIZE_FORMS)),
    };
    let bytes = (number * scale).round();
    if bytes > MAX_SIZE_BYTES as f64 {
        return Err(format!("bad size '{text}': at most 1TiB is supported"));
    }
    Ok(bytes as u64)
}

/// A rate in bits per second (see the grammar in the crate docs).
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let (number, unit) =
        split_number(text).ok_or_else(|| format!("bad rate '{text}': expected {RATE_FORMS}"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "bit" | "bps" | "b/s" => 1.0,
        "kbit" | "kbps" | "kb/s" => 1e3,
        "mbit" | "mbps" | "mb/s" => 1e6,
        "gbit" | "gbps" | "gb/s" => 1e9,
        "tbit" | "tbps" | "tb/s" => 1e12,
        _ => return Err(unit_error("rate", text, unit, RATE_FORMS)),
    };
    let bps = (number * scale).round();
    if bps <= 0.0 {
        return Err(format!("bad rate '{text}': must be above zero"));
    }
    if bps > MAX_RATE_BPS as f64 {
        return Err(format!("bad rate '{text}': at most 100gbit is supported"));
    }
    Ok(bps as u64)
}

/// A duration (see the grammar in the crate docs).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let err = || format!("bad duration '{text}': expected {DURATION_FORMS}");
    let (number, unit) = split_number(text).ok_or_else(err)?;
    let seconds = match unit {
        "ns" => number / 1e9,
        "us" | "µs" => number / 1e6,
        "ms" => number / 1e3,
        "s" => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        _ => return Err(unit_error("duration", text, unit, DURATION_FORMS)),
    };
    if seconds > MAX_DURATION.as_secs_f64() {
        return Err(format!(
            "bad duration '{text}': at most 1 hour (3600s) is supported"
        ));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| err())
}

/// A duration the way the grammar writes it (`60ms`, `1.5s` is `1500ms`,
/// `600s`, `250us`), to microseconds; [`parse_duration`] reads it back.
pub fn fmt_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us == 0 {
        "0ms".to_string()
    } else if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else if us >= 1000 {
        format!("{}ms", us as f64 / 1000.0)
    } else {
        format!("{us}us")
    }
}

/// `12.3 MB`, `1.0 GB`: bytes in powers of 1000, for people.
pub fn fmt_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..=999 => format!("{bytes} B"),
        1_000..=999_999 => format!("{:.1} kB", b / 1e3),
        1_000_000..=999_999_999 => format!("{:.2} MB", b / 1e6),
        _ => format!("{:.2} GB", b / 1e9),
    }
}

/// `19.2 Mbit/s`: a rate in bits per second, for people.
pub fn fmt_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.2} Mbit/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.1} kbit/s", bps / 1e3)
    } else {
        format!("{bps:.0} bit/s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let good = [
            ("50MB", 50_000_000),
            ("1GiB", 1 << 30),
            ("375kB", 375_000),
            ("1.5MiB", 1_572_864),
            ("1200", 1200),
            (" 20 MB ", 20_000_000),
            ("1TiB", MAX_SIZE_BYTES),
        ];
        for (text, bytes) in good {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in [
            "", "MB", "5XB", "-1MB", "1e999MB", "five", "2TiB", "1k", "5M",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.starts_with(&format!("bad size '{bad}'")), "{e}");
        }
        let errors = [
            ("375kb", format!("bad size '375kb': 'kb' is bits, a size takes a capital B; expected {SIZE_FORMS}")),
            ("2TiB", "bad size '2TiB': at most 1TiB is supported".into()),
        ];
        for (text, message) in errors {
            assert_eq!(parse_size(text), Err(message), "{text}");
        }
        assert_eq!(
            SIZE_FORMS,
            "a number with an optional unit B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 50MB)"
        );
    }

    #[test]
    fn rates() {
        let good = [
            ("20mbit", 20_000_000),
            ("2.5Mbit", 2_500_000),
            ("1gbit", 1_000_000_000),
            ("500kbps", 500_000),
            ("100gbit", MAX_RATE_BPS),
        ];
        for (text, bps) in good {
            assert_eq!(parse_rate(text), Ok(bps), "{text}");
        }
        let errors = [
            (
                "1tbit",
                "bad rate '1tbit': at most 100gbit is supported".to_string(),
            ),
            (
                "20",
                format!("bad rate '20': missing unit; expected {RATE_FORMS}"),
            ),
            (
                "20mb",
                format!("bad rate '20mb': unknown unit 'mb'; expected {RATE_FORMS}"),
            ),
            ("0mbit", "bad rate '0mbit': must be above zero".into()),
        ];
        for (text, message) in errors {
            assert_eq!(parse_rate(text), Err(message), "{text}");
        }
        assert_eq!(
            RATE_FORMS,
            "a number with a unit bit, kbit, mbit, gbit or tbit (e.g. 20mbit)"
        );
    }

    #[test]
    fn durations() {
        let good = [
            ("30s", Duration::from_secs(30)),
            ("2m", Duration::from_secs(120)),
            ("500ms", Duration::from_millis(500)),
            ("1.5s", Duration::from_millis(1500)),
            ("250us", Duration::from_micros(250)),
            ("1h", MAX_DURATION),
        ];
        for (text, duration) in good {
            assert_eq!(parse_duration(text), Ok(duration), "{text}");
        }
        let errors = [
            (
                "30",
                format!("bad duration '30': missing unit; expected {DURATION_FORMS}"),
            ),
            (
                "ms",
                format!("bad duration 'ms': expected {DURATION_FORMS}"),
            ),
            (
                "61m",
                "bad duration '61m': at most 1 hour (3600s) is supported".into(),
            ),
        ];
        for (text, message) in errors {
            assert_eq!(parse_duration(text), Err(message), "{text}");
        }
        assert_eq!(
            DURATION_FORMS,
            "a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
        );
        for bad in ["-1s", "-5ms", "1y", "5 parsecs", "60"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_are_formatted_as_written_and_read_back() {
        let cases = [
            (Duration::from_millis(60), "60ms"),
            (Duration::from_secs(600), "600s"),
            (Duration::from_micros(7500), "7.5ms"),
            (Duration::from_micros(250), "250us"),
            (Duration::ZERO, "0ms"),
        ];
        for (d, text) in cases {
            assert_eq!(fmt_duration(d), text);
            assert_eq!(parse_duration(text), Ok(d), "{text}");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(50_000_000), "50.00 MB");
        assert_eq!(fmt_bytes(12_300_000), "12.30 MB");
        assert_eq!(fmt_rate(19_870_000.0), "19.87 Mbit/s");
        assert_eq!(fmt_rate(1.5e9), "1.50 Gbit/s");
    }
}
