//! The slowdowns of LEDBAT++ (draft -01 §4.4): the initial one 2 rounds
//! after the initial slow start, the periodic ones, the freeze at 2 packets
//! for 2 RTTs, the ramp-up back to the pre-slowdown window, and the
//! schedule of the next one (9 slowdown durations later, or
//! `slowdown_duty` of `profile=full`).
//!
//! # Choices the draft leaves open
//!
//! * **Which RTT the freeze lasts.** §4.4 "Keep CWND frozen at 2 packets
//!   for 2 RTT". The RTT is the smoothed RTT ([RFC 9002 §5.3](https://www.rfc-editor.org/rfc/rfc9002#section-5.3)) of the last ACK
//!   before the slowdown, so it includes the queue the flow had built. The
//!   freeze is there to drain that queue and measure the base delay; with
//!   the min RTT instead, a queue longer than 2 base RTTs (20 ms base and
//!   the 45 ms that ends slow start) would still be draining when the freeze
//!   ends. The freeze ends at the first ACK at or after `start + 2·RTT`
//!   (this crate has no timers), so it lasts at most one ACK gap longer.
//! * **D, the slowdown's duration.** §4.4: "LEDBAT++ sender measures the
//!   duration of the slowdown, from the time of entry to the time at which
//!   the congestion window regrows to the previous SSTHRESH value. The next
//!   slowdown is then scheduled to occur at 9 times this duration after the
//!   exit point." D is that time as measured, from the start of the
//!   slowdown to the end of the ramp-up; what the draft leaves open is a
//!   ramp-up that does not reach SSTHRESH (below). (The seed's summary says
//!   "after a period equal to 9·T_ss", T_ss being "the time that it takes
//!   for the slow-start to ramp back up"; counting the freeze too, as here,
//!   puts each slowdown 9 freezes, about 18 RTTs, later than T_ss alone.)
//! * **An application-limited ramp-up.** A sender that does not fill its
//!   window never reaches ssthresh, and a ramp-up that never ends never
//!   schedules the next slowdown and never reacts to delay (the ramp-up
//!   does not leave on delay, §4.1). The ramp-up therefore also ends after
//!   `2·R + 1` rounds, R = `ceil(log_{1+GAIN}(ssthresh / 2 packets))` being
//!   the rounds a window-limited ramp-up takes; the window stays where it
//!   is (restoring an unused window would allow a burst) and D is the time
//!   spent. The slow start after persistent congestion (not left on delay
//!   either) has the same bound.
//! * **A schedule that would overflow.** The wait `9·D` is capped at the
//!   base-delay history (`base_history · base_bucket`, 10 minutes): a
//!   slowdown is how LEDBAT++ re-measures the base delay, and the history
//!   forgets a minimum after that long. Should `now + wait` still not be
//!   representable, the slowdown is due at once rather than never.
//! * **The initial slowdown** (§4.4: "The initial slowdown starts shortly
//!   after the connection completes the initial slow start phase; 2 RTT
//!   after the initial slow start completes.") counts rounds of congestion
//!   avoidance, i.e. RTTs at the queue the flow holds then.

use std::time::Duration;
use std::time::Instant;

use super::Deference;
use super::LedbatPlusPlus;
use super::Phase;
use super::Restore;
use super::FREEZE_CWND;

/// When the next periodic slowdown is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Schedule {
    /// None planned: before the initial slow start ends, during a slowdown,
    /// or with `slowdown=false`.
    None,
    /// The initial slowdown, after this many more round ends (§4.4).
    AfterRounds(u64),
    /// A periodic slowdown, at the first ACK in congestion avoidance at or
    /// after this time.
    At(Instant),
}

impl LedbatPlusPlus {
    /// Rounds of slow start from a window of `from` bytes (the freeze's,
    /// or the minimum after persistent congestion) to ssthresh:
    /// `ceil(log_{1+GAIN}(ssthresh / from))` (GAIN ≥ 1/1024, so the
    /// logarithm's base is above 1).
    pub(super) fn rounds_to_restore(&self, from: f64) -> u64 {
        let ratio = self.s.ssthresh / from.max(1.0);
        if ratio > 1.0 {
            (ratio.ln() / self.gain.ln_1p()).ceil().min(1e6) as u64
        } else {
            0
        }
    }

