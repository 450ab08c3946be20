//! Each endpoint's own clock ([`lbe_scenario::Flow::client_clock`],
//! `server_clock`): what it reads at a simulated time, and the simulated
//! time at which it reaches a time quiche set in it.

use std::time::Duration;
use std::time::Instant;

use lbe_scenario::Clock;

/// What `clock` reads at simulated time `at` (`epoch` is simulated time
/// zero): `offset + (1 + skew_ppm / 10^6) t`, to the nanosecond.
pub(super) fn local_time(epoch: Instant, clock: Clock, at: Instant) -> Instant {
    if clock.is_exact() {
        return at;
    }
    let t = at.saturating_duration_since(epoch);
    let drift_ns = (t.as_nanos() as f64 * clock.skew_ppm / 1e6).round();
    let base = epoch + clock.offset + t;
    if drift_ns >= 0.0 {
        base + Duration::from_nanos(drift_ns as u64)
    } else {
        base - Duration::from_nanos((-drift_ns) as u64)
    }
}

/// The first simulated time at which `clock` reads `local` or later (a
/// deadline quiche set in its own clock), never before `epoch`.
pub(super) fn sim_time(epoch: Instant, clock: Clock, local: Instant) -> Instant {
    if clock.is_exact() {
        return local;
    }
    let since = local.saturating_duration_since(epoch + clock.offset);
    let t = since.as_nanos() as f64 / (1.0 + clock.skew_ppm / 1e6);
    let mut at = epoch + Duration::from_nanos(t.max(0.0).floor() as u64);
    // The float's rounding: step to the first nanosecond that reaches it
    // (a skew of at most 1000 ppm moves the local clock by at most 1 ns a
    // nanosecond, so this is a step or two).
    while local_time(epoch, clock, at) < local {
        at += Duration::from_nanos(1);
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(offset_ms: u64, skew_ppm: f64) -> Clock {
        Clock {
            offset: Duration::from_millis(offset_ms),
            skew_ppm,
        }
    }

    #[test]
    fn an_exact_clock_reads_the_simulated_time() {
        let epoch = Instant::now();
        let at = epoch + Duration::from_nanos(123_456_789);
        assert_eq!(local_time(epoch, Clock::default(), at), at);
        assert_eq!(sim_time(epoch, Clock::default(), at), at);
    }

    #[test]
    fn a_clock_reads_its_offset_plus_its_skewed_time() {
        let epoch = Instant::now();
        let s = |secs: u64| epoch + Duration::from_secs(secs);
        // 100 ppm fast: 60 s later it reads 6 ms more, past its 1 s offset.
        let fast = clock(1000, 100.0);
        assert_eq!(local_time(epoch, fast, epoch), s(1));
        assert_eq!(
            local_time(epoch, fast, s(60)),
            s(61) + Duration::from_millis(6)
        );
        // 30 minutes at 100 ppm: 180 ms.
        assert_eq!(
            local_time(epoch, fast, s(1800)),
            s(1801) + Duration::from_millis(180)
        );
        // 50 ppm slow: 3 ms less a minute.
        let slow = clock(0, -50.0);
        assert_eq!(
            local_time(epoch, slow, s(60)),
            s(60) - Duration::from_millis(3)
        );
    }

    /// A deadline quiche set in its own clock comes back as the first
    /// simulated nanosecond at which that clock reaches it.
    #[test]
    fn sim_time_is_the_first_instant_the_clock_reaches_a_deadline() {
        let epoch = Instant::now();
        let ns = Duration::from_nanos(1);
        for c in [
            clock(1000, 100.0),
            clock(5, -100.0),
            clock(0, 1000.0),
            clock(0, -1000.0),
        ] {
            for local_ns in [
                0u64,
                1,
                999,
                1_000_000_007,
                61_006_000_003,
                1_801_180_000_001,
            ] {
                let local = epoch + Duration::from_nanos(local_ns);
                let at = sim_time(epoch, c, local);
                assert!(at >= epoch);
                assert!(local_time(epoch, c, at) >= local, "{c:?} {local_ns}");
                if at > epoch {
                    assert!(local_time(epoch, c, at - ns) < local, "{c:?} {local_ns}");
                }
            }
        }
        // A deadline before the clock's own start (its offset) is due at once.
        assert_eq!(sim_time(epoch, clock(1000, 0.5), epoch), epoch);
        let fast = clock(1000, 100.0);
        assert_eq!(
            sim_time(epoch, fast, epoch + Duration::from_millis(61_006)),
            epoch + Duration::from_secs(60)
        );
    }
}
