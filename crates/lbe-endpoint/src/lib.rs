//! What an endpoint does around a `quiche::Connection`, sans-IO: one home
//! for the rules our apps' mio loops (`lbe_app_kit::endpoint`) and the
//! simulator's virtual-time loop (`lbe_sim`'s quiche engine) both follow,
//! and the transport settings ([`Transport`]) both configure quiche with.
//! Neither reads a clock here: the caller passes `now` (the wall clock in
//! the apps, the virtual time in the simulator) and moves the bytes.
//!
//! # Pacing
//!
//! quiche tells when each datagram should leave in [`quiche::SendInfo::at`]
//! (its BBRv2 always, a plug-in that returns a pacing rate through our
//! patch; its Reno and CUBIC never pace and always say "now"). When the
//! connection has pacing enabled ([`quiche::Config::enable_pacing`]),
//! a datagram due later than [`RELEASE_SLACK`] from now is held, and the
//! connection builds nothing more until it has left: one connection's
//! datagrams never change order, and quiche stamps each packet's send time
//! at most one packet interval early. The endpoint wakes at
//! [`PacedSender::wake_at`]: the earlier of quiche's timer and the held
//! datagram's release less [`RELEASE_SLACK`].
//!
//! # Stalls
//!
//! [`stall::StallWatch`]: when a client says its transfer makes no
//! progress, and when it gives the transfer up.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod stall;

use std::net::SocketAddr;
use std::time::Duration;
use std::time::Instant;

/// How early a paced datagram may leave: 1 ms, the resolution of the apps'
/// poll timeout (`epoll_wait` takes whole milliseconds; mio rounds up).
///
/// The endpoint wakes `RELEASE_SLACK` before a held datagram is due and
/// sends every datagram due by then, so it is never woken late by the
/// rounding (a late release would restart quiche's schedule from the late
/// time and lose rate) and sends bursts of at most about 1 ms at the
/// pacing rate: two 1350-byte datagrams at 20 Mbit/s. Linux TCP sizes its
/// paced bursts the same way: `sk_pacing_shift` = 10 makes a TSO burst
/// about 1 ms of the pacing rate (net/ipv4/tcp_output.c,
/// `tcp_tso_autosize()`). The simulator keeps the same slack so that it
/// sends what the apps send.
pub const RELEASE_SLACK: Duration = Duration::from_millis(1);

/// Largest UDP payload we send; 1350 bytes fits every path we emulate with
/// room for tunnel overheads (quiche's own apps use the same).
pub const MAX_DATAGRAM_SIZE: usize = 1350;

/// Flow-control and timeout settings shared by our endpoints: the apps'
/// and the simulator's.
#[derive(Clone, Copy, Debug)]
pub struct Transport {
    /// Connection-level flow-control window at the start, bytes.
    pub max_data: u64,
    /// Per-stream flow-control window at the start, bytes.
    pub max_stream_data: u64,
    /// Largest connection-level window quiche's autotuning may grow
    /// `max_data` to, bytes (quiche's `set_max_connection_window`).
    pub max_connection_window: u64,
    /// Largest per-stream window quiche's autotuning may grow
    /// `max_stream_data` to, bytes (quiche's `set_max_stream_window`).
    pub max_stream_window: u64,
    /// Idle timeout.
    pub idle_timeout: Duration,
    /// Release datagrams at the times quiche's pacer sets (quiche's
    /// `enable_pacing`, honoured by [`PacedSender`]); off sends each as
    /// soon as quiche builds it.
    pub pacing: bool,
}

/// Largest per-stream window autotuning may reach: 64 MiB (67 MB), above a
/// 1 Gbit/s path's bandwidth-delay product at 300 ms (37.5 MB) with room
/// for the queue an LBE keeps, below that path's BDP and its 1-BDP buffer
/// together (75 MB). At 256 MiB CUBIC overshot that buffer by tens of
/// megabytes in slow start: tens of thousands of datagrams lost at once,
/// which the simulator took 10 s of CPU a simulated second to replay (a
/// LEDBAT flow beside CUBIC over 30 s: 192 s of CPU and 382 MB against
/// 6.7 s and 161 MB at 64 MiB), and a sweep of two such runs ran out of
/// 24 GiB of memory.
pub const MAX_STREAM_WINDOW: u64 = 64 << 20;

/// Largest connection window autotuning may reach: 1.5 stream windows
/// (quiche keeps the connection window at least 1.5 times a stream's,
/// `CONNECTION_WINDOW_FACTOR`).
pub const MAX_CONNECTION_WINDOW: u64 = 96 << 20;