    /// The window a freeze holds: §4.4's "2 packets", or the minimum
    /// window if that is larger (`min_cwnd` may also be 1).
    pub(super) fn freeze_window(&self) -> f64 {
        self.bounds.min.max(FREEZE_CWND as f64 * self.bounds.mss)
    }

    /// Starts a slowdown; `periodic` is false for the initial one.
    pub(super) fn start_slowdown(&mut self, now: Instant, periodic: bool) {
        // §4.4: ssthresh keeps the window to return to, then "Keep CWND
        // frozen at 2 packets for 2 RTT" (RTT: module docs).
        let rtt = self.srtt.unwrap_or(Duration::ZERO);
        let freeze = rtt.saturating_mul(self.cfg.slowdown_rtts);
        self.s.ssthresh = self.s.cwnd;
        self.s.cwnd = if periodic && self.cfg.gentle_freeze && self.s.last_freeze_empty {
            // `gentle_freeze`: half the window (`profiles.rs`).
            (self.s.cwnd / 2.0).max(self.bounds.min)
        } else {
            self.freeze_window()
        };
        self.s.phase = Phase::Slowdown {
            start: now,
            until: now.checked_add(freeze).unwrap_or(now),
            rtt,
            min_queue: Duration::MAX,
            min_rtt_queue: Duration::MAX,
        };
        self.s.next_slowdown = Schedule::None;
        // A fill is congestion avoidance's: it ends with it, so that a
        // jump back is paced as the restore, not as a fill (`filling`
        // would otherwise outlast the freeze by the skipped round trip).
        self.s.fill.active = false;
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
    }

    /// The freeze is over: ramp up (§4.4: "After 2 RTT, ramp up the
    /// congestion window according to the slow start algorithm, until the
    /// congestion window reaches SSTHRESH."), or jump back (`restore=jump`).
    pub(super) fn end_freeze(
        &mut self,
        now: Instant,
        start: Instant,
        rtt: Duration,
        min_queue: Duration,
        min_rtt_queue: Duration,
    ) {
        let min_queue = self.follow_route(min_queue, min_rtt_queue);
        let empty = min_queue <= self.empty_queue;
        self.s.last_freeze_empty = empty;
        // `fq_yield`: an empty freeze starts a test, from at least the
        // window that carried the largest rate (`flow_queue.rs`).
        if let Some(before) = self.flow_queue_after_freeze(now, empty) {
            self.s.ssthresh = before;
        }
        let jump = match self.cfg.restore {
            Restore::SlowStart => false,
            Restore::Jump => true,
            Restore::Guarded => empty,
        };
        match jump {
            false => {
                let full = self.rounds_to_restore(self.freeze_window());
                self.s.phase = Phase::RampUp {
                    slowdown_start: start,
                    rounds_left: full.saturating_mul(2).saturating_add(1),
                };
                self.rounds.restart(now);
                self.round_cwnd = self.s.cwnd;
            }
            true => {
                self.s.cwnd = self.s.ssthresh.max(self.bounds.min);
                self.s.gain_quiet.fast_growth_at = Some(now);
                // The time a ramp-up would have taken, in RTTs of the freeze.
                let rounds = self.rounds_to_restore(self.freeze_window());
                let ramp = rtt.saturating_mul(rounds.min(u32::MAX as u64) as u32);
                let duration = now.saturating_duration_since(start).saturating_add(ramp);
                self.finish_slowdown(now, start, duration, true);
            }
        }
    }

