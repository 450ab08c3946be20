//! Scenario files: one emulated bottleneck, several flows.
//!
//! ```toml
//! seed = 1              # optional, top level: seeds the random loss; the
//!                       # same scenario and seed give the same simulated
//!                       # run (lbe-lab run --sim), byte for byte
//! [link]
//! rate = "20mbit"
//! rtt = "50ms"
//! buffer = "500ms"      # time at line rate, or bytes like "375kB"
//! loss = 0.0            # optional random loss, 0 to 1
//! cross_traffic = "1mbit"  # optional unresponsive Poisson traffic through
//!                          # the bottleneck (lbe-netem --cross-traffic)
//! pacing = false        # optional: every flow's default (true: paced)
//! [analysis]            # the window the figures are computed over (optional)
//! from = "10s"
//! to = "40s"
//! [ports]               # optional fixed ports (default: any free ones)
//! server = 4433
//! netem = 5000          # and netem+1, netem+2... for extra base RTTs
//! [[flow]]
//! cc = "ledbatpp"
//! start = "0s"
//! stop = "40s"          # or bytes = "100MB"
//! deadline = "120s"     # optional, with bytes, cdg or ledbatpp only: the
//!                       # flow is deadline-aware (lbe_cc::deadline), the
//!                       # deadline counted from its start
//! rtt = "100ms"         # optional per-flow base RTT
//! name = "background"   # optional label (default flowN)
//! pacing = false        # optional: send unpaced (default: the link's)
//! receiver_lbe = true   # optional, simulator only (lbe-lab run --sim):
//!                       # receiver-driven LBE, the receiver runs LEDBAT++
//!                       # and caps the sender's flow-control credit at its
//!                       # window (h3-fetch --lbe receiver); `cc` stays the
//!                       # sender's controller (default false)
//! ```
//!
//! `receiver_lbe` with `cc` spans h3-fetch's `--lbe` modes against a
//! server that runs `cc` for the download: `cc = "cubic"` alone is a normal
//! download (none), with `receiver_lbe` it is `--lbe receiver`;
//! `cc = "ledbatpp"` alone is `--lbe sender` (h3-serve yielding on
//! `u=7`), with `receiver_lbe` it is `--lbe both`.
//!
//! Everything is checked before anything starts; an error names the file
//! and the line.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use quiche_lbe::CcSpec;
use serde::Deserialize;
use toml::Spanned;

/// A checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub link: Link,
    /// The analysis window, scenario time.
    pub window: Option<(Duration, Duration)>,
    pub ports: Ports,
    pub flows: Vec<Flow>,
    /// Seeds the bottleneck's random loss (`lbe-netem`'s own seed when
    /// unset; 1 in the simulator). Controllers seed themselves from their
    /// spec (CDG's `seed`).
    pub seed: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub rate_bps: u64,
    pub rtt: Duration,
    pub buffer: lbe_netem::Buffer,
    pub loss: f64,
    /// Mean rate of the bottleneck's cross traffic
    /// ([`lbe_netem::CrossTraffic`]), bits per second.
    pub cross_traffic_bps: Option<u64>,
}

impl Link {
    /// The buffer as time at line rate.
    pub fn buffer_ms(&self) -> f64 {
        self.buffer.bytes_at(self.rate_bps) as f64 * 8.0 / self.rate_bps as f64 * 1e3
    }
}

/// Fixed ports; 0 picks a free one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ports {
    pub server: u16,
    pub netem: u16,
}

/// How much a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowEnd {
    /// Until this scenario time.
    Stop(Duration),
    /// This many bytes.
    Bytes(u64),
}

#[derive(Clone, Debug)]
pub struct Flow {
    /// 1-based position in the file.
    pub id: usize,
    pub name: String,
    pub cc: CcSpec,
    pub start: Duration,
    pub end: FlowEnd,
    /// Base RTT; the link's unless given.
    pub rtt: Duration,
    /// Whether the sender paces (quic-bulk `--pacing`).
    pub pacing: bool,
    /// A deadline-aware flow's deadline (quic-bulk `--deadline`); `cc` is
    /// the controller it steers.
    pub deadline: Option<Duration>,
    /// Receiver-driven LBE (simulator only): `lbe_sim::Flow::receiver_lbe`.
    pub receiver_lbe: bool,
}

