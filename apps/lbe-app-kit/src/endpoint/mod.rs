//! Event loops that drive quiche connections over UDP, shared by the apps.
//!
//! [`server::Server::run`] accepts any number of connections (with stateless Retry
//! for address validation) and hands each to a [`server::ServerApp`];
//! [`client::run`] drives one connection for a [`client::ClientApp`]. Both
//! are single-threaded mio loops, as quiche's own apps are. The apps only
//! see [`Conn`]: the quiche connection plus where its qlog is written.
//!
//! # Pacing
//!
//! quiche tells when each datagram should leave in [`quiche::SendInfo::at`]
//! (its BBRv2 always, a plug-in that returns a pacing rate through our
//! patch; its Reno and CUBIC never pace and always say "now"). When the
//! connection has pacing enabled ([`quiche::Config::enable_pacing`], the
//! default; `--pacing off` turns it off), the loops honour it: a datagram
//! due later than [`RELEASE_SLACK`] from now is held, the connection
//! builds nothing more until it has left (so one connection's datagrams
//! never change order, and quiche stamps each packet's send time at most
//! one packet interval early), and the loop's poll timeout becomes the
//! earliest of quiche's timers and the held datagrams' release times. The
//! loop keeps receiving while it holds, and other connections keep sending.
//!
//! Why a timer and not `SO_TXTIME`: the kernel honours a transmit time only
//! through the `fq` or `etf` qdisc on the egress interface; loopback runs
//! `noqueue`, where the time is ignored, and the kernels here have neither
//! qdisc (`tc qdisc add dev lo root fq`, as root in a private network
//! namespace: "Specified qdisc kind is unknown"; the same for `etf`). A
//! user-space timer works everywhere, at the cost of the poll's resolution
//! (below).

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use std::time::Instant;

use ring::rand::SecureRandom;
use ring::rand::SystemRandom;

use crate::Error;
use lbe_endpoint::on_timer;
use lbe_endpoint::PacedSender;
use quiche_lbe::qlog::Role;

pub mod client;
pub mod retry;
pub mod server;

/// When a client reports a transfer that makes no progress, and gives it
/// up (`lbe_endpoint`'s rule, shared with the simulator's endpoints).
pub use lbe_endpoint::stall;

/// Length of the connection IDs we issue, bytes.
pub const CONN_ID_LEN: usize = 16;

/// Socket buffers we ask the kernel for: a burst of a few thousand
/// datagrams at loopback speed fits without drops.
const SOCKET_BUFFER_BYTES: usize = 8 << 20;

/// How early a paced datagram may leave (`lbe_endpoint`'s, shared with the
/// simulator).
pub use lbe_endpoint::RELEASE_SLACK;

/// A connection and its qlog.
pub struct Conn {
    /// The quiche connection.
    pub quic: quiche::Connection,
    id: Vec<u8>,
    role: Role,
    qlog_dir: Option<PathBuf>,
    qlog: Option<PathBuf>,
    /// Holds a paced datagram quiche built that is not due yet.
    sender: PacedSender,
}

impl Conn {
    fn new(quic: quiche::Connection, id: &[u8], role: Role, qlog_dir: Option<&Path>) -> Self {
        Conn {
            quic,
            id: id.to_vec(),
            role,
            qlog_dir: qlog_dir.map(Path::to_path_buf),
            qlog: None,
            sender: PacedSender::new(),
        }
    }

    /// When the loop must wake up for this connection: quiche's timer or
    /// the held datagram's release (less [`RELEASE_SLACK`]), whichever is
    /// first.
    fn wake_at(&self) -> Option<Instant> {
        self.sender.wake_at(&self.quic)
    }

    /// Starts the qlog as `<label>-<role>-<cc_tag>-<id>.sqlog`, or renames
    /// the one already started under that name. A no-op without a qlog dir.
    pub fn name_qlog(&mut self, label: &str, cc_tag: &str) -> Result<(), Error> {
        let Some(dir) = self.qlog_dir.clone() else {
            return Ok(());
        };
        match &self.qlog {
            None => {
                let path = quiche_lbe::qlog::attach(
                    &mut self.quic,
                    &dir,
                    label,
                    self.role,
                    cc_tag,
                    &self.id,
                )?;
                self.qlog = Some(path);
            }
            Some(old) => {
                let new = dir.join(quiche_lbe::qlog::file_name(
                    label, self.role, cc_tag, &self.id,
                ));
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

    /// The quiche connection and this end's qlog file at once (a sans-IO
    /// session writes to the one and names the other in its report).
    pub fn quic_and_qlog(&mut self) -> (&mut quiche::Connection, Option<&Path>) {
        (&mut self.quic, self.qlog.as_deref())
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

/// Writes `conn`'s pending packets: all of them, or, when the connection
/// paces, those due within [`RELEASE_SLACK`] (the first one due later is
/// held in `conn`). Returns whether the socket is still accepting.
fn drain_sends(
    conn: &mut Conn,
    sock: &mio::net::UdpSocket,
    outbox: &mut Outbox,
    out: &mut [u8],
) -> Result<bool, Error> {
    if !outbox.flush(sock).map_err(send_err)? {
        return Ok(false);
    }
    loop {
        match conn.sender.next(&mut conn.quic, Instant::now(), out) {
            Ok(Some((n, to))) => {
                if !outbox.send(sock, &out[..n], to).map_err(send_err)? {
                    return Ok(false);
                }
            }
            Ok(None) => return Ok(true),
            Err(e) => {
                log::warn!("{} send failed: {e:?}", conn.quic.trace_id());
                conn.quic.close(false, 0x1, b"send failed").ok();
                return Ok(true);
            }
        }
    }
}

/// The poll timeout for connections that must wake at `wake_at`: at most
/// `cap`, zero if one is already due.
fn poll_timeout(wake_at: Option<Instant>, cap: Duration) -> Duration {
    wake_at.map_or(cap, |t| {
        t.saturating_duration_since(Instant::now()).min(cap)
    })
}

fn send_err(e: io::Error) -> Error {
    Error::new(format!("UDP send failed: {e}"))
}
