//! When a transfer that makes no progress is reported, and when it is
//! given up: the rule our clients (h3-fetch, quic-bulk) share.
//!
//! A path can die under a live connection: a NAT that loses its mapping
//! sends the server's packets nowhere. quiche ends such a connection at
//! its idle timeout only when nothing at all arrives; a receiver that keeps
//! the connection busy (the receiver-driven LBE sends a PING every RTT, and
//! the server answers it) can keep it open while no data flows. So the
//! client watches its own progress, the bytes its transfer moved, and:
//!
//! - after [`STALL_NOTICE`] without progress says so, once
//!   ([`StallEvent::Stalled`]), and once more when data flows again
//!   ([`StallEvent::Resumed`]);
//! - gives up ([`StallEvent::GaveUp`]) when for the idle timeout neither
//!   did the transfer move nor did the server send stream data: the
//!   transfer ends with an error, as quiche's own idle timeout would end a
//!   silent connection.
//!
//! Stream data that arrives while the transfer reads nothing new means a
//! live path and a gap in the stream: a sender that declared thousands of
//! packets lost at once on ACKs that came late resends them in offset
//! order, at a less-than-best-effort rate beside CUBIC, and the two
//! datagrams the client lacks come after the data it already had (seen
//! at 1 Gbit/s, 20 ms, in real time: more than 30 s). That is a stall,
//! said at the idle timeout ([`StallEvent::StillSending`]) but not given
//! up, up to [`GAP_WAIT_FACTOR`] idle timeouts. The count comes from
//! quiche's `Stats::stream_frames_recv` (patch ext/0004), read only from
//! half the notice without progress on: quiche builds its whole `Stats` to
//! answer.

use std::time::Duration;
use std::time::Instant;

/// How long a transfer may make no progress before the client says so:
/// 10 s, a third of our default idle timeout
/// ([`Transport::idle_timeout`](crate::Transport::idle_timeout), 30 s), so
/// that the notice comes well before the end.
pub const STALL_NOTICE: Duration = Duration::from_secs(10);

/// How many idle timeouts a transfer waits without progress while the
/// server still sends stream data: 10 (5 minutes at the default 30 s), so
/// that a sender resending megabytes at a background rate is waited for,
/// and one that keeps sending without ever filling the gap is not waited
/// for ever.
pub const GAP_WAIT_FACTOR: u32 = 10;

/// What [`StallWatch::observe`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallEvent {
    /// No progress for [`STALL_NOTICE`] (`for_` is how long exactly).
    Stalled {
        /// Time since the last progress.
        for_: Duration,
    },
    /// No progress for the idle timeout, but the server sent stream data
    /// within it: the transfer waits on (said once per stall).
    StillSending {
        /// Time since the last progress.
        for_: Duration,
    },
    /// Progress again after a [`StallEvent::Stalled`]; `after` is how long
    /// the transfer made none.
    Resumed {
        /// The length of the stall.
        after: Duration,
    },
    /// No progress and nothing from the server for the give-up limit, or
    /// no progress for [`GAP_WAIT_FACTOR`] times it: end the transfer.
    GaveUp {
        /// Time since the last progress.
        for_: Duration,
        /// Whether the server still sent stream data (the
        /// [`GAP_WAIT_FACTOR`] limit ended the wait).
        still_sending: bool,
    },
}

/// Watches one transfer's byte count (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct StallWatch {
    give_up_after: Duration,
    bytes: u64,
    last_progress: Instant,
    /// The server's STREAM frame count when last read in this stall.
    frames: Option<u64>,
    /// The last time the transfer moved or the frame count rose.
    last_heard: Instant,
    stalled: bool,
    said_still_sending: bool,
    gave_up: bool,
}

impl StallWatch {
    /// A watch started at `now` with nothing moved yet, giving up after
    /// `give_up_after` without progress or stream data from the server
    /// (the connection's idle timeout).
    pub fn new(now: Instant, give_up_after: Duration) -> Self {
        Self {
            give_up_after,
            bytes: 0,
            last_progress: now,
            frames: None,
            last_heard: now,
            stalled: false,
            said_still_sending: false,
            gave_up: false,
        }
    }