impl Flow {
    /// The spec the sender runs: `cc`, with `deadline=` when it has one.
    pub fn sender_cc(&self) -> CcSpec {
        match self.deadline {
            Some(d) => self
                .cc
                .with_deadline(d)
                .expect("the scenario checked that the deadline applies"),
            None => self.cc.clone(),
        }
    }

    /// Scenario time at which the flow is due to stop, if it has one.
    pub fn stop(&self) -> Option<Duration> {
        match self.end {
            FlowEnd::Stop(t) => Some(t),
            FlowEnd::Bytes(_) => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    seed: Option<u64>,
    link: Spanned<RawLink>,
    analysis: Option<RawAnalysis>,
    ports: Option<RawPorts>,
    #[serde(default)]
    flow: Vec<Spanned<RawFlow>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    rate: Spanned<String>,
    rtt: Spanned<String>,
    buffer: Spanned<String>,
    loss: Option<Spanned<f64>>,
    cross_traffic: Option<Spanned<String>>,
    pacing: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnalysis {
    from: Spanned<String>,
    to: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPorts {
    server: Option<Spanned<u16>>,
    netem: Option<Spanned<u16>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    cc: Spanned<String>,
    start: Option<Spanned<String>>,
    stop: Option<Spanned<String>>,
    bytes: Option<Spanned<String>>,
    deadline: Option<Spanned<String>>,
    rtt: Option<Spanned<String>>,
    name: Option<Spanned<String>>,
    pacing: Option<bool>,
    receiver_lbe: Option<bool>,
}

/// Where in the file a problem is.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn error(&self, span: Range<usize>, message: impl std::fmt::Display) -> String {
        format!(
            "{}:{}: {message}",
            self.path.display(),
            self.line_of(span.start)
        )
    }

    fn value<T>(
        &self,
        field: &Spanned<String>,
        what: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, String> {
        parse(field.get_ref()).map_err(|e| self.error(field.span(), format!("{what}: {e}")))
    }
}

fn parse_buffer(text: &str) -> Result<lbe_netem::Buffer, String> {
    lbe_netem::parse_buffer(text)
}

/// Reads and checks a scenario file.
pub fn load(path: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(path, &text)
}

/// A toml error's message on one line, as every error of ours (toml's can
/// span lines: "invalid string\nexpected ...").
pub(crate) fn toml_message(e: &toml::de::Error) -> String {
    let lines: Vec<&str> = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("; ")
}

/// Checks a scenario's text; `path` only names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, String> {
    let src = Source { path, text };
    let raw: RawScenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| src.line_of(s.start));
        format!("{}:{line}: {}", path.display(), toml_message(&e))
    })?;

    let link_span = raw.link.span();
    let raw_link = raw.link.into_inner();
    let link = Link {
        rate_bps: src.value(&raw_link.rate, "link rate", lbe_units::parse_rate)?,
        rtt: src.value(&raw_link.rtt, "link rtt", lbe_units::parse_duration)?,
        buffer: src.value(&raw_link.buffer, "link buffer", parse_buffer)?,
        loss: match &raw_link.loss {
            Some(l) if !(0.0..1.0).contains(l.get_ref()) => {
                return Err(src.error(l.span(), "link loss must be from 0 to below 1"))
            }
            Some(l) => *l.get_ref(),
            None => 0.0,
        },
        cross_traffic_bps: match &raw_link.cross_traffic {
            Some(c) => Some(src.value(c, "link cross_traffic", lbe_units::parse_rate)?),
            None => None,
        },
    };
    if let (Some(c), Some(cross)) = (&raw_link.cross_traffic, link.cross_traffic_bps) {
        if cross == 0 || cross >= link.rate_bps {
            return Err(src.error(
                c.span(),
                "link cross_traffic must be above zero and below the link rate",
            ));
        }
    }
    if link.rtt.is_zero() {
        return Err(src.error(raw_link.rtt.span(), "link rtt must be above zero"));
    }
    if link.buffer.bytes_at(link.rate_bps) < 1500 {
        return Err(src.error(
            raw_link.buffer.span(),
            "link buffer must hold at least one packet (1500 bytes)",
        ));
    }

    let window = match &raw.analysis {
        Some(a) => {
            let from = src.value(&a.from, "analysis from", lbe_units::parse_duration)?;
            let to = src.value(&a.to, "analysis to", lbe_units::parse_duration)?;
            if to <= from {
                return Err(src.error(a.to.span(), "analysis 'to' must be after 'from'"));
            }
            Some((from, to))
        }
        None => None,
    };

    if raw.flow.is_empty() {
        return Err(src.error(link_span, "the scenario has no [[flow]]"));
    }
    let mut flows = Vec::new();
    let mut names = BTreeSet::new();
    for (i, spanned) in raw.flow.iter().enumerate() {
        let f = spanned.get_ref();
        let id = i + 1;
        let cc: CcSpec = src.value(&f.cc, "flow cc", |t| {
            t.parse().map_err(|e: quiche_lbe::SpecError| e.to_string())
        })?;
        let start = match &f.start {
            Some(s) => src.value(s, "flow start", lbe_units::parse_duration)?,
            None => Duration::ZERO,
        };
        let end = match (&f.stop, &f.bytes) {
            (Some(stop), None) => {
                let t = src.value(stop, "flow stop", lbe_units::parse_duration)?;
                if t <= start {
                    return Err(src.error(stop.span(), "flow stop must be after its start"));
                }
                FlowEnd::Stop(t)
            }
            (None, Some(bytes)) => {
                let b = src.value(bytes, "flow bytes", lbe_units::parse_size)?;
                if b == 0 {
                    return Err(src.error(bytes.span(), "flow bytes must be above zero"));
                }
                FlowEnd::Bytes(b)
            }
            (Some(_), Some(bytes)) => {
                return Err(src.error(
                    bytes.span(),
                    "a flow has either 'stop' or 'bytes', not both",
                ))
            }
            (None, None) => return Err(src.error(spanned.span(), "a flow needs 'stop' or 'bytes'")),
        };
        let deadline = match &f.deadline {
            Some(d) => {
                let deadline = src.value(d, "flow deadline", lbe_units::parse_duration)?;
                if !matches!(end, FlowEnd::Bytes(_)) {
                    return Err(src.error(d.span(), "a flow's deadline needs 'bytes' (not 'stop')"));
                }
                cc.with_deadline(deadline)
                    .map_err(|e| src.error(d.span(), format!("flow deadline: {e}")))?;
                Some(deadline)
            }
            None => None,
        };
        let rtt = match &f.rtt {
            Some(r) => {
                let rtt = src.value(r, "flow rtt", lbe_units::parse_duration)?;
                if rtt.is_zero() {
                    return Err(src.error(r.span(), "flow rtt must be above zero"));
                }
                rtt
            }
            None => link.rtt,
        };
        let name = match &f.name {
            Some(n) => {
                let ok = !n.get_ref().is_empty()
                    && n.get_ref()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ok {
                    return Err(src.error(n.span(), "flow name: letters, digits and '_' only"));
                }
                n.get_ref().clone()
            }
            None => format!("flow{id}"),
        };
        if !names.insert(name.clone()) {
            let span = f.name.as_ref().map_or(spanned.span(), |n| n.span());
            return Err(src.error(span, format!("flow name '{name}' is used twice")));
        }
        flows.push(Flow {
            id,
            name,
            cc,
            start,
            end,
            rtt,
            pacing: f.pacing.or(raw_link.pacing).unwrap_or(true),
            deadline,
            receiver_lbe: f.receiver_lbe.unwrap_or(false),
        });
    }

    let ports = Ports {
        server: raw
            .ports
            .as_ref()
            .and_then(|p| p.server.as_ref())
            .map_or(0, |p| *p.get_ref()),
        netem: raw
            .ports
            .as_ref()
            .and_then(|p| p.netem.as_ref())
            .map_or(0, |p| *p.get_ref()),
    };
    if ports.server != 0 && ports.netem != 0 {
        let paths = distinct_rtts(&link, &flows).len() as u32;
        let netem_ports = u32::from(ports.netem)..u32::from(ports.netem) + paths;
        if netem_ports.contains(&u32::from(ports.server)) || netem_ports.end > 65536 {
            let span = raw
                .ports
                .as_ref()
                .and_then(|p| p.server.as_ref())
                .map_or(link_span, |p| p.span());
            return Err(src.error(
                span,
                format!(
                    "ports overlap: the server's {} is among lbe-netem's {}..{} (one per base RTT)",
                    ports.server,
                    netem_ports.start,
                    netem_ports.end - 1
                ),
            ));
        }
    }

    Ok(Scenario {
        link,
        window,
        ports,
        flows,
        seed: raw.seed,
    })
}

