//! Receiving datagrams with the kernel's arrival timestamp (Linux
//! `SO_TIMESTAMPNS`), so that a datagram's delay is counted from when it
//! reached the socket, not from when the emulator's thread got round to
//! reading it: a late wake-up on the receive side is then compensated
//! instead of added to the path's delay.

use std::io;
use std::mem::{size_of, size_of_val, MaybeUninit};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::RawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Asks the kernel to timestamp every datagram received on `fd`.
pub fn enable_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: valid fd, pointer to a live c_int of the size given.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One received datagram.
pub struct Received {
    /// Its length.
    pub len: usize,
    /// Who sent it.
    pub from: Option<SocketAddr>,
    /// How long it waited in the socket before being read (from the kernel
    /// timestamp), if the kernel gave one and it is plausible.
    pub waited: Option<Duration>,
}

impl Received {
    /// Its arrival time, given the time it was read.
    pub fn arrival(&self, read_at: Instant) -> Instant {
        self.waited
            .and_then(|w| read_at.checked_sub(w))
            .unwrap_or(read_at)
    }
}

/// Reads one datagram from the non-blocking socket `fd` into `buf`.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<Received> {
    let mut addr = MaybeUninit::<libc::sockaddr_storage>::zeroed();
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for a few control messages, aligned for cmsghdr.
    let mut control = [0u64; 16];
    // SAFETY: an all-zero msghdr is a valid empty one; every pointer set
    // below refers to a local that outlives the recvmsg call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = addr.as_mut_ptr().cast();
    msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    // SAFETY: `msg` describes valid buffers, as above.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let now_real = SystemTime::now();

    let mut stamp: Option<libc::timespec> = None;
    // SAFETY: the CMSG_* macros walk the control buffer the kernel filled,
    // within `msg_controllen`; the payload is read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                stamp = Some(std::ptr::read_unaligned(
                    libc::CMSG_DATA(c).cast::<libc::timespec>(),
                ));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let waited = stamp.and_then(|ts| {
        let at = UNIX_EPOCH
            + Duration::new(
                u64::try_from(ts.tv_sec).ok()?,
                u32::try_from(ts.tv_nsec).ok()?,
            );
        // A clock step could make this negative or huge: then ignore it.
        now_real
            .duration_since(at)
            .ok()
            .filter(|w| *w < Duration::from_secs(1))
    });
    // SAFETY: the kernel wrote `msg_namelen` bytes of a sockaddr there.
    let from = unsafe { to_socket_addr(addr.as_ptr(), msg.msg_namelen) };
    Ok(Received {
        len: n as usize,
        from,
        waited,
    })
}

/// Converts a kernel socket address.
///
/// # Safety
/// `addr` must point to `len` initialised bytes of a socket address.
unsafe fn to_socket_addr(
    addr: *const libc::sockaddr_storage,
    len: libc::socklen_t,
) -> Option<SocketAddr> {
    let family = i32::from((*addr).ss_family);
    if family == libc::AF_INET && len as usize >= size_of::<libc::sockaddr_in>() {
        let a = &*addr.cast::<libc::sockaddr_in>();
        Some(SocketAddr::V4(SocketAddrV4::new(
            Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
            u16::from_be(a.sin_port),
        )))
    } else if family == libc::AF_INET6 && len as usize >= size_of::<libc::sockaddr_in6>() {
        let a = &*addr.cast::<libc::sockaddr_in6>();
        Some(SocketAddr::V6(SocketAddrV6::new(
            Ipv6Addr::from(a.sin6_addr.s6_addr),
            u16::from_be(a.sin6_port),
            a.sin6_flowinfo,
            a.sin6_scope_id,
        )))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn receives_with_address_and_timestamp() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_nonblocking(true).unwrap();
        enable_timestamps(rx.as_raw_fd()).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut buf = [0u8; 64];
        let e = recv(rx.as_raw_fd(), &mut buf).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);

        // The kernel turns receive timestamping on asynchronously (a static
        // key flipped from a work queue): datagrams that arrive before that
        // are stamped only when read. Give it a moment.
        std::thread::sleep(Duration::from_millis(50));
        tx.send_to(b"hello", rx.local_addr().unwrap()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let r = recv(rx.as_raw_fd(), &mut buf).unwrap();
        assert_eq!(&buf[..r.len], b"hello");
        assert_eq!(r.from, Some(tx.local_addr().unwrap()));
        // It sat in the socket for the 20 ms we slept.
        let waited = r.waited.expect("kernel timestamp");
        assert!(waited >= Duration::from_millis(15), "{waited:?}");
        let now = Instant::now();
        assert!(r.arrival(now) <= now - Duration::from_millis(15));
    }
}
