//! What the emulator reports: the run's [`Summary`], returned when it stops,
//! and the per-interval JSON lines of `--stats` (`StatsLine`).

use std::net::SocketAddr;

use hdrhistogram::Histogram;
use serde::Serialize;

use lbe_link::{FlowDrops, IntervalStats, Totals};

/// Cross-traffic datagrams offered to the bottleneck, and how many it dropped.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CrossTotals {
    /// Datagrams that arrived at the bottleneck.
    pub packets: u64,
    /// Of those, dropped (buffer full, or random loss).
    pub drops: u64,
}

/// What happened over the whole run, returned when the emulator stops.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The server→client bottleneck's queue discipline (`fifo`, `codel`,
    /// `fq_codel`, `pie`).
    pub aqm: &'static str,
    /// Each flow's drops at the server→client bottleneck (buffer and AQM),
    /// flows still known at the end.
    pub flow_drops: Vec<FlowDropTotals>,
    /// How long it ran.
    pub duration_s: f64,
    /// CPU time its thread used, in seconds.
    pub cpu_s: f64,
    /// Flows (client addresses) seen.
    pub flows: u64,
    /// The server→client direction.
    pub down: Totals,
    /// The client→server direction.
    pub up: Totals,
    /// Datagrams that could not be sent on (socket errors).
    pub send_errors: u64,
    /// Receive errors (e.g. ICMP port unreachable while no server runs).
    pub recv_errors: u64,
    /// The cross traffic's datagrams (see [`lbe_link::CrossTraffic`]);
    /// they are counted in `down` too.
    pub cross_traffic: CrossTotals,
    /// How late datagrams were sent on, against their due time, over the run.
    pub lateness_us: Lateness,
    /// How long datagrams waited in the emulator's sockets before it read
    /// them (from kernel timestamps; compensated in their delivery time).
    pub rx_wait_us: Lateness,
}

/// A distribution of the emulator's own timing errors, in microseconds:
/// how late it sent datagrams on compared with the time the model said they
/// were due (`lateness_us`), or how long they waited in its sockets before
/// being read (`rx_wait_us`). Both directions together.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Lateness {
    /// Datagrams measured.
    pub count: u64,
    /// Median, in microseconds.
    pub p50: f64,
    /// 99th percentile, in microseconds.
    pub p99: f64,
    /// 99.9th percentile, in microseconds.
    pub p999: f64,
    /// Largest, in microseconds.
    pub max: f64,
}

impl Lateness {
    pub(super) fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let us = |ns: u64| ns as f64 / 1e3;
        Self {
            count: h.len(),
            p50: us(h.value_at_quantile(0.5)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
        }
    }
}

/// A histogram of nanoseconds from 1 ns to 100 s, 2 significant digits.
pub(super) fn lateness_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100_000_000_000, 2).expect("valid histogram bounds")
}

/// One flow's drops at the server→client bottleneck over the run.
#[derive(Clone, Debug, Serialize)]
pub struct FlowDropTotals {
    /// The flow's id (as in the stats lines).
    pub id: u64,
    /// The client's address.
    pub client: SocketAddr,
    /// Its drops, by cause.
    #[serde(flatten)]
    pub drops: FlowDrops,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(super) struct FlowCounters {
    pub(super) down_delivered_packets: u64,
    pub(super) down_delivered_payload_bytes: u64,
    pub(super) down_drops_buffer: u64,
    pub(super) down_drops_loss: u64,
    /// Dropped by the AQM's control law (CoDel, PIE).
    pub(super) down_drops_aqm: u64,
    pub(super) up_delivered_packets: u64,
    pub(super) up_delivered_payload_bytes: u64,
    pub(super) up_drops: u64,
}

impl FlowCounters {
    pub(super) fn is_zero(&self) -> bool {
        self.down_delivered_packets == 0
            && self.down_drops_buffer == 0
            && self.down_drops_loss == 0
            && self.down_drops_aqm == 0
            && self.up_delivered_packets == 0
            && self.up_drops == 0
    }
}

#[derive(Serialize)]
pub(super) struct FlowLine {
    pub(super) id: u64,
    pub(super) client: SocketAddr,
    pub(super) listen: SocketAddr,
    /// The server the flow is relayed to.
    pub(super) upstream: SocketAddr,
    #[serde(flatten)]
    pub(super) counters: FlowCounters,
}

#[derive(Serialize)]
pub(super) struct StatsLine {
    /// Seconds since the emulator started, at the end of the interval.
    pub(super) t_s: f64,
    /// Wall-clock time at the end of the interval (ms since the Unix epoch),
    /// to line up with qlog's reference time.
    pub(super) unix_ms: f64,
    pub(super) down: IntervalStats,
    pub(super) up: IntervalStats,
    pub(super) flows_active: usize,
    pub(super) flows: Vec<FlowLine>,
    pub(super) send_errors: u64,
    /// How late datagrams were sent on in this interval.
    pub(super) lateness_us: Lateness,
    /// How long datagrams waited in the sockets before being read.
    pub(super) rx_wait_us: Lateness,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_reads_the_histogram_in_microseconds() {
        assert_eq!(Lateness::of(&lateness_histogram()).count, 0);
        let mut h = lateness_histogram();
        for ns in [100, 200, 250] {
            h.record(ns).unwrap();
        }
        let l = Lateness::of(&h);
        assert_eq!(
            (l.count, l.p50, l.p99, l.p999, l.max),
            (3, 0.2, 0.25, 0.25, 0.25)
        );
    }

    #[test]
    fn a_flow_line_flattens_its_counters_and_zero_counters_are_skipped() {
        let mut counters = FlowCounters::default();
        assert!(counters.is_zero());
        counters.up_drops = 1;
        assert!(!counters.is_zero());
        counters.down_delivered_packets = 2;
        counters.down_delivered_payload_bytes = 2400;
        let line = FlowLine {
            id: 7,
            client: "127.0.0.1:5000".parse().unwrap(),
            listen: "127.0.0.1:6000".parse().unwrap(),
            upstream: "127.0.0.1:4433".parse().unwrap(),
            counters,
        };
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            "{\"id\":7,\"client\":\"127.0.0.1:5000\",\"listen\":\"127.0.0.1:6000\",\"upstream\":\"127.0.0.1:4433\",\
             \"down_delivered_packets\":2,\"down_delivered_payload_bytes\":2400,\
             \"down_drops_buffer\":0,\"down_drops_loss\":0,\"down_drops_aqm\":0,\"up_delivered_packets\":0,\
             \"up_delivered_payload_bytes\":0,\"up_drops\":1}"
        );
    }
}
