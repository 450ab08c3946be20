//! Event loops that drive quiche connections over UDP, shared by the apps.
//!
//! [`server::run`] accepts any number of connections (with stateless Retry
//! for address validation) and hands each to a [`server::ServerApp`];
//! [`client::run`] drives one connection for a [`client::ClientApp`]. Both
//! are single-threaded mio loops, as quiche's own apps are. The apps only
//! see [`Conn`]: the quiche connection plus where its qlog is written.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;

use ring::rand::SecureRandom;
use ring::rand::SystemRandom;

use crate::qlog::Role;
use crate::Error;

pub mod client;
pub mod retry;
pub mod server;

/// Length of the connection IDs we issue, bytes.
pub const CONN_ID_LEN: usize = 16;

/// Socket buffers we ask the kernel for: a burst of a few thousand
/// datagrams at loopback speed fits without drops.
const SOCKET_BUFFER_BYTES: usize = 8 << 20;

/// A connection and its qlog.
pub struct Conn {
    /// The quiche connection.
    pub quic: quiche::Connection,
    id: Vec<u8>,
    role: Role,
    qlog_dir: Option<PathBuf>,
    qlog: Option<PathBuf>,
}

impl Conn {
    fn new(quic: quiche::Connection, id: &[u8], role: Role, qlog_dir: Option<&Path>) -> Self {
        Conn {
            quic,
            id: id.to_vec(),
            role,
            qlog_dir: qlog_dir.map(Path::to_path_buf),
            qlog: None,
        }
    }

    /// Starts the qlog as `<label>-<role>-<cc_tag>-<id>.sqlog`, or renames
    /// the one already started under that name. A no-op without a qlog dir.
    pub fn name_qlog(&mut self, label: &str, cc_tag: &str) -> Result<(), Error> {
        let Some(dir) = self.qlog_dir.clone() else {
            return Ok(());
        };
        match &self.qlog {
            None => {
                let path =
                    crate::qlog::attach(&mut self.quic, &dir, label, self.role, cc_tag, &self.id)?;
                self.qlog = Some(path);
            }
            Some(old) => {
                let new = dir.join(crate::qlog::file_name(label, self.role, cc_tag, &self.id));
                std::fs::rename(old, &new).map_err(|e| {
                    Error::new(format!(
                        "cannot rename qlog {} to {}: {e}",
                        old.display(),
                        new.display()
                    ))
                })?;
                self.qlog = Some(new);
            }
        }
        Ok(())
    }

    /// The qlog file, if one is being written.
    pub fn qlog_path(&self) -> Option<&Path> {
        self.qlog.as_deref()
    }

    /// A short hex form of the connection's ID, for logs.
    pub fn id_hex(&self) -> String {
        self.id.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

/// A fresh random connection ID.
pub fn new_conn_id(rng: &SystemRandom) -> Result<[u8; CONN_ID_LEN], Error> {
    let mut id = [0u8; CONN_ID_LEN];
    rng.fill(&mut id)
        .map_err(|_| Error::new("the system random generator failed"))?;
    Ok(id)
}

/// A non-blocking UDP socket registered with `poll`, with large buffers.
fn bind(addr: SocketAddr, poll: &mio::Poll) -> Result<mio::net::UdpSocket, Error> {
    let domain = socket2::Domain::for_address(addr);
    let sock = socket2::Socket::new(domain, socket2::Type::DGRAM, Some(socket2::Protocol::UDP))
        .map_err(|e| Error::new(format!("cannot create a UDP socket: {e}")))?;
    // Best effort: the kernel caps these at its configured maximum.
    let _ = sock.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = sock.set_send_buffer_size(SOCKET_BUFFER_BYTES);
    sock.bind(&addr.into())
        .map_err(|e| Error::new(format!("cannot bind UDP {addr}: {e}")))?;
    sock.set_nonblocking(true)
        .map_err(|e| Error::new(format!("cannot make the socket non-blocking: {e}")))?;
    let mut sock = mio::net::UdpSocket::from_std(sock.into());
    poll.registry()
        .register(
            &mut sock,
            SOCKET,
            mio::Interest::READABLE | mio::Interest::WRITABLE,
        )
        .map_err(|e| Error::new(format!("cannot poll the socket: {e}")))?;
    Ok(sock)
}

const SOCKET: mio::Token = mio::Token(0);

/// Sends datagrams, keeping the one the kernel refused (EAGAIN) for later so
/// that no packet quiche counted as sent is silently dropped here.
struct Outbox {
    held: Option<(Vec<u8>, SocketAddr)>,
}

impl Outbox {
    fn new() -> Self {
        Outbox { held: None }
    }

    /// Sends the held datagram. Returns whether the socket can take more.
    fn flush(&mut self, sock: &mio::net::UdpSocket) -> io::Result<bool> {
        if let Some((buf, to)) = self.held.take() {
            return self.send(sock, &buf, to);
        }
        Ok(true)
    }

    /// Sends one datagram or holds it. Returns whether the socket can take
    /// more.
    fn send(&mut self, sock: &mio::net::UdpSocket, buf: &[u8], to: SocketAddr) -> io::Result<bool> {
        match sock.send_to(buf, to) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.held = Some((buf.to_vec(), to));
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn is_blocked(&self) -> bool {
        self.held.is_some()
    }
}

/// Writes all of `conn`'s pending packets. Returns whether the socket is
/// still accepting.
fn drain_sends(
    conn: &mut quiche::Connection,
    sock: &mio::net::UdpSocket,
    outbox: &mut Outbox,
    out: &mut [u8],
) -> Result<bool, Error> {
    if !outbox.flush(sock).map_err(send_err)? {
        return Ok(false);
    }
    loop {
        match conn.send(out) {
            Ok((n, info)) => {
                if !outbox.send(sock, &out[..n], info.to).map_err(send_err)? {
                    return Ok(false);
                }
            }
            Err(quiche::Error::Done) => return Ok(true),
            Err(e) => {
                log::warn!("{} send failed: {e:?}", conn.trace_id());
                conn.close(false, 0x1, b"send failed").ok();
                return Ok(true);
            }
        }
    }
}

fn send_err(e: io::Error) -> Error {
    Error::new(format!("UDP send failed: {e}"))
}

/// Fires `conn`'s timer if it is due.
fn on_timer(conn: &mut quiche::Connection, now: Instant) {
    if conn.timeout_instant().is_some_and(|t| t <= now) {
        conn.on_timeout();
    }
}
