//! The quic-bulk client: one transfer, then a summary.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use std::time::Instant;

use indicatif::ProgressBar;
use lbe_app_kit::deadline::DeadlineOutcome;
use lbe_app_kit::endpoint::client;
use lbe_app_kit::endpoint::client::ClientApp;
use lbe_app_kit::endpoint::client::ClientOptions;
use lbe_app_kit::endpoint::stall::StallEvent;
use lbe_app_kit::endpoint::stall::StallWatch;
use lbe_app_kit::endpoint::Conn;
use lbe_app_kit::tls;
use lbe_bulk::client::ClientSession;
use quiche_lbe::CcSpec;
use quiche_lbe::Error;
use serde::Serialize;

use crate::protocol;
use crate::protocol::Amount;
use crate::protocol::Direction;
use crate::protocol::Request;
use crate::protocol::RttMs;

/// Client settings.
#[derive(Clone, Debug)]
pub struct ClientArgs {
    pub connect: SocketAddr,
    pub bind: Option<SocketAddr>,
    /// The sender's controller.
    pub cc: CcSpec,
    pub amount: Amount,
    pub direction: Direction,
    pub qlog_dir: Option<PathBuf>,
    /// Names the qlogs of this flow (both ends).
    pub label: String,
    pub handshake_timeout: Duration,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Pace the sender: this client's own loop for an upload; for a
    /// download, `false` asks the server to send unpaced.
    pub pacing: bool,
    /// A download's deadline: the server's sender becomes deadline-aware
    /// (protocol docs).
    pub deadline: Option<Duration>,
    /// How the server's certificate is checked (`--ca`, `--insecure`).
    pub trust: tls::ServerTrust,
    /// The name the server's certificate must carry; `None`: the IP
    /// address of `connect`.
    pub server_name: Option<String>,
}

impl ClientArgs {
    /// A paced transfer of `amount` with `cc` as the sender, to a server
    /// on this machine whose certificate `trust` verifies (the server's
    /// `trust()`), checked for the `connect` address: no local address
    /// chosen, no qlog, a 10 s handshake timeout, no progress bar, no
    /// deadline: what the tests start (the fields are public to change).
    pub fn loopback(
        connect: SocketAddr,
        trust: tls::ServerTrust,
        cc: CcSpec,
        amount: Amount,
        direction: Direction,
        label: &str,
    ) -> Self {
        Self {
            connect,
            bind: None,
            cc,
            amount,
            direction,
            qlog_dir: None,
            label: label.to_string(),
            handshake_timeout: Duration::from_secs(10),
            progress: false,
            pacing: true,
            deadline: None,
            trust,
            server_name: None,
        }
    }
}

/// The outcome of a transfer (the `--json` object).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub cc: String,
    pub direction: &'static str,
    /// Payload bytes delivered and checked.
    pub bytes: u64,
    /// From sending the request to the last byte being confirmed.
    pub duration_s: f64,
    pub goodput_bps: f64,
    /// The sender's RTT.
    pub rtt_ms: RttMs,
    /// Packets the sender declared lost.
    pub lost_packets: u64,
    /// The sender's qlog, if one was written.
    pub qlog: Option<String>,
    /// With `--deadline`: `deadline_s`, `finished_s`, `met` and the
    /// server's `time_in_levels_s`.
    #[serde(flatten)]
    pub deadline: Option<DeadlineOutcome>,
    /// When the transfer finished (the end of `duration_s`): a download's
    /// last byte received, an upload's receipt read. Not in `--json`; what
    /// a caller timing the whole connection (lbe-lab's web flows) needs.
    #[serde(skip)]
    pub finished_at: Instant,
}

impl Summary {
    /// One line for people.
    pub fn human(&self) -> String {
        let qlog = self
            .qlog
            .as_deref()
            .map(|q| format!("\nsender qlog: {q}"))
            .unwrap_or_default();
        format!(
            "{} {}: {} in {:.2} s = {}; RTT min/p50/p99 {:.1}/{:.1}/{:.1} ms; {} packets lost{qlog}",
            self.cc,
            self.direction,
            lbe_units::fmt_bytes(self.bytes),
            self.duration_s,
            lbe_units::fmt_rate(self.goodput_bps),
            self.rtt_ms.min,
            self.rtt_ms.p50,
            self.rtt_ms.p99,
            self.lost_packets
        )
    }
}

