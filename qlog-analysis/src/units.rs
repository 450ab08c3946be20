//! Human units on the command line and in scenario files: rates (`20mbit`),
//! durations (`10s`, `500ms`) and sizes (`375kB`). Decimal prefixes are powers
//! of 1000 as in `tc`/iperf; binary ones (`KiB`) are powers of 1024.

use crate::error::Error;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let value: f64 = s[..end].parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    Some((value, s[end..].trim()))
}

/// Parse a rate such as `20mbit`, `1.5Gbit`, `500kbit`, `10mbps`, `800bit`
/// into bits per second.
pub fn parse_rate(s: &str) -> Result<f64, Error> {
    let bad = || {
        Error::Invalid(format!(
            "bad rate {s:?}: expected a number and a unit: bit, kbit, mbit, gbit (or bps, kbps, mbps, gbps), e.g. 20mbit"
        ))
    };
    let (value, unit) = split_number(s).ok_or_else(bad)?;
    let unit = unit.to_ascii_lowercase();
    let unit = unit.strip_suffix("/s").unwrap_or(&unit);
    let factor = match unit {
        "bit" | "bps" => 1.0,
        "kbit" | "kbps" => 1e3,
        "mbit" | "mbps" => 1e6,
        "gbit" | "gbps" => 1e9,
        _ => return Err(bad()),
    };
    let rate = value * factor;
    if rate <= 0.0 {
        return Err(Error::Invalid(format!(
            "bad rate {s:?}: must be greater than zero"
        )));
    }
    Ok(rate)
}

/// Parse a duration such as `10s`, `500ms`, `1.5s`, `250us`, `2min` into
/// seconds.
pub fn parse_duration(s: &str) -> Result<f64, Error> {
    let bad = || {
        Error::Invalid(format!(
            "bad duration {s:?}: expected a number and a unit: us, ms, s, min, e.g. 10s or 500ms"
        ))
    };
    let (value, unit) = split_number(s).ok_or_else(bad)?;
    let factor = match unit {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    Ok(value * factor)
}

/// Parse a size such as `375kB`, `100MB`, `1500B`, `64KiB` into bytes.
pub fn parse_size(s: &str) -> Result<u64, Error> {
    let bad = || {
        Error::Invalid(format!(
            "bad size {s:?}: expected a number and a unit: B, kB, MB, GB, KiB, MiB, GiB, e.g. 375kB"
        ))
    };
    let (value, unit) = split_number(s).ok_or_else(bad)?;
    let factor = match unit {
        "B" | "b" => 1.0,
        "kB" | "KB" | "k" | "K" => 1e3,
        "MB" | "M" => 1e6,
        "GB" | "G" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    Ok((value * factor).round() as u64)
}

/// Format bits per second for people: `19.87 Mbit/s`.
pub fn format_rate(bps: f64) -> String {
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

/// Format a byte count for people: `12.3 MB`.
pub fn format_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("20mbit").unwrap(), 20e6);
        assert_eq!(parse_rate("1.5Gbit").unwrap(), 1.5e9);
        assert_eq!(parse_rate("500kbit").unwrap(), 500e3);
        assert_eq!(parse_rate("10Mbps").unwrap(), 10e6);
        assert_eq!(parse_rate("10mbit/s").unwrap(), 10e6);
        assert!(parse_rate("20").unwrap_err().to_string().contains("mbit"));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0mbit").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), 10.0);
        assert_eq!(parse_duration("500ms").unwrap(), 0.5);
        assert_eq!(parse_duration("250us").unwrap(), 250e-6);
        assert_eq!(parse_duration("2min").unwrap(), 120.0);
        assert_eq!(parse_duration(" 1.5s ").unwrap(), 1.5);
        assert!(parse_duration("10")
            .unwrap_err()
            .to_string()
            .contains("500ms"));
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("375kB").unwrap(), 375_000);
        assert_eq!(parse_size("100MB").unwrap(), 100_000_000);
        assert_eq!(parse_size("64KiB").unwrap(), 65_536);
        assert!(parse_size("12 parsecs").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_rate(19_870_000.0), "19.87 Mbit/s");
        assert_eq!(format_bytes(12_300_000), "12.30 MB");
    }
}
