//! A QUIC server loop: many connections on one UDP socket.

use std::collections::HashMap;
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
use super::retry::RetryTokens;
use super::Conn;
use super::Outbox;
use crate::Error;
use quiche_lbe::qlog::Role;

/// What a server does with its connections.
pub trait ServerApp {
    /// Per-connection application state.
    type Session;

    /// A connection was accepted (its handshake has not completed).
    fn accept(&mut self, conn: &mut Conn) -> Self::Session;

    /// Called after anything happened on the connection (packets received,
    /// timers fired, the socket drained): read and write streams here.
    fn serve(&mut self, session: &mut Self::Session, conn: &mut Conn);

    /// The connection closed; it is dropped (and its qlog flushed) after
    /// this returns.
    fn closed(&mut self, session: Self::Session, conn: &mut Conn);
}

/// An accepted Initial's source connection ID (ours) and, after a Retry,
/// the client's original destination connection ID.
type Admitted = (Vec<u8>, Option<Vec<u8>>);

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Write one qlog per connection here.
    pub qlog_dir: Option<PathBuf>,
    /// Validate client addresses with a Retry round trip (RFC 9000 §8.1.2).
    pub retry: bool,
}

/// The socket, bound, before the loop starts: lets callers learn the port
/// when listening on port 0.
pub struct Server {
    poll: mio::Poll,
    sock: mio::net::UdpSocket,
    local: SocketAddr,
    options: ServerOptions,
}