    /// `follow_route` (`profiles.rs`): given the queue a freeze read,
    /// returns the queue it reads once a longer path is followed (none, if
    /// it raised the base delay to the path's).
    ///
    /// A freeze empties our own queue, so a freeze that still reads one
    /// reads someone else's queue or a path that got longer. A queue above
    /// T that two freezes in a row read alike (within T), that is at most
    /// the base round trip (a path at most twice as long), and whose round
    /// trip reads more than 2·T, is taken for the path: the base delay
    /// moves up by it. Taken wrongly (a competitor's standing queue), the
    /// raised base falls back as soon as that queue drains below it: the
    /// base is a minimum. Another LBE flow's queue stays near its T, and
    /// so below 2·T (`profiles.rs` has what the 2·T measured).
    ///
    /// On a one-way signal the round trip must say so too: the freeze's
    /// round trip above the path's minimum (`min_rtt_queue`) is above 2·T,
    /// and with T at least the one-way reading. A path that got longer, or
    /// someone's queue, lengthens both; a receiver clock that runs fast
    /// lengthens the one-way delays alone, and before the drift fit has its
    /// buckets (`delay/estimator.rs`) two freezes read that drift alike.
    /// On the round-trip signal `min_rtt_queue` is `min_queue`.
    fn follow_route(&mut self, min_queue: Duration, min_rtt_queue: Duration) -> Duration {
        if !self.cfg.follow_route {
            return min_queue;
        }
        let target = self.target();
        // The bound is the base round trip (a one-way signal's base holds
        // an arbitrary offset, `delay/source.rs`).
        let candidate = min_queue > target
            && self.gain_base.is_some_and(|rtt| min_queue <= rtt)
            && min_rtt_queue > target.saturating_mul(2)
            && min_rtt_queue.saturating_add(target) >= min_queue;
        let previous = self.s.route.take();
        if !candidate {
            return min_queue;
        }
        match previous {
            Some(previous) if previous.abs_diff(min_queue) <= target => {
                // T follows on the next ACK, from the new base.
                self.delay.raise_base(min_queue);
                Duration::ZERO
            }
            _ => {
                self.s.route = Some(min_queue);
                min_queue
            }
        }
    }

    /// The slowdown that began at `start` counts as `duration` for the
    /// draft's schedule: schedules the next one and returns to congestion
    /// avoidance.
    pub(super) fn finish_slowdown(
        &mut self,
        now: Instant,
        start: Instant,
        duration: Duration,
        restored: bool,
    ) {
        let due = match self.cfg.slowdown_duty {
            // `slowdown_duty`: the time actually spent, over the duty, from
            // the start of this slowdown, within the period bounds.
            Some(duty) => {
                let spent = now.saturating_duration_since(start);
                let period = if self.s.route.is_some() {
                    // `follow_route`: a freeze read what may be a longer
                    // path; the next one, as soon as the bounds allow,
                    // confirms it or not.
                    self.cfg.slowdown_period_min
                } else {
                    spent
                        .div_f64(duty)
                        .min(self.cfg.slowdown_period_max)
                        .max(self.cfg.slowdown_period_min)
                };
                start.checked_add(period).unwrap_or(now).max(now)
            }
            // §4.4: the next slowdown is 9 slowdown durations later, capped
            // at the base-delay history (module docs).
            None => {
                let wait = duration
                    .saturating_mul(self.cfg.slowdown_interval)
                    .min(self.max_slowdown_wait);
                now.checked_add(wait).unwrap_or(now)
            }
        };
        self.s.next_slowdown = Schedule::At(due);
        self.s.phase = Phase::CongestionAvoidance;
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
        if restored && self.cfg.skip_rtt_after_restore {
            let rtt = self.srtt.unwrap_or(Duration::ZERO);
            self.s.skip_until = Some(now.checked_add(rtt).unwrap_or(now));
        }
    }

