//! `fq_yield`: yielding by rate behind a flow-queuing router (not the
//! draft's; `profile=full`).
//!
//! Under FQ-CoDel ([RFC 8290](https://www.rfc-editor.org/rfc/rfc8290))
//! each flow has a queue of its own, so another flow's packets never queue
//! in front of LEDBAT++'s and its delay signal stays blind: it takes an
//! equal share, no longer less than best effort (measured in the
//! simulator, `sweeps/aqm-lbe-vs-cubic.toml`: CUBIC started 10 s after
//! `profile=full` got 0.61 of the two). What such a router does show is
//! the rate: alone a flow's queue builds at the link's rate; beside N − 1
//! others it builds at 1/N of it, while the queue it reads is still only
//! its own.
//!
//! One rate alone cannot tell a flow queue from a shared FIFO, where two
//! LBE flows also each see half the rate, each with the queue at T. Nor can
//! the freeze of a slowdown alone: a FIFO shared with another LBE flow
//! empties too while a flow is frozen (the other one's window is about half
//! the path's), which is why `restore=guarded` jumps back in pairs. What
//! tells them apart is the router's drop: a flow queue's AQM (CoDel's
//! 5 ms) drops a flow whose own queue grows, where a FIFO with a buffer
//! to spare does not. So, with `fq_yield=F`:
//!
//! * **The rate.** A round of congestion avoidance that acknowledges at
//!   least 4/5 of the window it began with (the flow sent what it could)
//!   and lasts longer than the base round trip plus `empty_queue` (its
//!   packets met a queue, so the bottleneck and not the window set the
//!   rate) is a sample: its bytes over its length. The largest is kept for
//!   the base-delay history (10 minutes, [`crate::delay`]'s horizon for
//!   forgetting a path), or until a larger one.
//! * **The test.** A freeze that reads an empty queue (the one that lets
//!   `restore=guarded` jump back) starts one. The window returns to the
//!   pre-freeze window or to the window that carried the largest rate in a
//!   base round trip, whichever is larger: alone that fits the path, beside
//!   another flow's queue of its own it builds a queue of ours. For
//!   [`FQ_TEST_ROUNDS`] rounds and at least [`FQ_TEST_MIN`], the test
//!   watches for a sample below F times the largest and for the loss of a
//!   packet sent since it began. Both, in either order: a flow queue
//!   shared, and the flow yields. A sample at or above F·largest before a
//!   slower one ends the test; so does its time running out.
//! * **The yield.** The window drops to [`FQ_YIELD_WINDOW`] of what the
//!   slow round carried in a base round trip (beside one other flow, an
//!   eighth of the link) and neither GAIN nor `fill_empty_queue` adds to it
//!   (decreases apply) until the next freeze, which is put off by a random
//!   part (0 to 1) of the wait for it: flows that yield together (their
//!   freezes coincided) must not probe together again, or each would find
//!   the other back and yield again, each period, for as long as they
//!   ran. (A guard from that reasoning: no scenario measured here made two
//!   flows yield together once the loss half was in.) The draw comes from
//!   the tested window and the smoothed RTT ([`SplitMix64`]), so one event
//!   sequence gives one result.
//! * **The probe.** The next freeze that reads an empty queue tests again
//!   from the window the last test began with: beside a flow still there
//!   the queue and the drops come back at the lower rate and the flow
//!   yields for another period; alone the rate is full, or the window fits
//!   without a queue, and the yield is over. A freeze that reads a queue
//!   ends the yield (someone's packets share our queue and the delay rules
//!   see them), as does, while yielded, a queue above [`FQ_SHARED_QUEUE`]
//!   times T on a packet sent after the yield: our yielded window builds
//!   none behind a flow queue, so it is a FIFO's, whose competitor's
//!   departure would otherwise stay hidden until the next freeze.
//!
//! Measured (simulator, `sweeps/aqm-lbe-vs-cubic.toml`, seeds 1–3, CUBIC
//! from 10 s beside `profile=full`, 20 Mbit/s, 50 ms, 500 ms buffer, window
//! 20–60 s): CUBIC's share under FQ-CoDel 0.621 (0.610–0.635) without,
//! 0.938 (0.875–0.971) with; FIFO 0.999 and CoDel 0.975 either way; PIE
//! 0.987 → 0.982. Two flows (`sweeps/ledbatpp-profiles-pair-full.toml`)
//! keep Jain 0.985–1.000 (0.975–1.000 without). Without the loss half
//! two flows at 50 ms fell to 0.849 on one seed (each freeze of the first
//! flow read an empty queue and half its alone rate), and with the random
//! delay of the probe but still without the loss half, to 0.891 at 100 ms.
//!
//! What it cannot tell: a link whose rate fell (a Wi-Fi rate change) with
//! an AQM looks like a flow queue shared, and the flow yields, a period at
//! a time, until the largest rate is forgotten (10 minutes); a flow that
//! starts behind a flow queue already shared never measured the full rate,
//! so it takes its fair share; a flow queue without drops (a deep per-flow
//! buffer) gives no loss, so no yield.

