//! `lbe-sim`: a deterministic discrete-event simulator of the lab.
//!
//! The lab (`lbe-lab run`) puts quiche connections through `lbe-netem` in
//! real time. The simulator runs the same scenario in virtual time with the
//! same parts wherever they are sans-IO:
//!
//! - the congestion controllers are the real ones, driven through quiche's
//!   public `CongestionControl` trait: ours through the very adapter quiche
//!   runs (`quiche_lbe::PluginFactory`), quiche's Reno and CUBIC through
//!   patch 0003's `quiche::BuiltinCongestionControl`, which wraps quiche's
//!   own code;
//! - the bottleneck is `lbe-link`'s model ([`lbe_link::Link`]), the one
//!   `lbe-netem` runs in real time: the same drop-tail FIFO, rate
//!   arithmetic, per-datagram overhead and seeded loss;
//! - the figures come from `qlog-analysis`: each flow's events (packet sent,
//!   ACK received, metrics, losses, states) are fed in memory to the same
//!   `FlowAnalyzer` that reads qlog files ([`record`]).
//!
//! Around the controllers, [`sender`] is quiche's legacy recovery re-stated:
//! packet numbers, RFC 9002 loss detection and PTO, the RTT estimator of
//! RFC 9002 §5 ([`rtt`]), the pacer of patch 0001 and the send loop of our
//! apps (a paced datagram is held until 1 ms before its release time, and
//! nothing more is built until it left: `quiche_lbe::endpoint`). [`ack`] is
//! quiche's receiver. What is not modelled: the handshake (data starts 1.5
//! base RTTs after the flow's start, with one RTT sample of the base RTT,
//! as a server's first 1-RTT data does), flow control (our apps' windows
//! never limit these transfers) except for a receiver-driven flow
//! ([`lbe_scenario::Flow::receiver_lbe`], [`rx`]: the connection's credit, capped by the
//! receiver's LEDBAT++ window), and the hosts' own timing noise.
//!
//! That is the re-stated engine ([`Engine::Restated`]). The default,
//! [`Engine::Quiche`] ([`stack`]), runs quiche itself in virtual time
//! (patch 0007): real connections with their handshakes, quiche's own
//! recovery, pacer and ACKs, and `bbr2`.
//!
//! Nothing reads a clock: time is an `Instant` fixed at the start plus
//! virtual durations, and the same configuration and seed always give the
//! same events and figures.
#![forbid(unsafe_code)]

pub mod ack;
mod engine;
mod qlog_file;
mod queue;
pub mod record;
pub mod rtt;
pub mod rx;
pub mod sender;
pub mod stack;
mod workload;

use std::time::Duration;

pub use ack::AckPolicy;
pub use engine::FlowStats;
pub use engine::SimOutput;
pub use engine::WorkloadOutput;
pub use rx::ReceiverWindowStats;
pub use sender::Framing;

/// A run: a scenario's bottleneck and flows (`lbe-scenario`'s model, as
/// `lbe-lab` checked them) with the simulator's own settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// The bottleneck: its rate, buffer and random loss (and the base RTT
    /// of flows that do not set their own); on the quiche engine also the
    /// client->server direction (`reverse_rate`, `reverse_buffer`,
    /// `reverse_loss`). Cross traffic is not simulated.
    pub link: lbe_scenario::Link,
    /// The transfers through it, each with its sender's controller
    /// ([`lbe_scenario::Flow::sender_cc`]); every flow runs as a quic-bulk
    /// download, or on the quiche engine an upload
    /// ([`lbe_scenario::Flow::direction`]) with its endpoints' clocks.
    pub flows: Vec<lbe_scenario::Flow>,
    /// The analysis window; the whole run when `None`.
    pub window: Option<(Duration, Duration)>,
    /// Seeds the bottleneck's random loss and the endpoints' wake-up
    /// latencies.
    pub seed: u64,
    pub ack_policy: AckPolicy,
    pub framing: Framing,
    /// How long, on average, an endpoint's event loop takes to wake after a
    /// datagram arrives (each wake-up draws from an exponential distribution
    /// with this mean): it then handles everything that arrived meanwhile (the
    /// receiver acknowledges it with one ACK, the sender takes every ACK in
    /// before it sends again). See [`HOST_LATENCY`].
    pub host_latency: Duration,
    /// Which engine runs the flows.
    pub engine: Engine,
    /// Also write each flow's events as a qlog file (the sender's) into this
    /// directory, named as our apps name theirs (`lbe_cc::qlog_name`).
    pub qlog_dir: Option<std::path::PathBuf>,
}

