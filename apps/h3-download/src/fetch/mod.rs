//! `h3-fetch`: downloads one URL to a file, resumably, and never leaves a
//! corrupt file behind.
//!
//! Data goes to `FILE.part`; `FILE.part.meta` (a line of JSON) records the
//! URL, the response's strong entity tag, its length and its digest. The
//! part file is renamed to `FILE` only once the body is complete, its
//! length is the announced one and, when the server sent `Repr-Digest`,
//! its SHA-256 matches. `--resume` continues a part file with
//! `Range: bytes=N-` and `If-Range: <etag>`: a server whose file changed
//! answers 200 with the new version, which replaces the part file rather
//! than being spliced onto it.
//!
//! - [`url`]: the URL and the server's address;
//! - [`part`]: the part file, its metadata and resuming;
//! - `download`: the response written to the part file, and its request;
//! - this module: the settings, [`run`] and its [`Summary`].

mod download;
pub mod lbe;
pub mod part;
pub mod url;

use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use lbe_app_kit::deadline::DeadlineOutcome;
use lbe_app_kit::endpoint::client;
use lbe_app_kit::endpoint::client::ClientApp;
use lbe_app_kit::endpoint::client::ClientOptions;
use lbe_app_kit::endpoint::stall::StallEvent;
use lbe_app_kit::endpoint::stall::StallWatch;
use lbe_app_kit::endpoint::Conn;
use lbe_app_kit::tls::ServerTrust;
use quiche_lbe::lbe_cc::delay::DelayMode;
use quiche_lbe::Error;
use serde::Serialize;

use crate::client::code;
use crate::client::H3Client;
use crate::digest;
use download::build_request;
use download::Download;
pub use lbe::LbeMode;
use lbe::Receiver;
pub use lbe::ReceiverWindowSummary;
use part::find_resumable;
pub use part::meta_path;
use part::open_part;
pub use part::part_path;
use part::with_part_note;
pub use part::PartMeta;
use part::Resume;
pub use url::parse_url;
use url::resolve;
pub use url::Target;

