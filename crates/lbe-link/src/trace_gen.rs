//! A seeded generator of cellular-like traces in Mahimahi's format
//! ([`crate::trace`]), since Mahimahi's recorded traces are GPL-3.0+ and
//! cannot ship in this BSD-2 repository.
//!
//! The model: the rate is a mean-reverting random walk of its logarithm
//! (a new step every [`STEP_MS`] ms: `log r += -(log r - log mean) *
//! reversion + volatility * N(0, 1)`), clamped to [mean / 20, mean * 5];
//! outages (no opportunity at all) start as a Poisson process with
//! `outages_per_minute` and last an exponential time of mean `outage`.
//! Each millisecond gets as many 1500-byte opportunities as the rate's
//! credit allows (the remainder carries). The profile's numbers are ours,
//! not fitted to the recorded traces (docs/links-that-change.md).

use std::time::Duration;

use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

use crate::random::uniform;
use crate::trace::TRACE_OPPORTUNITY_BYTES;

/// How often the rate takes a step, milliseconds.
pub const STEP_MS: u64 = 100;

/// What the generated trace looks like.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellularProfile {
    /// The rate the walk reverts to, bits per second.
    pub mean_rate_bps: u64,
    /// The standard deviation of each step of the log-rate.
    pub volatility: f64,
    /// The share of the distance to the mean taken back at each step.
    pub reversion: f64,
    /// Mean number of outages per minute.
    pub outages_per_minute: f64,
    /// Mean length of an outage.
    pub outage: Duration,
    /// The trace's length (its period).
    pub duration: Duration,
}

/// The trace's text: one line per opportunity, the last at the trace's
/// length (so that it loops at that period).
pub fn generate(profile: &CellularProfile, seed: u64) -> String {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mean = (profile.mean_rate_bps.max(1) as f64).ln();
    let mut log_rate = mean;
    let total_ms = profile.duration.as_millis().max(1) as u64;
    let outage_p_per_ms = profile.outages_per_minute / 60_000.0;
    let outage_mean_ms = profile.outage.as_millis() as f64;
    let mut out = String::new();
    let mut credit = 0.0f64;
    let mut outage_until = 0u64;
    for ms in 1..=total_ms {
        if ms % STEP_MS == 0 {
            let (u1, u2) = (uniform(&mut rng), uniform(&mut rng));
            let n = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            log_rate += -(log_rate - mean) * profile.reversion + profile.volatility * n;
            log_rate = log_rate.clamp(mean - 20f64.ln(), mean + 5f64.ln());
        }
        if ms >= outage_until && outage_p_per_ms > 0.0 && uniform(&mut rng) < outage_p_per_ms {
            let len = -(1.0 - uniform(&mut rng)).ln() * outage_mean_ms;
            outage_until = ms + len.ceil() as u64;
        }
        if ms < outage_until {
            credit = 0.0;
            continue;
        }
        credit += log_rate.exp() / 8.0 / TRACE_OPPORTUNITY_BYTES as f64 / 1000.0;
        // exp(ln r) is r to within rounding: a hair of slack.
        while credit >= 1.0 - 1e-9 {
            credit -= 1.0;
            out.push_str(&format!("{ms}\n"));
        }
    }
    if !out.ends_with(&format!("\n{total_ms}\n")) && !out.starts_with(&format!("{total_ms}\n")) {
        out.push_str(&format!("{total_ms}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::DeliveryTrace;

    fn steady(rate: u64) -> CellularProfile {
        CellularProfile {
            mean_rate_bps: rate,
            volatility: 0.0,
            reversion: 0.0,
            outages_per_minute: 0.0,
            outage: Duration::ZERO,
            duration: Duration::from_millis(5),
        }
    }

    #[test]
    fn a_steady_profile_is_a_fixed_rate() {
        // 12 Mbit/s: one 1500-byte opportunity per millisecond.
        assert_eq!(generate(&steady(12_000_000), 1), "1\n2\n3\n4\n5\n");
        // 24 Mbit/s: two.
        assert_eq!(
            generate(&steady(24_000_000), 1),
            "1\n1\n2\n2\n3\n3\n4\n4\n5\n5\n"
        );
        // 6 Mbit/s: every other, and the last line closes the period.
        assert_eq!(generate(&steady(6_000_000), 1), "2\n4\n5\n");
    }

    #[test]
    fn the_generator_is_seeded_and_writes_a_readable_trace() {
        let p = CellularProfile {
            mean_rate_bps: 10_000_000,
            volatility: 0.3,
            reversion: 0.1,
            outages_per_minute: 6.0,
            outage: Duration::from_millis(500),
            duration: Duration::from_secs(60),
        };
        let a = generate(&p, 7);
        assert_eq!(a, generate(&p, 7));
        assert_ne!(a, generate(&p, 8));
        let t = DeliveryTrace::parse("gen", &a).unwrap();
        assert_eq!(t.period_ms(), 60_000);
    }
}
