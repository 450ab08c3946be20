//! `h3-serve`: static files over HTTP/3, with background connections sent
//! by a less-than-best-effort controller.
//!
//! Each request's answer is queued on its connection as an `Outgoing`
//! response and pumped into quiche as stream capacity allows, so a slow
//! or blocked stream never holds up the others (`lbe_h3::response`, the
//! writer the simulator runs too). A request for a file
//! waits (at most [`ServeArgs::digest_wait`]) for the file's SHA-256, which
//! a thread computes once per file version, so that its response can carry
//! `Repr-Digest`.
//!
//! A request whose Priority field has urgency 7 (RFC 9218's lowest) marks
//! its connection as background: before anything of the response is
//! written, the connection's controller is switched in place to
//! `--background-cc` (quiche keeps the connection's RTT and loss state).
//! The switch is for the life of the connection; other connections keep
//! quiche's CUBIC. The rule is `lbe_h3::background`'s, which the
//! simulator runs too.
//!
//! A background request may carry a deadline, `lbe-deadline: <ms>` (whole
//! milliseconds, 1 to 3600000; [`fields::DEADLINE_FIELD`]). Its file
//! response then switches the connection to `--deadline-cc` (default
//! `ledbatpp:profile=full`; [`DEFAULT_DEADLINE_CC`]) made deadline-aware (`lbe_cc::deadline`,
//! so `cdg` or `ledbatpp`) with the
//! response body's length as the transfer's size, fed with the bytes
//! acknowledged, as quic-bulk's server does; the body ends with a trailer,
//! `lbe-time-in-levels: s0,s1,...` (seconds per aggressiveness level when
//! the last body byte was written). A malformed deadline, or one on a
//! foreground request, is ignored with a warning: it is a hint, and the
//! file is served as it would be without it.

use std::io::Seek;
use std::io::SeekFrom;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use std::time::Instant;

use lbe_app_kit::endpoint::server::Server;
use lbe_app_kit::endpoint::server::ServerApp;
use lbe_app_kit::endpoint::server::ServerOptions;
use lbe_app_kit::endpoint::Conn;
use lbe_app_kit::tls;
use quiche::h3;
use quiche_lbe::CcSpec;
use quiche_lbe::Error;

use lbe_h3::background::Ask;
use lbe_h3::background::Background;
use lbe_h3::fields;
use lbe_h3::fields::Range;
use lbe_h3::response::header;
use lbe_h3::response::Body;
use lbe_h3::response::Incoming;
use lbe_h3::response::Outgoing;
use lbe_h3::response::Serving;
use lbe_h3::response::Start;
use lbe_h3::ALPN;

use crate::digest::DigestCache;
use crate::digest::Lookup;
use crate::files::OpenFile;
use crate::files::Root;

/// Names the server's qlog files: `h3-server-<controller>-<id>.sqlog`.
pub const QLOG_LABEL: &str = "h3";

/// The controller of background connections unless told otherwise:
/// LEDBAT++ with `profile=full`, which meets every bar of the LEDBAT++
/// profiles page in the simulator (docs/ledbatpp-profiles.md).
pub const DEFAULT_BACKGROUND_CC: &str = "ledbatpp:profile=full";

/// The controller of background responses with a deadline unless told
/// otherwise: LEDBAT++ with `profile=full` (as [`DEFAULT_BACKGROUND_CC`]),
/// made deadline-aware. Both it and deadline-aware CDG meet the tight and
/// loose deadlines beside a CUBIC download in the simulator with the same
/// harm; it settles nearer a fair share on an impossible deadline and fills
/// an idle link (0.97 against CDG's 0.82; docs/deadline-aware.md).
pub const DEFAULT_DEADLINE_CC: &str = "ledbatpp:profile=full";

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServeArgs {
    pub listen: SocketAddr,
    /// The directory served.
    pub root: PathBuf,
    /// The controller of background connections.
    pub background_cc: CcSpec,
    /// The controller a background response with a deadline is sent
    /// with, made deadline-aware (`cdg` or `ledbatpp`).
    pub deadline_cc: CcSpec,
    pub qlog_dir: Option<PathBuf>,
    pub certificate: tls::Certificate,
    /// Validate client addresses with Retry.
    pub retry: bool,
    /// How long a request waits for its file's digest before it is
    /// answered without one.
    pub digest_wait: Duration,
    /// A line per request and per connection on stderr.
    pub verbose: bool,
    /// Release datagrams at the times quiche's pacer sets; `false` sends
    /// each as soon as quiche builds it.
    pub pacing: bool,
}

