//! Sizes (`50MB`, `1GiB`, `375kB`), rates (`20mbit`, `1gbit`) and durations
//! (`30s`, `2m`, `500ms`) as every quiche-lbe tool reads and writes them.
//! Errors say what was given and what is allowed, in one line.
#![forbid(unsafe_code)]

use std::time::Duration;

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

/// A size in bytes: a number with an optional unit, `B`, `kB`/`KB`, `MB`,
/// `GB`, `TB` (powers of 1000) or `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    const FORMS: &str =
        "a number with an optional unit B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 50MB)";
    let err = || format!("bad size '{text}': expected {FORMS}");
    let (number, unit) = split_number(text).ok_or_else(err)?;
    let scale: f64 = match unit {
        "" | "B" | "b" => 1.0,
        "k" | "kB" | "KB" | "kb" => 1e3,
        "M" | "MB" | "mb" => 1e6,
        "G" | "GB" | "gb" => 1e9,
        "T" | "TB" | "tb" => 1e12,
        "Ki" | "KiB" => 1024.0,
        "Mi" | "MiB" => 1024.0 * 1024.0,
        "Gi" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "Ti" | "TiB" => 1024.0_f64.powi(4),
        _ => return Err(unit_error("size", text, unit, FORMS)),
    };
    let bytes = (number * scale).round();
    if bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(err());
    }
    Ok(bytes as u64)
}

/// A rate in bits per second: a number with a unit `bit`, `kbit`, `mbit`,
/// `gbit`, `tbit` (or `bps`, `kbps`, `mbps`, `gbps`: bits, not `tc`'s bytes,
/// per second; any case).
pub fn parse_rate(text: &str) -> Result<u64, String> {
    const FORMS: &str = "a number with a unit bit, kbit, mbit, gbit or tbit (e.g. 20mbit)";
    let (number, unit) =
        split_number(text).ok_or_else(|| format!("bad rate '{text}': expected {FORMS}"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "bit" | "bps" | "b/s" => 1.0,
        "kbit" | "kbps" | "kb/s" => 1e3,
        "mbit" | "mbps" | "mb/s" => 1e6,
        "gbit" | "gbps" | "gb/s" => 1e9,
        "tbit" | "tbps" | "tb/s" => 1e12,
        _ => return Err(unit_error("rate", text, unit, FORMS)),
    };
    let bps = (number * scale).round();
    if bps <= 0.0 || bps > u64::MAX as f64 {
        return Err(format!("bad rate '{text}': must be above zero"));
    }
    Ok(bps as u64)
}

/// A duration: a number with a unit `ns`, `us`, `ms`, `s`, `m` or `h`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    const FORMS: &str = "a number with a unit ns, us, ms, s, m or h (e.g. 30s)";
    let err = || format!("bad duration '{text}': expected {FORMS}");
    let (number, unit) = split_number(text).ok_or_else(err)?;
    let seconds = match unit {
        "ns" => number / 1e9,
        "us" | "µs" => number / 1e6,
        "ms" => number / 1e3,
        "s" => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        _ => return Err(unit_error("duration", text, unit, FORMS)),
    };
    if seconds < 0.0 {
        return Err(err());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| err())
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
        assert_eq!(parse_size("50MB"), Ok(50_000_000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("375kB"), Ok(375_000));
        assert_eq!(parse_size("1.5MiB"), Ok(1_572_864));
        assert_eq!(parse_size("1200"), Ok(1200));
        assert_eq!(parse_size(" 20 MB "), Ok(20_000_000));
        for bad in ["", "MB", "5XB", "-1MB", "1e999MB", "five"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.starts_with(&format!("bad size '{bad}'")), "{e}");
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("20mbit"), Ok(20_000_000));
        assert_eq!(parse_rate("2.5Mbit"), Ok(2_500_000));
        assert_eq!(parse_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("500kbps"), Ok(500_000));
        assert_eq!(parse_rate("1tbit"), Ok(1_000_000_000_000));
        assert_eq!(
            parse_rate("20"),
            Err("bad rate '20': missing unit; expected a number with a unit bit, kbit, mbit, gbit or tbit (e.g. 20mbit)".into())
        );
        assert_eq!(
            parse_rate("20mb"),
            Err("bad rate '20mb': unknown unit 'mb'; expected a number with a unit bit, kbit, mbit, gbit or tbit (e.g. 20mbit)".into())
        );
        assert_eq!(
            parse_rate("0mbit"),
            Err("bad rate '0mbit': must be above zero".into())
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(
            parse_duration("30"),
            Err("bad duration '30': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)".into())
        );
        assert_eq!(
            parse_duration("ms"),
            Err(
                "bad duration 'ms': expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
                    .into()
            )
        );
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("1y").is_err());
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