use std::time::Duration;
use std::time::Instant;

use super::slowdown::Schedule;
use super::Deference;
use super::LedbatPlusPlus;
use super::Phase;
use super::FILL_WINDOW_FULL;
use crate::rng::SplitMix64;

/// After a freeze that read an empty queue, the rounds of congestion
/// avoidance that may test the rate: the jump back takes a round to fill
/// the window, the queue shows in the next.
pub const FQ_TEST_ROUNDS: u32 = 4;
/// The shortest test, so that an AQM's drop can show: CoDel drops once its
/// queue has stayed above its target for an interval, 100 ms by default
/// ([RFC 8289 §4.3](https://www.rfc-editor.org/rfc/rfc8289#section-4.3)),
/// and the loss is declared a round trip or more after that.
pub const FQ_TEST_MIN: Duration = Duration::from_millis(300);
/// While yielded, a queue above this multiple of T is someone else's in a
/// shared queue. Not `empty_queue`: behind a flow queue a yielded flow's
/// packets still wait for the other queues' turns, 1–4 ms beside one CUBIC
/// flow at 20 Mbit/s, above the 1.9 ms `empty_queue` of T = 7.5 ms.
pub const FQ_SHARED_QUEUE: f64 = 2.0;
/// The window a yield leaves, as a fraction of what the slow round carried
/// in a base round trip: beside one other flow a quarter of half the link.
pub const FQ_YIELD_WINDOW: f64 = 0.25;

/// Where the flow is in the test and the yield (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum FlowQueue {
    /// Nothing to test.
    Idle,
    /// A freeze read an empty queue: the rounds after it test the rate.
    Testing {
        /// When the test began (the freeze's end): a loss counts if its
        /// packet was sent at or after it.
        since: Instant,
        /// The window the test began with (the restore's).
        window: f64,
        /// Rounds of congestion avoidance left to conclude in.
        rounds_left: u32,
        /// The rate of a round with a queue that delivered less than
        /// `fq_yield` of the largest, bytes per second.
        slow: Option<f64>,
        /// A packet sent since the test began was lost.
        lost: bool,
    },
    /// Yielded at `at`; `window_before` is the window the test began with.
    Yielded { at: Instant, window_before: f64 },
}

/// The rate of the current round and the largest of those with a queue.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct DeliveryRate {
    /// The round the bytes below belong to (its start).
    round: Option<Instant>,
    /// Bytes acknowledged in that round.
    bytes: f64,
    /// An ACK of that round came outside congestion avoidance (a recovery
    /// period, a slowdown): its bytes are not counted, so the round's rate
    /// would read low.
    spoiled: bool,
    /// The largest sample (bytes per second) and when it was taken.
    largest: Option<(f64, Instant)>,
}

impl DeliveryRate {
    /// Counts an ACK of `bytes` in the round that started at `round`; an
    /// ACK outside congestion avoidance (`counted` false) spoils the round.
    pub(super) fn on_ack(&mut self, round: Option<Instant>, bytes: f64, counted: bool) {
        if self.round != round {
            self.round = round;
            self.bytes = 0.0;
            self.spoiled = false;
        }
        self.bytes += bytes;
        self.spoiled |= !counted;
    }