impl ServeArgs {
    /// Defaults for everything but where to listen and what to serve.
    pub fn new(listen: SocketAddr, root: PathBuf) -> Self {
        ServeArgs {
            listen,
            root,
            background_cc: DEFAULT_BACKGROUND_CC
                .parse()
                .expect("the default background controller is a valid spec"),
            deadline_cc: DEFAULT_DEADLINE_CC
                .parse()
                .expect("the default deadline controller is a valid spec"),
            qlog_dir: None,
            certificate: tls::Certificate::SelfSigned,
            retry: true,
            digest_wait: Duration::from_secs(10),
            verbose: false,
            pacing: true,
        }
    }
}

/// Refuses a deadline controller that cannot be made deadline-aware
/// (only `cdg` and `ledbatpp` can, and not one that already has a
/// deadline: each request brings its own).
pub fn check_deadline_cc(spec: &CcSpec) -> Result<(), Error> {
    let inner = quiche_lbe::lbe_cc::deadline::DeadlineConfig::INNER;
    if inner.contains(&spec.name())
        && spec.progress().is_none()
        && spec.with_deadline(Duration::from_secs(1)).is_ok()
    {
        return Ok(());
    }
    Err(Error::new(format!(
        "--deadline-cc '{spec}': a deadline steers only {}, without a deadline= of its own",
        inner.join(" and ")
    )))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Get,
    Head,
}

/// A file request waiting for its file's digest.
struct Waiting {
    stream: u64,
    method: Method,
    target: String,
    range: Option<String>,
    if_range: Option<String>,
    priority: h3::Priority,
    file: OpenFile,
    since: Instant,
}

/// A deadline-aware response's sender state (see the module docs).
struct Deadline {
    progress: quiche_lbe::lbe_cc::deadline::Progress,
    /// The response's stream.
    stream: u64,
}

/// One connection.
pub struct Session {
    serving: Serving,
    background: Background,
    waiting: Vec<Waiting>,
    requests: u64,
    body_bytes: u64,
    accepted_at: Instant,
    /// The deadline a background request asked for, until its response
    /// starts.
    deadline: Option<Duration>,
    deadline_sender: Option<Deadline>,
}

/// Serves the files under one root.
struct FileServer {
    root: Root,
    digests: DigestCache,
    background_cc: CcSpec,
    deadline_cc: CcSpec,
    h3_config: h3::Config,
    digest_wait: Duration,
    verbose: bool,
}

fn status_text(status: u16) -> String {
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!("{status} {reason}\n").to_lowercase()
}

impl FileServer {
    fn log(&self, conn: &Conn, line: std::fmt::Arguments<'_>) {
        if self.verbose {
            eprintln!("h3-serve: {} {line}", conn.id_hex());
        }
    }

    /// Switches the connection to the background controller, once
    /// (`lbe_h3::background`).
    fn make_background(&self, s: &mut Session, conn: &mut Conn) {
        match s.background.begin(&self.background_cc, &mut conn.quic) {
            None => return,
            Some(Err(e)) => {
                log::warn!(
                    "{}: cannot switch to '{}': {e:?}; the connection stays on cubic",
                    conn.id_hex(),
                    self.background_cc
                );
                return;
            }
            Some(Ok(())) => {}
        }
        if let Err(e) = conn.name_qlog(QLOG_LABEL, &self.background_cc.file_tag()) {
            log::warn!("{e}");
        }
        self.log(
            conn,
            format_args!("background: sending with {}", self.background_cc),
        );
    }

