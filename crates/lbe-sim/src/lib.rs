//! `lbe-sim`: a deterministic discrete-event simulator of the lab that
//! runs quiche itself.
//!
//! The lab (`lbe-lab run`) puts quiche connections through `lbe-netem` in
//! real time. The simulator runs the same scenario in virtual time with the
//! same parts ([`stack`]):
//!
//! - the connections are real `quiche::Connection` pairs (patch 0007 gives
//!   quiche a clock the simulator sets): TLS handshake, streams, flow
//!   control, quiche's own loss detection, pacer and ACKs, every controller
//!   quiche has (`bbr2` too), ours through the very adapter quiche runs
//!   (`quiche_lbe::PluginFactory`); around them each endpoint runs our
//!   apps' loop (`lbe_endpoint`: when to send, holding a paced datagram
//!   until its release time);
//! - the bottleneck is `lbe-link`'s model ([`lbe_link::Link`]), the one
//!   `lbe-netem` runs in real time: the same queue disciplines, rate
//!   arithmetic, per-datagram overhead and seeded loss;
//! - the figures come from `qlog-analysis`: each flow's qlog events, as
//!   quiche emits them, are fed in memory to the same `FlowAnalyzer` that
//!   reads qlog files.
//!
//! What is not quiche's or the link's is the hosts' timing: each wake-up
//! of an endpoint's loop after a datagram arrives comes one drawn host
//! latency later ([`HOST_LATENCY`]).
//!
//! Nothing reads a clock: time is an `Instant` fixed at the start plus
//! virtual durations, and the same configuration and seed always give the
//! same events and figures.
//!
//! Until November 2026 a second engine re-stated quiche's legacy recovery
//! (packet numbers, RFC 9002 loss detection, the RTT estimator, the pacer,
//! the receiver's ACKs and flow control) around the controllers, for a
//! seventh of the CPU; it could not run `bbr2`, h3 flows, workloads or
//! uploads, and was removed so that quiche's logic has one home.
//! `docs/lbe-sim.md` keeps what the two engines measured where they differed.
#![forbid(unsafe_code)]

mod output;
mod qlog_file;
mod queue;
pub mod stack;
mod workload;

use std::time::Duration;

pub use output::FlowStats;
pub use output::SimOutput;
pub use output::WorkloadOutput;
pub use stack::run;

/// What `summary.json` and a sweep's `results.json` record as the engine
/// that ran (`"engine"`): quiche itself. Files from before the re-stated
/// engine was removed may say `"restated"`; `lbe-lab merge` keeps shards of
/// different engines apart.
pub const ENGINE: &str = "quiche";

/// A run: a scenario's bottleneck and flows (`lbe-scenario`'s model, as
/// `lbe-lab` checked them) with the simulator's own settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// The bottleneck: its rate, buffer and random loss (and the base RTT
    /// of flows that do not set their own), and the client->server
    /// direction (`reverse_rate`, `reverse_buffer`, `reverse_loss`). Cross
    /// traffic is not simulated.
    pub link: lbe_scenario::Link,
    /// The flows through it: bulk transfers, each with its sender's
    /// controller ([`lbe_scenario::Flow::sender_cc`]) as a quic-bulk
    /// download or upload ([`lbe_scenario::Flow::direction`]) or an HTTP/3
    /// download, with its endpoints' clocks; and foreground workloads.
    pub flows: Vec<lbe_scenario::Flow>,
    /// The analysis window; the whole run when `None`.
    pub window: Option<(Duration, Duration)>,
    /// Seeds the bottleneck's random loss and the endpoints' wake-up
    /// latencies.
    pub seed: u64,
    /// How long, on average, an endpoint's event loop takes to wake after a
    /// datagram arrives (each wake-up draws from an exponential distribution
    /// with this mean): it then handles everything that arrived meanwhile (the
    /// receiver acknowledges it with one ACK, the sender takes every ACK in
    /// before it sends again). See [`HOST_LATENCY`].
    pub host_latency: Duration,
    /// Also write each flow's events as a qlog file (the sender's) into this
    /// directory, named as our apps name theirs (`lbe_cc::qlog_name`).
    pub qlog_dir: Option<std::path::PathBuf>,
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
/// These figures were fitted on the re-stated engine this crate had
/// before; on quiche itself the same latency keeps the fidelity table's
/// rows (`docs/fidelity.md`: LEDBAT++ alone 0.906 / 0.890 / 0.873 at
/// 20 / 50 / 100 ms against the lab's 0.888 / 0.880 / 0.870).
pub const HOST_LATENCY: Duration = Duration::from_micros(300);
