//! A cbr flow's sending schedule: unresponsive datagrams of [`CBR_BYTES`]
//! at a constant rate while on, on and off in turn (on first) when the
//! flow sets `on` and `off` (the on/off CBR sources of seed
//! `ledbat-dynamic-gain`). The real-time sender (`lbe-lab`) asks how many
//! datagrams are due; the simulator asks when each one is.

use std::time::Duration;

/// Bytes of a cbr datagram (UDP payload).
pub const CBR_BYTES: usize = 1200;

/// The schedule of one cbr source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CbrSchedule {
    /// Time between two datagrams while on, seconds: `CBR_BYTES` × 8 / rate.
    gap_s: f64,
    on_off: Option<(Duration, Duration)>,
}

impl CbrSchedule {
    /// A source of `rate_bps` (above zero; the scenario checks it).
    pub fn new(rate_bps: u64, on_off: Option<(Duration, Duration)>) -> Self {
        CbrSchedule {
            gap_s: (CBR_BYTES * 8) as f64 / rate_bps as f64,
            on_off,
        }
    }

    /// The time between two datagrams while on.
    pub fn gap(&self) -> Duration {
        Duration::from_secs_f64(self.gap_s)
    }

    /// How many datagrams are due `elapsed` after the source began: one at
    /// once, then one more each gap of on time.
    pub fn due_count(&self, elapsed: Duration) -> u64 {
        (on_time(elapsed, self.on_off).as_secs_f64() / self.gap_s).floor() as u64 + 1
    }

    /// When datagram `n` (from 0) is due, after the source began: the
    /// first moment [`CbrSchedule::due_count`] exceeds `n`, to the
    /// nanosecond.
    pub fn send_at(&self, n: u64) -> Duration {
        let on_needed = Duration::from_nanos((n as f64 * self.gap_s * 1e9).ceil() as u64);
        let Some((on, off)) = self.on_off else {
            return on_needed;
        };
        let (on_ns, period_ns) = (on.as_nanos(), (on + off).as_nanos());
        let need = on_needed.as_nanos();
        let (periods, rest) = (need / on_ns, need % on_ns);
        let at = if rest == 0 && periods > 0 {
            // Reached at the end of an on time, not at the next start.
            (periods - 1) * period_ns + on_ns
        } else {
            periods * period_ns + rest
        };
        Duration::from_nanos(at as u64)
    }
}

/// Time spent on in the first `elapsed` of an on/off source that starts
/// on (all of it without `on_off`).
pub fn on_time(elapsed: Duration, on_off: Option<(Duration, Duration)>) -> Duration {
    let Some((on, off)) = on_off else {
        return elapsed;
    };
    let period = (on + off).as_nanos();
    let e = elapsed.as_nanos();
    let on_ns = on.as_nanos();
    let total = (e / period) * on_ns + (e % period).min(on_ns);
    Duration::from_nanos(total as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;
    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn an_on_off_source_is_on_first() {
        let on_off = Some((S(5), S(5)));
        assert_eq!(on_time(S(3), on_off), S(3));
        assert_eq!(on_time(S(7), on_off), S(5));
        assert_eq!(on_time(S(12), on_off), S(7));
        assert_eq!(on_time(S(12), None), S(12));
    }

    /// 9.6 Mbit/s: a 1200-byte datagram every 1 ms.
    #[test]
    fn a_constant_source_sends_one_at_once_then_one_a_gap() {
        let c = CbrSchedule::new(9_600_000, None);
        assert_eq!(c.due_count(Duration::ZERO), 1);
        assert_eq!(c.due_count(Duration::from_micros(999)), 1);
        assert_eq!(c.due_count(MS(1)), 2);
        assert_eq!(c.due_count(S(1)), 1001);
        assert_eq!(c.send_at(0), Duration::ZERO);
        assert_eq!(c.send_at(1), MS(1));
        assert_eq!(c.send_at(1000), S(1));
    }

    /// 2 s on, 3 s off at one datagram a second: datagram n is due once
    /// n seconds of on time have passed: 0, 1 and 2 s (the end of the
    /// first on time), 6 s (1 s into the second), 7 s (its end), 11 s.
    #[test]
    fn an_on_off_source_sends_only_while_on() {
        let c = CbrSchedule::new(9_600, Some((S(2), S(3))));
        let at: Vec<Duration> = (0..6).map(|n| c.send_at(n)).collect();
        assert_eq!(at, [S(0), S(1), S(2), S(6), S(7), S(11)]);
        // The counter the real-time sender uses agrees at each of them,
        // and not a nanosecond before.
        for (n, t) in at.iter().enumerate() {
            assert_eq!(c.due_count(*t), n as u64 + 1, "{t:?}");
            if !t.is_zero() {
                assert_eq!(c.due_count(*t - Duration::from_nanos(1)), n as u64);
            }
        }
        assert_eq!(c.due_count(S(4)), 3);
    }
}
