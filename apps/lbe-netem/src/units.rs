//! Parsing of the command line's quantities: rates, durations, buffer sizes,
//! loss probabilities, `ADDR=RTT` path overrides and `LISTEN=UPSTREAM`
//! routes. Rates, durations and
//! sizes are `lbe-units`' (one grammar, one set of limits, its crate docs),
//! buffers and losses the link model's (`lbe-link`); this module adds the
//! emulator's own quantities: addresses, paths and routes.
//!
//! Every parser returns a one-line message on error that says what was wrong
//! and which forms are allowed; none of them panics.

use std::net::SocketAddr;
use std::time::Duration;

pub use lbe_link::parse_buffer;
pub use lbe_link::parse_loss;
pub use lbe_link::Buffer;
pub use lbe_link::MAX_BUFFER_BYTES;
pub use lbe_units::parse_duration;
pub use lbe_units::parse_rate;
pub use lbe_units::MAX_DURATION;
pub use lbe_units::MAX_RATE_BPS;

/// One `--change AT:KEY=VALUE[,KEY=VALUE]`: at `at` after the start, what
/// changes (the scenario's `[[link.change]]` keys, read by the same
/// parsers: rates and durations `lbe-units`', the loss `lbe-link`'s), as
/// lbe-link's path change.
pub use lbe_link::PathChange as ChangeSpec;

const CHANGE_FORM: &str =
    "expected AT:KEY=VALUE[,KEY=VALUE] with KEY one of rate, rtt, jitter, loss, outage, rebind (e.g. 60s:rtt=80ms or 10s:outage=2s)";

/// Parses `--change`: `60s:rtt=80ms`, `10s:rate=5mbit,loss=1%`,
/// `5s:rebind=true`.
pub fn parse_change(s: &str) -> Result<ChangeSpec, String> {
    let bad = |why: String| format!("bad change '{s}': {why}; {CHANGE_FORM}");
    let (at, rest) = s
        .trim()
        .split_once(':')
        .ok_or_else(|| bad("no ':' after the time".into()))?;
    let mut c = ChangeSpec {
        at: parse_duration(at).map_err(bad)?,
        ..ChangeSpec::default()
    };
    for kv in rest.split(',') {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad(format!("'{kv}' is not KEY=VALUE")))?;
        match k.trim() {
            "rate" => c.rate_bps = Some(parse_rate(v).map_err(bad)?),
            "rtt" => c.rtt = Some(parse_duration(v).map_err(bad)?),
            "jitter" => c.jitter = Some(parse_duration(v).map_err(bad)?),
            "loss" => c.loss = Some(parse_loss(v).map_err(bad)?),
            "outage" => c.outage = Some(parse_duration(v).map_err(bad)?),
            "rebind" => {
                c.rebind = match v.trim() {
                    "true" => true,
                    "false" => false,
                    other => return Err(bad(format!("rebind takes true or false, not '{other}'"))),
                }
            }
            other => return Err(bad(format!("unknown key '{other}'"))),
        }
    }
    if c == (ChangeSpec {
        at: c.at,
        ..ChangeSpec::default()
    }) {
        return Err(bad("it changes nothing".into()));
    }
    Ok(c)
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
    fn changes() {
        assert_eq!(
            parse_change("60s:rtt=80ms,loss=1%"),
            Ok(ChangeSpec {
                at: Duration::from_secs(60),
                rtt: Some(Duration::from_millis(80)),
                loss: Some(0.01),
                ..ChangeSpec::default()
            })
        );
        assert_eq!(
            parse_change("5s:rebind=true,outage=2s,rate=5mbit,jitter=3ms"),
            Ok(ChangeSpec {
                at: Duration::from_secs(5),
                rate_bps: Some(5_000_000),
                jitter: Some(Duration::from_millis(3)),
                outage: Some(Duration::from_secs(2)),
                rebind: true,
                ..ChangeSpec::default()
            })
        );
        assert_eq!(
            parse_change("5s:speed=1"),
            Err(format!(
                "bad change '5s:speed=1': unknown key 'speed'; {CHANGE_FORM}"
            ))
        );
        for bad in [
            "",
            "5s",
            "5s:",
            "5s:rtt",
            "x:rtt=1ms",
            "5s:rebind=false",
            "5s:rate=fast",
        ] {
            assert!(parse_change(bad).is_err(), "{bad}");
        }
    }

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
