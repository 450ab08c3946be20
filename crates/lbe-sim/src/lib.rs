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

mod config;
mod host_latency;
mod output;
mod qlog_file;
mod queue;
pub mod stack;
mod workload;

pub use config::Config;
pub use host_latency::HOST_LATENCY;
pub use output::FlowStats;
pub use output::SimOutput;
pub use output::WorkloadOutput;
pub use stack::run;

/// What `summary.json` and a sweep's `results.json` record as the engine
/// that ran (`"engine"`): quiche itself. Files from before the re-stated
/// engine was removed may say `"restated"`; `lbe-lab merge` keeps shards of
/// different engines apart.
pub const ENGINE: &str = "quiche";