/// The base RTTs of the scenario, the link's first: lbe-netem listens on
/// one address per base RTT.
pub fn distinct_rtts(link: &Link, flows: &[Flow]) -> Vec<Duration> {
    let mut rtts = vec![link.rtt];
    for f in flows {
        if !rtts.contains(&f.rtt) {
            rtts.push(f.rtt);
        }
    }
    rtts
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[analysis]
from = "10s"
to = "40s"
[[flow]]
cc = "ledbatpp"
start = "0s"
stop = "40s"
[[flow]]
cc = "cubic"
start = "10s"
bytes = "10MB"
rtt = "100ms"
name = "fg"
"#;

    fn err(text: &str) -> String {
        parse(Path::new("s.toml"), text).unwrap_err()
    }

    #[test]
    fn parses_the_design_example() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert_eq!(s.link.rate_bps, 20_000_000);
        assert_eq!(s.link.buffer_ms(), 500.0);
        assert_eq!(
            s.window,
            Some((Duration::from_secs(10), Duration::from_secs(40)))
        );
        assert_eq!(s.flows.len(), 2);
        assert_eq!(s.flows[0].name, "flow1");
        assert_eq!(s.flows[0].end, FlowEnd::Stop(Duration::from_secs(40)));
        assert_eq!(s.flows[1].name, "fg");
        assert_eq!(s.flows[1].end, FlowEnd::Bytes(10_000_000));
        assert_eq!(s.flows[1].rtt, Duration::from_millis(100));
        assert_eq!(
            distinct_rtts(&s.link, &s.flows),
            vec![Duration::from_millis(50), Duration::from_millis(100)]
        );
    }

    #[test]
    fn pacing_is_on_unless_the_flow_or_the_link_says_otherwise() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert!(s.flows.iter().all(|f| f.pacing));
        let one_flow = GOOD.replace("name = \"fg\"", "name = \"fg\"\npacing = false");
        let s = parse(Path::new("s.toml"), &one_flow).unwrap();
        assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (true, false));
        let link_wide = GOOD.replace("buffer = \"500ms\"", "buffer = \"500ms\"\npacing = false");
        let s = parse(Path::new("s.toml"), &link_wide).unwrap();
        assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (false, false));
        let flow_overrides = link_wide.replace("name = \"fg\"", "name = \"fg\"\npacing = true");
        let s = parse(Path::new("s.toml"), &flow_overrides).unwrap();
        assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (false, true));
        assert!(
            err(&GOOD.replace("name = \"fg\"", "name = \"fg\"\npacing = \"off\""))
                .starts_with("s.toml:19: invalid type: string \"off\", expected a boolean")
        );
    }

    #[test]
    fn cross_traffic_is_a_rate_below_the_link_rate() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert_eq!(s.link.cross_traffic_bps, None);
        let with = |v: &str| {
            GOOD.replace(
                "buffer = \"500ms\"",
                &format!("buffer = \"500ms\"\ncross_traffic = \"{v}\""),
            )
        };
        let s = parse(Path::new("s.toml"), &with("1mbit")).unwrap();
        assert_eq!(s.link.cross_traffic_bps, Some(1_000_000));
        assert_eq!(
            err(&with("20mbit")),
            "s.toml:6: link cross_traffic must be above zero and below the link rate"
        );
        assert!(
            err(&with("1 mbit/s")).starts_with("s.toml:6: link cross_traffic: "),
            "{}",
            err(&with("1 mbit/s"))
        );
    }

    #[test]
    fn a_deadline_needs_bytes_and_a_steerable_controller() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert_eq!(s.flows[1].deadline, None);
        let good = GOOD
            .replace("cc = \"cubic\"", "cc = \"cdg\"")
            .replace("bytes = \"10MB\"", "bytes = \"10MB\"\ndeadline = \"2m\"");
        let s = parse(Path::new("s.toml"), &good).unwrap();
        assert_eq!(s.flows[1].deadline, Some(Duration::from_secs(120)));
        assert_eq!(s.flows[1].cc.as_str(), "cdg");
        assert_eq!(s.flows[1].sender_cc().as_str(), "cdg:deadline=120s");
        assert_eq!(
            err(&GOOD.replace("bytes = \"10MB\"", "bytes = \"10MB\"\ndeadline = \"2m\"")),
            "s.toml:17: flow deadline: 'cubic' is quiche's own controller: a deadline steers only cdg and ledbatpp"
        );
        assert_eq!(
            err(&GOOD.replace(
                "stop = \"40s\"\n[[flow]]",
                "stop = \"40s\"\ndeadline = \"9s\"\n[[flow]]"
            )),
            "s.toml:13: a flow's deadline needs 'bytes' (not 'stop')"
        );
        assert_eq!(
            err(&good.replace("\"2m\"", "\"2\"")),
            "s.toml:17: flow deadline: bad duration '2': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
        );
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            err(&GOOD.replace("rate = \"20mbit\"", "rate = \"20mbit\"\nspeed = 3")),
            "s.toml:4: unknown field `speed`, expected one of `rate`, `rtt`, `buffer`, `loss`, `cross_traffic`, `pacing`"
        );
        assert_eq!(
            err(&GOOD.replace("\"50ms\"", "\"50\"")),
            "s.toml:4: link rtt: bad duration '50': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
        );
        assert!(err("[[flow]]\ncc = \"cubic\"\nstop = \"1s\"\n").contains("missing field `link`"));
        assert_eq!(
            err(&GOOD.replace("cc = \"cubic\"", "cc = \"vegas\"")),
            "s.toml:14: flow cc: unknown congestion controller 'vegas' (allowed: cubic, reno, bbr2, ledbatpp, ledbat, cdg, fixed)"
        );
        assert_eq!(
            err(&GOOD.replace("stop = \"40s\"\n[[flow]]", "stop = \"0s\"\n[[flow]]")),
            "s.toml:12: flow stop must be after its start"
        );
        assert_eq!(
            err(&GOOD.replace("bytes = \"10MB\"", "bytes = \"10MB\"\nstop = \"20s\"")),
            "s.toml:16: a flow has either 'stop' or 'bytes', not both"
        );
        assert_eq!(
            err(&GOOD.replace("to = \"40s\"", "to = \"5s\"")),
            "s.toml:8: analysis 'to' must be after 'from'"
        );
        assert_eq!(
            err(&GOOD.replace("name = \"fg\"", "name = \"flow1\"")),
            "s.toml:18: flow name 'flow1' is used twice"
        );
        assert_eq!(
            err(&format!("{GOOD}[ports]\nserver = 5001\nnetem = 5000\n")),
            "s.toml:20: ports overlap: the server's 5001 is among lbe-netem's 5000..5001 (one per base RTT)"
        );
        assert_eq!(
            err("[link]\nrate = \"20mbit\"\nrtt = \"5ms\"\nbuffer = \"0.1ms\"\n"),
            "s.toml:4: link buffer must hold at least one packet (1500 bytes)"
        );
        assert_eq!(
            err("[link]\nrate = \"20mbit\"\nrtt = \"5ms\"\nbuffer = \"10ms\"\n"),
            "s.toml:1: the scenario has no [[flow]]"
        );
        assert!(err("[link\n").starts_with("s.toml:1: "));
    }
}
