//! The simulator's engine, quiche itself: real `quiche::Connection` pairs
//! (TLS handshake, streams, flow control, loss detection, pacer, ACKs,
//! every controller quiche has, `bbr2` included) exchanging their datagrams
//! through `lbe-link`'s bottleneck in virtual time.
//!
//! quiche reads the time through `quiche::clock::now()` (patch 0007); the
//! simulator sets it to the virtual time before every call into a connection,
//! so no wall-clock time reaches quiche and the same scenario and seed give
//! the same datagrams, timers and figures.
//!
//! Around quiche, each endpoint does what our apps' event loops do, with
//! the same code (`lbe_endpoint`, which the apps' mio loops run too): it
//! takes in what arrived, runs quiche's timer when it is due, and sends
//! until quiche has nothing more, holding a paced datagram until
//! [`RELEASE_SLACK`] before its `SendInfo.at` (nothing more is built while
//! one is held). Each wake-up after a datagram arrives comes
//! one host latency later ([`crate::Config::host_latency`]); timers and
//! releases fire on time.
//!
//! The application is quic-bulk's, with quic-bulk's own code
//! (`lbe_bulk`'s sessions, which `quic-bulk` runs from its mio loop): the
//! client sends quic-bulk's request line on stream 0 (the flow's `cc`, its
//! bytes or `--duration`, its deadline); the server answers on stream 0
//! with the payload (a `--duration` sender stops that long after its first
//! write) and a FIN; the client checks every byte, asks for the server's
//! report on stream 4 and closes the connection once it has it. An upload
//! (`direction = "upload"`) turns it round: the client writes the payload
//! after its request, runs the flow's controller, and the server checks it
//! and sends its receipt. A deadline-aware flow's server starts on the
//! flow's plain controller and the request's deadline switches it, as
//! quic-bulk's does. A web or video workload's download is the same
//! exchange, cut off at its last byte (the client closes then, without
//! waiting for the report). A receiver-driven download
//! (`receiver_lbe`) has its client run `quiche_lbe::ReceiverLbe`, what
//! `h3-fetch --lbe receiver` runs: fed after each wake-up's reads, before
//! sending, it caps the server's credit (patch 0004). An h3 flow
//! (`kind = "h3"`) speaks HTTP/3 with the apps' code (`lbe_h3`): the
//! client sends h3-fetch's request and reads the response to its end,
//! then closes the connection; the server runs h3-serve's background rule
//! (urgency 7 switches an h3-serve connection from CUBIC to the flow's
//! `cc`) and response writer, a 200 with the file's length
//! ([`lbe_scenario::Flow::h3_file_bytes`]); `lbe = "receiver"`/`"both"`
//! runs the client's `ReceiverLbe`; a flow with a stop time is cut off
//! then, as the lab's is. The sender's qlog events (quiche's own; the
//! client's for an upload) go as they happen to the `FlowAnalyzer` that
//! reads the lab's qlog files, as values through patch 0009's
//! `Connection::set_qlog_event_sink`: the events the reader would decode,
//! with the times quiche's JSON writer would write, without writing and
//! parsing JSON (two thirds of the simulator's instructions when it did;
//! the test `the_analysis_of_the_events_is_the_analysis_of_the_file` holds
//! the two paths to the same figures). With `--qlog` quiche writes the
//! file too.
//!
//! The path: server->client datagrams cross the bottleneck (`[link]`);
//! client->server datagrams cross a second `lbe-link` link when the
//! scenario sets `reverse_rate` or `reverse_loss`
//! ([`lbe_scenario::Link::reverse_path`], the one `lbe-netem` runs), and
//! are otherwise only delayed by the flow's rtt/2.
//!
//! Both ends offer the timestamp extension (patch 0008) through the
//! transport settings our apps apply too (`lbe_endpoint::Transport`), so
//! `delay=auto` reads the one-way delay.
//! Each endpoint's quiche sees its own clock
//! ([`lbe_scenario::Flow::client_clock`], `server_clock`): at simulated
//! time `t` it reads `offset + (1 + skew_ppm / 10^6) t`. The times quiche
//! hands back (its timer, a paced datagram's `SendInfo.at`) are in that
//! clock and converted back to simulated time; a qlog's times are its
//! endpoint's clock.
//!
//! TLS: the server has an RSA-2048 self-signed certificate made once per
//! process from a key kept in the source (`simulated-server-key.pem`; an
//! RSA signature has a fixed length, so handshake datagrams do not change
//! size from run to run as ECDSA's DER signatures would), and
//! the client does not verify it: both ends run in this process and
//! exchange datagrams only with each other.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;
use std::time::Instant;

use lbe_scenario::Clock;
use lbe_scenario::Direction;
use lbe_scenario::FlowEnd;
use lbe_scenario::GRACE;
use qlog_analysis::flow::FlowAnalyzer;
use quiche_lbe::lbe_cc::rng::SplitMix64;

use lbe_workload::figures::Echo;
use lbe_workload::figures::Outcome;

use crate::output::FlowStats;
use crate::output::SimOutput;
use crate::queue::EventQueue;
use crate::workload::State;
use crate::workload::WorkloadRun;
use crate::workload::CBR_BYTES;
use crate::workload::PING_BYTES;
use crate::workload::VIDEO_RETRY;
use crate::Config;

/// How early a paced datagram may leave, as in our apps.
pub use lbe_endpoint::RELEASE_SLACK;

/// The byte an h3 flow's response body is made of.
const BODY_BYTE: u8 = 0x5a;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

/// What crosses a link.
#[derive(Debug)]
enum Packet {
    /// A QUIC datagram of connection `.0`.
    Quic(usize, Vec<u8>),
    /// Workload `.0`'s ping request `.1` (client->server) or its reply.
    Ping(usize, usize),
    /// A datagram of cbr workload `.0`.
    Cbr(usize),
}

#[derive(Debug)]
enum Ev {
    /// A connection's client connects.
    Open(usize),
    /// A bulk connection's sender stops writing new data.
    Stop(usize),
    /// An endpoint wakes: what arrived, its timer, sending.
    Wake(usize, Side),
    /// An endpoint's timer or held datagram is due (ignored when stale).
    Timer(usize, Side, Instant),
    /// The bottleneck's next delivery is due.
    LinkDue,
    /// The reverse link's next delivery is due.
    ReverseDue,
    /// A packet reaches the server side (a return path the scenario does
    /// not limit: rtt/2 of delay).
    ToServer(Packet),
    /// Web workload `.0`'s arrival `.1`: its connection opens.
    WebArrival(usize, usize),
    /// Video workload `.0` asks for its next chunk.
    VideoRequest(usize),
    /// Ping workload `.0` sends its next request.
    PingSend(usize),
    /// Ping workload `.0`'s server echoes request `.1`.
    EchoReply(usize, usize),
    /// Cbr workload `.0` sends its next datagram.
    CbrSend(usize),
    /// Workload `.0`'s end ([`WorkloadRun::end`]).
    WorkloadEnd(usize),
}

/// One side of a connection and what its loop holds.
struct Endpoint {
    conn: Option<quiche::Connection>,
    /// Holds a paced datagram quiche built that is not due yet.
    sender: lbe_endpoint::PacedSender,
    /// Datagrams that arrived since the last wake-up.
    inbox: Vec<Vec<u8>>,
    wake_scheduled: bool,
    /// The timer event in the queue, if any (a later one makes it stale).
    timer_at: Option<Instant>,
}

impl Endpoint {
    fn new() -> Self {
        Self {
            conn: None,
            sender: lbe_endpoint::PacedSender::new(),
            inbox: Vec::new(),
            wake_scheduled: false,
            timer_at: None,
        }
    }
}

/// One connection: a bulk flow's, or one download of a web or video
/// workload.
struct FlowRun {
    /// The scenario flow it belongs to (its position).
    flow: usize,
    /// The workload it is a download of; `None` for a bulk flow.
    workload: Option<usize>,
    /// Its key on the links (a bulk flow's position, so FQ and the drop
    /// counts see each flow; each workload download its own).
    key: u64,
    /// When its client connected.
    opened_at: Instant,
    /// What the sender sends: a bulk flow's end, a download's bytes.
    end: FlowEnd,
    client: Endpoint,
    server: Endpoint,
    /// Which end sends the bytes.
    direction: Direction,
    client_clock: Clock,
    server_clock: Clock,
    done_at: Option<Instant>,
    /// When the run gives up on the connection (bulk flows; a workload's
    /// end gives up on its downloads).
    deadline: Instant,
    /// The sender's qlog analysis (bulk flows), fed by its event sink.
    analysis: Option<SharedAnalysis>,
    /// A receiver-driven flow's control at the client
    /// (`quiche_lbe::ReceiverLbe`, what `h3-fetch --lbe receiver` runs).
    receiver: Option<quiche_lbe::ReceiverLbe>,
    /// A quic-bulk flow's (or a workload download's) two sessions; `None`
    /// for an h3 flow.
    bulk: Option<Box<BulkRun>>,
    /// An h3 flow's HTTP/3 layers.
    h3: Option<Box<H3Run>>,
    client_addr: SocketAddr,
    server_addr: SocketAddr,
}

