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
//! - after the idle timeout without progress gives up
//!   ([`StallEvent::GaveUp`]): the transfer ends with an error, as quiche's
//!   own idle timeout would end a silent connection.

use std::time::Duration;
use std::time::Instant;

/// How long a transfer may make no progress before the client says so:
/// 10 s, a third of our default idle timeout
/// ([`Transport::idle_timeout`](crate::Transport::idle_timeout), 30 s), so
/// that the notice comes well before the end.
pub const STALL_NOTICE: Duration = Duration::from_secs(10);

/// What [`StallWatch::observe`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallEvent {
    /// No progress for [`STALL_NOTICE`] (`for_` is how long exactly).
    Stalled {
        /// Time since the last progress.
        for_: Duration,
    },
    /// Progress again after a [`StallEvent::Stalled`]; `after` is how long
    /// the transfer made none.
    Resumed {
        /// The length of the stall.
        after: Duration,
    },
    /// No progress for the give-up limit: end the transfer.
    GaveUp {
        /// Time since the last progress.
        for_: Duration,
    },
}

/// Watches one transfer's byte count (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct StallWatch {
    give_up_after: Duration,
    bytes: u64,
    last_progress: Instant,
    stalled: bool,
    gave_up: bool,
}

impl StallWatch {
    /// A watch started at `now` with nothing moved yet, giving up after
    /// `give_up_after` without progress (the connection's idle timeout).
    pub fn new(now: Instant, give_up_after: Duration) -> Self {
        Self {
            give_up_after,
            bytes: 0,
            last_progress: now,
            stalled: false,
            gave_up: false,
        }
    }

    /// The transfer has moved `bytes` in all by `now` (a count that never
    /// goes down). Returns what changed: each event comes once per stall,
    /// and [`StallEvent::GaveUp`] once in all.
    pub fn observe(&mut self, now: Instant, bytes: u64) -> Option<StallEvent> {
        if bytes > self.bytes {
            self.bytes = bytes;
            let after = now.saturating_duration_since(self.last_progress);
            self.last_progress = now;
            if std::mem::take(&mut self.stalled) && !self.gave_up {
                return Some(StallEvent::Resumed { after });
            }
            return None;
        }
        let for_ = now.saturating_duration_since(self.last_progress);
        if self.gave_up {
            return None;
        }
        if for_ >= self.give_up_after {
            self.gave_up = true;
            return Some(StallEvent::GaveUp { for_ });
        }
        if for_ >= STALL_NOTICE && !self.stalled {
            self.stalled = true;
            return Some(StallEvent::Stalled { for_ });
        }
        None
    }

    /// When the next event can come if nothing moves: the notice, then the
    /// give-up limit; `None` after giving up.
    pub fn wake_at(&self) -> Option<Instant> {
        if self.gave_up {
            None
        } else if self.stalled || STALL_NOTICE >= self.give_up_after {
            Some(self.last_progress + self.give_up_after)
        } else {
            Some(self.last_progress + STALL_NOTICE)
        }
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
            StallEvent::Resumed { after } => {
                format!("data again after {:.1} s", after.as_secs_f64())
            }
            StallEvent::GaveUp { for_ } => format!(
                "no data for {:.1} s (the idle timeout): the path to the server is gone",
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

    #[test]
    fn a_stall_is_noticed_once_then_resumed_once() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(w.wake_at(), Some(t0 + s(10)));
        assert_eq!(w.observe(t0 + s(1), 100), None);
        assert_eq!(w.wake_at(), Some(t0 + s(11)));
        // Just short of the notice: nothing.
        assert_eq!(w.observe(t0 + s(11) - Duration::from_millis(1), 100), None);
        assert_eq!(
            w.observe(t0 + s(11), 100),
            Some(StallEvent::Stalled { for_: s(10) })
        );
        assert_eq!(w.observe(t0 + s(12), 100), None, "said once");
        assert_eq!(w.wake_at(), Some(t0 + s(31)));
        assert_eq!(
            w.observe(t0 + s(13), 101),
            Some(StallEvent::Resumed { after: s(12) })
        );
        assert_eq!(w.observe(t0 + s(14), 102), None, "progress says nothing");
        assert_eq!(w.wake_at(), Some(t0 + s(24)));
    }

    #[test]
    fn no_progress_for_the_idle_timeout_gives_up_once() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(w.observe(t0 + s(2), 5), None);
        assert_eq!(
            w.observe(t0 + s(12), 5),
            Some(StallEvent::Stalled { for_: s(10) })
        );
        assert_eq!(w.observe(t0 + s(31), 5), None);
        assert_eq!(
            w.observe(t0 + s(32), 5),
            Some(StallEvent::GaveUp { for_: s(30) })
        );
        assert_eq!(w.wake_at(), None);
        assert_eq!(w.observe(t0 + s(40), 5), None);
        assert_eq!(w.observe(t0 + s(41), 6), None, "no resume after giving up");
    }

    #[test]
    fn a_watch_polled_late_gives_up_without_a_notice_first() {
        let t0 = Instant::now();
        let mut w = StallWatch::new(t0, s(30));
        assert_eq!(
            w.observe(t0 + s(45), 0),
            Some(StallEvent::GaveUp { for_: s(45) })
        );
    }

    #[test]
    fn the_messages_name_the_wait_and_the_cause() {
        assert_eq!(
            StallEvent::Stalled { for_: s(10) }.message(),
            "no data for 10.0 s; waiting for the path"
        );
        assert_eq!(
            StallEvent::Resumed {
                after: Duration::from_millis(12_340)
            }
            .message(),
            "data again after 12.3 s"
        );
        assert_eq!(
            StallEvent::GaveUp { for_: s(30) }.message(),
            "no data for 30.0 s (the idle timeout): the path to the server is gone"
        );
    }
}