    /// The round ends at `now`: its rate in bytes per second, if it
    /// counts. It counts if all its ACKs came in congestion avoidance, and
    /// if it acknowledged at least
    /// [`FILL_WINDOW_FULL`] of `window` (the window when it began: the
    /// flow sent what it could) and lasted longer than `base_rtt` plus
    /// `empty_queue` (its packets met a queue: the bottleneck, not the
    /// window, set the rate). The round's own length is the queue's
    /// witness, not the delay filters, which `skip_rtt_after_restore`
    /// holds still for a round trip after a jump back. A sample at least
    /// the largest, or taken more than `memory` after it, becomes the
    /// largest.
    pub(super) fn on_round_end(
        &mut self,
        now: Instant,
        window: f64,
        base_rtt: Option<Duration>,
        empty_queue: Duration,
        memory: Duration,
    ) -> Option<f64> {
        let start = self.round.take()?;
        let length = now.saturating_duration_since(start);
        let queued = base_rtt.is_some_and(|base| length > base.saturating_add(empty_queue));
        if self.spoiled || !queued || self.bytes < FILL_WINDOW_FULL * window {
            return None;
        }
        let rate = self.bytes / length.as_secs_f64();
        let replace = match self.largest {
            None => true,
            Some((largest, at)) => rate >= largest || now.saturating_duration_since(at) > memory,
        };
        if replace {
            self.largest = Some((rate, now));
        }
        Some(rate)
    }

    /// The largest sample, bytes per second.
    pub(super) fn largest(&self) -> Option<f64> {
        self.largest.map(|(rate, _)| rate)
    }
}

impl LedbatPlusPlus {
    /// An ACK of `bytes` in the round that began at `round_start`, which
    /// it `ended` or not; `sample` holds its newest packet's send time
    /// when it carried a delay sample that counts. Counts the bytes into
    /// the round's rate; in congestion avoidance, outside a recovery
    /// period, ends a yield on a shared queue and, at a round's end, takes
    /// the rate and runs the test.
    pub(super) fn flow_queue_on_ack(
        &mut self,
        now: Instant,
        bytes: f64,
        round_start: Option<Instant>,
        ended: bool,
        sample: Option<Option<Instant>>,
    ) {
        let ca = self.s.phase == Phase::CongestionAvoidance && !self.s.recovery.in_recovery();
        self.s.rate.on_ack(round_start, bytes, ca);
        if !ca {
            return;
        }
        if let Some(sent) = sample {
            self.flow_queue_on_sample(sent);
        }
        if ended {
            let rate = self.s.rate.on_round_end(
                now,
                self.round_cwnd,
                self.gain_base,
                self.empty_queue,
                self.max_slowdown_wait,
            );
            self.flow_queue_on_round_end(now, rate);
        }
    }

    /// A round of congestion avoidance ended with `sample` (its rate, if it
    /// counts): the test's rate half (module docs).
    fn flow_queue_on_round_end(&mut self, now: Instant, sample: Option<f64>) {
        let (
            Some(fraction),
            FlowQueue::Testing {
                rounds_left, slow, ..
            },
        ) = (self.cfg.fq_yield, &mut self.s.flow_queue)
        else {
            return;
        };
        match (sample, self.s.rate.largest()) {
            (Some(rate), Some(largest)) if rate < fraction * largest => *slow = Some(rate),
            // The full rate: no flow queue shared.
            (Some(_), _) if slow.is_none() => {
                self.s.flow_queue = FlowQueue::Idle;
                return;
            }
            _ => (),
        }
        *rounds_left = rounds_left.saturating_sub(1);
        let over = *rounds_left == 0;
        self.flow_queue_conclude(now);
        if let FlowQueue::Testing { since, .. } = self.s.flow_queue {
            if over && now.saturating_duration_since(since) >= FQ_TEST_MIN {
                self.s.flow_queue = FlowQueue::Idle;
            }
        }
    }

    /// A loss of a packet sent at `sent`: the test's loss half.
    pub(super) fn flow_queue_on_loss(&mut self, now: Instant, sent: Instant) {
        if let FlowQueue::Testing { since, lost, .. } = &mut self.s.flow_queue {
            if sent >= *since {
                *lost = true;
                self.flow_queue_conclude(now);
            }
        }
    }

