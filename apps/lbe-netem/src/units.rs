//! Parsing of the command line's quantities: rates, durations, buffer sizes,
//! loss probabilities, `ADDR=RTT` path overrides and `LISTEN=UPSTREAM`
//! routes. Rates, durations and
//! sizes are `lbe-units`' (one grammar, one set of limits, its crate docs);
//! this module adds the emulator's own quantities.
//!
//! Every parser returns a one-line message on error that says what was wrong
//! and which forms are allowed; none of them panics.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

pub use lbe_units::parse_duration;
pub use lbe_units::parse_rate;
pub use lbe_units::MAX_DURATION;
pub use lbe_units::MAX_RATE_BPS;

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
    /// [`crate::model::LinkConfig::overhead`]).
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

/// Parses a socket address such as `127.0.0.1:5000` or `[::1]:5000`.
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    s.trim().parse().map_err(|_| {
        format!("bad address '{s}': expected IP:PORT, e.g. 127.0.0.1:5000 or [::1]:5000")
    })
}

/// An extra listening address whose flows get their own base RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathSpec {
    /// Where the extra clients connect.
    pub listen: SocketAddr,
    /// Base RTT of the flows through this address (rtt/2 each way).
    pub rtt: Duration,
}

/// Parses `ADDR=RTT`, e.g. `127.0.0.1:5001=100ms`.
pub fn parse_path(s: &str) -> Result<PathSpec, String> {
    let (addr, rtt) = s
        .split_once('=')
        .ok_or_else(|| format!("bad path '{s}': expected ADDR=RTT, e.g. 127.0.0.1:5001=100ms"))?;
    let listen = parse_addr(addr).map_err(|e| format!("bad path '{s}': {e}"))?;
    let rtt = parse_duration(rtt).map_err(|e| format!("bad path '{s}': {e}"))?;
    Ok(PathSpec { listen, rtt })
}

/// An extra listening address relayed to an upstream of its own (through
/// the same bottleneck as every other flow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteSpec {
    /// Where the route's clients connect.
    pub listen: SocketAddr,
    /// The server the route's flows are relayed to.
    pub upstream: SocketAddr,
}

/// Parses `LISTEN=UPSTREAM`, e.g. `127.0.0.1:5001=127.0.0.1:4434`.
pub fn parse_route(s: &str) -> Result<RouteSpec, String> {
    const FORM: &str = "expected LISTEN=UPSTREAM, e.g. 127.0.0.1:5001=127.0.0.1:4434";
    let (listen, upstream) = s
        .split_once('=')
        .ok_or_else(|| format!("bad route '{s}': {FORM}"))?;
    let listen = parse_addr(listen).map_err(|e| format!("bad route '{s}': {e}"))?;
    let upstream = parse_addr(upstream).map_err(|e| format!("bad route '{s}': {e}"))?;
    if upstream.port() == 0 {
        return Err(format!(
            "bad route '{s}': the upstream needs a port (not 0); {FORM}"
        ));
    }
    Ok(RouteSpec { listen, upstream })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("20mbit"), Ok(20_000_000));
        assert_eq!(parse_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("500kbit"), Ok(500_000));
        assert_eq!(parse_rate("2.5Mbit"), Ok(2_500_000));
        assert_eq!(parse_rate("20Mbps"), Ok(20_000_000));
        assert_eq!(parse_rate("9600bps"), Ok(9600));
        assert_eq!(parse_rate("100bit"), Ok(100));
        for bad in [
            "",
            "20",
            "mbit",
            "20mb",
            "-5mbit",
            "0mbit",
            "1.2.3mbit",
            "200gbit",
            "nanmbit",
            ".mbit",
        ] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.starts_with("bad rate"), "{bad}: {e}");
            assert!(!e.contains('\n'));
        }
        assert!(parse_rate("20").unwrap_err().contains("missing unit"));
        assert!(parse_rate("20mb")
            .unwrap_err()
            .contains("unknown unit 'mb'"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("50ms"), Ok(Duration::from_millis(50)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0ms"), Ok(Duration::ZERO));
        for bad in ["", "50", "61m", "ms", "5h", "99999s", "-1s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

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

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("127.0.0.1:5001=100ms"),
            Ok(PathSpec {
                listen: "127.0.0.1:5001".parse().unwrap(),
                rtt: Duration::from_millis(100)
            })
        );
        assert!(parse_path("127.0.0.1:5001").is_err());
        assert!(parse_path("127.0.0.1=100ms").is_err());
        assert!(parse_path("127.0.0.1:5001=100").is_err());
    }

    #[test]
    fn routes() {
        assert_eq!(
            parse_route("127.0.0.1:5001=127.0.0.1:4434"),
            Ok(RouteSpec {
                listen: "127.0.0.1:5001".parse().unwrap(),
                upstream: "127.0.0.1:4434".parse().unwrap(),
            })
        );
        assert_eq!(
            parse_route(" [::1]:0=[::1]:443"),
            Ok(RouteSpec {
                listen: "[::1]:0".parse().unwrap(),
                upstream: "[::1]:443".parse().unwrap(),
            })
        );
        assert_eq!(
            parse_route("127.0.0.1:5001"),
            Err("bad route '127.0.0.1:5001': expected LISTEN=UPSTREAM, e.g. 127.0.0.1:5001=127.0.0.1:4434".into())
        );
        assert_eq!(
            parse_route("127.0.0.1:5001=100ms"),
            Err("bad route '127.0.0.1:5001=100ms': bad address '100ms': expected IP:PORT, e.g. 127.0.0.1:5000 or [::1]:5000".into())
        );
        assert_eq!(
            parse_route("localhost:1=127.0.0.1:2"),
            Err("bad route 'localhost:1=127.0.0.1:2': bad address 'localhost:1': expected IP:PORT, e.g. 127.0.0.1:5000 or [::1]:5000".into())
        );
        assert_eq!(
            parse_route("127.0.0.1:5001=127.0.0.1:0"),
            Err("bad route '127.0.0.1:5001=127.0.0.1:0': the upstream needs a port (not 0); expected LISTEN=UPSTREAM, e.g. 127.0.0.1:5001=127.0.0.1:4434".into())
        );
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,20}") {
            let _ = parse_rate(&s);
            let _ = parse_duration(&s);
            let _ = parse_buffer(&s);
            let _ = parse_loss(&s);
            let _ = parse_path(&s);
            let _ = parse_route(&s);
        }
    }
}
