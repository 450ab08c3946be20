//! `lbe-workload`: the sans-IO parts of the foreground workloads a
//! scenario puts beside its bulk flows (web, ping, video, cbr), so that a
//! real-time run (`lbe-lab run`) and a simulated one compute them the same
//! way:
//!
//! - [`arrivals`]: a web flow's downloads, a seeded Poisson process of
//!   start times with a size each, and the `"2/s"` rate syntax;
//! - [`playout`]: a video flow's playout buffer, which decides when the
//!   next chunk is requested and counts the stalls;
//! - [`figures`]: the percentile figures of `summary.json` (`fct_s`,
//!   `rtt_ms`, `added_delay_ms`) and the harm against a baseline.
//!
//! No clocks, no sockets: every function takes the time it is told.
#![forbid(unsafe_code)]

pub mod arrivals;
pub mod figures;
pub mod playout;
