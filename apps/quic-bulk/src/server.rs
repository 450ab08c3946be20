//! The quic-bulk server: serves every client's download or upload.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use lbe_app_kit::endpoint::server::Server;
use lbe_app_kit::endpoint::server::ServerApp;
use lbe_app_kit::endpoint::server::ServerOptions;
use lbe_app_kit::endpoint::Conn;
use lbe_app_kit::tls;
use lbe_bulk::server::ServerSession;
use quiche_lbe::CcSpec;
use quiche_lbe::Error;

use crate::protocol;
use crate::protocol::Amount;

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServerArgs {
    pub listen: std::net::SocketAddr,
    pub qlog_dir: Option<PathBuf>,
    pub certificate: tls::Certificate,
    /// Validate client addresses with Retry.
    pub retry: bool,
    /// Print a line per finished connection on stderr.
    pub verbose: bool,
    /// Pace every connection (a client can still ask for its own to be
    /// unpaced); `false` sends each datagram as soon as quiche builds it.
    pub pacing: bool,
}

impl ServerArgs {
    /// A server on a free loopback port with a self-signed certificate
    /// its clients can trust ([`RunningServer::trust`]), Retry and pacing
    /// on, quiet: what the tests start.
    pub fn loopback(qlog_dir: Option<PathBuf>) -> Self {
        let certificate = tls::SelfSignedCert::generate()
            .expect("BoringSSL makes a P-256 key and a certificate for it");
        Self {
            listen: (std::net::Ipv4Addr::LOCALHOST, 0).into(),
            qlog_dir,
            certificate: tls::Certificate::Generated(certificate),
            retry: true,
            verbose: false,
            pacing: true,
        }
    }
}

/// One connection's state: the protocol's session and when it began.
pub struct Session {
    bulk: ServerSession,
    accepted_at: Instant,
}

/// quic-bulk's server application: each connection's [`ServerSession`]
/// (`lbe_bulk::server`), run from the endpoint's loop.
pub struct BulkServer {
    verbose: bool,
}

impl ServerApp for BulkServer {
    type Session = Session;

    fn accept(&mut self, _conn: &mut Conn) -> Session {
        Session {
            bulk: ServerSession::new(),
            accepted_at: Instant::now(),
        }
    }

    fn serve(&mut self, s: &mut Session, conn: &mut Conn) {
        let (quic, qlog) = conn.quic_and_qlog();
        match s.bulk.serve(quic, Instant::now(), qlog) {
            Ok(true) => {
                // The session read the request and parsed its spec.
                let request = s.bulk.request().expect("the request was read");
                if let Ok(cc) = request.cc.parse::<CcSpec>() {
                    let label = request.label.clone();
                    if let Err(e) = conn.name_qlog(&label, &cc.file_tag()) {
                        log::warn!("{e}");
                    }
                }
            }
            Ok(false) => {}
            Err(failure) => log::warn!("{}: {failure}", conn.id_hex()),
        }
    }

    fn closed(&mut self, s: Session, conn: &mut Conn) {
        if !self.verbose {
            return;
        }
        let what = match s.bulk.request() {
            Some(r) => format!(
                "{} {} {} cc={}",
                r.label,
                r.direction.as_str(),
                match r.amount {
                    Amount::Bytes(b) => lbe_units::fmt_bytes(b),
                    Amount::DurationMs(ms) => format!("{ms}ms"),
                },
                r.cc
            ),
            None => "no request".to_string(),
        };
        let qlog = conn
            .qlog_path()
            .map(|p| format!(" qlog={}", p.display()))
            .unwrap_or_default();
        eprintln!(
            "quic-bulk server: {} {what} closed after {:.2}s, {} packets lost{qlog}",
            conn.id_hex(),
            s.accepted_at.elapsed().as_secs_f64(),
            conn.quic.stats().lost
        );
    }
}

/// Binds the server. [`BoundServer::run`] serves until `stop` is set.
pub fn bind(args: &ServerArgs) -> Result<BoundServer, Error> {
    let server = Server::bind(ServerOptions {
        listen: args.listen,
        qlog_dir: args.qlog_dir.clone(),
        retry: args.retry,
    })?;
    let config = tls::cubic_server_config(&[protocol::ALPN], &args.certificate, args.pacing)?;
    Ok(BoundServer {
        server,
        config,
        verbose: args.verbose,
        trust: args.certificate.client_trust(),
    })
}

/// A bound, not yet running, server.
pub struct BoundServer {
    server: Server,
    config: quiche::Config,
    verbose: bool,
    trust: tls::ServerTrust,
}

impl BoundServer {
    /// Where it listens.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.server.local_addr()
    }

    /// What its clients trust to verify its certificate
    /// ([`tls::Certificate::client_trust`]).
    pub fn trust(&self) -> tls::ServerTrust {
        self.trust.clone()
    }

    /// Serves until `stop` is set, then closes open connections.
    pub fn run(mut self, stop: &AtomicBool) -> Result<(), Error> {
        let mut app = BulkServer {
            verbose: self.verbose,
        };
        self.server.run(&mut self.config, &mut app, stop)
    }
}

/// A server serving on a thread of its own, for tools and tests that run
/// one beside other work. Dropping it stops it, like [`RunningServer::stop`].
pub struct RunningServer {
    addr: std::net::SocketAddr,
    trust: tls::ServerTrust,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<Result<(), Error>>>,
}

impl BoundServer {
    /// Starts serving on a new thread.
    pub fn spawn(self) -> RunningServer {
        let addr = self.local_addr();
        let trust = self.trust();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::spawn(move || self.run(&flag));
        RunningServer {
            addr,
            trust,
            stop,
            thread: Some(thread),
        }
    }
}

impl RunningServer {
    /// Where it listens.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// What its clients trust to verify its certificate.
    pub fn trust(&self) -> tls::ServerTrust {
        self.trust.clone()
    }

    /// Closes open connections, flushes their qlogs and waits for the
    /// thread; returns how serving ended.
    pub fn stop(mut self) -> Result<(), Error> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), Error> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(Error::new("the quic-bulk server thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            log::warn!("quic-bulk server: {e}");
        }
    }
}