/// A quic-bulk connection's two ends, the code quic-bulk runs
/// (`lbe_bulk`): the client's session sends the request, reads and checks
/// a download's payload (or writes an upload's) and asks for the report;
/// the server's reads the request, writes a download's payload (or checks
/// an upload's) and answers.
struct BulkRun {
    client: lbe_bulk::client::ClientSession,
    server: lbe_bulk::server::ServerSession,
    /// Whether the wake-up at a `--duration` sender's stop is queued.
    stop_queued: bool,
    /// The qlog the sender's report names: the file's name whether or not
    /// `--qlog` writes it, so that the report, and the run, are the same
    /// byte for byte either way and wherever the output goes.
    qlog_name: std::path::PathBuf,
}

impl BulkRun {
    /// The sessions of a transfer of `end` for `flow` (a bulk flow's, or
    /// one of its workload's downloads when `workload`), with the request
    /// quic-bulk's client makes for it in the lab (lbe-lab passes the time
    /// from the flow's start to its stop as `--duration`, and a bulk
    /// flow's deadline as `--deadline`).
    fn new(flow: &lbe_scenario::Flow, index: usize, end: FlowEnd, workload: bool) -> Self {
        use lbe_bulk::protocol::Amount;
        use lbe_bulk::protocol::Direction as Way;
        let request = lbe_bulk::protocol::Request {
            direction: match flow.direction {
                Direction::Download => Way::Download,
                Direction::Upload => Way::Upload,
            },
            amount: match end {
                FlowEnd::Bytes(b) => Amount::Bytes(b),
                FlowEnd::Stop(t) => {
                    Amount::DurationMs(lbe_bulk::protocol::millis(t.saturating_sub(flow.start)))
                }
            },
            cc: flow.cc.to_string(),
            label: flow.name.clone(),
            deadline_ms: flow
                .deadline
                .filter(|_| !workload)
                .map(lbe_bulk::protocol::millis),
        };
        BulkRun {
            client: lbe_bulk::client::ClientSession::new(request),
            server: lbe_bulk::server::ServerSession::new(),
            stop_queued: false,
            qlog_name: qlog_file_name(flow, index).into(),
        }
    }

    /// The sending end's writer, once it writes.
    fn sender(&self) -> Option<&lbe_bulk::transfer::Sender> {
        self.client.sender().or_else(|| self.server.sender())
    }
}

/// An h3 flow's HTTP/3 layers, the code our apps run (`lbe_h3`):
/// h3-fetch's request plumbing at the client, h3-serve's background rule
/// and response writer at the server.
struct H3Run {
    /// The client sent its request.
    request_sent: bool,
    /// The server's requests in, responses out.
    serving: lbe_h3::response::Serving,
    /// Whether a request switched the server's connection to the flow's
    /// controller (h3-serve's rule; only when the server is h3-serve).
    background: lbe_h3::background::Background,
    client: lbe_h3::client::H3Client,
    /// What the client's response brought.
    response: BodyTally,
    /// Body bytes the server's response read from its source (at most one
    /// 64 KiB read ahead of what it handed quiche).
    offered: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// What an h3 flow's client counts of its response.
#[derive(Default)]
struct BodyTally {
    received: u64,
    finished: bool,
}

impl lbe_h3::client::ResponseHandler for BodyTally {
    fn headers(
        &mut self,
        headers: &[quiche::h3::Header],
    ) -> Result<lbe_h3::client::Next, quiche_lbe::Error> {
        match lbe_h3::fields::field(headers, ":status") {
            Some("200") => Ok(lbe_h3::client::Next::Body),
            status => Err(quiche_lbe::Error::new(format!(
                "the server answered {} instead of 200",
                status.unwrap_or("without a :status")
            ))),
        }
    }

    fn data(&mut self, data: &[u8]) -> Result<(), quiche_lbe::Error> {
        self.received += data.len() as u64;
        Ok(())
    }

    fn finished(&mut self) -> Result<(), quiche_lbe::Error> {
        self.finished = true;
        Ok(())
    }
}

/// A response body of the served byte, counted as it is read.
struct CountedBody {
    offered: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl std::io::Read for CountedBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        buf.fill(BODY_BYTE);
        self.offered
            .fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(buf.len())
    }
}

impl FlowRun {
    fn endpoint(&mut self, side: Side) -> &mut Endpoint {
        match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }

    /// The end that sends the flow's bytes.
    fn sender(&self) -> Side {
        match self.direction {
            Direction::Download => Side::Server,
            Direction::Upload => Side::Client,
        }
    }

    fn clock(&self, side: Side) -> Clock {
        match side {
            Side::Client => self.client_clock,
            Side::Server => self.server_clock,
        }
    }

    /// Payload bytes the receiving end has read.
    fn received(&self) -> u64 {
        match (&self.bulk, &self.h3, self.direction) {
            (Some(b), _, Direction::Download) => b.client.bytes(),
            (Some(b), _, Direction::Upload) => b.server.bytes(),
            (None, Some(h3), _) => h3.response.received,
            (None, None, _) => 0,
        }
    }

    /// Payload bytes the sending end has written (an h3 response's, read
    /// from its source).
    fn written(&self) -> u64 {
        match (&self.bulk, &self.h3, self.direction) {
            (Some(b), _, Direction::Download) => b.server.bytes(),
            (Some(b), _, Direction::Upload) => b.client.bytes(),
            (None, Some(h3), _) => h3.offered.load(std::sync::atomic::Ordering::Relaxed),
            (None, None, _) => 0,
        }
    }
}

/// What `clock` reads at simulated time `at` (`epoch` is simulated time
/// zero): `offset + (1 + skew_ppm / 10^6) t`, to the nanosecond.
fn local_time(epoch: Instant, clock: Clock, at: Instant) -> Instant {
    if clock.is_exact() {
        return at;
    }
    let t = at.saturating_duration_since(epoch);
    let drift_ns = (t.as_nanos() as f64 * clock.skew_ppm / 1e6).round();
    let base = epoch + clock.offset + t;
    if drift_ns >= 0.0 {
        base + Duration::from_nanos(drift_ns as u64)
    } else {
        base - Duration::from_nanos((-drift_ns) as u64)
    }
}

/// The first simulated time at which `clock` reads `local` or later (a
/// deadline quiche set in its own clock), never before `epoch`.
fn sim_time(epoch: Instant, clock: Clock, local: Instant) -> Instant {
    if clock.is_exact() {
        return local;
    }
    let since = local.saturating_duration_since(epoch + clock.offset);
    let t = since.as_nanos() as f64 / (1.0 + clock.skew_ppm / 1e6);
    let mut at = epoch + Duration::from_nanos(t.max(0.0).floor() as u64);
    // The float's rounding: step to the first nanosecond that reaches it
    // (a skew of at most 1000 ppm moves the local clock by at most 1 ns a
    // nanosecond, so this is a step or two).
    while local_time(epoch, clock, at) < local {
        at += Duration::from_nanos(1);
    }
    at
}

struct Sim<'a> {
    config: &'a Config,
    epoch: Instant,
    queue: EventQueue<Ev>,
    link: lbe_link::Link<Packet>,
    link_due: Option<Instant>,
    /// The client->server link, when the scenario limits that direction.
    reverse: Option<lbe_link::Link<Packet>>,
    reverse_due: Option<Instant>,
    /// The connections: the bulk flows' first (in scenario order), then
    /// the workloads' downloads as they open.
    conns: Vec<FlowRun>,
    /// How many of `conns` are bulk flows.
    bulk: usize,
    workloads: Vec<WorkloadRun>,
    /// Per scenario flow.
    client_configs: Vec<quiche::Config>,
    server_configs: Vec<quiche::Config>,
    events: u64,
    rng: SplitMix64,
    buf: Vec<u8>,
    error: Option<String>,
    /// Each flow's qlog file, when [`Config::qlog_dir`] asks for them.
    qlogs: Vec<Option<std::path::PathBuf>>,
    /// HTTP/3's settings, both ends of every h3 flow.
    h3_config: quiche::h3::Config,
}

/// A flow's qlog file name (its sender's), as our apps name theirs
/// (`lbe_cc::qlog_name`).
fn qlog_file_name(flow: &lbe_scenario::Flow, index: usize) -> String {
    use quiche_lbe::lbe_cc::qlog_name;
    qlog_name::file_name(
        &flow.name,
        match flow.direction {
            Direction::Download => qlog_name::Role::Server,
            Direction::Upload => qlog_name::Role::Client,
        },
        &qlog_name::cc_tag(flow.sender_cc().as_str()),
        &(index as u64).to_be_bytes(),
    )
}