/// Download settings.
#[derive(Clone, Debug)]
pub struct FetchArgs {
    pub url: String,
    pub output: PathBuf,
    /// Ask for background delivery (`priority: u=7`).
    pub background: bool,
    /// With `background`: who runs the less-than-best-effort controller
    /// ([`lbe`]).
    pub lbe: LbeMode,
    /// With a receiver-side `lbe`: the delay signal the receiver's
    /// LEDBAT++ reads (`--lbe-delay`; `auto`: the one-way delay of the
    /// data where the server sends timestamps, else the round trip).
    pub lbe_delay: DelayMode,
    /// With `background`: the deadline sent as `lbe-deadline` (whole
    /// milliseconds); h3-serve then sends deadline-aware.
    pub deadline: Option<Duration>,
    /// Continue `FILE.part` if it belongs to the same URL and version.
    pub resume: bool,
    pub qlog_dir: Option<PathBuf>,
    /// How the server's certificate is checked (`--ca`, `--insecure`).
    pub trust: ServerTrust,
    /// Give up if the handshake has not completed by then.
    pub timeout: Duration,
    /// The connection's idle timeout: with nothing from the server for
    /// this long, the connection is lost (and the download given up or,
    /// with `retry_for`, resumed on a new connection).
    pub idle_timeout: Duration,
    /// After a connection is lost mid-download ([`idle_timeout`] without
    /// anything from the server), connect again and resume from the part
    /// file, for up to this long after the last connection that got data
    /// was lost; zero gives up at the first loss. Only once this run has had a connection: a
    /// server that never answers is an error at once.
    ///
    /// [`idle_timeout`]: FetchArgs::idle_timeout
    pub retry_for: Duration,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

/// How long `h3-fetch --background` goes on reconnecting after a loss
/// (`--retry-for`'s default there): a Wi-Fi roam, a tunnel or a NAT
/// that forgets its mappings lasts seconds to minutes, and a background
/// download has the time.
pub const BACKGROUND_RETRY_FOR: Duration = Duration::from_secs(600);

/// The wait before the first reconnection; it doubles after each attempt
/// that got nothing, up to [`RETRY_WAIT_MAX`].
const RETRY_WAIT_FIRST: Duration = Duration::from_secs(1);
const RETRY_WAIT_MAX: Duration = Duration::from_secs(16);

/// The outcome (the `--json` object).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub url: String,
    pub file: String,
    /// The status of the response the file came from (200 or 206).
    pub status: u16,
    /// The file's size.
    pub size: u64,
    /// Bytes of an earlier run kept from the part file.
    pub resumed_from: u64,
    /// Body bytes received in this run, over all its connections.
    pub bytes_transferred: u64,
    /// UDP payload bytes received on the last connection (all overheads
    /// in).
    pub udp_bytes_received: u64,
    /// New connections made after a lost one (`--retry-for`), each
    /// resuming from the part file.
    pub reconnects: u32,
    /// From sending the first request to the file being in place.
    pub duration_s: f64,
    /// `bytes_transferred` over `duration_s`, bits per second.
    pub goodput_bps: f64,
    pub background: bool,
    /// With `background`: `receiver`, `sender` or `both` (`--lbe`);
    /// null otherwise.
    pub lbe: Option<LbeMode>,
    /// The receiver-side window, when the client ran it (`--lbe receiver`
    /// or `both`).
    pub receiver_window: Option<ReceiverWindowSummary>,
    pub etag: Option<String>,
    /// SHA-256 of the file, hex.
    pub sha256: String,
    /// Whether the server offered a digest (it then matched).
    pub digest_verified: bool,
    /// The client's qlog, if one was written.
    pub qlog: Option<String>,
    /// With `--deadline`: `deadline_s`, `finished_s` (= `duration_s`),
    /// `met` and the server's `time_in_levels_s` (its `lbe-time-in-levels`
    /// trailer; absent if the server sent none, e.g. it does not know the
    /// field).
    #[serde(flatten)]
    pub deadline: Option<DeadlineOutcome>,
}

impl Summary {
    /// One line for people.
    pub fn human(&self) -> String {
        let resumed = if self.resumed_from > 0 {
            format!(
                " (resumed after {})",
                lbe_units::fmt_bytes(self.resumed_from)
            )
        } else {
            String::new()
        };
        format!(
            "{}: {}{resumed}, {} received in {:.2} s = {}; sha-256 {}{}",
            self.file,
            lbe_units::fmt_bytes(self.size),
            lbe_units::fmt_bytes(self.bytes_transferred),
            self.duration_s,
            lbe_units::fmt_rate(self.goodput_bps),
            &self.sha256[..16],
            if self.digest_verified {
                " verified against the server's digest"
            } else {
                " (the server offered no digest; length checked)"
            }
        )
    }
}

struct FetchApp {
    h3: H3Client,
    sent: Option<Instant>,
    download: Download,
    receiver: Receiver,
    /// The download's progress: a stall is said on stderr, and the
    /// download is given up after the idle timeout without data (in
    /// background mode the receiver's PINGs keep the connection open).
    stall: StallWatch,
    /// The stall watch gave up: nothing came for the idle timeout.
    stalled_out: bool,
    /// Whether the connection's loop ran (the app was called).
    polled: bool,
    /// Whether the handshake completed.
    established: bool,
    /// Whether anything came from the server.
    heard: bool,
}