    /// A test that found both the lower rate and a loss yields (module
    /// docs).
    fn flow_queue_conclude(&mut self, now: Instant) {
        let FlowQueue::Testing {
            window,
            slow: Some(rate),
            lost: true,
            ..
        } = self.s.flow_queue
        else {
            return;
        };
        if self.deference != Deference::Full {
            // Steered above level 0 by [`crate::deadline`]: no LBE yield.
            self.s.flow_queue = FlowQueue::Idle;
            return;
        }
        // A quarter of what the slow round carried in a base round trip.
        let base = self.gain_base.unwrap_or_default().as_secs_f64();
        self.s.cwnd = self
            .bounds
            .clamp(self.s.cwnd.min(rate * base * FQ_YIELD_WINDOW));
        self.round_cwnd = self.s.cwnd;
        self.s.flow_queue = FlowQueue::Yielded {
            at: now,
            window_before: window,
        };
        // The probe is the next freeze, put off by a random part of the
        // wait (module docs).
        if let Schedule::At(due) = self.s.next_slowdown {
            let wait = due.saturating_duration_since(now);
            let seed = window.to_bits() ^ self.srtt.unwrap_or_default().as_nanos() as u64;
            let draw = SplitMix64::new(seed).next_f64();
            self.s.next_slowdown = Schedule::At(due.checked_add(wait.mul_f64(draw)).unwrap_or(due));
        }
    }

    /// A freeze ended having read an empty queue (`empty`) or not. An empty
    /// one starts a test, from the window before the yield if the flow had
    /// yielded, and from at least the window that carried the largest rate
    /// (returned, for the restore to jump to); a queue ends the yield.
    pub(super) fn flow_queue_after_freeze(&mut self, now: Instant, empty: bool) -> Option<f64> {
        self.cfg.fq_yield?;
        let before = match self.s.flow_queue {
            FlowQueue::Yielded { window_before, .. } => Some(window_before),
            FlowQueue::Idle | FlowQueue::Testing { .. } => None,
        };
        if !empty {
            self.s.flow_queue = FlowQueue::Idle;
            return None;
        }
        // The window that carried the largest rate over the base round
        // trip: what the link gave when the flow was alone.
        let carried = match (self.s.rate.largest(), self.gain_base) {
            (Some(rate), Some(base)) => rate * base.as_secs_f64(),
            _ => 0.0,
        };
        // Within the window's bounds: a rate measured over a long base
        // round trip may carry more than the largest window.
        let window = self
            .bounds
            .clamp(before.unwrap_or(self.s.ssthresh).max(carried));
        self.s.flow_queue = FlowQueue::Testing {
            since: now,
            window,
            rounds_left: FQ_TEST_ROUNDS,
            slow: None,
            lost: false,
        };
        Some(window)
    }

    /// While yielded, a queue measured (now) on a packet sent (`sent`)
    /// after the yield is someone else's in a shared queue: the yield ends
    /// (module docs).
    fn flow_queue_on_sample(&mut self, sent: Option<Instant>) {
        if let FlowQueue::Yielded { at, .. } = self.s.flow_queue {
            let queue = self.delay.queuing();
            let shared = queue.as_nanos() as f64 > FQ_SHARED_QUEUE * self.target_ns;
            if shared && sent.is_some_and(|sent| sent >= at) {
                self.s.flow_queue = FlowQueue::Idle;
            }
        }
    }