    /// The transfer has moved `bytes` in all by `now` (a count that never
    /// goes down); `frames` gives the number of STREAM frames with data the
    /// connection received in all (quiche's `stream_frames_recv`), called
    /// only from half the notice without progress on. Returns what changed: each event comes once
    /// per stall, and [`StallEvent::GaveUp`] once in all.
    pub fn observe(
        &mut self,
        now: Instant,
        bytes: u64,
        frames: impl FnOnce() -> u64,
    ) -> Option<StallEvent> {
        if bytes > self.bytes {
            self.bytes = bytes;
            let after = now.saturating_duration_since(self.last_progress);
            self.last_progress = now;
            self.last_heard = now;
            self.frames = None;
            self.said_still_sending = false;
            if std::mem::take(&mut self.stalled) && !self.gave_up {
                return Some(StallEvent::Resumed { after });
            }
            return None;
        }
        if self.gave_up {
            return None;
        }
        let for_ = now.saturating_duration_since(self.last_progress);
        // The frame count is read from half the notice (or of the give-up
        // limit if shorter) on, so that arrivals before either are seen.
        let notice = STALL_NOTICE.min(self.give_up_after);
        if for_ < notice / 2 {
            return None;
        }
        // Has the server sent stream data since the last look?
        let count = frames();
        if self.frames.is_some_and(|seen| count > seen) {
            self.last_heard = now;
        }
        self.frames = Some(count);
        let silent = now.saturating_duration_since(self.last_heard);
        let still_sending = self.last_heard > self.last_progress;
        if silent >= self.give_up_after || for_ >= self.give_up_after * GAP_WAIT_FACTOR {
            self.gave_up = true;
            return Some(StallEvent::GaveUp {
                for_,
                still_sending,
            });
        }
        if for_ < notice {
            return None;
        }
        if !self.stalled {
            self.stalled = true;
            return Some(StallEvent::Stalled { for_ });
        }
        if for_ >= self.give_up_after && !self.said_still_sending {
            self.said_still_sending = true;
            return Some(StallEvent::StillSending { for_ });
        }
        None
    }
}

impl StallEvent {
    /// The one line a client prints for this event (without its name),
    /// e.g. "no data for 10.0 s; waiting for the path".
    pub fn message(&self) -> String {
        match self {
            StallEvent::Stalled { for_ } => {
                format!(
                    "no data for {:.1} s; waiting for the path",
                    for_.as_secs_f64()
                )
            }
            StallEvent::StillSending { for_ } => format!(
                "no new data for {:.1} s, but the server still sends: \
                 waiting for the part it has yet to resend",
                for_.as_secs_f64()
            ),
            StallEvent::Resumed { after } => {
                format!("data again after {:.1} s", after.as_secs_f64())
            }
            StallEvent::GaveUp {
                for_,
                still_sending: false,
            } => format!(
                "no data for {:.1} s (the idle timeout): the path to the server is gone",
                for_.as_secs_f64()
            ),
            StallEvent::GaveUp {
                for_,
                still_sending: true,
            } => format!(
                "no new data for {:.1} s although the server kept sending: \
                 giving up (the limit is {GAP_WAIT_FACTOR} idle timeouts)",
                for_.as_secs_f64()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    /// A frame count that must not be asked for.
    fn unasked() -> u64 {
        panic!("the frame count was read outside a stall")
    }

    #[test]
    fn a_stall_is_noticed_once_then_resumed_once() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(w.observe(t0 + s(1), 100, unasked), None);
        // Before half the notice the frame count is not read.
        assert_eq!(
            w.observe(t0 + s(6) - Duration::from_millis(1), 100, unasked),
            None
        );
        // Just short of the notice: nothing.
        assert_eq!(
            w.observe(t0 + s(11) - Duration::from_millis(1), 100, || 7),
            None
        );
        assert_eq!(
            w.observe(t0 + s(11), 100, || 7),
            Some(StallEvent::Stalled { for_: s(10) })
        );
        assert_eq!(w.observe(t0 + s(12), 100, || 7), None, "said once");
        assert_eq!(
            w.observe(t0 + s(13), 101, unasked),
            Some(StallEvent::Resumed { after: s(12) })
        );
        assert_eq!(
            w.observe(t0 + s(14), 102, unasked),
            None,
            "progress says nothing"
        );
    }

    #[test]
    fn no_progress_and_nothing_sent_for_the_idle_timeout_gives_up_once() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(w.observe(t0 + s(2), 5, unasked), None);
        assert_eq!(
            w.observe(t0 + s(12), 5, || 40),
            Some(StallEvent::Stalled { for_: s(10) })
        );
        assert_eq!(w.observe(t0 + s(31), 5, || 40), None);
        assert_eq!(
            w.observe(t0 + s(32), 5, || 40),
            Some(StallEvent::GaveUp {
                for_: s(30),
                still_sending: false
            })
        );
        assert_eq!(w.observe(t0 + s(40), 5, || 41), None);
        assert_eq!(
            w.observe(t0 + s(41), 6, unasked),
            None,
            "no resume after giving up"
        );
    }

    #[test]
    fn stream_data_that_still_arrives_holds_off_the_give_up() {
        // The server resends what it declared lost, in offset order: frames
        // arrive, the transfer reads nothing new.
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(w.observe(t0, 1000, unasked), None);
        assert_eq!(
            w.observe(t0 + s(10), 1000, || 500),
            Some(StallEvent::Stalled { for_: s(10) })
        );
        assert_eq!(w.observe(t0 + s(20), 1000, || 510), None, "heard at 20 s");
        assert_eq!(
            w.observe(t0 + s(30), 1000, || 510),
            Some(StallEvent::StillSending { for_: s(30) })
        );
        assert_eq!(w.observe(t0 + s(49), 1000, || 510), None, "said once");
        // 30 s after the last frame with nothing since: given up.
        assert_eq!(
            w.observe(t0 + s(50), 1000, || 510),
            Some(StallEvent::GaveUp {
                for_: s(50),
                still_sending: true
            })
        );
    }

    #[test]
    fn the_gap_filled_resumes_and_a_later_stall_starts_afresh() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(
            w.observe(t0 + s(10), 0, || 1),
            Some(StallEvent::Stalled { for_: s(10) })
        );
        let events: Vec<_> = (1..=5u64)
            .filter_map(|k| w.observe(t0 + s(10 * k + 5), 0, || 1 + k))
            .collect();
        assert_eq!(events, vec![StallEvent::StillSending { for_: s(35) }]);
        assert_eq!(
            w.observe(t0 + s(60), 9000, unasked),
            Some(StallEvent::Resumed { after: s(60) })
        );
        // The next stall reads the count afresh: frames seen before the
        // progress are not news.
        assert_eq!(
            w.observe(t0 + s(70), 9000, || 6),
            Some(StallEvent::Stalled { for_: s(10) })
        );
        assert_eq!(
            w.observe(t0 + s(90), 9000, || 6),
            Some(StallEvent::GaveUp {
                for_: s(30),
                still_sending: false
            })
        );
    }

