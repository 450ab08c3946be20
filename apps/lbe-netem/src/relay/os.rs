//! The operating-system calls the relay makes beyond `mio`: socket buffer
//! sizes and the thread's CPU time.

use std::net::UdpSocket as StdUdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Asks for large socket buffers, so that bursts wait in the emulator's own
/// (measured) queue rather than overflowing the kernel's. As root the
/// `*FORCE` variants go past `rmem_max`/`wmem_max`; otherwise the kernel caps.
pub(super) fn set_buffers(s: &StdUdpSocket, bytes: usize) {
    let fd = s.as_raw_fd();
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    for (force, plain) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        for opt in [force, plain] {
            // SAFETY: valid fd, pointer to a live c_int of the size given.
            let r = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    (&v as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                )
            };
            if r == 0 {
                break;
            }
        }
    }
}

/// CPU time used so far by the calling thread.
pub(super) fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid clock id and pointer to a live timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r < 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SO_RCVBUF` as the kernel reports it.
    fn receive_buffer(s: &StdUdpSocket) -> libc::c_int {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: valid fd, pointers to a live c_int and its length.
        let r = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(r, 0);
        v
    }

    #[test]
    fn socket_buffers_are_set_to_what_was_asked() {
        let s = StdUdpSocket::bind("127.0.0.1:0").unwrap();
        set_buffers(&s, 6000);
        // Linux doubles the value asked for (socket(7), SO_RCVBUF), and 6000
        // bytes is below every default rmem_max.
        assert_eq!(receive_buffer(&s), 12_000);
    }
}