    /// Whether the window may grow: not while yielded, unless
    /// [`crate::deadline`] steers the controller above its level 0 (the
    /// yield is an LBE rule, as the GAIN rules are).
    pub(super) fn flow_queue_allows_growth(&self) -> bool {
        self.deference != Deference::Full || !matches!(self.s.flow_queue, FlowQueue::Yielded { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;
    use super::*;

    /// Base 240 ms, T = 60 ms, `empty_queue` 15 ms, GAIN 1, a guarded
    /// restore and `fq_yield=0.6`, through the initial freeze (an empty
    /// queue: the jump back to 49 200 bytes, and a test), then one round of
    /// congestion avoidance at q = T that acknowledges the window in
    /// 300 ms: the flow alone, its first rate with a queue,
    /// 49 200 / 0.3 s = 164 000 B/s, the full rate (the test ends).
    fn alone_with_a_rate() -> Driver<LedbatPlusPlus> {
        let spec = [("restore", "guarded"), ("fq_yield", "0.6")];
        let (mut d, _) = through_the_initial_freeze(&spec, ms(240));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        assert!(matches!(
            d.cc.s.flow_queue,
            FlowQueue::Testing { window, rounds_left: FQ_TEST_ROUNDS, slow: None, lost: false, .. }
                if window == 49_200.0
        ));
        d.round(ms(300), 49_200);
        // q = T: GAIN·MSS, no decrease.
        assert_eq!(d.cc.window(), 50_400);
        assert_eq!(d.cc.s.rate.largest(), Some(164_000.0));
        assert_eq!(
            d.cc.s.flow_queue,
            FlowQueue::Idle,
            "the full rate ends the test"
        );
        d
    }

    /// ACKs of old packets at q = 0 until the next periodic slowdown, then
    /// its freeze at `freeze_rtt`.
    fn through_the_next_freeze(d: &mut Driver<LedbatPlusPlus>, freeze_rtt: Duration) {
        while state(d) != "slowdown" {
            d.ack_old(ms(100), MSS, ms(240));
        }
        d.round(freeze_rtt, 2 * MSS);
        d.round(freeze_rtt, 2 * MSS);
        assert_ne!(state(d), "slowdown");
    }

    /// After [`alone_with_a_rate`] and an empty freeze, one round of 1 s
    /// acknowledging the window: its rate is the window per second, under
    /// 0.6 of 164 000 B/s. Returns the window.
    fn a_slow_round(d: &mut Driver<LedbatPlusPlus>) -> u64 {
        through_the_next_freeze(d, ms(240));
        assert_eq!(state(d), "congestion_avoidance", "the jump back");
        let w = d.cc.window();
        assert!((w as f64) < 0.6 * 164_000.0);
        d.round(ms(1000), w);
        assert!(matches!(
            d.cc.s.flow_queue,
            FlowQueue::Testing { slow: Some(rate), lost: false, .. } if rate == w as f64
        ));
        w
    }

    /// [`a_slow_round`], then the loss of a packet sent since the test
    /// began: yielded. Returns the driver and the tested window.
    fn yielded() -> (Driver<LedbatPlusPlus>, u64) {
        let mut d = alone_with_a_rate();
        let w = a_slow_round(&mut d);
        d.advance(ms(10));
        d.loss(d.now - ms(20));
        assert!(matches!(d.cc.s.flow_queue, FlowQueue::Yielded { .. }));
        (d, w)
    }

    fn due(d: &Driver<LedbatPlusPlus>) -> Instant {
        match d.cc.s.next_slowdown {
            Schedule::At(due) => due,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn half_the_rate_and_a_loss_after_an_empty_freeze_yield_until_the_next_freeze() {
        let mut d = alone_with_a_rate();
        let w = a_slow_round(&mut d);
        let window = d.cc.window();
        let due_before = due(&d);
        // A packet sent since the test began is lost: halved, then the
        // yield: a quarter of what the slow round carried in a base round
        // trip (w B/s · 0.24 s / 4).
        d.advance(ms(10));
        d.loss(d.now - ms(20));
        let yielded = (w as f64 * 0.24 * FQ_YIELD_WINDOW) as u64;
        assert!(yielded < window / 2);
        assert_eq!(d.cc.window(), yielded);
        assert!(matches!(
            d.cc.s.flow_queue,
            FlowQueue::Yielded { window_before, .. } if window_before as u64 == w
        ));
        // The next freeze is put off by a part of the wait for it.
        let due_after = due(&d);
        assert!(due_after >= due_before);
        assert!(due_after <= due_before + (due_before - d.now));
        // Yielded: the window does not grow at q = 0 (GAIN, filling), but
        // a decrease applies (q = 2T on an old packet).
        d.round(ms(240), yielded);
        for _ in 0..5 {
            d.round(ms(240), yielded);
            assert_eq!(d.cc.window(), yielded);
        }
        d.ack_old(ms(1), MSS, ms(360));
        assert!(d.cc.window() < yielded);
        assert!(matches!(d.cc.s.flow_queue, FlowQueue::Yielded { .. }));
    }

    #[test]
    fn a_spurious_loss_during_a_yield_is_undone_whole() {
        // Yielded, the recovery over: a loss would halve the yielded
        // window and start the quiet; rolled back, the yield runs on to
        // the next freeze as the twin's does.
        let twin = || {
            let (mut d, _) = yielded();
            let w = d.cc.window();
            d.advance(ms(1));
            d.ack(d.now, MSS, ms(240));
            assert_eq!((state(&d), d.cc.window()), ("yielded", w));
            d
        };
        let (mut a, mut b) = (twin(), twin());
        let sent = a.now - NS;
        assert_spurious_loss_undone(&mut a, &mut b, sent, |d| {
            d.round(ms(240), MSS);
            through_the_next_freeze(d, ms(240));
        });
    }

    #[test]
    fn a_spurious_loss_that_completed_a_yield_is_undone() {
        // The slow round, then a loss: the test concludes and the flow
        // yields. Rolled back, it is testing again at the twin's window,
        // and the loss that would yield it comes later.
        let slow = || {
            let mut d = alone_with_a_rate();
            a_slow_round(&mut d);
            d.advance(ms(10));
            d
        };
        let (mut a, b) = (slow(), slow());
        a.cc.checkpoint();
        a.loss(a.now - ms(20));
        assert!(matches!(a.cc.s.flow_queue, FlowQueue::Yielded { .. }));
        assert!(a.cc.rollback());
        assert!(matches!(a.cc.s.flow_queue, FlowQueue::Testing { .. }));
        // The yield also began a round (`round_cwnd`, the round's
        // bookkeeping, which a rollback leaves); the controller's state is
        // the twin's.
        assert_eq!(a.cc.s, b.cc.s);
        assert_eq!(
            (a.cc.window(), state(&a), a.cc.pacing_rate()),
            (b.cc.window(), state(&b), b.cc.pacing_rate())
        );
    }

    #[test]
    fn the_loss_may_come_before_the_slow_round() {
        let mut d = alone_with_a_rate();
        through_the_next_freeze(&mut d, ms(240));
        let w = d.cc.window();
        d.advance(ms(10));
        d.loss(d.now - ms(5));
        assert!(matches!(
            d.cc.s.flow_queue,
            FlowQueue::Testing {
                slow: None,
                lost: true,
                ..
            }
        ));
        // Recovery ends with the next round's ACK; the round after it is
        // slow: half the window (the loss halved it) in 1 s.
        d.round(ms(240), w / 2);
        d.round(ms(1000), w / 2);
        // A quarter of (w/2 B/s · 0.24 s) is below the minimum window.
        assert!(((w / 2) as f64 * 0.24 * FQ_YIELD_WINDOW) < 2.0 * MSS as f64);
        assert_eq!(d.cc.window(), 2 * MSS);
        assert!(matches!(d.cc.s.flow_queue, FlowQueue::Yielded { .. }));
    }

    #[test]
    fn half_the_rate_without_a_loss_is_a_shared_fifo_and_yields_nothing() {
        let mut d = alone_with_a_rate();
        let w = a_slow_round(&mut d);
        // Three more rounds (four in all) and at least 300 ms: no loss,
        // the test ends; the window grows by GAIN again.
        for _ in 0..3 {
            let before = d.cc.window();
            d.round(ms(240), before);
            assert!(d.cc.window() > before);
        }
        assert_eq!(d.cc.s.flow_queue, FlowQueue::Idle);
        // A loss now is no test's.
        d.advance(ms(10));
        d.loss(d.now - ms(5));
        assert_eq!(d.cc.s.flow_queue, FlowQueue::Idle);
        assert!(d.cc.window() > w / 4);
    }

    #[test]
    fn a_yielded_flow_probes_from_the_window_it_tested_and_the_full_rate_ends_the_yield() {
        let (mut d, w) = yielded();
        // The next freeze reads an empty queue: back to w, and a test.
        through_the_next_freeze(&mut d, ms(240));
        assert_eq!(d.cc.window(), w);
        assert!(matches!(
            d.cc.s.flow_queue,
            FlowQueue::Testing { window, slow: None, lost: false, .. } if window as u64 == w
        ));
        // The full rate (w in 0.3 s, above 0.6 of the largest): the yield
        // is over and the window grows (q = 0: GAIN).
        d.round(ms(300), w);
        assert_eq!(d.cc.s.flow_queue, FlowQueue::Idle);
        d.round(ms(240), d.cc.window());
        assert!(d.cc.window() > w);
    }

    #[test]
    fn a_freeze_that_reads_a_queue_ends_the_yield_and_tests_nothing() {
        let (mut d, _) = yielded();
        let yielded = d.cc.window();
        // Frozen at q = 16 ms (> empty_queue): someone else's queue. The
        // guarded restore ramps up to the yielded window.
        through_the_next_freeze(&mut d, ms(256));
        assert_eq!(state(&d), "ramp_up");
        assert_eq!(d.cc.s.flow_queue, FlowQueue::Idle);
        assert_eq!(d.cc.snapshot().ssthresh, Some(yielded));
    }

    #[test]
    fn a_shared_queue_while_yielded_ends_the_yield() {
        let (mut d, _) = yielded();
        let yielded = d.cc.window();
        // Recovery ends; q = 2T (120 ms) on a packet sent after the yield:
        // not above FQ_SHARED_QUEUE · T.
        d.round(ms(360), yielded);
        assert!(matches!(d.cc.s.flow_queue, FlowQueue::Yielded { .. }));
        // Above it: the yield ends (the delay rules take over).
        d.round(ms(361), d.cc.window());
        assert_eq!(d.cc.s.flow_queue, FlowQueue::Idle);
    }

    #[test]
    fn a_deadline_steering_the_controller_lifts_the_yield() {
        let (mut d, _) = yielded();
        let yielded = d.cc.window();
        // Recovery ends; yielded, the window holds at q = 0.
        d.round(ms(240), yielded);
        d.round(ms(240), yielded);
        assert_eq!(d.cc.window(), yielded);
        // Steered above level 0: the LBE rule is off, GAIN grows it.
        d.cc.set_deference(Deference::DelayOnly);
        d.round(ms(240), yielded);
        assert!(d.cc.window() > yielded);
        // A test that concludes while steered yields nothing.
        let mut d = alone_with_a_rate();
        a_slow_round(&mut d);
        d.cc.set_deference(Deference::DelayOnly);
        let window = d.cc.window();
        d.advance(ms(10));
        d.loss(d.now - ms(20));
        assert_eq!(d.cc.s.flow_queue, FlowQueue::Idle);
        assert_eq!(d.cc.window(), window / 2, "the loss's halving only");
    }

    #[test]
    fn fq_yield_off_measures_nothing_and_full_sets_it() {
        let mut d = base_240(&[("restore", "guarded"), ("fq_yield", "off")]);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!(d.cc.s.flow_queue, FlowQueue::Idle);
        d.round(ms(300), 49_200);
        assert_eq!(d.cc.s.rate.largest(), None);
        assert_eq!(config(&[("profile", "full")]).fq_yield, Some(FULL_FQ_YIELD));
        assert_eq!(config(&[]).fq_yield, None);
    }

    #[test]
    fn a_rate_counts_with_a_full_window_and_a_queue_and_is_forgotten_after_the_history() {
        let mut rate = DeliveryRate::default();
        let t = Instant::now();
        let memory = ms(600_000);
        let base = Some(ms(50));
        let round = |rate: &mut DeliveryRate, start: Instant, length: Duration, bytes| {
            rate.on_ack(Some(start), bytes, true);
            rate.on_round_end(start + length, 100_000.0, base, ms(2), memory)
        };
        // 100 kB in 100 ms: 1 MB/s.
        assert_eq!(round(&mut rate, t, ms(100), 100_000.0), Some(1e6));
        // Less than 4/5 of the window: no sample.
        assert_eq!(round(&mut rate, t + ms(100), ms(100), 79_000.0), None);
        // No queue (52 ms is not above 50 + 2 ms): no sample.
        assert_eq!(round(&mut rate, t + ms(200), ms(52), 100_000.0), None);
        // Half the rate: a sample, not the largest.
        assert_eq!(round(&mut rate, t + ms(300), ms(200), 100_000.0), Some(5e5));
        assert_eq!(rate.largest(), Some(1e6));
        // More than ten minutes after the largest, a lower sample replaces it.
        let late = t + ms(100) + memory;
        assert_eq!(round(&mut rate, late, ms(200), 100_000.0), Some(5e5));
        assert_eq!(rate.largest(), Some(5e5));
        // A round with an ACK in a recovery period: no sample.
        rate.on_ack(Some(late + ms(200)), 50_000.0, true);
        rate.on_ack(Some(late + ms(200)), 50_000.0, false);
        assert_eq!(
            rate.on_round_end(late + ms(400), 100_000.0, base, ms(2), memory),
            None
        );
        // Without a base round trip nothing counts.
        rate.on_ack(Some(late), 1e6, true);
        assert_eq!(
            rate.on_round_end(late + ms(100), 1.0, None, ms(2), memory),
            None
        );
    }
}