/// What runs the flows' connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// quiche itself in virtual time ([`stack`]): real connections, TLS
    /// handshake, quiche's loss detection, pacer and ACKs, `bbr2` too.
    /// The default: what the simulator's figures and `make test`'s bars
    /// come from.
    #[default]
    Quiche,
    /// The re-stated engine for what it runs, the quiche engine for what
    /// only quiche runs ([`Engine::resolve`]): a seventh of the quiche
    /// engine's CPU for a bulk flow (`scripts/sim-bench.sh`), for quick
    /// looks and large sweeps.
    Auto,
    /// quiche's legacy recovery re-stated around the real controllers
    /// ([`sender`], [`rtt`], [`ack`], [`rx`]).
    Restated,
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Engine::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                let allowed: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
                format!(
                    "unknown simulator engine '{s}' (allowed: {})",
                    allowed.join(", ")
                )
            })
    }
}

impl Engine {
    /// Every engine, the default first.
    pub const ALL: [Engine; 3] = [Engine::Quiche, Engine::Auto, Engine::Restated];

    /// The name `--engine` takes (and `summary.json`'s `engine` shows).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Quiche => "quiche",
            Engine::Auto => "auto",
            Engine::Restated => "restated",
        }
    }

    /// The engine that runs `config`: [`Engine::Auto`] is the quiche engine
    /// when the run needs what only quiche has (the reason is returned
    /// with it), else the re-stated engine; the others are themselves.
    ///
    /// Only quiche has: `bbr2` (quiche's gcongestion recovery), foreground
    /// workloads (web and video are new connections with handshakes; ping
    /// and cbr share the path with them), h3 flows (HTTP/3), uploads, a limited
    /// client->server direction, and endpoint clocks (timestamps).
    pub fn resolve(self, config: &Config) -> (Engine, Option<String>) {
        if self != Engine::Auto {
            return (self, None);
        }
        let reason = config
            .flows
            .iter()
            .find_map(|f| {
                if !f.kind.is_bulk() || matches!(f.kind, lbe_scenario::FlowKind::H3(_)) {
                    Some(format!("flow {}: kind = \"{}\"", f.name, f.kind.name()))
                } else if f.sender_cc().name() == "bbr2" {
                    Some(format!("flow {}: cc = \"bbr2\"", f.name))
                } else if f.direction == lbe_scenario::Direction::Upload {
                    Some(format!("flow {}: direction = \"upload\"", f.name))
                } else if !f.client_clock.is_exact() || !f.server_clock.is_exact() {
                    Some(format!("flow {}: endpoint clocks", f.name))
                } else {
                    None
                }
            })
            .or_else(|| {
                config
                    .link
                    .has_reverse()
                    .then(|| "[link] reverse_rate or reverse_loss".to_string())
            });
        match reason {
            Some(r) => (Engine::Quiche, Some(r)),
            None => (Engine::Restated, None),
        }
    }
}

/// Runs `config` on its [`Config::engine`] ([`Engine::resolve`]).
pub fn run(config: &Config) -> Result<SimOutput, String> {
    match config.engine.resolve(config).0 {
        Engine::Restated | Engine::Auto => engine::run(config),
        Engine::Quiche => stack::run(config),
    }
}

/// The default [`Config::host_latency`], fitted to the lab.
///
/// On our 2-core machines the client and the server share a core with the
/// emulator preempting them, and a lab run's qlogs show the batching that
/// follows (LEDBAT++ alone, 20 Mbit/s, 20 ms, 500 ms buffer, 15 s: 1.19 data
/// packets per client ACK, 24 % of the ACKs reaching the server within
/// 50 µs of the one before, 87 % of the data datagrams full-sized). With no
/// latency every ACK frees exactly one packet's worth of window, so a
/// partial packet stays partial for ever: 4 % of the simulated datagrams
/// were full-sized and utilisation was 0.83 against the lab's 0.89.
/// Utilisation by a fixed latency (LEDBAT++ alone at base RTT
/// 20 / 50 / 100 ms; lab 0.888 / 0.880 / 0.870): 0 µs 0.828 / 0.849 / 0.860;
/// 100 µs 0.838 / 0.861 / 0.862; 200 µs 0.872 / 0.873 / 0.864; 300 µs
/// 0.885 / 0.876 / 0.863; 500 µs 0.889 / 0.877 / 0.863. 300 µs is the
/// smallest within 0.01 of all three. The lbe-netem README measured endpoint
/// wake-ups of 169 µs p50 and 1.8 ms p99 on a loaded machine: a long tail,
/// so each wake-up draws from an exponential distribution with that mean
/// (0.901 / 0.886 alone at 20 / 50 ms). Repeated lab runs differ; so do
/// the simulator's seeds, and the draw keeps a deterministic simulator
/// out of drop-tail phase locking, where one flow's packets always meet
/// the full queue (two Reno flows on 10 Mbit/s with a 50 ms buffer: first
/// flow's share 0.535 / 0.491 / 0.499 over seeds 1-3; lab 0.499 and 0.487).
pub const HOST_LATENCY: Duration = Duration::from_micros(300);