    /// A response with a short text body (or none, for HEAD).
    fn plain(stream: u64, method: Method, status: u16, extra: Vec<h3::Header>) -> Outgoing {
        let text = status_text(status).into_bytes();
        let mut headers = vec![
            header(":status", status.to_string()),
            header("content-type", "text/plain; charset=utf-8"),
            header("content-length", text.len().to_string()),
        ];
        headers.extend(extra);
        let body = match method {
            Method::Head => Body::None,
            Method::Get => Body::bytes(text),
        };
        Outgoing::new(stream, headers, h3::Priority::default(), body)
    }

    fn on_request(
        &mut self,
        s: &mut Session,
        conn: &mut Conn,
        stream: u64,
        list: &[h3::Header],
    ) -> Option<Outgoing> {
        s.requests += 1;
        let ask = Ask::of(list);
        if ask.background() {
            self.make_background(s, conn);
        }
        match &ask.deadline {
            Some(Ok(d)) => s.deadline = Some(*d),
            Some(Err(e)) => log::warn!("{}: {e}; ignored", conn.id_hex()),
            None => {}
        }
        let method_text = fields::field(list, ":method").unwrap_or("");
        let target = fields::field(list, ":path").unwrap_or("").to_string();
        let method = match method_text {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            other => {
                self.log(conn, format_args!("{other} {target} -> 405"));
                return Some(Self::plain(
                    stream,
                    Method::Get,
                    405,
                    vec![header("allow", "GET, HEAD")],
                ));
            }
        };
        match self.root.open(&target) {
            Ok(file) => {
                s.waiting.push(Waiting {
                    stream,
                    method,
                    target,
                    range: fields::field(list, "range").map(str::to_string),
                    if_range: fields::field(list, "if-range").map(str::to_string),
                    priority: ask.priority(),
                    file,
                    since: Instant::now(),
                });
                None
            }
            Err(refusal) => {
                let status = refusal.status();
                self.log(conn, format_args!("{method_text} {target} -> {status}"));
                Some(Self::plain(stream, method, status, Vec::new()))
            }
        }
    }

