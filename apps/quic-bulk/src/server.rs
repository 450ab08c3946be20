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
use quiche_lbe::lbe_cc::deadline::Progress;
use quiche_lbe::CcSpec;
use quiche_lbe::Error;

use crate::protocol;
use crate::protocol::close;
use crate::protocol::Amount;
use crate::protocol::Direction;
use crate::protocol::Receipt;
use crate::protocol::Request;
use crate::stats::SenderStats;
use crate::transfer::LineReader;
use crate::transfer::Receiver;
use crate::transfer::Sender;

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

enum Phase {
    /// Waiting for the request line.
    Request(LineReader),
    Sending(Sender),
    Receiving(Receiver),
    /// The reply is written; waiting for the client to close.
    Finished,
}

/// One client's connection.
pub struct Session {
    phase: Phase,
    request: Option<Request>,
    report_request: LineReader,
    report_sent: bool,
    stats: SenderStats,
    accepted_at: Instant,
    /// A deadline-aware sender's progress handle, fed with the stream bytes
    /// acknowledged.
    progress: Option<Progress>,
}

/// A deadline-aware download's progress: the payload the client has
/// acknowledged (`quiche_lbe::spec::stream_delivered`), up to what was
/// written, all of it once the FIN is: the progress goes on until everything
/// is acknowledged. (Until round 4 it stopped being fed at the FIN, while
/// quiche still held the last 16 MB unacknowledged; the controller saw no
/// progress for the rest of the transfer and caught up as hard as it could:
/// in real time a tight deadline's last 16 s ran at 15-19 Mbit/s of the 20
/// and finished at 104.4 s instead of about 114.) `None` before a download
/// starts.
fn delivered(phase: &Phase, stream_acked: quiche::Result<u64>, progress: &Progress) -> Option<u64> {
    let written = match phase {
        Phase::Sending(tx) => tx.sent(),
        Phase::Finished => progress.total_bytes(),
        Phase::Request(_) | Phase::Receiving(_) => return None,
    };
    Some(quiche_lbe::spec::stream_delivered(stream_acked, written))
}

/// Serves quic-bulk requests.
pub struct BulkServer {
    verbose: bool,
    buf: Vec<u8>,
}

impl BulkServer {
    fn fail(conn: &mut Conn, code: u64, reason: &str) {
        log::warn!("{}: {reason}", conn.id_hex());
        conn.quic.close(true, code, reason.as_bytes()).ok();
    }

    fn on_request(&mut self, s: &mut Session, conn: &mut Conn, line: &[u8]) -> Result<(), String> {
        let request: Request = protocol::parse_line(line, "request")?;
        let cc_tag: CcSpec = request
            .cc
            .parse()
            .map_err(|e| format!("bad controller in request: {e}"))?;
        if let Err(e) = conn.name_qlog(&request.label, &cc_tag.file_tag()) {
            log::warn!("{e}");
        }
        if let Some(ms) = request.deadline_ms {
            let (Direction::Download, Amount::Bytes(total)) = (request.direction, request.amount)
            else {
                return Err("a deadline needs a download of a byte count".to_string());
            };
            let progress = cc_tag
                .switch_with_deadline(&mut conn.quic, std::time::Duration::from_millis(ms), total)
                .map_err(|e| format!("request: {e}"))?;
            s.progress = Some(progress);
        }
        s.phase = match request.direction {
            Direction::Download => Phase::Sending(Sender::new(request.amount)),
            Direction::Upload => Phase::Receiving(Receiver::new(Some(request.amount))),
        };
        s.request = Some(request);
        Ok(())
    }
}

impl ServerApp for BulkServer {
    type Session = Session;

    fn accept(&mut self, _conn: &mut Conn) -> Session {
        Session {
            phase: Phase::Request(LineReader::new(4096)),
            request: None,
            report_request: LineReader::new(256),
            report_sent: false,
            stats: SenderStats::new(),
            accepted_at: Instant::now(),
            progress: None,
        }
    }