impl FetchApp {
    /// Says what the stall watch saw; an error once it gives up.
    fn watch(&mut self, quic: &quiche::Connection) -> Result<(), Error> {
        let Some(event) = self
            .stall
            .observe(Instant::now(), self.download.received, || {
                quic.stats().stream_frames_recv as u64
            })
        else {
            return Ok(());
        };
        let line = format!("h3-fetch: {}", event.message());
        match &self.download.progress {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
        if let StallEvent::GaveUp { .. } = event {
            self.stalled_out = true;
            return Err(Error::new(event.message()));
        }
        Ok(())
    }
}

impl ClientApp for FetchApp {
    fn progress(&mut self, conn: &mut Conn) -> Result<(), Error> {
        self.polled = true;
        self.established |= conn.quic.is_established();
        // quiche builds its whole `Stats` to answer: asked until the
        // first packet, not on every turn of the loop.
        if !self.heard {
            self.heard = conn.quic.stats().recv > 0;
        }
        if self.download.done.is_some() {
            return Ok(());
        }
        self.watch(&conn.quic)?;
        if !self.h3.ready(&mut conn.quic)? {
            return Ok(());
        }
        if self.sent.is_none() {
            self.h3.send(&mut conn.quic, &self.download.request)?;
            self.sent = Some(Instant::now());
        }
        self.h3.poll(&mut conn.quic, &mut self.download)?;
        self.receiver.on_progress(&mut conn.quic);
        if self.download.done.is_some() {
            conn.quic.close(true, code::NO_ERROR, b"").ok();
        }
        Ok(())
    }
}

/// Where and how to connect for `target`.
fn client_options(args: &FetchArgs, target: &Target, addr: SocketAddr) -> ClientOptions {
    ClientOptions {
        connect: addr,
        bind: None,
        server_name: target.host.clone(),
        qlog_dir: args.qlog_dir.clone(),
        label: if args.background {
            "h3-fetch-bg".into()
        } else {
            "h3-fetch".into()
        },
        qlog_cc: "cubic".into(),
        handshake_timeout: args.timeout,
    }
}

/// Downloads `args.url` to `args.output`.
pub fn run(args: &FetchArgs, stop: &AtomicBool) -> Result<Summary, Error> {
    run_with_receiver_window(args, stop).0
}

/// [`run`], and the receiver-side window's summary whatever the outcome
/// (`None` unless the receiver-side control ran): a download cut off by
/// `stop` or failing has one too (a complete one also has it in its
/// [`Summary`]). With `retry_for`, a lost connection is followed by a new
/// one that resumes from the part file (the window's summary is then the
/// last connection's).
pub fn run_with_receiver_window(
    args: &FetchArgs,
    stop: &AtomicBool,
) -> (Result<Summary, Error>, Option<ReceiverWindowSummary>) {
    let mut receiver_window = None;
    let result = download_reconnecting(args, stop, &mut receiver_window);
    (result, receiver_window)
}

/// One connection's download that did not finish.
struct Failed {
    /// What went wrong, with what was kept in the part file.
    error: Error,
    /// What went wrong, alone.
    cause: String,
    /// Bytes in the part file.
    kept: u64,
    /// The connection was lost: established, then nothing came from the
    /// server for the idle timeout; or no answer at all to the handshake.
    lost: bool,
    /// Whether the handshake completed.
    established: bool,
    /// Body bytes this connection received.
    received: u64,
    /// Bytes of an earlier run it kept from the part file.
    resumed_from: u64,
    /// When its request went out.
    sent: Option<Instant>,
}

impl From<Error> for Failed {
    /// A failure before any connection: not a loss.
    fn from(error: Error) -> Self {
        Failed {
            cause: error.to_string(),
            error,
            kept: 0,
            lost: false,
            established: false,
            received: 0,
            resumed_from: 0,
            sent: None,
        }
    }
}

/// [`download`], connecting again after each lost connection while
/// `args.retry_for` allows.
fn download_reconnecting(
    args: &FetchArgs,
    stop: &AtomicBool,
    receiver_window: &mut Option<ReceiverWindowSummary>,
) -> Result<Summary, Error> {
    let started = Instant::now();
    let mut attempt = args.clone();
    let mut reconnects = 0u32;
    let mut connected = false;
    let mut first_sent: Option<Instant> = None;
    let mut first_resumed_from: Option<u64> = None;
    let mut earlier_received = 0u64;
    // When the last connection that got data was lost (or the run began):
    // `retry_for` counts from here, and the wait between attempts starts
    // again from the first.
    let mut last_progress = started;
    let mut wait = RETRY_WAIT_FIRST;
    loop {
        let failed = match download(&attempt, stop, receiver_window) {
            Ok(mut summary) => {
                if reconnects == 0 {
                    return Ok(summary);
                }
                // The whole run: every connection's bytes, from the first
                // request.
                summary.reconnects = reconnects;
                summary.resumed_from = first_resumed_from.unwrap_or(summary.resumed_from);
                summary.bytes_transferred += earlier_received;
                if let Some(sent) = first_sent {
                    summary.duration_s = sent.elapsed().as_secs_f64().max(1e-9);
                }
                summary.goodput_bps = summary.bytes_transferred as f64 * 8.0 / summary.duration_s;
                if let (Some(deadline), Some(outcome)) = (args.deadline, summary.deadline.take()) {
                    summary.deadline = Some(DeadlineOutcome::new(
                        deadline,
                        summary.duration_s,
                        outcome.time_in_levels_s,
                    ));
                }
                return Ok(summary);
            }
            Err(failed) => failed,
        };
        connected |= failed.established;
        first_sent = first_sent.or(failed.sent);
        first_resumed_from = first_resumed_from.or(Some(failed.resumed_from));
        earlier_received += failed.received;
        if failed.received > 0 {
            last_progress = Instant::now();
            wait = RETRY_WAIT_FIRST;
        }
        // Not a loss (a refusal, a bad file, an interrupt), or nothing
        // was ever connected: no link to wait for.
        if !failed.lost || !connected || stop.load(Ordering::Relaxed) || args.retry_for.is_zero() {
            return Err(failed.error);
        }
        let lost_for = last_progress.elapsed();
        if lost_for + wait > args.retry_for {
            return Err(Error::new(format!(
                "{} (gave up after {reconnects} new connection{} in {:.0} s without data; \
                 --retry-for {})",
                failed.error,
                if reconnects == 1 { "" } else { "s" },
                lost_for.as_secs_f64(),
                lbe_units::fmt_duration(args.retry_for),
            )));
        }
        eprintln!(
            "h3-fetch: {}; connecting again in {} to resume after {}",
            failed.cause,
            lbe_units::fmt_duration(wait),
            lbe_units::fmt_bytes(failed.kept)
        );
        if !sleep_unless_stopped(wait, stop) {
            return Err(Error::new("interrupted"));
        }
        wait = (wait * 2).min(RETRY_WAIT_MAX);
        reconnects += 1;
        attempt.resume = true;
        attempt.deadline = args.deadline.map(|d| {
            d.saturating_sub(started.elapsed())
                .max(Duration::from_millis(1))
        });
    }
}

/// Sleeps `wait`, waking every 100 ms to see `stop`; false if it was set.
fn sleep_unless_stopped(wait: Duration, stop: &AtomicBool) -> bool {
    let until = Instant::now() + wait;
    while Instant::now() < until {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(100)));
    }
    !stop.load(Ordering::Relaxed)
}