/// The simulated server's private key: RSA-2048, made with
/// `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048` for the
/// simulator only. It protects nothing: both ends of every simulated
/// connection are in one process. Generating a key instead took 0.3 s of
/// CPU per process, a fifth of the instructions of a 10 s simulated run.
const SERVER_KEY_PEM: &[u8] = include_bytes!("simulated-server-key.pem");

/// The server's certificate and key, made once per process.
fn identity() -> Result<
    &'static (
        boring::x509::X509,
        boring::pkey::PKey<boring::pkey::Private>,
    ),
    String,
> {
    static IDENTITY: OnceLock<
        Result<
            (
                boring::x509::X509,
                boring::pkey::PKey<boring::pkey::Private>,
            ),
            String,
        >,
    > = OnceLock::new();
    IDENTITY
        .get_or_init(|| {
            let err = |e: boring::error::ErrorStack| {
                format!("cannot make the simulated server's certificate: {e}")
            };
            let key = boring::pkey::PKey::private_key_from_pem(SERVER_KEY_PEM).map_err(err)?;
            let mut name = boring::x509::X509NameBuilder::new().map_err(err)?;
            name.append_entry_by_nid(boring::nid::Nid::COMMONNAME, "lbe-sim")
                .map_err(err)?;
            let name = name.build();
            let mut cert = boring::x509::X509::builder().map_err(err)?;
            cert.set_version(2).map_err(err)?;
            let serial = boring::bn::BigNum::from_u32(1)
                .and_then(|b| b.to_asn1_integer())
                .map_err(err)?;
            cert.set_serial_number(&serial).map_err(err)?;
            cert.set_subject_name(&name).map_err(err)?;
            cert.set_issuer_name(&name).map_err(err)?;
            cert.set_pubkey(&key).map_err(err)?;
            let not_before = boring::asn1::Asn1Time::from_str("20260101000000Z").map_err(err)?;
            let not_after = boring::asn1::Asn1Time::from_str("20360101000000Z").map_err(err)?;
            cert.set_not_before(&not_before).map_err(err)?;
            cert.set_not_after(&not_after).map_err(err)?;
            cert.sign(&key, boring::hash::MessageDigest::sha256())
                .map_err(err)?;
            Ok((cert.build(), key))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Our apps' transport settings (`lbe_endpoint::Transport`'s defaults:
/// windows for a 1 Gbit/s × 200 ms path, so flow control never limits a
/// bulk transfer; a 30 s idle timeout; the timestamp extension offered).
fn transport(config: &mut quiche::Config, pacing: bool) {
    lbe_endpoint::Transport {
        pacing,
        ..lbe_endpoint::Transport::default()
    }
    .apply(config);
}

fn quiche_err(what: &str) -> impl Fn(quiche::Error) -> String + '_ {
    move |e| format!("{what}: quiche: {e}")
}

/// The ALPN a flow's ends offer.
fn alpn(flow: &lbe_scenario::Flow) -> &'static [u8] {
    match flow.kind {
        lbe_scenario::FlowKind::H3(_) => lbe_h3::ALPN,
        _ => lbe_bulk::protocol::ALPN,
    }
}

/// An h3 flow, if `flow` is one.
fn h3_flow(flow: &lbe_scenario::Flow) -> Option<&lbe_scenario::H3Flow> {
    match &flow.kind {
        lbe_scenario::FlowKind::H3(h3) => Some(h3),
        _ => None,
    }
}

/// The server's configuration; `spec` is its controller when it sends.
fn server_config(
    flow: &lbe_scenario::Flow,
    spec: Option<&quiche_lbe::CcSpec>,
) -> Result<quiche::Config, String> {
    let alpn = alpn(flow);
    let (cert, key) = identity()?;
    let err =
        |e: boring::error::ErrorStack| format!("cannot set up the simulated server's TLS: {e}");
    let mut tls =
        boring::ssl::SslContextBuilder::new(boring::ssl::SslMethod::tls()).map_err(err)?;
    tls.set_certificate(cert).map_err(err)?;
    tls.set_private_key(key).map_err(err)?;
    let mut config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, tls)
        .map_err(quiche_err("server config"))?;
    config
        .set_application_protos(&[alpn])
        .map_err(quiche_err("server config"))?;
    transport(&mut config, flow.pacing);
    if let Some(spec) = spec {
        spec.configure(&mut config);
    }
    Ok(config)
}

/// The client's configuration; `spec` is its controller when it sends.
fn client_config(
    flow: &lbe_scenario::Flow,
    spec: Option<&quiche_lbe::CcSpec>,
) -> Result<quiche::Config, String> {
    let alpn = alpn(flow);
    // A TLS context of our own: `quiche::Config::new` loads the system's CA
    // certificates, 48 M instructions per flow (5 % of a 10 s flow's run),
    // for a client that verifies nothing (below).
    let tls = boring::ssl::SslContextBuilder::new(boring::ssl::SslMethod::tls())
        .map_err(|e| format!("cannot set up the simulated client's TLS: {e}"))?;
    let mut config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, tls)
        .map_err(quiche_err("client config"))?;
    config
        .set_application_protos(&[alpn])
        .map_err(quiche_err("client config"))?;
    // Both ends are in this process; see the module docs.
    config.verify_peer(false);
    transport(&mut config, flow.pacing);
    if let Some(spec) = spec {
        spec.configure(&mut config);
    }
    Ok(config)
}

/// A flow's analysis, shared with the event sink quiche holds: the
/// analyzer, or the first error an event gave it.
type SharedAnalysis = std::sync::Arc<std::sync::Mutex<Result<FlowAnalyzer, String>>>;

/// The sink handed to quiche: the events the qlog reader would decode go
/// to the analyzer; after an error the rest are ignored.
fn analysis_sink(analysis: &SharedAnalysis) -> quiche::QlogEventSink {
    let analysis = analysis.clone();
    Box::new(move |time_ms, data| {
        if !qlog_analysis::reader::is_decoded(data) {
            return;
        }
        let mut state = analysis.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(analyzer) = &mut *state {
            if let Err(e) = analyzer.record(time_ms, data) {
                *state = Err(format!("a qlog event at {time_ms} ms: {e}"));
            }
        }
    })
}

/// Runs `config` with real quiche connections (see the module docs).
pub fn run(config: &Config) -> Result<SimOutput, String> {
    run_from(config, Instant::now())
}