    fn serve(&mut self, s: &mut Session, conn: &mut Conn) {
        if !conn.quic.is_established() || conn.quic.is_closed() {
            return;
        }

        let readable: Vec<u64> = conn.quic.readable().collect();
        for stream in readable {
            match stream {
                protocol::DATA_STREAM => {
                    if let Phase::Request(reader) = &mut s.phase {
                        match reader.read(&mut conn.quic, stream) {
                            Ok(Some((line, rest))) => {
                                if let Err(e) = self.on_request(s, conn, &line) {
                                    return Self::fail(conn, close::BAD_REQUEST, &e);
                                }
                                if let Phase::Receiving(rx) = &mut s.phase {
                                    if let Err(e) = rx.take(&rest, false) {
                                        return Self::fail(conn, close::CORRUPT, &e);
                                    }
                                }
                            }
                            Ok(None) => {}
                            Err(e) => return Self::fail(conn, close::BAD_REQUEST, &e),
                        }
                    }
                    if let Phase::Receiving(rx) = &mut s.phase {
                        match rx.read(&mut conn.quic, stream, &mut self.buf) {
                            Ok(true) => {
                                let receipt = protocol::to_line(&Receipt {
                                    bytes: rx.received(),
                                });
                                if conn.quic.stream_send(stream, &receipt, true).is_err() {
                                    return Self::fail(
                                        conn,
                                        close::BAD_REQUEST,
                                        "cannot send the receipt",
                                    );
                                }
                                s.phase = Phase::Finished;
                            }
                            Ok(false) => {}
                            Err(e) => return Self::fail(conn, close::CORRUPT, &e),
                        }
                    } else {
                        // The client's side of a download's stream carries
                        // only the request.
                        while conn.quic.stream_recv(stream, &mut self.buf).is_ok() {}
                    }
                }
                protocol::REPORT_STREAM => match s.report_request.read(&mut conn.quic, stream) {
                    Ok(Some(_)) if !s.report_sent => {
                        let mut report = s.stats.report(&conn.quic, conn.qlog_path());
                        report.time_in_levels_s = s.progress.as_ref().map(|p| {
                            p.time_in_levels()
                                .iter()
                                .map(std::time::Duration::as_secs_f64)
                                .collect()
                        });
                        let line = protocol::to_line(&report);
                        if conn.quic.stream_send(stream, &line, true).is_err() {
                            return Self::fail(conn, close::BAD_REQUEST, "cannot send the report");
                        }
                        s.report_sent = true;
                    }
                    Ok(_) => {}
                    Err(e) => return Self::fail(conn, close::BAD_REQUEST, &e),
                },
                _ => while conn.quic.stream_recv(stream, &mut self.buf).is_ok() {},
            }
        }

        if let Phase::Sending(tx) = &mut s.phase {
            tx.send(&mut conn.quic, protocol::DATA_STREAM, Instant::now());
            if tx.is_finished() {
                s.phase = Phase::Finished;
            }
        }
        if let Some(progress) = &s.progress {
            let acked = conn.quic.stream_acked_bytes(protocol::DATA_STREAM);
            if let Some(done) = delivered(&s.phase, acked, progress) {
                progress.set_done_bytes(done);
            }
        }
        s.stats.sample(&conn.quic);
    }

    fn closed(&mut self, s: Session, conn: &mut Conn) {
        if !self.verbose {
            return;
        }
        let what = match &s.request {
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
            buf: vec![0u8; 65536],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_download_s_progress_is_fed_until_everything_written_is_acknowledged() {
        let progress = Progress::new(1_000_000);
        let request = Phase::Request(LineReader::new(16));
        assert_eq!(delivered(&request, Ok(5_000), &progress), None);
        let upload = Phase::Receiving(Receiver::new(Some(Amount::Bytes(10))));
        assert_eq!(delivered(&upload, Ok(5_000), &progress), None);
        let fresh = Phase::Sending(Sender::new(Amount::Bytes(1_000_000)));
        assert_eq!(
            delivered(&fresh, Ok(0), &progress),
            Some(0),
            "nothing written yet"
        );
        // After the FIN: what is acknowledged, then the whole transfer once
        // quiche has collected the complete stream.
        let finished = Phase::Finished;
        assert_eq!(delivered(&finished, Ok(700_000), &progress), Some(700_000));
        let collected = Err(quiche::Error::InvalidStreamState(protocol::DATA_STREAM));
        assert_eq!(delivered(&finished, collected, &progress), Some(1_000_000));
    }
}