/// One connection's download of `args.url`; sets `receiver_window` once
/// the connection has ended.
fn download(
    args: &FetchArgs,
    stop: &AtomicBool,
    receiver_window: &mut Option<ReceiverWindowSummary>,
) -> Result<Summary, Failed> {
    let target = parse_url(&args.url)?;
    if args.output.is_dir() {
        return Err(Error::new(format!("{} is a directory", args.output.display())).into());
    }
    let part = part_path(&args.output);
    let meta = meta_path(&args.output);
    let resume = args.resume.then(|| resumable(args, &part, &meta)).flatten();
    let open = open_part(&part, resume.as_ref())?;
    let addr = match resolve(&target) {
        Ok(a) => a,
        Err(e) => {
            if !open.existed {
                let _ = fs::remove_file(&part);
            }
            return Err(e.into());
        }
    };
    let request = build_request(&target, args.background, args.deadline, resume.as_ref());
    let mut app = FetchApp {
        h3: H3Client::new()?,
        sent: None,
        download: Download::new(args, part, meta, open, request, resume),
        receiver: Receiver::new(args.background, args.lbe, args.lbe_delay),
        stall: StallWatch::new(Instant::now(), args.idle_timeout),
        stalled_out: false,
        polled: false,
        established: false,
        heard: false,
    };
    let options = client_options(args, &target, addr);
    let result = crate::client::config(&args.trust, &options.server_name).and_then(|mut config| {
        config.set_max_idle_timeout(args.idle_timeout.as_millis() as u64);
        app.receiver.configure(&mut config);
        client::run(&options, &mut config, &mut app, stop)
    });
    *receiver_window = app.receiver.summary();
    let d = &mut app.download;
    if let Some(bar) = d.progress.take() {
        bar.finish_and_clear();
    }
    let Some(sha256) = d.done else {
        let (error, timed_out) = match result {
            Err(e) => (e, false),
            Ok(conn) => {
                let timed_out = conn.quic.is_timed_out();
                let error = Error::new(format!(
                    "the connection closed before the download finished ({} of {} bytes){}",
                    d.offset,
                    d.size.map_or("?".to_string(), |s| s.to_string()),
                    if timed_out {
                        ": nothing came from the server for the idle timeout"
                    } else {
                        ""
                    }
                ));
                (error, timed_out)
            }
        };
        // Lost: the server went quiet on an open connection (the stall
        // watch or quiche's idle timer said so), or a handshake that was
        // tried never heard back. A refusal (a TLS alert, an HTTP error, a
        // close with an error code) is an answer, not a loss.
        let lost =
            (app.established && (app.stalled_out || timed_out)) || (app.polled && !app.heard);
        return Err(Failed {
            cause: error.to_string(),
            kept: d.offset,
            error: with_part_note(error, &d.part, &d.meta_path, d.touched),
            lost,
            established: app.established,
            received: d.received,
            resumed_from: d.resumed_from,
            sent: app.sent,
        });
    };
    let mut summary = summary(args, d, sha256, app.sent, result.ok());
    summary.receiver_window = receiver_window.clone();
    Ok(summary)
}