impl Default for Transport {
    fn default() -> Self {
        // Windows that start large enough for a 1 Gbit/s × 130 ms path
        // (32 MiB a stream), so that a bulk transfer is limited by its
        // congestion controller, not by flow control; quiche doubles a
        // window when the receiver renews it twice within two smoothed
        // round trips (`autotune_window`), up to the maxima above. A
        // stream renews after half its window (16 MiB) is read, so a
        // window grows only where the application reads 16 MiB within
        // two smoothed round trips: 8 MiB a round trip on average
        // (1 Gbit/s at 67 ms), or less where the data held behind a loss
        // is read at once (100 Mbit/s at 300 ms with a full 300 ms buffer
        // grew one). Below that the windows, and every datagram sent,
        // are what they were with fixed windows (the simulated tables at
        // 40 Mbit/s and below: docs/testing.md).
        // What a peer can make us buffer (data beyond a hole) is bounded
        // by the grown windows: 96 MiB a connection.
        Self {
            max_data: 64 << 20,
            max_stream_data: 32 << 20,
            max_connection_window: MAX_CONNECTION_WINDOW,
            max_stream_window: MAX_STREAM_WINDOW,
            idle_timeout: Duration::from_secs(30),
            pacing: true,
        }
    }
}

impl Transport {
    /// Writes these settings into `config`.
    pub fn apply(&self, config: &mut quiche::Config) {
        config.set_max_idle_timeout(self.idle_timeout.as_millis() as u64);
        config.set_max_recv_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_max_send_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_initial_max_data(self.max_data);
        config.set_initial_max_stream_data_bidi_local(self.max_stream_data);
        config.set_initial_max_stream_data_bidi_remote(self.max_stream_data);
        config.set_initial_max_stream_data_uni(self.max_stream_data);
        config.set_initial_max_streams_bidi(1000);
        config.set_initial_max_streams_uni(1000);
        config.set_max_connection_window(self.max_connection_window.max(self.max_data));
        config.set_max_stream_window(self.max_stream_window.max(self.max_stream_data));
        config.set_disable_active_migration(true);
        config.enable_pacing(self.pacing);
        // Every endpoint of ours offers the timestamp extension
        // (draft-huitema-quic-ts-08, quiche patch 0008): between two of
        // them each ACK carries the peer's clock, and the LEDBAT family
        // reads the forward one-way delay (`delay=auto`). A peer that does
        // not offer it (quic-go, aioquic, stock quiche) sees stock QUIC.
        config.enable_timestamps(true);
    }
}

/// A datagram quiche built that is not due yet.
#[derive(Debug)]
struct Held {
    bytes: Vec<u8>,
    to: SocketAddr,
    at: Instant,
}

/// One connection's sending side: takes datagrams from quiche and holds
/// the first one that is not due (see the crate docs).
#[derive(Debug, Default)]
pub struct PacedSender {
    held: Option<Held>,
}

