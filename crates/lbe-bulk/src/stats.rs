//! What a sender measures: RTT percentiles and losses.

use std::path::Path;

use hdrhistogram::Histogram;

use crate::protocol::Report;
use crate::protocol::RttMs;

/// RTT samples of one sending connection.
///
/// quiche does not expose each ACK's RTT sample to applications, so this
/// records the path's smoothed RTT (RFC 9002 §5.3) every time packets
/// have been received since the last look, i.e. once per batch of ACKs.
/// `min` is quiche's own minimum RTT.
pub struct SenderStats {
    rtt_us: Histogram<u64>,
    packets_received: usize,
}

impl Default for SenderStats {
    fn default() -> Self {
        Self::new()
    }
}

impl SenderStats {
    pub fn new() -> Self {
        SenderStats {
            // 1 µs to 10 min, 3 significant digits.
            rtt_us: Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid histogram bounds"),
            packets_received: 0,
        }
    }

    /// Takes a sample if ACKs arrived since the last call.
    pub fn sample(&mut self, conn: &quiche::Connection) {
        let received = conn.stats().recv;
        if received == self.packets_received {
            return;
        }
        self.packets_received = received;
        if let Some(path) = conn.path_stats().next() {
            let us = (path.rtt.as_micros() as u64).clamp(1, 600_000_000);
            let _ = self.rtt_us.record(us);
        }
    }

    /// The figures a sender reports at the end of a transfer.
    pub fn report(&self, conn: &quiche::Connection, qlog: Option<&Path>) -> Report {
        let ms = |us: u64| us as f64 / 1000.0;
        let min_rtt = conn.path_stats().next().and_then(|p| p.min_rtt);
        let rtt_ms = if self.rtt_us.is_empty() {
            RttMs::default()
        } else {
            RttMs {
                min: min_rtt.map_or(ms(self.rtt_us.min()), |d| d.as_secs_f64() * 1000.0),
                p50: ms(self.rtt_us.value_at_quantile(0.50)),
                p99: ms(self.rtt_us.value_at_quantile(0.99)),
            }
        };
        Report {
            rtt_ms,
            lost_packets: conn.stats().lost as u64,
            qlog: qlog.map(|p| p.display().to_string()),
            time_in_levels_s: None,
        }
    }
}