/// The part file of an earlier run to continue, if any (`--resume`).
fn resumable(args: &FetchArgs, part: &Path, meta: &Path) -> Option<Resume> {
    let found = find_resumable(&args.url, part, meta);
    if found.is_none() && args.progress {
        eprintln!(
            "h3-fetch: nothing to resume in {}; downloading from the start",
            part.display()
        );
    }
    found
}

/// The outcome of a finished download `d` whose request went out at `sent`.
fn summary(
    args: &FetchArgs,
    d: &Download,
    sha256: [u8; 32],
    sent: Option<Instant>,
    conn: Option<Conn>,
) -> Summary {
    let finished = Instant::now();
    let duration_s = sent
        .map_or(0.0, |s| finished.duration_since(s).as_secs_f64())
        .max(1e-9);
    Summary {
        url: args.url.clone(),
        file: args.output.display().to_string(),
        status: d.status,
        size: d.offset,
        resumed_from: d.resumed_from,
        bytes_transferred: d.received,
        reconnects: 0,
        udp_bytes_received: conn.as_ref().map_or(0, |c| c.quic.stats().recv_bytes),
        duration_s,
        goodput_bps: d.received as f64 * 8.0 / duration_s,
        background: args.background,
        lbe: args.background.then_some(args.lbe),
        receiver_window: None,
        etag: d.etag.clone(),
        sha256: digest::hex(&sha256),
        digest_verified: d.digest.is_some(),
        qlog: conn
            .as_ref()
            .and_then(|c| c.qlog_path())
            .map(|p| p.display().to_string()),
        deadline: args
            .deadline
            .map(|deadline| DeadlineOutcome::new(deadline, duration_s, d.time_in_levels_s.clone())),
    }
}
