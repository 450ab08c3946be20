//! Unresponsive cross traffic through the bottleneck: Poisson arrivals of
//! fixed-size datagrams at a mean rate, sans-IO and seeded.

use std::time::{Duration, Instant};

use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use crate::model::LinkConfig;
use crate::random::uniform;

/// Size of one cross-traffic datagram at the IP level: 1450 bytes, as in
/// seed cdg-deadline-aware-lbe §III-A ("1450-byte packets are sent with an
/// exponentially distributed inter-departure time of 23.2ms from each
/// sender, producing on average about 1 Mbps at the bottleneck").
pub const CROSS_TRAFFIC_PACKET_BYTES: u64 = 1450;

/// Unresponsive cross traffic: datagrams of [`CROSS_TRAFFIC_PACKET_BYTES`]
/// whose arrivals at the bottleneck form a Poisson process of mean rate
/// [`LinkConfig::cross_traffic_bps`] (exponential gaps). They take their place
/// in the drop-tail FIFO like any datagram and are discarded on delivery.
///
/// Why: with drop-tail and a few long flows, losses synchronise with the
/// flows' sending phases, and which flow loses at an overflow can depend on
/// the phase rather than on the controllers (Floyd & Jacobson, "On Traffic
/// Phase Effects in Packet-Switched Gateways", 1992). Seed 002 adds this
/// traffic "to prevent emulation artifacts, such as synchronization,
/// corrupting the results" (§III-A).
///
/// Sans-IO and deterministic: gaps are drawn from a generator seeded by
/// [`LinkConfig::seed`] (a stream of its own, not the random loss's).
pub struct CrossTraffic {
    rng: XorShiftRng,
    /// Mean gap between arrivals, nanoseconds.
    mean_gap_ns: f64,
    payload: usize,
    next: Option<Instant>,
}

impl CrossTraffic {
    /// The cross traffic `config` asks for, or `None` (none, or no rate).
    pub fn new(config: &LinkConfig) -> Option<Self> {
        let rate = config.cross_traffic_bps.filter(|&r| r > 0)?;
        let wire = CROSS_TRAFFIC_PACKET_BYTES.max(u64::from(config.overhead) + 1);
        Some(Self {
            rng: XorShiftRng::seed_from_u64(config.seed ^ 0xc2b2_ae3d_27d4_eb4f),
            mean_gap_ns: wire as f64 * 8e9 / rate as f64,
            payload: (wire - u64::from(config.overhead)) as usize,
            next: None,
        })
    }

    /// UDP payload of each datagram (its wire size less the link's overhead).
    pub fn payload(&self) -> usize {
        self.payload
    }

    /// When the next datagram arrives; the first one is one gap after the
    /// first call's `now`.
    pub fn next_arrival(&mut self, now: Instant) -> Instant {
        match self.next {
            Some(t) => t,
            None => {
                let t = now + self.gap();
                self.next = Some(t);
                t
            }
        }
    }

    /// The arrival time of the next datagram if it is due by `now` (then the
    /// one after it is scheduled), else `None`. Call until `None`.
    pub fn take_due(&mut self, now: Instant) -> Option<Instant> {
        let t = self.next_arrival(now);
        if t > now {
            return None;
        }
        self.next = Some(t + self.gap());
        Some(t)
    }

    /// One exponentially distributed gap: `-ln(1 - u) × mean`, u uniform in
    /// [0, 1) with 53 bits.
    fn gap(&mut self) -> Duration {
        let u = uniform(&mut self.rng);
        Duration::from_nanos((-(1.0 - u).ln() * self.mean_gap_ns) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_traffic_is_poisson_at_the_mean_rate() {
        let config = LinkConfig {
            rate_bps: Some(10_000_000),
            cross_traffic_bps: Some(1_000_000),
            seed: 7,
            ..LinkConfig::default()
        };
        let mut cross = CrossTraffic::new(&config).unwrap();
        // 1450 bytes on the wire, 28 of them IPv4 and UDP headers.
        assert_eq!(cross.payload(), 1422);
        let t0 = Instant::now();
        let first = cross.next_arrival(t0);
        assert!(first > t0);
        assert_eq!(cross.take_due(first - Duration::from_nanos(1)), None);
        // 1000 s of arrivals: 1 Mbit/s of 1450-byte datagrams is 86.2/s.
        let end = t0 + Duration::from_secs(1000);
        let mut gaps = Vec::new();
        let mut last = t0;
        while let Some(t) = cross.take_due(end) {
            gaps.push(t.duration_since(last).as_secs_f64());
            last = t;
        }
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
        // Mean gap 11.6 ms; an exponential's standard deviation equals its mean.
        assert!(
            (n - 86_207.0).abs() < 3.0 * 86_207f64.sqrt(),
            "{n} arrivals"
        );
        assert!((mean * 1e3 - 11.6).abs() < 0.1, "mean gap {mean}");
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.02,
            "cv {}",
            var.sqrt() / mean
        );
        // The same seed, the same arrivals; another seed, others.
        let mut again = CrossTraffic::new(&config).unwrap();
        assert_eq!(again.next_arrival(t0), first);
        let mut other = CrossTraffic::new(&LinkConfig { seed: 8, ..config }).unwrap();
        assert_ne!(other.next_arrival(t0), first);
    }

    #[test]
    fn no_cross_traffic_without_a_rate() {
        assert!(CrossTraffic::new(&LinkConfig::default()).is_none());
        let zero = LinkConfig {
            cross_traffic_bps: Some(0),
            ..LinkConfig::default()
        };
        assert!(CrossTraffic::new(&zero).is_none());
    }
}
