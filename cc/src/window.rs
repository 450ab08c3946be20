//! The window's bounds and the spurious-loss checkpoint, shared by the
//! controllers.
//!
//! Every controller keeps its window between a floor of `min_cwnd` packets
//! and [`MAX_WINDOW_BYTES`]. The floor is in packets of the current maximum
//! datagram size, so it moves with PMTUD (`on_mtu_change`), and a window
//! restored by a rollback may predate such a change: both clamp the window
//! into the bounds of the current size. LEDBAT and LEDBAT++ keep their
//! windows in `f64` bytes, CDG in `u64` bytes; [`WindowBytes`] is that
//! choice.

use crate::MAX_WINDOW_BYTES;

/// A window size in bytes: `u64` or `f64`.
pub(crate) trait WindowBytes: Copy + PartialOrd {
    /// [`MAX_WINDOW_BYTES`] in this type.
    const MAX: Self;
    /// The maximum datagram size, at least 1 byte.
    fn mss(max_datagram_size: u64) -> Self;
    /// `packets · mss`, capped at [`MAX_WINDOW_BYTES`].
    fn packets(packets: u64, mss: Self) -> Self;
}

impl WindowBytes for u64 {
    const MAX: Self = MAX_WINDOW_BYTES;

    fn mss(max_datagram_size: u64) -> Self {
        max_datagram_size.max(1)
    }

    fn packets(packets: u64, mss: Self) -> Self {
        packets.saturating_mul(mss).min(MAX_WINDOW_BYTES)
    }
}

impl WindowBytes for f64 {
    const MAX: Self = MAX_WINDOW_BYTES as f64;

    fn mss(max_datagram_size: u64) -> Self {
        max_datagram_size.max(1) as f64
    }

    fn packets(packets: u64, mss: Self) -> Self {
        (packets as f64 * mss).min(MAX_WINDOW_BYTES as f64)
    }
}

/// The MSS and the window's floor, in bytes of type `W`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WindowBounds<W> {
    /// Maximum datagram size, bytes (at least 1).
    pub(crate) mss: W,
    /// The smallest window, `min_cwnd_packets · mss` bytes.
    pub(crate) min: W,
    min_cwnd_packets: u64,
}

impl<W: WindowBytes> WindowBounds<W> {
    /// Bounds for datagrams of `max_datagram_size` bytes and a floor of
    /// `min_cwnd_packets` packets.
    pub(crate) fn new(max_datagram_size: u64, min_cwnd_packets: u64) -> Self {
        let mss = W::mss(max_datagram_size);
        Self {
            mss,
            min: W::packets(min_cwnd_packets, mss),
            min_cwnd_packets,
        }
    }

    /// `window` clamped to `[min, MAX_WINDOW_BYTES]`.
    pub(crate) fn clamp(&self, window: W) -> W {
        if window < self.min {
            self.min
        } else if window > W::MAX {
            W::MAX
        } else {
            window
        }
    }

    /// The path's maximum datagram size changed: the floor follows it and
    /// `window` is clamped into the new bounds.
    pub(crate) fn on_mtu_change(&mut self, max_datagram_size: u64, window: &mut W) {
        *self = Self::new(max_datagram_size, self.min_cwnd_packets);
        *window = self.clamp(*window);
    }
}

/// A controller state that carries a window (what a rollback clamps).
pub(crate) trait HasWindow<W> {
    /// The congestion window, bytes.
    fn window_mut(&mut self) -> &mut W;
}

/// The state saved for a spurious loss: at most one checkpoint, restored at
/// most once ([`crate::CongestionController::checkpoint`] and `rollback`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checkpoint<S> {
    saved: Option<S>,
}

impl<S> Default for Checkpoint<S> {
    fn default() -> Self {
        Self { saved: None }
    }
}

impl<S: Copy> Checkpoint<S> {
    /// Saves `state`, replacing any earlier checkpoint.
    pub(crate) fn save(&mut self, state: &S) {
        self.saved = Some(*state);
    }

    /// Restores the checkpoint into `state`, its window clamped into
    /// `bounds` (the MSS may have changed since); returns whether there was
    /// one to restore.
    pub(crate) fn rollback<W: WindowBytes>(
        &mut self,
        state: &mut S,
        bounds: &WindowBounds<W>,
    ) -> bool
    where
        S: HasWindow<W>,
    {
        match self.saved.take() {
            Some(saved) => {
                *state = saved;
                let window = state.window_mut();
                *window = bounds.clamp(*window);
                true
            }
            None => false,
        }
    }
}

/// The spurious-loss hooks of a controller whose whole checkpointed state
/// is `self.s`, saved in `self.saved` (a [`Checkpoint`]) and bounded by
/// `self.bounds` (a [`WindowBounds`]): `checkpoint` saves the state,
/// `rollback` restores it, its window clamped. Used inside `impl
/// CongestionController for …` (CDG, LEDBAT, LEDBAT++).
macro_rules! checkpoint_hooks {
    () => {
        fn checkpoint(&mut self) {
            self.saved.save(&self.s);
        }

        fn rollback(&mut self) -> bool {
            self.saved.rollback(&mut self.s, &self.bounds)
        }
    };
}
pub(crate) use checkpoint_hooks;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct State {
        cwnd: u64,
        other: u8,
    }

    impl HasWindow<u64> for State {
        fn window_mut(&mut self) -> &mut u64 {
            &mut self.cwnd
        }
    }

    #[test]
    fn bounds_follow_the_mtu_and_clamp_the_window() {
        let mut b = WindowBounds::<u64>::new(1200, 2);
        assert_eq!((b.mss, b.min), (1200, 2400));
        assert_eq!(b.clamp(100), 2400);
        assert_eq!(b.clamp(5000), 5000);
        assert_eq!(b.clamp(u64::MAX), MAX_WINDOW_BYTES);
        let mut w = 3000;
        b.on_mtu_change(1500, &mut w);
        assert_eq!((b.mss, b.min, w), (1500, 3000, 3000));
        b.on_mtu_change(9000, &mut w);
        assert_eq!((b.mss, b.min, w), (9000, 18_000, 18_000));
        let z = WindowBounds::<f64>::new(0, 4);
        assert_eq!((z.mss, z.min), (1.0, 4.0));
        let huge = WindowBounds::<u64>::new(u64::MAX, 64);
        assert_eq!(huge.min, MAX_WINDOW_BYTES);
    }

    #[test]
    fn one_checkpoint_one_rollback_clamped_to_the_current_bounds() {
        let mut c = Checkpoint::default();
        let mut s = State {
            cwnd: 2400,
            other: 1,
        };
        let b = WindowBounds::<u64>::new(1500, 2);
        assert!(!c.rollback(&mut s, &b), "nothing saved");
        c.save(&s);
        s = State {
            cwnd: 9000,
            other: 2,
        };
        assert!(c.rollback(&mut s, &b));
        assert_eq!(
            s,
            State {
                cwnd: 3000,
                other: 1
            }
        );
        assert!(!c.rollback(&mut s, &b), "taken by the first rollback");
    }
}
