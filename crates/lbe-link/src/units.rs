//! The link's own quantities: the bottleneck's buffer (a time at line rate
//! or a size in bytes) and the random loss probability, with their parsers
//! (the forms `lbe-netem`'s command line and scenario files take). Rates,
//! durations and sizes are `lbe-units`'.
//!
//! Every parser returns a one-line message on error that says what was wrong
//! and which forms are allowed; none of them panics.

use std::fmt;
use std::time::Duration;

use lbe_units::parse_duration;

/// Largest byte buffer accepted (16 GiB), a memory bound of the emulator.
pub const MAX_BUFFER_BYTES: u64 = 16 << 30;

const BUFFER_FORMS: &str =
    "a time at line rate (e.g. 500ms, 1s) or a size in bytes with a unit: B, kB, \
     MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), e.g. 375kB, 1MiB, 1500B";

/// The bottleneck's buffer: either a time at line rate or a size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// The buffer holds this much time's worth of data at the link rate:
    /// `rate * time / 8` bytes.
    Time(Duration),
    /// The buffer holds this many bytes (counted as wire bytes, see
    /// [`crate::LinkConfig::overhead`]).
    Bytes(u64),
}

impl Buffer {
    /// The capacity in bytes for a link of `rate_bps`.
    pub fn bytes_at(&self, rate_bps: u64) -> u64 {
        match *self {
            Buffer::Bytes(b) => b,
            Buffer::Time(d) => (u128::from(rate_bps) * d.as_nanos() / 8_000_000_000) as u64,
        }
    }
}

impl fmt::Display for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Buffer::Time(d) => write!(f, "{d:?}"),
            Buffer::Bytes(b) => write!(f, "{b}B"),
        }
    }
}

/// Parses a buffer size: `500ms` (time at line rate) or `375kB`, `1MiB`,
/// `1500B` (bytes), in `lbe-units`' grammar: byte units take a capital
/// `B`, and `375kb` (kilobits) is refused, never guessed at.
pub fn parse_buffer(s: &str) -> Result<Buffer, String> {
    let t = s.trim();
    // `lbe-units`' errors read `bad KIND 'TEXT': WHY; expected FORMS`.
    let why = |e: String| -> String {
        let why = e.split_once("': ").map_or(e.as_str(), |(_, why)| why);
        let why = why.split_once("; expected").map_or(why, |(why, _)| why);
        format!("bad buffer '{s}': {why}; expected {BUFFER_FORMS}")
    };
    let buffer = if t.ends_with(['B', 'b']) {
        let b = lbe_units::parse_size(t).map_err(why)?;
        if b > MAX_BUFFER_BYTES {
            return Err(format!("bad buffer '{s}': at most 16GiB is supported"));
        }
        Buffer::Bytes(b)
    } else {
        Buffer::Time(parse_duration(t).map_err(why)?)
    };
    match buffer {
        Buffer::Bytes(0) => Err(format!("bad buffer '{s}': must be greater than zero")),
        Buffer::Time(d) if d.is_zero() => {
            Err(format!("bad buffer '{s}': must be greater than zero"))
        }
        b => Ok(b),
    }
}

/// Parses a loss probability: `0.01` or `1%`, in [0, 1].
pub fn parse_loss(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let p = num
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite())
        .map(|p| p * scale)
        .ok_or_else(|| {
            format!("bad loss '{s}': expected a probability between 0 and 1 (e.g. 0.01) or a percentage (e.g. 1%)")
        })?;
    if !(0.0..=1.0).contains(&p) {
        return Err(format!(
            "bad loss '{s}': must be between 0 and 1 (or 0% and 100%)"
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers() {
        assert_eq!(
            parse_buffer("500ms"),
            Ok(Buffer::Time(Duration::from_millis(500)))
        );
        assert_eq!(parse_buffer("375kB"), Ok(Buffer::Bytes(375_000)));
        assert_eq!(parse_buffer("375KB"), Ok(Buffer::Bytes(375_000)));
        assert_eq!(parse_buffer("1MiB"), Ok(Buffer::Bytes(1 << 20)));
        assert_eq!(parse_buffer("1500B"), Ok(Buffer::Bytes(1500)));
        assert_eq!(parse_buffer("1.5MB"), Ok(Buffer::Bytes(1_500_000)));
        assert_eq!(
            parse_buffer("375kb"),
            Err(format!("bad buffer '375kb': 'kb' is bits, a size takes a capital B; expected {BUFFER_FORMS}"))
        );
        for bad in ["", "500", "0ms", "0B", "375kb", "1mib", "20GiB"] {
            let e = parse_buffer(bad).unwrap_err();
            assert!(e.starts_with("bad buffer"), "{bad}: {e}");
        }
        assert_eq!(
            Buffer::Time(Duration::from_millis(500)).bytes_at(20_000_000),
            1_250_000
        );
        assert_eq!(Buffer::Bytes(42).bytes_at(20_000_000), 42);
    }

    #[test]
    fn losses() {
        assert_eq!(parse_loss("0.01"), Ok(0.01));
        assert_eq!(parse_loss("1%"), Ok(0.01));
        assert_eq!(parse_loss("0"), Ok(0.0));
        assert_eq!(parse_loss("1"), Ok(1.0));
        for bad in ["", "x", "1.5", "-0.1", "200%", "inf", "NaN"] {
            assert!(parse_loss(bad).is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,20}") {
            let _ = parse_buffer(&s);
            let _ = parse_loss(&s);
        }
    }
}