    /// The response to a file request, once its digest is known (or given
    /// up on).
    fn file_response(
        &self,
        s: &mut Session,
        conn: &mut Conn,
        w: Waiting,
        digest: Option<[u8; 32]>,
    ) -> Outgoing {
        let size = w.file.size;
        // A Range is honoured only if If-Range (when present) names this
        // very version (a strong entity tag; a date never matches).
        let range = match (&w.range, &w.if_range) {
            (None, _) => Range::Full,
            (Some(_), Some(v)) if !fields::etags_match_strongly(v, &w.file.etag) => Range::Full,
            (Some(r), _) => fields::parse_range(r, size),
        };
        let (status, start, len, content_range) = match range {
            Range::Full => (200, 0, size, None),
            Range::Part { start, end } => (
                206,
                start,
                end - start + 1,
                Some(format!("bytes {start}-{end}/{size}")),
            ),
            Range::Unsatisfiable => (416, 0, 0, Some(format!("bytes */{size}"))),
        };
        let mut headers = vec![
            header(":status", status.to_string()),
            header("content-length", len.to_string()),
        ];
        if let Some(range) = content_range {
            headers.push(header("content-range", range));
        }
        if status != 416 {
            headers.push(header("content-type", "application/octet-stream"));
        }
        headers.extend([
            header("accept-ranges", "bytes"),
            header("last-modified", w.file.last_modified()),
            header("etag", &w.file.etag),
        ]);
        if let Some(d) = &digest {
            headers.push(header("repr-digest", fields::repr_digest(d)));
        }

        let mut file = w.file.file;
        let body = if w.method == Method::Head || len == 0 {
            Body::None
        } else if start > 0 && file.seek(SeekFrom::Start(start)).is_err() {
            // Cannot happen for a regular file; answer 500 rather than
            // send the wrong bytes.
            return Self::plain(w.stream, w.method, 500, Vec::new());
        } else {
            Body::reader(file, len)
        };
        let mut levels = None;
        if let (Body::Reader { .. }, Some(deadline)) = (&body, s.deadline.take()) {
            if s.deadline_sender.is_none() {
                match self
                    .deadline_cc
                    .switch_with_deadline(&mut conn.quic, deadline, len)
                {
                    Ok(progress) => {
                        levels = Some(progress.clone());
                        s.deadline_sender = Some(Deadline {
                            progress,
                            stream: w.stream,
                        });
                        self.log(
                            conn,
                            format_args!(
                                "deadline {}: sending with {}, deadline-aware",
                                lbe_units::fmt_duration(deadline),
                                self.deadline_cc
                            ),
                        );
                    }
                    Err(e) => log::warn!("{}: {e}; the deadline is ignored", conn.id_hex()),
                }
            }
        }
        if w.method == Method::Get {
            s.body_bytes += len;
        }
        self.log(
            conn,
            format_args!(
                "{} {} -> {status} {len} bytes{}{}",
                if w.method == Method::Get {
                    "GET"
                } else {
                    "HEAD"
                },
                w.target,
                if digest.is_some() { "" } else { " (no digest)" },
                if s.background.is_on() {
                    " [background]"
                } else {
                    ""
                },
            ),
        );
        let response = Outgoing::new(w.stream, headers, w.priority, body);
        match levels {
            Some(progress) => response.with_levels(progress),
            None => response,
        }
    }
}

impl ServerApp for FileServer {
    type Session = Session;

    fn accept(&mut self, _conn: &mut Conn) -> Session {
        Session {
            serving: Serving::new(),
            background: Background::default(),
            waiting: Vec::new(),
            requests: 0,
            body_bytes: 0,
            accepted_at: Instant::now(),
            deadline: None,
            deadline_sender: None,
        }
    }

    fn serve(&mut self, s: &mut Session, conn: &mut Conn) {
        match s.serving.start(&mut conn.quic, &self.h3_config) {
            Ok(Start::NotReady) => return,
            Ok(Start::Started) => {
                if let Err(e) = conn.name_qlog(QLOG_LABEL, "cubic") {
                    log::warn!("{e}");
                }
            }
            Ok(Start::Ready) => {}
            Err(e) => {
                log::warn!("{}: {e}", conn.id_hex());
                return;
            }
        }

        // New requests.
        loop {
            let waiting = &s.waiting;
            let Some(incoming) = s.serving.next(&mut conn.quic, |stream| {
                waiting.iter().any(|w| w.stream == stream)
            }) else {
                break;
            };
            match incoming {
                Incoming::Request { stream, list } => {
                    if let Some(out) = self.on_request(s, conn, stream, &list) {
                        s.serving.respond(out);
                    }
                }
                Incoming::Reset(stream) => s.waiting.retain(|w| w.stream != stream),
            }
        }

        // Requests whose digest is ready, or that waited long enough.
        let mut i = 0;
        while i < s.waiting.len() {
            let digest = match self.digests.lookup(&s.waiting[i].file) {
                Lookup::Ready(d) => Some(Some(d)),
                Lookup::Unavailable => Some(None),
                Lookup::Pending if s.waiting[i].since.elapsed() >= self.digest_wait => Some(None),
                Lookup::Pending => None,
            };
            match digest {
                Some(digest) => {
                    let w = s.waiting.remove(i);
                    let out = self.file_response(s, conn, w, digest);
                    s.serving.respond(out);
                }
                None => i += 1,
            }
        }

        // Write what quiche takes.
        s.serving.pump(&mut conn.quic);
        // A deadline-aware sender's progress: the response stream's bytes
        // acknowledged (its HTTP/3 framing included: a HEADERS frame and a
        // few bytes per DATA frame), up to the body's length.
        if let Some(d) = &s.deadline_sender {
            let acked = conn.quic.stream_acked_bytes(d.stream);
            let total = d.progress.total_bytes();
            d.progress
                .set_done_bytes(quiche_lbe::spec::stream_delivered(acked, total));
        }
    }