    /// Round-end bookkeeping; returns whether the phase changed.
    pub(super) fn on_round_end(&mut self, now: Instant) -> bool {
        let mut changed = false;
        match self.s.phase {
            Phase::CongestionAvoidance => match self.s.next_slowdown {
                Schedule::AfterRounds(n) if n > 1 => {
                    self.s.next_slowdown = Schedule::AfterRounds(n - 1)
                }
                // Held while steered above level 0 (`Deference`).
                Schedule::AfterRounds(_) if self.deference == Deference::Full => {
                    self.start_slowdown(now, false);
                    changed = true;
                }
                Schedule::AfterRounds(_) => (),
                Schedule::At(_) | Schedule::None => (),
            },
            Phase::RampUp {
                slowdown_start,
                rounds_left,
            } => {
                if rounds_left <= 1 {
                    // Application-limited: the window stays (module docs).
                    let duration = now.saturating_duration_since(slowdown_start);
                    self.finish_slowdown(now, slowdown_start, duration, false);
                    changed = true;
                } else {
                    self.s.phase = Phase::RampUp {
                        slowdown_start,
                        rounds_left: rounds_left - 1,
                    };
                }
            }
            Phase::SlowStart { rounds_left } => {
                if rounds_left <= 1 {
                    // Application-limited: the window stays (module docs).
                    self.s.phase = Phase::CongestionAvoidance;
                    changed = true;
                } else {
                    self.s.phase = Phase::SlowStart {
                        rounds_left: rounds_left - 1,
                    };
                }
            }
            Phase::InitialSlowStart | Phase::Slowdown { .. } => (),
        }
        self.round_cwnd = self.s.cwnd;
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;

    /// `follow_route` with the duty schedule of `profile=full` (T = 60 ms,
    /// base 240 ms): through the initial slowdown, whose freeze reads an
    /// empty queue (jump back), then the path's round trip is `path` from
    /// there on. Rounds of the window at that RTT until the next freeze
    /// ends; returns the driver and the queue the freeze read.
    fn route_changed(follow: &str, path: Duration) -> Driver<LedbatPlusPlus> {
        let mut d = base_240(&[
            ("follow_route", follow),
            ("restore", "guarded"),
            ("slowdown_duty", "0.02"),
            ("slowdown_period_min", "10s"),
            ("slowdown_period_max", "60s"),
        ]);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        d.round(path, d.cc.window());
        d
    }

    /// Rounds of the window at `rtt` until a freeze has begun and ended.
    fn through_the_next_freeze(d: &mut Driver<LedbatPlusPlus>, rtt: Duration) -> Instant {
        while state(d) != "slowdown" {
            d.round(rtt, d.cc.window().max(MSS));
        }
        let start = d.now;
        while state(d) == "slowdown" {
            d.round(rtt, d.cc.window());
        }
        start
    }

    #[test]
    fn two_freezes_that_read_the_same_queue_follow_a_longer_path() {
        // +150 ms: above 2·T (120 ms), at most the base (240 ms).
        let mut d = route_changed("true", ms(390));
        let first = through_the_next_freeze(&mut d, ms(390));
        assert_eq!(d.cc.s.route, Some(ms(150)), "a candidate");
        assert_eq!(d.cc.snapshot().base_delay, Some(ms(240)));
        // Not empty: the draft's ramp-up; once it ends, the next slowdown
        // is due at the shortest period, 10 s after this one began.
        while state(&d) == "ramp_up" {
            d.round(ms(390), d.cc.window());
        }
        assert_eq!(
            d.cc.s.next_slowdown,
            Schedule::At(first + Duration::from_secs(10))
        );
        let second = through_the_next_freeze(&mut d, ms(390));
        // At the first ACK at or after the time due (one per round here).
        let due = first + Duration::from_secs(10);
        assert!(
            second >= due && second < due + ms(390),
            "{:?}",
            second - first
        );
        // Read alike: the base is the longer path's, the queue empty, and
        // the freeze jumps back (`restore=guarded`).
        assert_eq!(d.cc.snapshot().base_delay, Some(ms(390)));
        assert_eq!(d.cc.s.route, None);
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window() as f64, d.cc.s.ssthresh);
        assert_eq!(d.cc.snapshot().queuing_delay, Some(Duration::ZERO));
    }