/// [`run`] with virtual time starting at `epoch`. Nothing in a run may
/// depend on where `epoch` lies relative to the real clock: a read of the
/// real clock inside quiche (an `Instant::elapsed()` gave every ACK frame
/// the real time the simulation lagged behind, so a loaded host changed
/// the run) makes the run depend on it, which the tests check.
fn run_from(config: &Config, epoch: Instant) -> Result<SimOutput, String> {
    if config.flows.is_empty() {
        return Err("a run needs at least one flow".into());
    }
    let mut client_configs = Vec::new();
    let mut server_configs = Vec::new();
    let mut receivers = Vec::new();
    for f in &config.flows {
        let h3 = h3_flow(f);
        if let Some(h3) = h3.filter(|h3| h3.server == lbe_scenario::H3Server::Aioquic) {
            return Err(format!(
                "flow {}: server = \"{}\" is not simulated (aioquic's HTTP/3 server is Python, run in real time; simulated: h3-serve, quiche-stock): run without --sim",
                f.name,
                h3.server.name()
            ));
        }
        // A deadline-aware flow's sender starts on its plain controller;
        // the request's deadline switches it, as quic-bulk's server does.
        let spec = f.cc.clone();
        let upload = f.direction == Direction::Upload;
        if upload && config.link.reverse_rate_bps.is_none() {
            return Err(format!(
                "flow {}: direction = \"upload\" needs [link] reverse_rate (the client->server direction's bottleneck)",
                f.name
            ));
        }
        let err = |e| format!("flow {} ({}): {e}", f.name, spec);
        // An h3 server starts every connection on CUBIC, as h3-serve does;
        // a background request switches it to the flow's controller.
        let server_spec = (!upload && h3.is_none()).then_some(&spec);
        server_configs.push(server_config(f, server_spec).map_err(err)?);
        let mut client = client_config(f, upload.then_some(&spec)).map_err(err)?;
        // A receiver-driven download: the client runs RFC 9840's window
        // (LEDBAT++ on what it observes, `rledbat::default_config()` as
        // h3-fetch runs it) and caps the server's credit at it.
        // h3-fetch --lbe receiver or both: the same control.
        let h3_receiver = h3.is_some_and(|h3| {
            h3.background
                && matches!(
                    h3.lbe.unwrap_or_default(),
                    lbe_scenario::Lbe::Receiver | lbe_scenario::Lbe::Both
                )
        });
        let receiver = (f.receiver_lbe || h3_receiver).then(|| {
            let start = local_time(epoch, f.client_clock, epoch + f.start);
            let rx = quiche_lbe::ReceiverLbe::new(
                quiche_lbe::lbe_cc::rledbat::default_config(),
                lbe_endpoint::MAX_DATAGRAM_SIZE as u64,
                start,
            );
            rx.configure(&mut client);
            rx
        });
        receivers.push(receiver);
        client_configs.push(client);
    }
    // Virtual time starts at `epoch`; quiche reads `epoch + elapsed`.
    let link = lbe_link::Link::new(&config.link.bottleneck(config.seed));
    let mut sim = Sim {
        config,
        epoch,
        queue: EventQueue::new(),
        link,
        link_due: None,
        reverse: config
            .link
            .has_reverse()
            .then(|| lbe_link::Link::new(&config.link.reverse_path(config.seed))),
        reverse_due: None,
        conns: Vec::new(),
        bulk: 0,
        workloads: Vec::new(),
        client_configs,
        server_configs,
        events: 0,
        rng: crate::queue::latency_rng(config),
        buf: vec![0; 65536],
        error: None,
        qlogs: vec![None; config.flows.len()],
        h3_config: quiche::h3::Config::new().map_err(|e| format!("HTTP/3 config: quiche: {e}"))?,
    };
    if let Some(dir) = &config.qlog_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    for (i, f) in config.flows.iter().enumerate() {
        if let Some(w) = WorkloadRun::new(i, f, config.seed) {
            sim.start_workload(w);
            continue;
        }
        let deadline = epoch
            + match f.end {
                FlowEnd::Stop(t) => t + GRACE,
                FlowEnd::Bytes(_) => f.start + GRACE.max(Duration::from_secs(3600)),
            };
        // An h3 flow's response is its file, as large as the lab's.
        let h3 = h3_flow(f).is_some();
        let end = match h3 {
            true => FlowEnd::Bytes(f.h3_file_bytes(&config.link)),
            false => f.end,
        };
        let h3 = match h3 {
            false => None,
            true => Some(Box::new(H3Run {
                request_sent: false,
                serving: lbe_h3::response::Serving::new(),
                background: lbe_h3::background::Background::default(),
                client: lbe_h3::client::H3Client::new()
                    .map_err(|e| format!("flow {}: {e}", f.name))?,
                response: BodyTally::default(),
                offered: Default::default(),
            })),
        };
        let is_h3 = h3.is_some();
        let c = sim.new_conn(i, None, end, epoch + f.start, h3);
        sim.conns[c].receiver = receivers[i].take();
        sim.conns[c].deadline = deadline;
        sim.bulk += 1;
        sim.push(epoch + f.start, Ev::Open(c));
        // An h3 download is cut off at its stop time, as the lab's is; a
        // quic-bulk sender's stop is set when it first writes
        // (`bulk_app`).
        if let (FlowEnd::Stop(t), true) = (f.end, is_h3) {
            sim.push(epoch + t, Ev::Stop(c));
        }
    }
    // quiche's own random choices (packet numbers skipped, the client's
    // first connection ID) from the run's seed: patch 0007.
    quiche::seed_thread_rand(Some(config.seed));
    sim.run_loop();
    quiche::seed_thread_rand(None);
    quiche::clock::set_virtual_now(None);
    if let Some(e) = sim.error.take() {
        return Err(e);
    }
    sim.finish()
}

