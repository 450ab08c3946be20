//! `lbe-workload`: the sans-IO parts of the foreground workloads a
//! scenario puts beside its bulk flows (web, ping, video, cbr), so that a
//! real-time run (`lbe-lab run`) and a simulated one compute them the same
//! way:
//!
//! - [`arrivals`]: a web flow's downloads, a seeded Poisson process of
//!   start times with a size each, and the `"2/s"` rate syntax;
//! - [`playout`]: a video flow's playout buffer, which decides when the
//!   next chunk is requested and counts the stalls;
//! - [`cbr`]: a cbr flow's sending schedule;
//! - [`figures`]: the percentile figures of `summary.json` (`fct_s`,
//!   `rtt_ms`, `added_delay_ms`) and the harm against a baseline;
//! - the limits both modes keep ([`WEB_DRAIN`], [`PING_WAIT`],
//!   [`PING_BYTES`], [`CBR_WAIT`]).
//!
//! No clocks, no sockets: every function takes the time it is told.
#![forbid(unsafe_code)]

use std::time::Duration;

pub mod arrivals;
pub mod cbr;
pub mod figures;
pub mod playout;

/// How long a web download that arrived before its flow's stop may run on
/// past it before it counts as unfinished.
pub const WEB_DRAIN: Duration = Duration::from_secs(30);

/// How long a ping flow waits for replies past its stop; a request
/// without a reply by then is lost.
pub const PING_WAIT: Duration = Duration::from_secs(2);

/// Bytes of a ping request and of its reply (UDP payload): a call's or a
/// game's small packets.
pub const PING_BYTES: usize = 100;

/// How long a cbr flow's receiver counts arrivals past its stop.
pub const CBR_WAIT: Duration = Duration::from_secs(1);
