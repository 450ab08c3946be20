//! What the integration tests share: a test controller, and reading the
//! records of a qlog.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

use lbe_cc::fixed::Fixed;
use lbe_cc::fixed::FixedConfig;
use lbe_cc::AckEvent;
use lbe_cc::CongestionController;
use lbe_cc::LossEvent;
use lbe_cc::PathInfo;
use lbe_cc::RttInfo;
use lbe_cc::Snapshot;
use quiche_lbe::PluginFactory;

/// `lbe_cc`'s fixed window, plus what a test needs to see or set: a pacing
/// rate returned to quiche, and a log of the RTT information of every ACK.
#[derive(Debug)]
pub struct TestFixed {
    inner: Fixed,
    pacing_rate: Option<u64>,
    acks: Option<Arc<Mutex<Vec<RttInfo>>>>,
}

impl TestFixed {
    /// A factory for a window of `packets` datagrams that returns
    /// `pacing_rate` (bytes per second) and, with `acks`, records each ACK's
    /// RTT information there.
    pub fn factory(
        packets: u64,
        pacing_rate: Option<u64>,
        acks: Option<Arc<Mutex<Vec<RttInfo>>>>,
    ) -> Arc<PluginFactory> {
        PluginFactory::from_fn(move |path: PathInfo| {
            Box::new(TestFixed {
                inner: Fixed::new(FixedConfig { packets }, path),
                pacing_rate,
                acks: acks.clone(),
            }) as Box<dyn CongestionController>
        })
    }
}

impl CongestionController for TestFixed {
    fn name(&self) -> &'static str {
        "test-fixed"
    }
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight: u64) {
        self.inner.on_packet_sent(now, bytes, in_flight)
    }
    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        if let Some(acks) = &self.acks {
            acks.lock().unwrap().push(ack.rtt);
        }
        self.inner.on_ack(ack)
    }
    fn on_congestion_event(&mut self, loss: &LossEvent) {
        self.inner.on_congestion_event(loss)
    }
    fn on_persistent_congestion(&mut self, now: Instant) {
        self.inner.on_persistent_congestion(now)
    }
    fn checkpoint(&mut self) {
        self.inner.checkpoint()
    }
    fn rollback(&mut self) -> bool {
        self.inner.rollback()
    }
    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.inner.on_mtu_change(max_datagram_size)
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }
    fn state(&self, now: Instant) -> &'static str {
        self.inner.state(now)
    }
    fn snapshot(&self) -> Snapshot {
        self.inner.snapshot()
    }
}

/// Every event record of a JSON-SEQ qlog (RFC 7464), its header left out.
pub fn qlog_records(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .skip(1)
        .map(|r| serde_json::from_str(r.trim()).unwrap())
        .collect()
}