/// Builds the controller a spec names, as quiche would install it: a
/// plug-in through its factory (the adapter quiche runs), quiche's Reno or
/// CUBIC through patch 0003. BBRv2 runs on quiche's other recovery
/// (gcongestion: its own loss detection and pacer) and is not simulated.
pub fn controller(
    spec: &quiche_lbe::CcSpec,
    framing: &Framing,
) -> Result<sender::Controller, String> {
    /// quiche's `DEFAULT_INITIAL_CONGESTION_WINDOW_PACKETS`, which our apps keep.
    const INITIAL_WINDOW_PACKETS: usize = 10;
    if let Some(factory) = spec.factory() {
        return Ok(sender::Controller::Plugin(factory.new_congestion_control(
            framing.max_datagram,
            INITIAL_WINDOW_PACKETS,
        )));
    }
    let algorithm = match spec.name() {
        "cubic" => quiche::CongestionControlAlgorithm::CUBIC,
        "reno" => quiche::CongestionControlAlgorithm::Reno,
        "bbr2" => {
            return Err("bbr2 runs on quiche's gcongestion recovery (its own loss detection and pacer), which the simulator does not model: run it in real time (lbe-lab run without --sim)".to_string())
        }
        other => return Err(format!("the simulator cannot run '{other}'")),
    };
    let options = quiche::BuiltinCongestionControlOptions {
        cubic_rollback: spec.cubic_rollback(),
        ..quiche::BuiltinCongestionControlOptions::default()
    };
    quiche::BuiltinCongestionControl::new(
        algorithm,
        framing.max_datagram,
        INITIAL_WINDOW_PACKETS,
        options,
    )
    .map(|c| sender::Controller::Builtin(Box::new(c)))
    .map_err(|e| format!("{}: quiche refused it: {e}", spec.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(flows: &str, link_extra: &str) -> Config {
        let text = format!(
            "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n{link_extra}{flows}"
        );
        let s = lbe_scenario::parse(std::path::Path::new("s.toml"), &text).unwrap();
        Config {
            link: s.link,
            flows: s.flows,
            window: None,
            seed: 1,
            ack_policy: AckPolicy::default(),
            framing: Framing::default(),
            host_latency: HOST_LATENCY,
            engine: Engine::Auto,
            qlog_dir: None,
        }
    }

    #[test]
    fn auto_picks_the_quiche_engine_only_for_what_only_quiche_runs() {
        let bulk = "[[flow]]\nname = \"a\"\ncc = \"ledbatpp\"\nstop = \"10s\"\n";
        let c = config(bulk, "");
        assert_eq!(c.engine.resolve(&c), (Engine::Restated, None));
        let needs = [
            (
                config(
                    "[[flow]]\nname = \"b\"\ncc = \"bbr2\"\nstop = \"10s\"\n",
                    "",
                ),
                "flow b: cc = \"bbr2\"",
            ),
            (
                config(
                    &format!("{bulk}[[flow]]\nname = \"w\"\nkind = \"ping\"\nstop = \"10s\"\n"),
                    "",
                ),
                "flow w: kind = \"ping\"",
            ),
            (
                config(
                    &format!("{bulk}direction = \"upload\"\n"),
                    "reverse_rate = \"2mbit\"\n",
                ),
                "flow a: direction = \"upload\"",
            ),
            (
                config(bulk, "reverse_rate = \"2mbit\"\n"),
                "[link] reverse_rate or reverse_loss",
            ),
        ];
        for (c, reason) in needs {
            assert_eq!(
                c.engine.resolve(&c),
                (Engine::Quiche, Some(reason.to_string()))
            );
            // An engine asked for by name is kept.
            let restated = Config {
                engine: Engine::Restated,
                ..c
            };
            assert_eq!(restated.engine.resolve(&restated), (Engine::Restated, None));
        }
        assert_eq!("auto".parse::<Engine>(), Ok(Engine::Auto));
        assert_eq!(Engine::default(), Engine::Quiche);
        for e in Engine::ALL {
            assert_eq!(e.name().parse::<Engine>(), Ok(e));
        }
        assert_eq!(
            "fast".parse::<Engine>(),
            Err("unknown simulator engine 'fast' (allowed: quiche, auto, restated)".to_string())
        );
    }
}
