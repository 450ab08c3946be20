//! The simulator's plumbing around quiche: the event queue (virtual time),
//! the hosts' wake-up latency, and how a run's figures are asked of
//! `qlog-analysis`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Duration;
use std::time::Instant;

use quiche_lbe::lbe_cc::rng::SplitMix64;

use crate::Config;

/// Events in time order; events due at the same instant in the order they
/// were pushed, so that a run never depends on the heap's tie-breaking.
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Queued<E>>,
    seq: u64,
}

struct Queued<E> {
    at: Instant,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Queued<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl<E> Eq for Queued<E> {}
impl<E> PartialOrd for Queued<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Queued<E> {
    // A min-heap on (time, insertion order).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl<E> EventQueue<E> {
    pub(crate) fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    pub(crate) fn push(&mut self, at: Instant, ev: E) {
        self.seq += 1;
        self.heap.push(Queued {
            at,
            seq: self.seq,
            ev,
        });
    }

    /// The next event and when it is due.
    pub(crate) fn pop(&mut self) -> Option<(Instant, E)> {
        self.heap.pop().map(|q| (q.at, q.ev))
    }
}

/// One wake-up latency of an endpoint's loop: exponential with mean
/// [`Config::host_latency`], from the run's seed, so that seeds differ as
/// repeated lab runs do (see [`crate::HOST_LATENCY`]).
pub(crate) fn wake_latency(rng: &mut SplitMix64, config: &Config) -> Duration {
    let u = rng.next_f64();
    config.host_latency.mul_f64(-(1.0 - u).ln())
}

/// The generator of [`wake_latency`] for a run.
pub(crate) fn latency_rng(config: &Config) -> SplitMix64 {
    SplitMix64::new(config.seed ^ 0x5eed_1a7e_0c10_c4a1)
}

/// The analysis a run's flows get: its window, the link's rate and the
/// per-datagram overhead the bottleneck counts.
pub(crate) fn analysis_options(config: &Config) -> qlog_analysis::Options {
    qlog_analysis::Options {
        from_s: config.window.map(|(f, _)| f.as_secs_f64()),
        to_s: config.window.map(|(_, t)| t.as_secs_f64()),
        link_rate_bps: Some(config.link.rate_bps as f64),
        datagram_overhead_bytes: u64::from(lbe_link::IPV4_UDP_OVERHEAD),
        ..qlog_analysis::Options::default()
    }
}

/// A deadline-aware flow's time in each aggressiveness level, seconds.
pub(crate) fn time_in_levels_s(
    progress: Option<&quiche_lbe::lbe_cc::deadline::Progress>,
) -> Option<Vec<f64>> {
    progress.map(|p| {
        p.time_in_levels()
            .iter()
            .map(Duration::as_secs_f64)
            .collect()
    })
}