impl Server {
    /// Binds the listening socket.
    pub fn bind(options: ServerOptions) -> Result<Self, Error> {
        if let Some(dir) = &options.qlog_dir {
            quiche_lbe::qlog::prepare_dir(dir)?;
        }
        let poll =
            mio::Poll::new().map_err(|e| Error::new(format!("cannot create a poller: {e}")))?;
        let sock = bind(options.listen, &poll)?;
        let local = sock
            .local_addr()
            .map_err(|e| Error::new(format!("cannot read the bound address: {e}")))?;
        Ok(Server {
            poll,
            sock,
            local,
            options,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Decides what to do with an Initial packet that starts no known
    /// connection: answer with Version Negotiation or Retry (then `None`),
    /// drop it (`None`), or accept it with these source and original
    /// destination connection IDs.
    fn admit(
        &self,
        hdr: &quiche::Header,
        from: SocketAddr,
        tokens: &RetryTokens,
        rng: &SystemRandom,
        out: &mut [u8],
    ) -> Result<Option<Admitted>, Error> {
        if !quiche::version_is_supported(hdr.version) {
            if let Ok(n) = quiche::negotiate_version(&hdr.scid, &hdr.dcid, out) {
                let _ = self.sock.send_to(&out[..n], from);
            }
            return Ok(None);
        }
        if !self.options.retry {
            return Ok(Some((new_conn_id(rng)?.to_vec(), None)));
        }
        let token = hdr.token.as_deref().unwrap_or(&[]);
        if token.is_empty() {
            let new_scid = new_conn_id(rng)?;
            let new_scid = quiche::ConnectionId::from_ref(&new_scid);
            let token = tokens.mint(&from, &hdr.dcid);
            if let Ok(n) = quiche::retry(&hdr.scid, &hdr.dcid, &new_scid, &token, hdr.version, out)
            {
                let _ = self.sock.send_to(&out[..n], from);
            }
            return Ok(None);
        }
        let Some(odcid) = tokens.validate(token, &from) else {
            log::debug!("invalid retry token from {from}");
            return Ok(None);
        };
        if hdr.dcid.len() != super::CONN_ID_LEN {
            return Ok(None);
        }
        Ok(Some((hdr.dcid.to_vec(), Some(odcid.to_vec()))))
    }

    /// Serves until `stop` is set; then closes every open connection
    /// (waiting up to a second for the closes to go out) and returns.
    pub fn run<A: ServerApp>(
        mut self,
        config: &mut quiche::Config,
        app: &mut A,
        stop: &AtomicBool,
    ) -> Result<(), Error> {
        let rng = SystemRandom::new();
        let tokens = RetryTokens::new(&rng)?;
        let mut events = mio::Events::with_capacity(1024);
        let mut conns: HashMap<Vec<u8>, (Conn, A::Session)> = HashMap::new();
        let mut aliases: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        let mut buf = vec![0u8; 65535];
        let mut out = vec![0u8; 1500];
        let mut outbox = Outbox::new();
        let mut stopping_since: Option<Instant> = None;

        loop {
            if stop.load(Ordering::Relaxed) && stopping_since.is_none() {
                stopping_since = Some(Instant::now());
                for (conn, _) in conns.values_mut() {
                    conn.quic.close(true, 0x0, b"server shutting down").ok();
                }
            }
            if let Some(since) = stopping_since {
                if conns.is_empty() || since.elapsed() > Duration::from_secs(1) {
                    for (_, (mut conn, session)) in conns.drain() {
                        app.closed(session, &mut conn);
                    }
                    return Ok(());
                }
            }

            let timeout = poll_timeout(
                conns.values().filter_map(|(c, _)| c.wake_at()).min(),
                Duration::from_millis(100),
            );
            let timeout = if outbox.is_blocked() {
                timeout.min(Duration::from_millis(1))
            } else {
                timeout
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(Error::new(format!("poll failed: {e}")));
                }
            }

            // Read everything the socket has.
            loop {
                let (len, from) = match self.sock.recv_from(&mut buf) {
                    Ok(v) => v,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
                    Err(e) => return Err(Error::new(format!("UDP receive failed: {e}"))),
                };
                let pkt = &mut buf[..len];
                let hdr = match quiche::Header::from_slice(pkt, super::CONN_ID_LEN) {
                    Ok(h) => h,
                    Err(_) => continue,
                };

                let mut key = hdr.dcid.to_vec();
                if let Some(primary) = aliases.get(&key) {
                    key = primary.clone();
                }
                if !conns.contains_key(&key) {
                    if hdr.ty != quiche::Type::Initial || stopping_since.is_some() {
                        continue;
                    }
                    let Some((scid, odcid)) = self.admit(&hdr, from, &tokens, &rng, &mut out)?
                    else {
                        continue;
                    };
                    let scid_ref = quiche::ConnectionId::from_ref(&scid);
                    let odcid_ref = odcid.as_deref().map(quiche::ConnectionId::from_ref);
                    let quic = match quiche::accept(
                        &scid_ref,
                        odcid_ref.as_ref(),
                        self.local,
                        from,
                        config,
                    ) {
                        Ok(c) => c,
                        Err(e) => {
                            log::warn!("cannot accept a connection from {from}: {e:?}");
                            continue;
                        }
                    };
                    let mut conn =
                        Conn::new(quic, &scid, Role::Server, self.options.qlog_dir.as_deref());
                    if let Err(e) = conn.name_qlog("conn", "pending") {
                        log::warn!("{e}");
                    }
                    let session = app.accept(&mut conn);
                    if key != scid {
                        // Until it hears from us, the client repeats its
                        // Initial to the DCID it chose.
                        aliases.insert(key, scid.clone());
                    }
                    let (conn, _) = conns.entry(scid).or_insert((conn, session));
                    let info = quiche::RecvInfo {
                        from,
                        to: self.local,
                    };
                    if let Err(e) = conn.quic.recv(pkt, info) {
                        log::debug!("{} recv failed: {e:?}", conn.quic.trace_id());
                    }
                    continue;
                }

                let (conn, _) = conns.get_mut(&key).expect("checked above");
                let info = quiche::RecvInfo {
                    from,
                    to: self.local,
                };
                if let Err(e) = conn.quic.recv(pkt, info) {
                    log::debug!("{} recv failed: {e:?}", conn.quic.trace_id());
                }
            }

            // Timers, the application, then sending, for each connection.
            let now = Instant::now();
            for (conn, session) in conns.values_mut() {
                on_timer(&mut conn.quic, now);
                app.serve(session, conn);
            }
            for (conn, _) in conns.values_mut() {
                if !drain_sends(conn, &self.sock, &mut outbox, &mut out)? {
                    break;
                }
            }

            let closed: Vec<Vec<u8>> = conns
                .iter()
                .filter(|(_, (c, _))| c.quic.is_closed())
                .map(|(k, _)| k.clone())
                .collect();
            for key in closed {
                if let Some((mut conn, session)) = conns.remove(&key) {
                    app.closed(session, &mut conn);
                }
                aliases.retain(|_, primary| *primary != key);
            }
        }
    }
}
