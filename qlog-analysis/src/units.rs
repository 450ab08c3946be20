//! Human units on the command line and in scenario files — rates
//! (`20mbit`), durations (`10s`, `500ms`), sizes (`375kB`) — parsed as every
//! quiche-lbe tool parses them (crate `lbe-units`), with this crate's error
//! type and its units (seconds and bits per second as `f64`).

use crate::error::Error;

pub use lbe_units::fmt_bytes as format_bytes;
pub use lbe_units::fmt_rate as format_rate;

/// A rate such as `20mbit` or `1.5gbit`, in bits per second.
pub fn parse_rate(s: &str) -> Result<f64, Error> {
    lbe_units::parse_rate(s)
        .map(|bps| bps as f64)
        .map_err(Error::Invalid)
}

/// A duration such as `10s` or `500ms`, in seconds.
pub fn parse_duration(s: &str) -> Result<f64, Error> {
    lbe_units::parse_duration(s)
        .map(|d| d.as_secs_f64())
        .map_err(Error::Invalid)
}

/// A size such as `375kB` or `64KiB`, in bytes.
pub fn parse_size(s: &str) -> Result<u64, Error> {
    lbe_units::parse_size(s).map_err(Error::Invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_in_this_crate_s_terms() {
        assert_eq!(parse_rate("20mbit").unwrap(), 20e6);
        assert_eq!(parse_duration("500ms").unwrap(), 0.5);
        assert_eq!(parse_size("64KiB").unwrap(), 65_536);
        assert_eq!(
            parse_duration("10").unwrap_err().to_string(),
            "bad duration '10': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
        );
        assert_eq!(format_rate(19_870_000.0), "19.87 Mbit/s");
    }
}
