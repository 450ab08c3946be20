//! Pacing rate from a window and a smoothed RTT, as Linux paces TCP.
//!
//! Linux (`tcp_update_pacing_rate`, net/ipv4/tcp_input.c) paces at
//!
//! ```text
//! rate = ratio · cwnd / srtt
//! ratio = tcp_pacing_ss_ratio (200 %)  if cwnd < ssthresh / 2
//!       = tcp_pacing_ca_ratio (120 %)  otherwise
//! ```
//!
//! "In slow start, we want to send at 2x the current rate so that the window
//! can double in one RTT; in congestion avoidance a little above the current
//! rate (1.2x) so that the window's small increase can be sent" (the
//! sysctls' documentation, Documentation/networking/ip-sysctl.rst). The
//! controllers of this crate that are window-based (LEDBAT++, LEDBAT, CDG)
//! return this rate; `cwnd < ssthresh / 2` is evaluated by each controller
//! because "slow start" is phase-specific there (LEDBAT++'s ramp-up is slow
//! start, LEDBAT only slow-starts with `slow_start=true`).
//!
//! No rate (`None`) before the first RTT sample, or when the smoothed RTT is
//! zero: quiche then paces from its own view, as it does for a controller
//! that returns none.

use std::time::Duration;

/// Pacing ratio in slow start (Linux `tcp_pacing_ss_ratio` = 200 %).
pub const SLOW_START_RATIO: f64 = 2.0;
/// Pacing ratio outside slow start (Linux `tcp_pacing_ca_ratio` = 120 %).
pub const CONGESTION_AVOIDANCE_RATIO: f64 = 1.2;

/// Whether Linux would use the slow-start ratio: `cwnd < ssthresh / 2`
/// (`ssthresh` in bytes, `f64::INFINITY` or `u64::MAX` as f64 when unset).
pub fn in_slow_start(cwnd: f64, ssthresh: f64) -> bool {
    cwnd < ssthresh / 2.0
}

/// The pacing rate in bytes per second for `cwnd` bytes over `srtt`;
/// `None` without an RTT (or a zero one).
pub fn rate(cwnd: u64, srtt: Option<Duration>, slow_start: bool) -> Option<u64> {
    let srtt = srtt.filter(|d| !d.is_zero())?;
    let ratio = if slow_start {
        SLOW_START_RATIO
    } else {
        CONGESTION_AVOIDANCE_RATIO
    };
    let bytes_per_second = ratio * cwnd as f64 / srtt.as_secs_f64();
    // A saturating float-to-int conversion: never overflows.
    Some(bytes_per_second.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_times_in_slow_start_one_point_two_after() {
        let ms = Duration::from_millis;
        // 12000 bytes per 100 ms = 120000 B/s.
        assert_eq!(rate(12_000, Some(ms(100)), true), Some(240_000));
        assert_eq!(rate(12_000, Some(ms(100)), false), Some(144_000));
        assert_eq!(rate(12_000, None, true), None);
        assert_eq!(rate(12_000, Some(Duration::ZERO), false), None);
        assert!(in_slow_start(10.0, f64::INFINITY));
        assert!(in_slow_start(10.0, 21.0));
        assert!(!in_slow_start(10.0, 20.0), "cwnd = ssthresh/2: CA ratio");
    }
}