impl Sim<'_> {
    fn push(&mut self, at: Instant, ev: Ev) {
        self.queue.push(at, ev);
    }

    fn wake_latency(&mut self) -> Duration {
        crate::queue::wake_latency(&mut self.rng, self.config)
    }

    /// Scenario time of `at`.
    fn since_start(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.epoch)
    }

    /// A new connection of flow `flow` (of `workload`, if a download of
    /// one), sending `end`; opened by an [`Ev::Open`] the caller pushes.
    fn new_conn(
        &mut self,
        flow: usize,
        workload: Option<usize>,
        end: FlowEnd,
        opened_at: Instant,
        h3: Option<Box<H3Run>>,
    ) -> usize {
        let c = self.conns.len();
        let f = &self.config.flows[flow];
        // A bulk flow's key is its position in the scenario; each download gets a key past every flow's.
        let key = match workload {
            None => flow as u64,
            Some(_) => (self.config.flows.len() + c) as u64,
        };
        self.conns.push(FlowRun {
            flow,
            workload,
            key,
            opened_at,
            end,
            client: Endpoint::new(),
            server: Endpoint::new(),
            direction: f.direction,
            client_clock: f.client_clock,
            server_clock: f.server_clock,
            done_at: None,
            deadline: opened_at + Duration::from_secs(365 * 24 * 3600),
            analysis: None,
            receiver: None,
            bulk: h3
                .is_none()
                .then(|| Box::new(BulkRun::new(f, flow, end, workload.is_some()))),
            h3,
            client_addr: SocketAddr::from(([10, 0, 0, 1], 10_000 + (key % 50_000) as u16)),
            server_addr: SocketAddr::from(([10, 0, 0, 2], 443)),
        });
        c
    }

    /// The scenario flow of connection `c`.
    fn flow_of(&self, c: usize) -> &lbe_scenario::Flow {
        &self.config.flows[self.conns[c].flow]
    }

    /// A connection failed: a bulk flow's failure ends the run with an
    /// error; a workload's download is counted as failed.
    fn fail(&mut self, c: usize, what: String, now: Instant) {
        if self.conns[c].workload.is_some() {
            self.download_ended(c, Outcome::Failed, now);
        } else if self.error.is_none() {
            self.error = Some(format!("flow {}: {what}", self.flow_of(c).name));
        }
    }

    fn run_loop(&mut self) {
        while let Some((at, ev)) = self.queue.pop() {
            if self.error.is_some()
                || (self.conns[..self.bulk].iter().all(|f| f.done_at.is_some())
                    && self.workloads.iter().all(|w| w.finished))
            {
                break;
            }
            self.events += 1;
            quiche::clock::set_virtual_now(Some(at));
            match ev {
                Ev::Open(c) => self.open(c, at),
                Ev::Stop(c) if self.conns[c].h3.is_some() => {
                    // An h3 flow's download is cut off at its stop time,
                    // as the lab's is.
                    self.conns[c].done_at.get_or_insert(at);
                }
                Ev::Stop(c) => {
                    // The sender's `--duration` is over: it writes its FIN.
                    let sender = self.conns[c].sender();
                    self.wake(c, sender, at);
                }
                Ev::Wake(c, side) => {
                    self.conns[c].endpoint(side).wake_scheduled = false;
                    self.wake(c, side, at);
                }
                Ev::Timer(c, side, due) => {
                    if self.conns[c].endpoint(side).timer_at == Some(due) {
                        self.conns[c].endpoint(side).timer_at = None;
                        self.wake(c, side, at);
                    }
                }
                Ev::LinkDue => {
                    if self.link_due == Some(at) {
                        self.link_due = None;
                    }
                    while let Some(d) = self.link.poll(at) {
                        self.at_client(d.item, at);
                    }
                    self.schedule_link();
                }
                Ev::ReverseDue => {
                    if self.reverse_due == Some(at) {
                        self.reverse_due = None;
                    }
                    while let Some(d) = self.reverse.as_mut().and_then(|l| l.poll(at)) {
                        self.at_server(d.item, at);
                    }
                    self.schedule_reverse();
                }
                Ev::ToServer(packet) => self.at_server(packet, at),
                Ev::WebArrival(w, k) => self.web_arrival(w, k, at),
                Ev::VideoRequest(w) => self.video_request(w, at),
                Ev::PingSend(w) => self.ping_send(w, at),
                Ev::EchoReply(w, seq) => {
                    if !self.workloads[w].finished {
                        let flow = self.workloads[w].flow;
                        let one_way = self.config.flows[flow].rtt / 2;
                        let size = PING_BYTES;
                        self.link.enqueue_flow(
                            at,
                            flow as u64,
                            size,
                            one_way,
                            Packet::Ping(w, seq),
                        );
                        self.schedule_link();
                    }
                }
                Ev::CbrSend(w) => self.cbr_send(w, at),
                Ev::WorkloadEnd(w) => self.workload_end(w, at),
            }
            for c in 0..self.bulk {
                let f = &self.conns[c];
                if f.done_at.is_none() && at >= f.deadline {
                    self.conns[c].done_at = Some(at);
                }
            }
        }
    }

    /// What the bottleneck delivers to the client side.
    fn at_client(&mut self, packet: Packet, now: Instant) {
        match packet {
            Packet::Quic(c, datagram) => self.arrive(c, Side::Client, datagram, now),
            Packet::Ping(w, seq) => {
                // The reply is read one host wake-up after it arrived.
                let read_at = now + self.wake_latency();
                let since = self.since_start(read_at);
                let run = &mut self.workloads[w];
                if let (false, State::Ping { echoes, .. }) = (run.finished, &mut run.state) {
                    let echo = &mut echoes[seq];
                    echo.rtt.get_or_insert(since.saturating_sub(echo.sent_at));
                }
            }
            Packet::Cbr(w) => {
                let since = self.since_start(now);
                let run = &mut self.workloads[w];
                if let (false, State::Cbr { arrivals, .. }) = (run.finished, &mut run.state) {
                    arrivals.push((since, CBR_BYTES as u64));
                }
            }
        }
    }

    /// What the client->server path delivers to the server side.
    fn at_server(&mut self, packet: Packet, now: Instant) {
        match packet {
            Packet::Quic(c, datagram) => self.arrive(c, Side::Server, datagram, now),
            // The echo server answers one host wake-up later.
            Packet::Ping(w, seq) => {
                let at = now + self.wake_latency();
                self.push(at, Ev::EchoReply(w, seq));
            }
            Packet::Cbr(_) => {}
        }
    }

    /// Sends `packet` of `size` bytes from the client side on `key`'s
    /// path: the reverse link when the scenario limits it, else rtt/2.
    fn send_to_server(
        &mut self,
        key: u64,
        size: usize,
        one_way: Duration,
        packet: Packet,
        now: Instant,
    ) {
        match self.reverse.as_mut() {
            Some(reverse) => {
                reverse.enqueue_flow(now, key, size, one_way, packet);
                self.schedule_reverse();
            }
            // A return path the scenario does not limit.
            None => self.push(now + one_way, Ev::ToServer(packet)),
        }
    }

    fn start_workload(&mut self, run: WorkloadRun) {
        let w = self.workloads.len();
        let flow = &self.config.flows[run.flow];
        let (start, end) = (self.epoch + flow.start, self.epoch + run.end(flow));
        match &run.state {
            State::Web { arrivals, .. } => {
                for (k, a) in arrivals.iter().enumerate() {
                    self.queue.push(self.epoch + a.at, Ev::WebArrival(w, k));
                }
            }
            State::Video { .. } => self.queue.push(start, Ev::VideoRequest(w)),
            State::Ping { .. } => self.queue.push(start, Ev::PingSend(w)),
            // The client's hello reaches the sender rtt/2 after the start.
            State::Cbr { .. } => self.queue.push(start + flow.rtt / 2, Ev::CbrSend(w)),
        }
        self.push(end, Ev::WorkloadEnd(w));
        self.workloads.push(run);
    }

    /// A download of workload `w`: a new connection, not opened yet (the
    /// workload records it first, so that a failure to open is counted).
    fn new_download(&mut self, w: usize, bytes: u64, now: Instant) -> usize {
        let flow = self.workloads[w].flow;
        self.new_conn(flow, Some(w), FlowEnd::Bytes(bytes), now, None)
    }

    fn web_arrival(&mut self, w: usize, k: usize, now: Instant) {
        let State::Web { arrivals, .. } = &self.workloads[w].state else {
            return;
        };
        let bytes = arrivals[k].size_bytes;
        let c = self.new_download(w, bytes, now);
        if let State::Web { conns, .. } = &mut self.workloads[w].state {
            conns[k] = Some(c);
        }
        self.open(c, now);
    }

    fn video_request(&mut self, w: usize, now: Instant) {
        let since = self.since_start(now);
        let stop = self.config.flows[self.workloads[w].flow]
            .stop()
            .unwrap_or_default();
        let run = &mut self.workloads[w];
        let State::Video {
            playout,
            chunk_bytes,
            in_flight,
            ..
        } = &mut run.state
        else {
            return;
        };
        if run.finished || in_flight.is_some() || since >= stop {
            return;
        }
        playout.requested(since);
        let bytes = *chunk_bytes;
        let c = self.new_download(w, bytes, now);
        if let State::Video { in_flight, .. } = &mut self.workloads[w].state {
            *in_flight = Some(c);
        }
        self.open(c, now);
    }

    /// The next chunk's request, when the playout asks for one before the
    /// flow's stop (not before `earliest`).
    fn next_video_request(&mut self, w: usize, earliest: Duration) {
        let stop = self.config.flows[self.workloads[w].flow]
            .stop()
            .unwrap_or_default();
        if let State::Video { playout, .. } = &self.workloads[w].state {
            if let Some(due) = playout.next_request_at() {
                let at = due.max(earliest);
                if at < stop {
                    self.push(self.epoch + at, Ev::VideoRequest(w));
                }
            }
        }
    }

    fn ping_send(&mut self, w: usize, now: Instant) {
        let since = self.since_start(now);
        let flow = self.workloads[w].flow;
        let f = &self.config.flows[flow];
        let (stop, one_way) = (f.stop().unwrap_or_default(), f.rtt / 2);
        let State::Ping { interval, echoes } = &mut self.workloads[w].state else {
            return;
        };
        let seq = echoes.len();
        echoes.push(Echo {
            sent_at: since,
            rtt: None,
        });
        // Every `interval` from the start, as the real-time client counts.
        let next = f.start + *interval * (seq as u32 + 1);
        if next < stop {
            self.push(self.epoch + next, Ev::PingSend(w));
        }
        self.send_to_server(flow as u64, PING_BYTES, one_way, Packet::Ping(w, seq), now);
    }

    fn cbr_send(&mut self, w: usize, now: Instant) {
        let flow = self.workloads[w].flow;
        let f = &self.config.flows[flow];
        let began = self.epoch + f.start + f.rtt / 2;
        let length = f.stop().unwrap_or_default().saturating_sub(f.start);
        let one_way = f.rtt / 2;
        let State::Cbr { schedule, sent, .. } = &mut self.workloads[w].state else {
            return;
        };
        *sent += 1;
        let next = schedule.send_at(*sent);
        if next < length {
            self.push(began + next, Ev::CbrSend(w));
        }
        self.link
            .enqueue_flow(now, flow as u64, CBR_BYTES, one_way, Packet::Cbr(w));
        self.schedule_link();
    }

    /// Download `c` of a workload ended (finished, failed): the workload
    /// counts it; both ends are closed and dropped.
    fn download_ended(&mut self, c: usize, outcome: Outcome, now: Instant) {
        let Some(w) = self.conns[c].workload else {
            return;
        };
        self.close_download(c, now);
        let since = self.since_start(now);
        let run = &mut self.workloads[w];
        if run.finished {
            return;
        }
        match &mut run.state {
            State::Web {
                outcomes, conns, ..
            } => {
                if let Some(k) = conns.iter().position(|x| *x == Some(c)) {
                    outcomes[k].get_or_insert(outcome);
                }
                if outcomes.iter().all(Option::is_some) {
                    run.finished = true;
                }
            }
            State::Video {
                playout,
                in_flight,
                failed,
                ..
            } => {
                *in_flight = None;
                let earliest = match outcome {
                    Outcome::Finished(_) => {
                        playout.arrived(since);
                        since
                    }
                    _ => {
                        *failed += 1;
                        playout.failed(since);
                        since + VIDEO_RETRY
                    }
                };
                self.next_video_request(w, earliest);
            }
            State::Ping { .. } | State::Cbr { .. } => {}
        }
    }

    /// Workload `w`'s end: its downloads still running are given up on
    /// (unfinished), and nothing more counts.
    fn workload_end(&mut self, w: usize, now: Instant) {
        let running: Vec<usize> = match &self.workloads[w].state {
            State::Web {
                conns, outcomes, ..
            } => conns
                .iter()
                .zip(outcomes)
                .filter(|(_, o)| o.is_none())
                .filter_map(|(c, _)| *c)
                .collect(),
            State::Video { in_flight, .. } => in_flight.iter().copied().collect(),
            _ => Vec::new(),
        };
        for c in running {
            self.close_download(c, now);
        }
        self.workloads[w].finished = true;
    }

    /// A download's connection is done (from `now`, unless it already
    /// was): both ends are dropped.
    fn close_download(&mut self, c: usize, now: Instant) {
        let conn = &mut self.conns[c];
        conn.done_at.get_or_insert(now);
        conn.client.conn = None;
        conn.server.conn = None;
    }

    fn open(&mut self, i: usize, now: Instant) {
        let mut scid = [0u8; quiche::MAX_CONN_ID_LEN];
        let mut rng = SplitMix64::new(self.config.seed ^ (self.conns[i].key + 1));
        for b in scid.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        let scid = quiche::ConnectionId::from_ref(&scid[..16]);
        self.set_clock(i, Side::Client, now);
        let f = &self.conns[i];
        match quiche::connect(
            None,
            &scid,
            f.client_addr,
            f.server_addr,
            &mut self.client_configs[f.flow],
        ) {
            Ok(mut conn) => {
                if self.conns[i].sender() == Side::Client
                    && self.conns[i].workload.is_none()
                    && !self.start_analysis(i, &mut conn, now)
                {
                    return;
                }
                self.conns[i].client.conn = Some(conn);
                self.wake(i, Side::Client, now);
            }
            Err(e) => self.fail(i, format!("cannot connect: quiche: {e}"), now),
        }
    }

    /// Sets quiche's clock to what `side`'s clock reads at `now`.
    fn set_clock(&self, i: usize, side: Side, now: Instant) {
        let clock = self.conns[i].clock(side);
        quiche::clock::set_virtual_now(Some(local_time(self.epoch, clock, now)));
    }

    /// Hands the sender's qlog events to its analysis (and to its file,
    /// with [`Config::qlog_dir`]); `false` when the file cannot be created.
    fn start_analysis(&mut self, i: usize, conn: &mut quiche::Connection, now: Instant) -> bool {
        let index = self.conns[i].flow;
        let flow = &self.config.flows[index];
        let (from, to) = match self.config.window {
            Some((f, t)) => (Some(f.as_secs_f64()), Some(t.as_secs_f64())),
            None => (None, None),
        };
        let offset = now.saturating_duration_since(self.epoch).as_secs_f64();
        let analyzer = FlowAnalyzer::new(offset, from, to, 0.1);
        let file = match &self.config.qlog_dir {
            None => None,
            Some(dir) => {
                let path = dir.join(qlog_file_name(flow, index));
                match std::fs::File::create(&path) {
                    Ok(file) => {
                        self.qlogs[index] = Some(path);
                        Some(file)
                    }
                    Err(e) => {
                        self.fail(i, format!("cannot create {}: {e}", path.display()), now);
                        return false;
                    }
                }
            }
        };
        let analysis: SharedAnalysis = std::sync::Arc::new(std::sync::Mutex::new(Ok(analyzer)));
        conn.set_qlog_event_sink(analysis_sink(&analysis), quiche::QlogLevel::Base);
        if let Some(file) = file {
            let role = match flow.direction {
                Direction::Download => "server",
                Direction::Upload => "client",
            };
            conn.set_qlog_with_level(
                Box::new(crate::qlog_file::VirtualWallClock::new(
                    std::io::BufWriter::new(file),
                    now.saturating_duration_since(self.epoch),
                )),
                format!("lbe-sim {role} {}", flow.name),
                format!("cc={} role={role} label={}", flow.sender_cc(), flow.name),
                quiche::QlogLevel::Base,
            );
        }
        self.conns[i].analysis = Some(analysis);
        true
    }

    fn arrive(&mut self, i: usize, side: Side, datagram: Vec<u8>, now: Instant) {
        // Drawn even for a connection that is done, so that the draws of
        // the others do not depend on when it ended.
        let latency = self.wake_latency();
        if self.conns[i].done_at.is_some() {
            return;
        }
        let ep = self.conns[i].endpoint(side);
        ep.inbox.push(datagram);
        if !ep.wake_scheduled {
            ep.wake_scheduled = true;
            self.push(now + latency, Ev::Wake(i, side));
        }
    }

    /// The server's connection, created from the first datagram that
    /// reaches it.
    fn accept(&mut self, i: usize, now: Instant) {
        let mut scid = [0u8; 16];
        let mut rng = SplitMix64::new(self.config.seed ^ 0x00ac_ce97 ^ (self.conns[i].key + 1));
        for b in scid.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        let scid = quiche::ConnectionId::from_ref(&scid);
        let f = &self.conns[i];
        let (local, peer) = (f.server_addr, f.client_addr);
        match quiche::accept(&scid, None, local, peer, &mut self.server_configs[f.flow]) {
            Ok(mut conn) => {
                if self.conns[i].sender() == Side::Server
                    && self.conns[i].workload.is_none()
                    && !self.start_analysis(i, &mut conn, now)
                {
                    return;
                }
                self.conns[i].server.conn = Some(conn);
            }
            Err(e) => self.fail(i, format!("the server cannot accept: quiche: {e}"), now),
        }
    }

    /// An endpoint's loop: what arrived, its timer, the application, then
    /// sending.
    fn wake(&mut self, i: usize, side: Side, now: Instant) {
        if self.conns[i].done_at.is_some() {
            return;
        }
        self.set_clock(i, side, now);
        let local_now = local_time(self.epoch, self.conns[i].clock(side), now);
        if side == Side::Server && self.conns[i].server.conn.is_none() {
            if self.conns[i].server.inbox.is_empty() {
                return;
            }
            self.accept(i, now);
        }
        let from = match side {
            Side::Client => self.conns[i].server_addr,
            Side::Server => self.conns[i].client_addr,
        };
        let to = match side {
            Side::Client => self.conns[i].client_addr,
            Side::Server => self.conns[i].server_addr,
        };
        let inbox = std::mem::take(&mut self.conns[i].endpoint(side).inbox);
        {
            let Some(conn) = self.conns[i].endpoint(side).conn.as_mut() else {
                return;
            };
            for mut d in inbox {
                // A datagram quiche refuses (one it cannot decrypt after a
                // key change, a duplicate) is dropped, as our apps do.
                let _ = conn.recv(&mut d, quiche::RecvInfo { from, to });
            }
            lbe_endpoint::on_timer(conn, local_now);
        }
        let finished = if self.conns[i].h3.is_some() {
            match side {
                Side::Server => self.h3_server_app(i, now),
                Side::Client => self.h3_client_app(i, now),
            }
            false
        } else {
            self.bulk_app(i, side, now)
        };
        // After the reads, before sending (as h3-fetch calls it).
        let run = &mut self.conns[i];
        if let (Side::Client, Some(rx), Some(conn)) =
            (side, run.receiver.as_mut(), run.client.conn.as_mut())
        {
            rx.on_progress(conn, local_now);
        }
        if finished && self.conns[i].workload.is_some() {
            // A download's client closes its connection once it has every
            // byte; the CONNECTION_CLOSE goes out with this wake-up's
            // datagrams.
            if let Some(conn) = self.conns[i].client.conn.as_mut() {
                let _ = conn.close(true, 0x0, b"");
            }
        }
        self.send(i, side, now);
        if self.conns[i].workload.is_some() {
            let opened_at = self.conns[i].opened_at;
            let closed = self.conns[i]
                .endpoint(side)
                .conn
                .as_ref()
                .is_some_and(|c| c.is_closed());
            if finished {
                let fct = now.saturating_duration_since(opened_at);
                self.download_ended(i, Outcome::Finished(fct), now);
            } else if closed {
                self.download_ended(i, Outcome::Failed, now);
            }
        }
    }

    /// A quic-bulk connection's end: its session (`lbe_bulk`) reads what
    /// arrived and writes what is due; `true` when a transfer of a given
    /// size finished at the client now (a download's last byte arrived,
    /// an upload's receipt).
    fn bulk_app(&mut self, i: usize, side: Side, now: Instant) -> bool {
        let (epoch, clock) = (self.epoch, self.conns[i].clock(side));
        // The session reads the endpoint's own clock, as quiche does.
        let local_now = local_time(epoch, clock, now);
        let f = &mut self.conns[i];
        let sends = side == f.sender();
        let endpoint = match side {
            Side::Client => &mut f.client,
            Side::Server => &mut f.server,
        };
        let (Some(bulk), Some(conn)) = (f.bulk.as_deref_mut(), endpoint.conn.as_mut()) else {
            return false;
        };
        // The sender's report names its qlog (an upload's client reports
        // its own figures).
        let qlog = sends.then_some(bulk.qlog_name.as_path());
        let step = match side {
            Side::Client => bulk.client.progress(conn, local_now, qlog),
            Side::Server => bulk.server.serve(conn, local_now, qlog).map(drop),
        };
        // quic-bulk's sender counts `--duration` from its first write
        // (`lbe_bulk::transfer::Sender`), so in the lab a sender stops
        // writing that long after the request reached it, not at the
        // scenario's stop: later by the handshake and the request's trip,
        // over a second when they queue behind a full 500 ms buffer. Its
        // last packets then meet the queue the lab's met (a CUBIC flow's
        // only sight of an empty queue, and so of its base RTT, can be
        // those packets). The sender is woken then to write its FIN.
        let stop_at = match bulk.stop_queued {
            true => None,
            false => bulk.sender().and_then(lbe_bulk::transfer::Sender::stop_at),
        };
        bulk.stop_queued |= stop_at.is_some();
        let finished = side == Side::Client
            && f.done_at.is_none()
            && matches!(f.end, FlowEnd::Bytes(_))
            && bulk.client.finished_at().is_some();
        if let Some(at) = stop_at {
            self.push(sim_time(epoch, clock, at), Ev::Stop(i));
        }
        if finished {
            // A byte-counted flow is done here and no longer woken: its
            // report exchange is not made (the figures end at the last
            // byte). A flow with a stop time makes it, as in the lab: the
            // ACK in the client's report request is the sender's last RTT
            // sample, taken as its own data leaves the queue (in the lab a
            // CUBIC flow that entered a full 500 ms buffer sees its only
            // near-base RTT there, 55.9-61.4 ms against 108.9 ms at its
            // handshake; `lab-figures.toml` says when the simulator's
            // client misses it).
            self.conns[i].done_at = Some(now);
        }
        if let Err(e) = step {
            let what = match side {
                Side::Client => "client",
                Side::Server => "server",
            };
            self.fail(i, format!("quic-bulk {what}: {e}"), now);
        }
        finished
    }

    /// An h3 flow's server: h3-serve's HTTP/3 layer (`lbe_h3`). A request
    /// for urgency 7 switches an h3-serve connection to the flow's
    /// controller; the response is a 200 with the file's length, written as
    /// stream capacity allows.
    fn h3_server_app(&mut self, i: usize, now: Instant) {
        let flow = self.flow_of(i);
        let (spec, server_lbe) = (
            flow.cc.clone(),
            h3_flow(flow).is_some_and(|h| h.server_lbe()),
        );
        let run = &mut self.conns[i];
        let len = match run.end {
            FlowEnd::Bytes(b) => b,
            FlowEnd::Stop(_) => 0,
        };
        let (Some(h3), Some(conn)) = (run.h3.as_deref_mut(), run.server.conn.as_mut()) else {
            return;
        };
        let mut error = None;
        match h3.serving.start(conn, &self.h3_config) {
            Ok(lbe_h3::response::Start::NotReady) => return,
            Ok(lbe_h3::response::Start::Started | lbe_h3::response::Start::Ready) => {}
            Err(e) => error = Some(e),
        }
        while let Some(incoming) = h3.serving.next(conn, |_| false) {
            let lbe_h3::response::Incoming::Request { stream, list } = incoming else {
                continue;
            };
            let ask = lbe_h3::background::Ask::of(&list);
            if ask.background() && server_lbe {
                if let Some(Err(e)) = h3.background.begin(&spec, conn) {
                    error.get_or_insert(format!("cannot switch to '{spec}': {e}"));
                }
            }
            let headers = vec![
                lbe_h3::response::header(":status", "200"),
                lbe_h3::response::header("content-length", len.to_string()),
            ];
            let body = lbe_h3::response::Body::reader(
                CountedBody {
                    offered: h3.offered.clone(),
                },
                len,
            );
            h3.serving.respond(lbe_h3::response::Outgoing::new(
                stream,
                headers,
                ask.priority(),
                body,
            ));
        }
        h3.serving.pump(conn);
        if let Some(e) = error {
            self.fail(i, format!("h3 server: {e}"), now);
        }
    }

    /// An h3 flow's client: h3-fetch's request (`GET`, `priority: u=7`
    /// for a background download) and its response read to the end;
    /// then the connection is closed, as h3-fetch closes it.
    fn h3_client_app(&mut self, i: usize, now: Instant) {
        let authority = self.conns[i].server_addr.to_string();
        let flow = self.flow_of(i);
        let path = format!("/{}", flow.name);
        let background = h3_flow(flow).is_some_and(|h| h.background);
        let run = &mut self.conns[i];
        let (Some(h3), Some(conn)) = (run.h3.as_deref_mut(), run.client.conn.as_mut()) else {
            return;
        };
        let step = (|| -> Result<(), quiche_lbe::Error> {
            if !h3.client.ready(conn)? {
                return Ok(());
            }
            if !h3.request_sent {
                let mut request = lbe_h3::client::request_headers("GET", &authority, &path);
                request.extend(lbe_h3::client::background_fields(background, None));
                h3.client.send(conn, &request)?;
                h3.request_sent = true;
            }
            h3.client.poll(conn, &mut h3.response)
        })();
        if h3.response.finished && run.done_at.is_none() {
            run.done_at = Some(now);
            let _ = conn.close(true, lbe_h3::code::NO_ERROR, b"");
        }
        if let Err(e) = step {
            self.fail(i, format!("h3 client: {e}"), now);
        }
    }

    fn send(&mut self, i: usize, side: Side, now: Instant) {
        let (epoch, clock) = (self.epoch, self.conns[i].clock(side));
        // The endpoint's loop, like quiche, reads the endpoint's own clock.
        let local_now = local_time(epoch, clock, now);
        loop {
            let ep = self.conns[i].endpoint(side);
            let Some(conn) = ep.conn.as_mut() else {
                return;
            };
            match ep.sender.next(conn, local_now, &mut self.buf) {
                Ok(Some((n, _))) => {
                    let d = self.buf[..n].to_vec();
                    self.transmit(i, side, d, now);
                }
                Ok(None) => break,
                Err(e) => {
                    self.fail(i, format!("send: quiche: {e}"), now);
                    return;
                }
            }
        }
        // The next wake-up: quiche's timer or the held datagram's release.
        let ep = self.conns[i].endpoint(side);
        // quiche's times and the held datagram's are in the endpoint's
        // clock.
        let next = ep
            .conn
            .as_ref()
            .and_then(|c| ep.sender.wake_at(c))
            .map(|t| sim_time(epoch, clock, t));
        if let Some(at) = next {
            let at = at.max(now);
            if ep.timer_at != Some(at) {
                ep.timer_at = Some(at);
                self.push(at, Ev::Timer(i, side, at));
            }
        }
    }

    fn transmit(&mut self, i: usize, side: Side, datagram: Vec<u8>, now: Instant) {
        let one_way = self.flow_of(i).rtt / 2;
        let (key, size) = (self.conns[i].key, datagram.len());
        match side {
            // The download's direction crosses the bottleneck.
            Side::Server => {
                self.link
                    .enqueue_flow(now, key, size, one_way, Packet::Quic(i, datagram));
                self.schedule_link();
            }
            Side::Client => self.send_to_server(key, size, one_way, Packet::Quic(i, datagram), now),
        }
    }

    fn schedule_reverse(&mut self) {
        if let Some(due) = self.reverse.as_ref().and_then(|l| l.next_delivery()) {
            if self.reverse_due.is_none_or(|d| due < d) {
                self.reverse_due = Some(due);
                self.push(due, Ev::ReverseDue);
            }
        }
    }

    fn schedule_link(&mut self) {
        if let Some(due) = self.link.next_delivery() {
            if self.link_due.is_none_or(|d| due < d) {
                self.link_due = Some(due);
                self.push(due, Ev::LinkDue);
            }
        }
    }

    fn finish(mut self) -> Result<SimOutput, String> {
        let config = self.config;
        let bulk = &self.conns[..self.bulk];
        // The run ends when its last bulk flow did; with none (workloads
        // alone), when its last workload did.
        let end = bulk
            .iter()
            .filter_map(|f| f.done_at)
            .max()
            .or_else(|| {
                self.workloads
                    .iter()
                    .map(|w| self.epoch + w.end(&config.flows[w.flow]))
                    .max()
            })
            .unwrap_or(self.epoch);
        let mut stats = Vec::new();
        let mut flows = Vec::new();
        for state in self.conns[..self.bulk].iter_mut() {
            let flow = &config.flows[state.flow];
            let sender = match state.sender() {
                Side::Client => state.client.conn.take(),
                Side::Server => state.server.conn.take(),
            };
            let s = sender.as_ref().map(|c| c.stats());
            stats.push(FlowStats {
                sent_packets: s.as_ref().map_or(0, |s| s.sent as u64),
                lost_packets: s.as_ref().map_or(0, |s| s.lost as u64),
                spurious_losses: s.as_ref().map_or(0, |s| s.spurious_lost as u64),
                loss_detection_timeouts: sender.as_ref().map_or(0, |c| {
                    c.path_stats().map(|p| p.total_pto_count as u64).sum()
                }),
                stream_bytes: state.written(),
                finished_s: match flow.end {
                    FlowEnd::Bytes(b) if state.received() == b => state
                        .done_at
                        .map(|t| t.saturating_duration_since(self.epoch).as_secs_f64()),
                    _ => None,
                },
                time_in_levels_s: crate::queue::time_in_levels_s(
                    state.bulk.as_ref().and_then(|b| b.server.progress()),
                ),
                receiver_window: state.receiver.as_ref().map(|rx| rx.stats()),
            });
            // Dropping the connection drops its event sink (and flushes its
            // qlog file): the analysis is ours alone.
            drop(sender);
            let analyzer = match state.analysis.take() {
                Some(shared) => {
                    let state = std::sync::Arc::try_unwrap(shared)
                        .map_err(|_| format!("flow {}: quiche kept its qlog sink", flow.name))?;
                    state
                        .into_inner()
                        .unwrap_or_else(|e| e.into_inner())
                        .map_err(|e| format!("flow {}: {e}", flow.name))?
                }
                None => {
                    return Err(format!(
                        "flow {}: the server never heard from the client",
                        flow.name
                    ))
                }
            };
            flows.push(SimOutput::memory_flow(analyzer, flow, state.flow + 1));
        }
        let qlogs = config
            .flows
            .iter()
            .zip(std::mem::take(&mut self.qlogs))
            .filter(|(f, _)| f.kind.is_bulk())
            .map(|(_, q)| q)
            .collect();
        let workloads = self
            .workloads
            .iter()
            .map(|w| {
                let flow = &config.flows[w.flow];
                crate::WorkloadOutput {
                    flow: w.flow,
                    figures: w.figures(flow, config.window),
                    samples: w.samples(flow, config.window),
                }
            })
            .collect();
        Ok(SimOutput {
            analysis: SimOutput::analyse(config, flows)?,
            flows: stats,
            workloads,
            link: self.link.totals().clone(),
            reverse_link: self.reverse.as_ref().map(|l| l.totals().clone()),
            flow_drops: (0..config.flows.len() as u64)
                .map(|i| self.link.flow_drops(i))
                .collect(),
            events: self.events,
            duration: end.saturating_duration_since(self.epoch),
            qlogs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures from quiche's events handed over as values are those
    /// from the qlog file quiche writes of the same events: the file read
    /// back by the reader the lab's files go through, into the same
    /// analyzer, gives every field of each flow's analysis (a LEDBAT++
    /// flow and a CUBIC flow from 1 s, whose losses and recovery periods
    /// the events carry too).
    #[test]
    fn the_analysis_of_the_events_is_the_analysis_of_the_file() {
        let text = "seed = 1\n[link]\nrate = \"10mbit\"\nrtt = \"40ms\"\nbuffer = \"50ms\"\n\
                    [analysis]\nfrom = \"1s\"\nto = \"5s\"\n\
                    [[flow]]\nname = \"lbe\"\ncc = \"ledbatpp\"\nstop = \"5s\"\n\
                    [[flow]]\nname = \"fg\"\ncc = \"cubic\"\nstart = \"1s\"\nstop = \"5s\"\n";
        let s = lbe_scenario::parse(std::path::Path::new("s.toml"), text).unwrap();
        let dir =
            std::env::temp_dir().join(format!("lbe-sim-events-vs-file-{}", std::process::id()));
        let config = Config {
            link: s.link,
            flows: s.flows,
            window: Some((Duration::from_secs(1), Duration::from_secs(5))),
            seed: 1,
            host_latency: crate::HOST_LATENCY,
            qlog_dir: Some(dir.clone()),
        };
        let out = run(&config).unwrap();
        let analysis = out.analysis.unwrap();
        assert_eq!(analysis.flows.len(), 2);
        // What the run's analysis sets beside the analyzer's figures: the
        // flow's name and place, and what it computes across the flows.
        let identity = [
            "index",
            "qlog",
            "label",
            "flow",
            "cc",
            "role",
            "target_ms",
            "share",
            "active_whole_window",
        ];
        for (i, from_events) in analysis.flows.iter().enumerate() {
            struct Feed(FlowAnalyzer);
            impl qlog_analysis::reader::EventSink for Feed {
                fn event(&mut self, e: qlog_analysis::reader::Event) -> Result<(), String> {
                    self.0.event(&e)
                }
            }
            let mut feed = Feed(FlowAnalyzer::new(
                from_events.offset_s,
                Some(1.0),
                Some(5.0),
                0.1,
            ));
            let path = out.qlogs[i].as_ref().unwrap();
            let read = qlog_analysis::reader::read_qlog(path, &mut feed).unwrap();
            assert!(read.warnings.is_empty(), "{:?}", read.warnings);
            let from_file = feed.0.finish(analysis.window.from_s, analysis.window.to_s);
            assert!(
                from_file.packets_sent > 1000,
                "{} packets",
                from_file.packets_sent
            );
            let json = |f: &qlog_analysis::flow::FlowAnalysis| {
                let mut v = serde_json::to_value(f).unwrap();
                for key in identity {
                    v.as_object_mut().unwrap().remove(key);
                }
                v
            };
            assert_eq!(json(from_events), json(&from_file), "flow {i}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Virtual time an hour ahead of the real clock and a minute behind it
    /// give the same run. With a real clock read inside quiche they did
    /// not: `Instant::elapsed()` for the ACK delay saturates to 0 ahead of
    /// the real clock and reads the minute behind it, changing the ACK
    /// frames' lengths (so the bytes on the link) and the peer's RTT.
    #[test]
    fn a_run_does_not_depend_on_the_real_clock() {
        let text = "seed = 1\n[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                    [[flow]]\nname = \"a\"\ncc = \"ledbatpp\"\nstop = \"4s\"\n";
        let s = lbe_scenario::parse(std::path::Path::new("s.toml"), text).unwrap();
        let config = Config {
            link: s.link,
            flows: s.flows,
            window: None,
            seed: 1,
            host_latency: crate::HOST_LATENCY,
            qlog_dir: None,
        };
        let real = Instant::now();
        let ahead = run_from(&config, real + Duration::from_secs(3600)).unwrap();
        let behind = run_from(
            &config,
            real.checked_sub(Duration::from_secs(60))
                .expect("the monotonic clock started a minute ago"),
        )
        .unwrap();
        assert!(
            ahead.flows[0].sent_packets > 1000,
            "{} packets",
            ahead.flows[0].sent_packets
        );
        assert_eq!(ahead.flows, behind.flows);
        assert_eq!(ahead.link, behind.link);
        assert_eq!(ahead.events, behind.events);
        assert_eq!(ahead.duration, behind.duration);
        let json = |o: &SimOutput| serde_json::to_string(&o.analysis).unwrap();
        assert_eq!(json(&ahead), json(&behind));
    }

    fn clock(offset_ms: u64, skew_ppm: f64) -> Clock {
        Clock {
            offset: Duration::from_millis(offset_ms),
            skew_ppm,
        }
    }

    #[test]
    fn an_exact_clock_reads_the_simulated_time() {
        let epoch = Instant::now();
        let at = epoch + Duration::from_nanos(123_456_789);
        assert_eq!(local_time(epoch, Clock::default(), at), at);
        assert_eq!(sim_time(epoch, Clock::default(), at), at);
    }

    #[test]
    fn a_clock_reads_its_offset_plus_its_skewed_time() {
        let epoch = Instant::now();
        let s = |secs: u64| epoch + Duration::from_secs(secs);
        // 100 ppm fast: 60 s later it reads 6 ms more, past its 1 s offset.
        let fast = clock(1000, 100.0);
        assert_eq!(local_time(epoch, fast, epoch), s(1));
        assert_eq!(
            local_time(epoch, fast, s(60)),
            s(61) + Duration::from_millis(6)
        );
        // 30 minutes at 100 ppm: 180 ms.
        assert_eq!(
            local_time(epoch, fast, s(1800)),
            s(1801) + Duration::from_millis(180)
        );
        // 50 ppm slow: 3 ms less a minute.
        let slow = clock(0, -50.0);
        assert_eq!(
            local_time(epoch, slow, s(60)),
            s(60) - Duration::from_millis(3)
        );
    }

    /// A deadline quiche set in its own clock comes back as the first
    /// simulated nanosecond at which that clock reaches it.
    #[test]
    fn sim_time_is_the_first_instant_the_clock_reaches_a_deadline() {
        let epoch = Instant::now();
        let ns = Duration::from_nanos(1);
        for c in [
            clock(1000, 100.0),
            clock(5, -100.0),
            clock(0, 1000.0),
            clock(0, -1000.0),
        ] {
            for local_ns in [
                0u64,
                1,
                999,
                1_000_000_007,
                61_006_000_003,
                1_801_180_000_001,
            ] {
                let local = epoch + Duration::from_nanos(local_ns);
                let at = sim_time(epoch, c, local);
                assert!(at >= epoch);
                assert!(local_time(epoch, c, at) >= local, "{c:?} {local_ns}");
                if at > epoch {
                    assert!(local_time(epoch, c, at - ns) < local, "{c:?} {local_ns}");
                }
            }
        }
        // A deadline before the clock's own start (its offset) is due at once.
        assert_eq!(sim_time(epoch, clock(1000, 0.5), epoch), epoch);
        let fast = clock(1000, 100.0);
        assert_eq!(
            sim_time(epoch, fast, epoch + Duration::from_millis(61_006)),
            epoch + Duration::from_secs(60)
        );
    }
}
