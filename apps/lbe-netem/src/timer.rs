//! Precise wake-ups for the I/O thread (Linux).
//!
//! `epoll_wait` (and so `mio::Poll::poll`) only takes a timeout in whole
//! milliseconds, far too coarse for delivering datagrams within a fraction of
//! a millisecond of their due time. Instead a `timerfd` (a nanosecond
//! resolution high-resolution kernel timer) is registered with the same
//! poll, so one `epoll_wait` wakes the thread either for a datagram to read
//! or for the next delivery. The thread's timer slack is set to 1 ns so the
//! kernel does not coalesce the wake-up with others (the default slack is
//! 50 us), and optionally the thread runs under `SCHED_FIFO` so that busy
//! endpoints on the same cores do not delay its wake-ups.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// A non-blocking `CLOCK_MONOTONIC` timerfd.
pub struct TimerFd {
    fd: OwnedFd,
    armed: bool,
}

impl TimerFd {
    /// Creates a disarmed timer.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the returned fd is checked and then owned.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a freshly created descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Self { fd, armed: false })
    }

    /// Arms the timer to expire once, `after` from now (at least 1 ns, since
    /// a zero value would disarm it).
    pub fn arm(&mut self, after: Duration) -> io::Result<()> {
        let after = after.max(Duration::from_nanos(1));
        self.set(libc::timespec {
            tv_sec: after.as_secs() as libc::time_t,
            tv_nsec: after.subsec_nanos() as libc::c_long,
        })?;
        self.armed = true;
        Ok(())
    }

    /// Disarms the timer if it was armed.
    pub fn disarm(&mut self) -> io::Result<()> {
        if self.armed {
            self.set(libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            })?;
            self.armed = false;
        }
        Ok(())
    }

    fn set(&self, value: libc::timespec) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        // SAFETY: valid fd and pointers to live, initialised structs.
        let r =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Consumes an expiry, if any (so the fd reads as not ready again).
    pub fn clear(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into an 8-byte buffer.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        self.armed = false;
    }
}

impl AsRawFd for TimerFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Sets the calling thread's timer slack (the kernel's allowance for firing
/// its timers late, to batch wake-ups) to 1 ns.
pub fn set_min_timer_slack() -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Moves the calling thread to the `SCHED_FIFO` real-time class at
/// `priority` (1–99). Needs `CAP_SYS_NICE` (or root).
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: 0 means the calling thread; `param` is a valid struct.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn timerfd_fires() {
        let mut t = TimerFd::new().unwrap();
        t.arm(Duration::from_millis(2)).unwrap();
        let start = Instant::now();
        let mut pfd = libc::pollfd {
            fd: t.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, 5000) };
        assert_eq!(n, 1);
        assert!(start.elapsed() >= Duration::from_millis(2));
        t.clear();
        t.disarm().unwrap();
        t.arm(Duration::from_secs(10)).unwrap();
        t.disarm().unwrap();
        // SAFETY: as above.
        let n = unsafe { libc::poll(&mut pfd, 1, 20) };
        assert_eq!(n, 0);
    }
}
