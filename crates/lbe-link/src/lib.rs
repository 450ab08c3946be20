//! `lbe-link`: the sans-IO model of the emulated bottleneck, shared by the
//! real-time emulator (`lbe-netem`, which adds the sockets, the timers and
//! the command line) and the simulator (`lbe-sim`, which drives it in
//! virtual time), so that both put datagrams through the same arithmetic.
//!
//! - [`model`]: one direction of the path: random loss, a drop-tail FIFO
//!   served at a fixed rate, a propagation delay line. Deterministic,
//!   driven with explicit `now`.
//! - [`stats`]: what the link counts: [`IntervalStats`], [`Totals`],
//!   [`FlowDrops`].
//! - [`cross_traffic`]: the unresponsive Poisson cross traffic
//!   ([`CrossTraffic`]).
//! - [`aqm`]: the queue disciplines beside the FIFO: CoDel (RFC 8289),
//!   FQ-CoDel (RFC 8290) and PIE (RFC 8033), and their parameters.
//! - [`loss`]: bursty loss, the Gilbert–Elliott channel.
//! - [`variation`]: links that change: jitter, aggregation, changes over
//!   time ([`LinkVariation`]); [`trace`]: a trace-driven rate in
//!   Mahimahi's format ([`DeliveryTrace`]).
//! - [`units`]: the link's quantities and their parsers: the buffer
//!   (`500ms`, `375kB`) and the loss probability (`0.01`, `1%`).
//!
//! Nothing here reads a clock or touches a socket.
#![forbid(unsafe_code)]

pub mod aqm;
pub mod cross_traffic;
pub mod loss;
pub mod model;
mod random;
pub mod stats;
pub mod trace;
pub mod trace_gen;
pub mod units;
pub mod variation;

pub use aqm::{build_aqm, Aqm, CodelParams, FqCodelParams, PieParams, AQM_NAMES, AQM_PARAMS};
pub use cross_traffic::{CrossTraffic, CROSS_TRAFFIC_PACKET_BYTES};
pub use loss::{parse_gilbert_elliott, GilbertElliott};
pub use model::{Delivery, Link, LinkConfig, Verdict, IPV4_UDP_OVERHEAD};
pub use stats::{FlowDrops, IntervalStats, Totals};
pub use trace::{DeliveryTrace, TRACE_OPPORTUNITY_BYTES};
pub use units::{parse_buffer, parse_loss, Buffer, MAX_BUFFER_BYTES};
pub use variation::{JitterModel, LinkChange, LinkVariation, PathChange, JITTER_MODEL_NAMES};