    /// One round of `bytes` at round trip `rtt`, each ACK with its one-way
    /// delay: `forward` plus the peer clock's offset (2 h).
    fn owd_round(d: &mut Driver<LedbatPlusPlus>, rtt: Duration, forward: Duration, bytes: u64) {
        let sent = d.last_ack;
        d.advance(rtt);
        let peer_epoch = d.epoch - Duration::from_secs(1);
        d.one_way = Some(crate::OneWayDelaySample::Sent {
            time_sent: sent,
            peer_receive_time: Duration::from_secs(7200) + (sent - peer_epoch) + forward,
        });
        d.ack(sent, bytes, rtt);
    }

    #[test]
    fn on_one_way_delays_a_longer_path_needs_the_round_trip_to_say_so() {
        // Base 240 ms, 120 ms of it forward; T = 60 ms. From congestion
        // avoidance after the initial slowdown, the one-way delay grows by
        // 150 ms: with the round trip 150 ms longer too (a longer path) the
        // base follows after two freezes; with the round trip as it was (a
        // receiver clock running fast) it never does.
        let run = |rtt: Duration, forward: Duration| {
            let mut d = base_240(&[
                ("delay", "owd"),
                ("follow_route", "true"),
                ("restore", "guarded"),
                ("slowdown_duty", "0.02"),
                ("slowdown_period_min", "10s"),
                ("slowdown_period_max", "60s"),
            ]);
            d.last_ack = d.epoch - ms(240);
            d.now = d.epoch - ms(240);
            owd_round(&mut d, ms(240), ms(120), 12_000);
            owd_round(&mut d, ms(240), ms(120), 24_000);
            // 46 ms of queue ends the slow start (3/4 of T = 45 ms).
            owd_round(&mut d, ms(286), ms(166), 48_000);
            assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
            while state(&d) != "slowdown" {
                let w = d.cc.window();
                owd_round(&mut d, ms(240), ms(120), w);
            }
            while state(&d) == "slowdown" {
                let w = d.cc.window();
                owd_round(&mut d, ms(240), ms(120), w);
            }
            assert_eq!(state(&d), "congestion_avoidance", "an empty freeze");
            let before = d.cc.snapshot().base_delay.unwrap();
            for _ in 0..3 {
                while state(&d) != "slowdown" {
                    let w = d.cc.window().max(MSS);
                    owd_round(&mut d, rtt, forward, w);
                }
                while state(&d) == "slowdown" {
                    let w = d.cc.window();
                    owd_round(&mut d, rtt, forward, w);
                }
            }
            d.cc.snapshot().base_delay.unwrap() - before
        };
        assert_eq!(run(ms(390), ms(270)), ms(150), "a longer path");
        assert_eq!(run(ms(240), ms(270)), Duration::ZERO, "a fast clock");
    }

    #[test]
    fn a_freeze_reading_more_than_the_base_or_less_than_2_t_is_a_queue() {
        for (follow, path) in [
            ("false", ms(390)), // the rule off
            ("true", ms(490)),  // +250 ms: more than the 240 ms base
            ("true", ms(340)),  // +100 ms: above T, below 2·T
            ("true", ms(290)),  // +50 ms: below T
        ] {
            let mut d = route_changed(follow, path);
            for _ in 0..3 {
                through_the_next_freeze(&mut d, path);
            }
            assert_eq!(
                d.cc.snapshot().base_delay,
                Some(ms(240)),
                "{follow} {path:?}"
            );
        }
    }