/// quic-bulk's client application: the connection's [`ClientSession`]
/// (`lbe_bulk::client`) and a progress bar.
struct BulkClient {
    args: ClientArgs,
    session: ClientSession,
    progress: Option<ProgressBar>,
    /// The transfer's progress: a stall is said on stderr, and the
    /// transfer is given up after the idle timeout without progress.
    stall: StallWatch,
}

impl BulkClient {
    fn new(args: ClientArgs, idle_timeout: Duration) -> Self {
        let progress = args.progress.then(|| {
            lbe_app_kit::cli::progress_bar(match args.amount {
                Amount::Bytes(n) => Some(n),
                Amount::DurationMs(_) => None,
            })
        });
        let session = ClientSession::new(Request {
            direction: args.direction,
            amount: args.amount,
            cc: args.cc.to_string(),
            label: args.label.clone(),
            deadline_ms: args.deadline.map(protocol::millis),
        });
        BulkClient {
            args,
            session,
            progress,
            stall: StallWatch::new(Instant::now(), idle_timeout),
        }
    }

    /// Says what the stall watch saw; an error once it gives up.
    fn watch(&mut self, quic: &quiche::Connection) -> Result<(), Error> {
        if self.session.finished_at().is_some() {
            return Ok(());
        }
        let Some(event) = self
            .stall
            .observe(Instant::now(), self.session.bytes(), || {
                quic.stats().stream_frames_recv as u64
            })
        else {
            return Ok(());
        };
        let line = format!("quic-bulk: {}", event.message());
        match &self.progress {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
        if let StallEvent::GaveUp { .. } = event {
            return Err(Error::new(event.message()));
        }
        Ok(())
    }
}

impl ClientApp for BulkClient {
    fn progress(&mut self, conn: &mut Conn) -> Result<(), Error> {
        let (quic, qlog) = conn.quic_and_qlog();
        self.session
            .progress(quic, Instant::now(), qlog)
            .map_err(|failure| Error::new(failure.reason))?;
        if let Some(bar) = &self.progress {
            bar.set_position(self.session.bytes());
        }
        self.watch(&conn.quic)
    }
}

/// Runs one transfer against a quic-bulk server.
pub fn run(args: ClientArgs, stop: &AtomicBool) -> Result<Summary, Error> {
    let transport = tls::Transport {
        pacing: args.pacing,
        ..tls::Transport::default()
    };
    let receiver_cc: CcSpec = "cubic".parse().expect("cubic is a valid spec");
    let server_name = args
        .server_name
        .clone()
        .unwrap_or_else(|| args.connect.ip().to_string());
    let (own_cc, server_cc) = match args.direction {
        Direction::Download => (&receiver_cc, Some(&args.cc)),
        Direction::Upload => (&args.cc, None),
    };
    let mut config = tls::client_config(
        &[protocol::ALPN],
        own_cc,
        server_cc,
        &transport,
        &args.trust,
        &server_name,
    )?;
    let options = ClientOptions {
        connect: args.connect,
        bind: args.bind,
        server_name,
        qlog_dir: args.qlog_dir.clone(),
        label: args.label.clone(),
        qlog_cc: args.cc.file_tag(),
        handshake_timeout: args.handshake_timeout,
    };
    let mut app = BulkClient::new(args, transport.idle_timeout);
    let result = client::run(&options, &mut config, &mut app, stop);
    if let Some(bar) = &app.progress {
        bar.finish_and_clear();
    }
    let conn = result?;

    let (Some(start), Some(end), Some(outcome)) = (
        app.session.request_sent_at(),
        app.session.finished_at(),
        app.session.take_outcome(),
    ) else {
        return Err(Error::new(if conn.quic.is_timed_out() {
            "the connection closed before the transfer finished: nothing came from the server for the idle timeout"
        } else {
            "the connection closed before the transfer finished"
        }));
    };
    let bytes = app.session.bytes();
    let duration_s = end.duration_since(start).as_secs_f64().max(1e-9);
    Ok(Summary {
        cc: app.args.cc.to_string(),
        direction: app.args.direction.as_str(),
        bytes,
        duration_s,
        goodput_bps: bytes as f64 * 8.0 / duration_s,
        rtt_ms: outcome.rtt_ms,
        lost_packets: outcome.lost_packets,
        qlog: outcome.qlog,
        deadline: app
            .args
            .deadline
            .map(|d| DeadlineOutcome::new(d, duration_s, outcome.time_in_levels_s)),
        finished_at: end,
    })
}