impl PacedSender {
    /// A sender holding nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next datagram to put on the wire at `now`, written into `out`
    /// (at least as large as the connection's largest datagram): its
    /// length and destination. `Ok(None)` when there is nothing to send
    /// now: quiche has nothing (`Done`), or a paced datagram is held until
    /// its release. Call it until it returns `Ok(None)`, then wake at
    /// [`Self::wake_at`]. quiche's errors other than `Done` are returned.
    pub fn next(
        &mut self,
        conn: &mut quiche::Connection,
        now: Instant,
        out: &mut [u8],
    ) -> Result<Option<(usize, SocketAddr)>, quiche::Error> {
        if let Some(held) = self.held.take() {
            if held.at > now + RELEASE_SLACK {
                self.held = Some(held);
                return Ok(None);
            }
            let n = held.bytes.len();
            out[..n].copy_from_slice(&held.bytes);
            return Ok(Some((n, held.to)));
        }
        match conn.send(out) {
            Ok((n, info)) => {
                if conn.pacing_enabled() && info.at > now + RELEASE_SLACK {
                    self.held = Some(Held {
                        bytes: out[..n].to_vec(),
                        to: info.to,
                        at: info.at,
                    });
                    return Ok(None);
                }
                Ok(Some((n, info.to)))
            }
            Err(quiche::Error::Done) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether a paced datagram is waiting for its release.
    pub fn is_holding(&self) -> bool {
        self.held.is_some()
    }

    /// When the endpoint must wake up for this connection: quiche's timer
    /// or the held datagram's release less [`RELEASE_SLACK`], whichever is
    /// first.
    pub fn wake_at(&self, conn: &quiche::Connection) -> Option<Instant> {
        let release = self
            .held
            .as_ref()
            .map(|h| h.at.checked_sub(RELEASE_SLACK).unwrap_or(h.at));
        match (conn.timeout_instant(), release) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// How many more stream bytes a bulk sender should write into `conn` now:
/// the congestion window less the stream bytes written and not yet sent
/// ([`quiche::Connection::tx_buffered`], patch 0010), so that about one
/// window waits to be sent, never more.
///
/// quiche's `stream_send` takes whatever the window has free, and bytes
/// waiting to be sent are not in flight. While a paced datagram is held
/// (see [Pacing](crate#pacing)) quiche builds nothing, every ACK frees the
/// same window again, and a sender that wrote whatever quiche took
/// buffered more each time, up to the stream's flow-control window: all
/// of it still went out after the sender stopped (a `quic-bulk --duration`
/// CUBIC download into a 500 ms buffer at 20 Mbit/s: its data arrived
/// until 2.6 s after the stop in the lab; 6.5 MB of it in the simulator).
/// With this budget it ends about 1.1 s after the stop in the lab: the
/// window in flight and the one waiting.
///
/// One window waiting is enough for quiche never to take the sender for
/// application-limited: quiche's check (`delivery_rate_check_if_app_limited`)
/// is that less than the window's free part waits, and the free part is at
/// most the window.
pub fn write_budget(conn: &quiche::Connection) -> usize {
    let cwnd = conn.path_stats().map(|p| p.cwnd).max().unwrap_or(0);
    cwnd.saturating_sub(conn.tx_buffered())
}

/// Runs `conn`'s timer if it is due at `now`.
pub fn on_timer(conn: &mut quiche::Connection, now: Instant) {
    if conn.timeout_instant().is_some_and(|t| t <= now) {
        conn.on_timeout();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client connection (its first send is a 1200-byte Initial, stamped
    /// by quiche with its own clock: no pacing controller says later).
    fn client(pacing: bool) -> quiche::Connection {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        config.set_application_protos(&[b"test"]).unwrap();
        config.enable_pacing(pacing);
        let local: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let peer: SocketAddr = "127.0.0.1:4433".parse().unwrap();
        let scid = quiche::ConnectionId::from_ref(&[7; 16]);
        quiche::connect(None, &scid, local, peer, &mut config).unwrap()
    }

    #[test]
    fn a_datagram_due_later_than_the_slack_is_held_then_released_unchanged() {
        let mut conn = client(true);
        let mut sender = PacedSender::new();
        let mut out = [0u8; 1500];
        // `now` 10 ms before quiche's clock: the Initial quiche stamps
        // "now" is due 10 ms later than this `now`.
        let early = Instant::now() - Duration::from_millis(10);
        assert_eq!(sender.next(&mut conn, early, &mut out), Ok(None));
        assert!(sender.is_holding());
        assert_eq!(conn.stats().sent, 1);
        let release = sender.wake_at(&conn).unwrap();
        assert!(release > early);
        // While it is held, quiche builds nothing more.
        assert_eq!(sender.next(&mut conn, early, &mut out), Ok(None));
        assert_eq!(conn.stats().sent, 1);
        // At the release time less the slack it leaves, as built.
        let (n, to) = sender.next(&mut conn, release, &mut out).unwrap().unwrap();
        assert_eq!((n, to), (1200, "127.0.0.1:4433".parse().unwrap()));
        assert!(!sender.is_holding());
        // Later, whatever else quiche has (the ClientHello may take two
        // Initials) leaves at once, and then nothing is held.
        let late = Instant::now() + Duration::from_secs(1);
        let rest = drain(&mut sender, &mut conn, late);
        assert!(!sender.is_holding());
        assert_eq!(conn.stats().sent, 1 + rest);
    }

    /// Sends everything due at `now`; how many datagrams.
    fn drain(sender: &mut PacedSender, conn: &mut quiche::Connection, now: Instant) -> usize {
        let mut out = [0u8; 1500];
        let mut sent = 0;
        while let Some((n, _)) = sender.next(conn, now, &mut out).unwrap() {
            assert_eq!(n, 1200);
            sent += 1;
        }
        sent
    }

    #[test]
    fn without_pacing_nothing_is_held() {
        let mut conn = client(false);
        let mut sender = PacedSender::new();
        let mut out = [0u8; 1500];
        let early = Instant::now() - Duration::from_millis(10);
        let (n, _) = sender.next(&mut conn, early, &mut out).unwrap().unwrap();
        assert_eq!(n, 1200);
        assert!(!sender.is_holding());
        // Only quiche's timer (the PTO) wakes it.
        assert_eq!(sender.wake_at(&conn), conn.timeout_instant());
    }

    #[test]
    fn the_timer_runs_only_when_due() {
        let mut conn = client(false);
        let mut out = [0u8; 1500];
        let mut sender = PacedSender::new();
        assert!(drain(&mut sender, &mut conn, Instant::now()) >= 1);
        let pto = conn.timeout_instant().unwrap();
        on_timer(&mut conn, pto - Duration::from_millis(1));
        // Not due: nothing to retransmit.
        assert_eq!(sender.next(&mut conn, pto, &mut out), Ok(None));
        // quiche reads its own clock in on_timeout; past the PTO by its
        // clock too, the probe goes out.
        std::thread::sleep(pto.saturating_duration_since(Instant::now()));
        on_timer(&mut conn, pto);
        let (n, _) = sender
            .next(&mut conn, pto + Duration::from_secs(1), &mut out)
            .unwrap()
            .unwrap();
        assert_eq!(n, 1200);
        assert!(conn.stats().sent >= 2);
    }
}