    #[test]
    fn the_freeze_lasts_two_rtts_of_time_not_two_rounds() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        // The smoothed RTT before the slowdown was 240 ms: frozen until
        // slowdown + 480 ms, however many rounds end meanwhile (four here).
        for _ in 0..4 {
            d.advance(ms(100));
            d.ack(d.last_ack, 2 * MSS, ms(240));
            assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        }
        d.advance(ms(80) - NS);
        d.ack(d.last_ack, 2 * MSS, ms(240));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.advance(NS);
        d.ack(d.last_ack, 2 * MSS, ms(240));
        assert_eq!(d.now - slowdown, ms(480));
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
    }

    #[test]
    fn the_ramp_up_is_not_left_on_delay_and_schedules_nine_durations_later() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        // q = 100 ms, above T and far above 3/4·T: slow start (GAIN 1) goes
        // on to ssthresh all the same, and stops there.
        for expect in [4_800, 9_600, 19_200, 38_400] {
            let w = d.cc.window();
            d.round(ms(340), w);
            assert_eq!((state(&d), d.cc.window()), ("ramp_up", expect));
            assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(100)));
        }
        d.round(ms(340), 38_400);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        let end = d.now;
        // D, measured: 480 ms of freeze and 5 rounds of 340 ms.
        let duration = end - slowdown;
        assert_eq!(duration, ms(2180));

        // The next slowdown is due 9 × D after the end of the ramp-up.
        d.ack_old(9 * duration - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        assert!(d.cc.window() > 49_200);
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(d.now - end, ms(19_620));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn a_loss_ends_the_ramp_up_and_d_is_the_time_spent() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 4_800));
        d.advance(ms(20));
        d.loss(d.now - ms(10));
        let end = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 2_400));
        assert_eq!(d.cc.snapshot().ssthresh, Some(2_400));
        assert_eq!(end - slowdown, ms(740));
        // Recovery ends with an ACK of a packet sent after it began.
        d.advance(ms(240));
        d.ack(end + NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(9 * ms(740) - ms(240) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn an_application_limited_ramp_up_ends_after_twice_the_rounds_of_a_full_one() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!(state(&d), "ramp_up");
        // A full ramp-up takes R = ceil(log2(49200 / 2400)) = 5 rounds. With
        // less than half the window in flight the window cannot grow; the
        // ramp-up ends at the end of round 2·R + 1 = 11, the window as is.
        let limited = |d: &mut Driver<LedbatPlusPlus>| {
            let sent = d.last_ack;
            d.advance(ms(240));
            d.ack_full(sent, 1000, ms(240), Duration::ZERO, true, Some(1000));
        };
        for _ in 0..10 {
            limited(&mut d);
            assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        }
        limited(&mut d);
        assert_eq!(
            (state(&d), d.cc.window()),
            ("congestion_avoidance", 2 * MSS)
        );
        let end = d.now;
        assert_eq!(end - slowdown, ms(480 + 11 * 240));
        d.ack_old(9 * ms(3120) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn restore_jump_returns_to_the_window_after_the_freeze() {
        // The same with a one-packet minimum window: the freeze, and the
        // ramp-up the schedule counts, still start from 2 packets.
        for extra in [vec![], vec![("min_cwnd", "1")]] {
            let mut spec = vec![("restore", "jump")];
            spec.extend(extra);
            let mut d = base_240(&spec);
            let slowdown = to_the_initial_slowdown(&mut d);
            d.round(ms(240), 2 * MSS);
            assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
            d.round(ms(240), 2 * MSS);
            assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
            let end = d.now;
            assert_eq!(end - slowdown, ms(480));
            // Scheduled as if the ramp-up had taken ceil(log2(49200/2400)) = 5
            // rounds of the freeze's 240 ms: D = 480 + 1200 ms, next 9·D later.
            d.ack_old(ms(15_120) - NS, MSS, ms(240));
            assert_eq!(state(&d), "congestion_avoidance", "{spec:?}");
            d.ack_old(NS, MSS, ms(240));
            assert_eq!(state(&d), "slowdown", "{spec:?}");
        }
    }

    #[test]
    fn the_wait_for_the_next_slowdown_is_capped_at_the_base_history() {
        // History of one 1 s bucket: 9·D = 15.12 s is capped at 1 s.
        let mut d = base_240(&[
            ("restore", "jump"),
            ("base_bucket", "1s"),
            ("base_history", "1"),
        ]);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        d.ack_old(ms(1000) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn slowdowns_can_be_turned_off() {
        let mut d = base_240(&[("slowdown", "false")]);
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        d.round(ms(240), 24_000);
        d.round(ms(286), 48_000);
        for _ in 0..10 {
            let w = d.cc.window();
            d.round(ms(240), w);
            assert_eq!(state(&d), "congestion_avoidance");
        }
    }
}
