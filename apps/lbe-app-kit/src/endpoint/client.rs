//! A QUIC client loop: one connection.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use ring::rand::SystemRandom;

use super::bind;
use super::drain_sends;
use super::new_conn_id;
use super::on_timer;
use super::poll_timeout;
use super::Conn;
use super::Outbox;
use crate::Error;
use quiche_lbe::qlog::Role;

/// What a client does on its connection.
pub trait ClientApp {
    /// Called after anything happened on the connection: read and write
    /// streams here; close the connection when done. An error closes the
    /// connection and is returned by [`run`].
    fn progress(&mut self, conn: &mut Conn) -> Result<(), Error>;
}

/// Client settings.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The server.
    pub connect: SocketAddr,
    /// Local address; port 0 picks one.
    pub bind: Option<SocketAddr>,
    /// The server's name, as its certificate must name it: a DNS name, or
    /// an IP address (then not sent as TLS SNI: [`crate::tls::sni`]).
    pub server_name: String,
    /// Write the connection's qlog here.
    pub qlog_dir: Option<PathBuf>,
    /// Names the qlog: `<label>-client-<qlog_cc>-<id>.sqlog`.
    pub label: String,
    /// The controller tag in the qlog's name.
    pub qlog_cc: String,
    /// Give up if the handshake has not completed by then.
    pub handshake_timeout: Duration,
}

/// Connects, then drives the connection until it closes. Returns the
/// connection (for its stats and qlog path). A connection closed by the
/// peer with an error, a handshake that never completes, or `stop` being
/// set are errors.
pub fn run(
    options: &ClientOptions,
    config: &mut quiche::Config,
    app: &mut dyn ClientApp,
    stop: &AtomicBool,
) -> Result<Conn, Error> {
    if let Some(dir) = &options.qlog_dir {
        quiche_lbe::qlog::prepare_dir(dir)?;
    }
    let poll = mio::Poll::new().map_err(|e| Error::new(format!("cannot create a poller: {e}")))?;
    let local_bind = options.bind.unwrap_or_else(|| match options.connect {
        SocketAddr::V4(_) => "0.0.0.0:0".parse().expect("valid address"),
        SocketAddr::V6(_) => "[::]:0".parse().expect("valid address"),
    });
    let sock = bind(local_bind, &poll)?;
    let local = sock
        .local_addr()
        .map_err(|e| Error::new(format!("cannot read the bound address: {e}")))?;

    let rng = SystemRandom::new();
    let scid = new_conn_id(&rng)?;
    crate::tls::take_verify_failure();
    let quic = quiche::connect(
        crate::tls::sni(&options.server_name),
        &quiche::ConnectionId::from_ref(&scid),
        local,
        options.connect,
        config,
    )
    .map_err(|e| Error::new(format!("cannot start a connection: {e}")))?;
    let mut conn = Conn::new(quic, &scid, Role::Client, options.qlog_dir.as_deref());
    conn.name_qlog(&options.label, &options.qlog_cc)?;

    let mut poll = poll;
    let mut events = mio::Events::with_capacity(256);
    let mut buf = vec![0u8; 65535];
    let mut out = vec![0u8; 1500];
    let mut outbox = Outbox::new();
    let started = Instant::now();
    let mut app_error: Option<Error> = None;

    drain_sends(&mut conn, &sock, &mut outbox, &mut out)?;
    while !conn.quic.is_closed() {
        if stop.load(Ordering::Relaxed) {
            conn.quic.close(true, 0x0, b"interrupted").ok();
            app_error.get_or_insert_with(|| Error::new("interrupted"));
        }
        if !conn.quic.is_established() && started.elapsed() > options.handshake_timeout {
            return Err(Error::new(format!(
                "no answer from {} after {:?}: is a server running there?",
                options.connect, options.handshake_timeout
            )));
        }

        let timeout = poll_timeout(conn.wake_at(), Duration::from_millis(100));
        let timeout = if outbox.is_blocked() {
            timeout.min(Duration::from_millis(1))
        } else {
            timeout
        };
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(Error::new(format!("poll failed: {e}")));
            }
        }

        loop {
            let (len, from) = match sock.recv_from(&mut buf) {
                Ok(v) => v,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                // An ICMP port unreachable: nobody listens there (yet).
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(Error::new(format!("UDP receive failed: {e}"))),
            };
            let info = quiche::RecvInfo { from, to: local };
            if let Err(e) = conn.quic.recv(&mut buf[..len], info) {
                log::debug!("recv failed: {e:?}");
            }
        }
        on_timer(&mut conn.quic, Instant::now());

        if app_error.is_none() && !conn.quic.is_closed() {
            if let Err(e) = app.progress(&mut conn) {
                conn.quic.close(true, 0x1, b"client error").ok();
                app_error = Some(e);
            }
        }
        drain_sends(&mut conn, &sock, &mut outbox, &mut out)?;
    }

    if let Some(e) = app_error {
        return Err(e);
    }
    if let Some(e) = conn.quic.peer_error() {
        if let Some((alert, name)) = tls_alert(e) {
            return Err(Error::new(format!(
                "the server refused the TLS handshake: TLS alert {alert} ({name})"
            )));
        }
        if e.error_code != 0 {
            return Err(Error::new(format!(
                "the server closed the connection: {} (code {:#x})",
                String::from_utf8_lossy(&e.reason),
                e.error_code
            )));
        }
    }
    if let Some(e) = conn.quic.local_error() {
        if let Some((alert, name)) = tls_alert(e) {
            if let Some(why) = crate::tls::take_verify_failure() {
                return Err(Error::new(crate::tls::verify_failure(
                    &options.server_name,
                    &why,
                    alert,
                    name,
                )));
            }
            return Err(Error::new(format!(
                "the TLS handshake failed: TLS alert {alert} ({name})"
            )));
        }
        if e.error_code != 0 && !e.is_app {
            return Err(Error::new(format!(
                "the connection failed: {} (QUIC error {:#x})",
                String::from_utf8_lossy(&e.reason),
                e.error_code
            )));
        }
    }
    if conn.quic.is_timed_out() && !conn.quic.is_established() {
        return Err(Error::new(format!(
            "no answer from {}: the handshake timed out",
            options.connect
        )));
    }
    Ok(conn)
}

/// The TLS alert a transport close carries, and its name: QUIC's
/// CRYPTO_ERROR codes 0x100-0x1ff are 0x100 plus the alert (RFC 9001 §4.8).
fn tls_alert(e: &quiche::ConnectionError) -> Option<(u64, &'static str)> {
    if e.is_app || !(0x100..0x200).contains(&e.error_code) {
        return None;
    }
    let alert = e.error_code - 0x100;
    // RFC 8446 §6 and RFC 7301 §3.2.
    let name = match alert {
        10 => "unexpected_message",
        20 => "bad_record_mac",
        40 => "handshake_failure",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        44 => "certificate_revoked",
        45 => "certificate_expired",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        50 => "decode_error",
        51 => "decrypt_error",
        70 => "protocol_version",
        71 => "insufficient_security",
        80 => "internal_error",
        109 => "missing_extension",
        110 => "unsupported_extension",
        112 => "unrecognized_name",
        116 => "certificate_required",
        120 => "no_application_protocol",
        _ => "alert",
    };
    Some((alert, name))
}
