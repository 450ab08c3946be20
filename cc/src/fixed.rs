//! A constant congestion window. Not a congestion controller anyone should
//! ship: it exists to prove, in end-to-end tests, that a plug-in and not
//! quiche's own code decides how much is in flight.

use std::time::Instant;

use crate::params;
use crate::AckEvent;
use crate::CongestionController;
use crate::LossEvent;
use crate::ParamError;
use crate::PathInfo;
use crate::Snapshot;

/// Parameters of [`Fixed`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedConfig {
    /// The window, in packets of the path's maximum datagram size.
    /// Default 8. Spec key `packets`.
    pub packets: u64,
}

impl Default for FixedConfig {
    fn default() -> Self {
        Self { packets: 8 }
    }
}

impl FixedConfig {
    const KEYS: &'static [&'static str] = &["packets"];

    /// Sets one `key=value` parameter of a `--cc` spec, range-checked; the
    /// error names the key and what it allows.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        match key {
            "packets" => self.packets = params::u64_in(key, value, 1, 100_000)?,
            _ => return Err(params::unknown_key("fixed", key, Self::KEYS)),
        }
        Ok(())
    }
}

/// A window of `packets` × max datagram size, whatever happens.
#[derive(Debug)]
pub struct Fixed {
    packets: u64,
    max_datagram_size: u64,
}

impl Fixed {
    /// A fixed-window controller for `path`.
    pub fn new(config: FixedConfig, path: PathInfo) -> Self {
        Self {
            packets: config.packets,
            max_datagram_size: path.max_datagram_size,
        }
    }
}

impl CongestionController for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn on_packet_sent(&mut self, _now: Instant, _bytes: u64, _in_flight: u64) {}

    fn on_ack(&mut self, _ack: &AckEvent<'_>) {}

    fn on_congestion_event(&mut self, _loss: &LossEvent) {}

    fn on_persistent_congestion(&mut self, _now: Instant) {}

    fn checkpoint(&mut self) {}

    fn rollback(&mut self) -> bool {
        false
    }

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.max_datagram_size = max_datagram_size;
    }

    fn window(&self) -> u64 {
        self.packets * self.max_datagram_size
    }

    fn state(&self, _now: Instant) -> &'static str {
        "fixed"
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd: self.window(),
            ..Snapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_packets_times_mss_and_follows_mtu() {
        let mut c = Fixed::new(FixedConfig { packets: 8 }, PathInfo::default());
        assert_eq!(c.window(), 8 * 1200);
        c.on_mtu_change(1350);
        assert_eq!(c.window(), 8 * 1350);
    }

    #[test]
    fn rejects_unknown_keys_and_zero() {
        let mut cfg = FixedConfig::default();
        assert!(cfg.set("packets", "0").is_err());
        assert_eq!(
            cfg.set("window", "3").unwrap_err().to_string(),
            "unknown parameter 'window' for 'fixed' (allowed: packets)"
        );
        cfg.set("packets", "4").unwrap();
        assert_eq!(cfg.packets, 4);
    }
}