    fn closed(&mut self, s: Session, conn: &mut Conn) {
        let qlog = conn
            .qlog_path()
            .map(|p| format!(" qlog={}", p.display()))
            .unwrap_or_default();
        self.log(
            conn,
            format_args!(
                "closed after {:.2}s: {} requests, {} body bytes, {}, {} packets lost{qlog}",
                s.accepted_at.elapsed().as_secs_f64(),
                s.requests,
                s.body_bytes,
                if s.background.is_on() {
                    format!("background ({})", self.background_cc)
                } else {
                    "cubic".to_string()
                },
                conn.quic.stats().lost
            ),
        );
    }
}

/// Binds the server. [`BoundServer::run`] serves until `stop` is set.
pub fn bind(args: &ServeArgs) -> Result<BoundServer, Error> {
    args.background_cc.check_background().map_err(Error::new)?;
    check_deadline_cc(&args.deadline_cc)?;
    let root = Root::new(&args.root)?;
    let server = Server::bind(ServerOptions {
        listen: args.listen,
        qlog_dir: args.qlog_dir.clone(),
        retry: args.retry,
    })?;
    let config = tls::cubic_server_config(&[ALPN], &args.certificate, args.pacing)?;
    let h3_config =
        h3::Config::new().map_err(|e| Error::new(format!("cannot configure HTTP/3: {e}")))?;
    Ok(BoundServer {
        server,
        config,
        app: FileServer {
            root,
            digests: DigestCache::new(),
            background_cc: args.background_cc.clone(),
            deadline_cc: args.deadline_cc.clone(),
            h3_config,
            digest_wait: args.digest_wait,
            verbose: args.verbose,
        },
    })
}

/// A bound, not yet running, server.
pub struct BoundServer {
    server: Server,
    config: quiche::Config,
    app: FileServer,
}

impl BoundServer {
    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// The directory served, with symlinks resolved.
    pub fn root(&self) -> &std::path::Path {
        self.app.root.path()
    }

    /// Serves until `stop` is set, then closes open connections.
    pub fn run(mut self, stop: &AtomicBool) -> Result<(), Error> {
        self.server.run(&mut self.config, &mut self.app, stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_background_controller_is_ledbatpp_profile_full() {
        let args = ServeArgs::new("127.0.0.1:0".parse().unwrap(), PathBuf::from("."));
        assert_eq!(args.background_cc.to_string(), "ledbatpp:profile=full");
        assert_eq!(
            args.background_cc,
            "ledbatpp:profile=full".parse::<CcSpec>().unwrap()
        );
        args.background_cc.check_background().unwrap();
    }

    #[test]
    fn deadline_controllers() {
        let args = ServeArgs::new("127.0.0.1:0".parse().unwrap(), PathBuf::from("."));
        assert_eq!(args.deadline_cc.to_string(), "ledbatpp:profile=full");
        for ok in ["cdg", "ledbatpp", "cdg:g=0.5", "ledbatpp:profile=full"] {
            check_deadline_cc(&ok.parse().unwrap()).unwrap();
        }
        for bad in [
            "cubic",
            "reno",
            "ledbat",
            "fixed:packets=4",
            "cdg:deadline=10s",
        ] {
            let e = check_deadline_cc(&bad.parse().unwrap()).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "--deadline-cc '{bad}': a deadline steers only cdg and ledbatpp, without a deadline= of its own"
                )
            );
        }
    }

    #[test]
    fn status_lines() {
        assert_eq!(status_text(404), "404 not found\n");
        assert_eq!(status_text(405), "405 method not allowed\n");
    }
}