    #[test]
    fn a_peer_that_sends_for_ever_without_filling_the_gap_is_given_up() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        let mut events = Vec::new();
        for k in 1..=400u64 {
            if let Some(e) = w.observe(t0 + s(k), 0, || k) {
                events.push((k, e));
            }
        }
        assert_eq!(
            events,
            vec![
                (10, StallEvent::Stalled { for_: s(10) }),
                (30, StallEvent::StillSending { for_: s(30) }),
                (
                    300,
                    StallEvent::GaveUp {
                        for_: s(300),
                        still_sending: true
                    }
                ),
            ]
        );
    }

    #[test]
    fn with_an_idle_timeout_below_the_notice_frames_still_count() {
        // `--idle-timeout 2s`: the count is read from 1 s, the stall said at
        // 2 s, the wait while frames come, the give-up 2 s after the last.
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(2));
        let ms = Duration::from_millis;
        let mut events = Vec::new();
        for (at, count) in [
            (500, 0),
            (1000, 3),
            (1500, 4),
            (2000, 5),
            (2100, 6),
            (3000, 6),
            (4100, 6),
        ] {
            if let Some(e) = w.observe(t0 + ms(at), 0, || count) {
                events.push((at, e));
            }
        }
        assert_eq!(
            events,
            vec![
                (2000, StallEvent::Stalled { for_: s(2) }),
                (2100, StallEvent::StillSending { for_: ms(2100) }),
                (
                    4100,
                    StallEvent::GaveUp {
                        for_: ms(4100),
                        still_sending: true
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_watch_polled_late_gives_up_without_a_notice_first() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(
            w.observe(t0 + s(45), 0, || 3),
            Some(StallEvent::GaveUp {
                for_: s(45),
                still_sending: false
            })
        );
    }

    #[test]
    fn the_messages_name_the_wait_and_the_cause() {
        assert_eq!(
            StallEvent::Stalled { for_: s(10) }.message(),
            "no data for 10.0 s; waiting for the path"
        );
        assert_eq!(
            StallEvent::StillSending { for_: s(30) }.message(),
            "no new data for 30.0 s, but the server still sends: waiting for the part it has yet to resend"
        );
        assert_eq!(
            StallEvent::Resumed {
                after: Duration::from_millis(12_340)
            }
            .message(),
            "data again after 12.3 s"
        );
        assert_eq!(
            StallEvent::GaveUp {
                for_: s(30),
                still_sending: false
            }
            .message(),
            "no data for 30.0 s (the idle timeout): the path to the server is gone"
        );
        assert_eq!(
            StallEvent::GaveUp {
                for_: s(300),
                still_sending: true
            }
            .message(),
            "no new data for 300.0 s although the server kept sending: giving up (the limit is 10 idle timeouts)"
        );
    }
}
