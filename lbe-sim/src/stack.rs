//! The engine that runs quiche itself: real `quiche::Connection` pairs
//! (TLS handshake, streams, flow control, loss detection, pacer, ACKs,
//! every controller quiche has, `bbr2` included) exchanging their datagrams
//! through `lbe-link`'s bottleneck in virtual time.
//!
//! quiche reads the time through `quiche::clock::now()` (patch 0007); the
//! engine sets it to the virtual time before every call into a connection,
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
//! The application is a bulk download: the client sends a one-byte request
//! on stream 0, the server answers on stream 0 with the flow's bytes (or
//! until its stop time) and a FIN, and the client reads and discards them.
//! The server's qlog (quiche's own, in memory) is parsed as it is written,
//! on a thread of its own, by the same reader and `FlowAnalyzer` that read
//! the lab's qlog files.
//!
//! TLS: the server has an RSA-2048 self-signed certificate made once per
//! process from a key kept in the source (`simulated-server-key.pem`; an
//! RSA signature has a fixed length, so handshake datagrams do not change
//! size from run to run as ECDSA's DER signatures would), and
//! the client does not verify it: both ends run in this process and
//! exchange datagrams only with each other.

use std::io::BufRead;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;
use std::time::Instant;

use lbe_scenario::FlowEnd;
use lbe_scenario::GRACE;
use qlog_analysis::flow::FlowAnalyzer;
use quiche_lbe::lbe_cc::rng::SplitMix64;

use crate::engine::FlowStats;
use crate::engine::SimOutput;
use crate::queue::EventQueue;
use crate::Config;

/// How early a paced datagram may leave, as in our apps.
pub use lbe_endpoint::RELEASE_SLACK;

/// The largest UDP payload our apps send and accept
/// (`lbe_app_kit::tls::MAX_DATAGRAM_SIZE`).
const MAX_DATAGRAM: usize = 1350;

/// The stream the download goes on (client-initiated bidirectional).
const DATA_STREAM: u64 = 0;

/// The ALPN both ends offer.
const ALPN: &[u8] = b"lbe-sim";

/// What the server writes, chunk after chunk.
const CHUNK: [u8; 16384] = [0x5a; 16384];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

#[derive(Debug)]
enum Ev {
    /// The flow's client connects.
    Open(usize),
    /// The server stops writing new data.
    Stop(usize),
    /// An endpoint wakes: what arrived, its timer, sending.
    Wake(usize, Side),
    /// An endpoint's timer or held datagram is due (ignored when stale).
    Timer(usize, Side, Instant),
    /// The bottleneck's next delivery is due.
    LinkDue,
    /// A client datagram reaches its server (the uncongested return path).
    ToServer(usize, Vec<u8>),
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

struct FlowRun {
    client: Endpoint,
    server: Endpoint,
    /// Bytes the server wrote to the stream.
    written: u64,
    /// The client sent its request (once the handshake let it).
    request_sent: bool,
    /// The server answers once the request arrived.
    requested: bool,
    /// The FIN is written: nothing more to offer.
    fin_written: bool,
    /// The server stopped taking new data (its stop time).
    stopped: bool,
    /// Bytes the client read.
    received: u64,
    done_at: Option<Instant>,
    /// When the run gives up on the flow.
    deadline: Instant,
    progress: Option<quiche_lbe::lbe_cc::deadline::Progress>,
    /// The server's qlog, parsed on its own thread.
    analysis: Option<std::thread::JoinHandle<Result<FlowAnalyzer, String>>>,
    client_addr: SocketAddr,
    server_addr: SocketAddr,
}

impl FlowRun {
    fn endpoint(&mut self, side: Side) -> &mut Endpoint {
        match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }
}

struct Sim<'a> {
    config: &'a Config,
    epoch: Instant,
    queue: EventQueue<Ev>,
    link: lbe_link::Link<(usize, Vec<u8>)>,
    link_due: Option<Instant>,
    flows: Vec<FlowRun>,
    client_configs: Vec<quiche::Config>,
    server_configs: Vec<quiche::Config>,
    events: u64,
    rng: SplitMix64,
    buf: Vec<u8>,
    error: Option<String>,
    /// Each flow's qlog file, when [`Config::qlog_dir`] asks for them.
    qlogs: Vec<Option<std::path::PathBuf>>,
}

/// A flow's qlog file name, as our apps name a server's
/// (`lbe_cc::qlog_name`).
fn qlog_file_name(flow: &lbe_scenario::Flow, index: usize) -> String {
    use quiche_lbe::lbe_cc::qlog_name;
    qlog_name::file_name(
        &flow.name,
        qlog_name::Role::Server,
        &qlog_name::cc_tag(flow.sender_cc().as_str()),
        &(index as u64).to_be_bytes(),
    )
}

/// The simulated server's private key: RSA-2048, made with
/// `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048` for the
/// simulator only. It protects nothing: both ends of every simulated
/// connection are in one process. Generating a key instead took 0.3 s of
/// CPU per process, a third of a 10 s simulated run.
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

/// Our apps' transport settings (`lbe_app_kit::tls::Transport`'s defaults:
/// windows for a 1 Gbit/s × 200 ms path, so flow control never limits a
/// bulk transfer; a 30 s idle timeout).
fn transport(config: &mut quiche::Config, pacing: bool) {
    const MAX_DATA: u64 = 64 << 20;
    const MAX_STREAM_DATA: u64 = 32 << 20;
    config.set_max_idle_timeout(30_000);
    config.set_max_recv_udp_payload_size(MAX_DATAGRAM);
    config.set_max_send_udp_payload_size(MAX_DATAGRAM);
    config.set_initial_max_data(MAX_DATA);
    config.set_initial_max_stream_data_bidi_local(MAX_STREAM_DATA);
    config.set_initial_max_stream_data_bidi_remote(MAX_STREAM_DATA);
    config.set_initial_max_stream_data_uni(MAX_STREAM_DATA);
    config.set_initial_max_streams_bidi(1000);
    config.set_initial_max_streams_uni(1000);
    config.set_max_connection_window(MAX_DATA);
    config.set_max_stream_window(MAX_STREAM_DATA);
    config.set_disable_active_migration(true);
    config.enable_pacing(pacing);
}

fn quiche_err(what: &str) -> impl Fn(quiche::Error) -> String + '_ {
    move |e| format!("{what}: quiche: {e}")
}

fn server_config(
    flow: &lbe_scenario::Flow,
    spec: &quiche_lbe::CcSpec,
) -> Result<quiche::Config, String> {
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
        .set_application_protos(&[ALPN])
        .map_err(quiche_err("server config"))?;
    transport(&mut config, flow.pacing);
    spec.configure(&mut config);
    Ok(config)
}

fn client_config(flow: &lbe_scenario::Flow) -> Result<quiche::Config, String> {
    let mut config =
        quiche::Config::new(quiche::PROTOCOL_VERSION).map_err(quiche_err("client config"))?;
    config
        .set_application_protos(&[ALPN])
        .map_err(quiche_err("client config"))?;
    // Both ends are in this process; see the module docs.
    config.verify_peer(false);
    transport(&mut config, flow.pacing);
    Ok(config)
}

/// A qlog writer whose bytes go to the analysis thread in chunks.
/// With [`Config::qlog_dir`], the same bytes go to a file too.
struct QlogPipe {
    buf: Vec<u8>,
    tx: mpsc::SyncSender<Vec<u8>>,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl std::io::Write for QlogPipe {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if let Some(f) = &mut self.file {
            f.write_all(data)?;
        }
        self.buf.extend_from_slice(data);
        if self.buf.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(f) = &mut self.file {
            f.flush()?;
        }
        if !self.buf.is_empty() {
            let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(1 << 17));
            // The reader gone means it failed; its error is reported.
            let _ = self.tx.send(chunk);
        }
        Ok(())
    }
}

impl Drop for QlogPipe {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

/// The analysis thread's input: the chunks, then end of file when the
/// writer is dropped.
struct ChunkReader {
    rx: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(out.len());
            out[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ChunkReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.pos >= self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.chunk = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.chunk[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

struct AnalyzerSink(FlowAnalyzer);

impl qlog_analysis::reader::EventSink for AnalyzerSink {
    fn event(&mut self, event: qlog_analysis::reader::Event) -> Result<(), String> {
        self.0.event(&event)
    }
}

/// Starts the thread that parses a server's qlog as it is written.
fn analysis_thread(
    analyzer: FlowAnalyzer,
    name: String,
    file: Option<std::fs::File>,
) -> (
    QlogPipe,
    std::thread::JoinHandle<Result<FlowAnalyzer, String>>,
) {
    // A bounded channel: the simulation never runs far ahead of the parser.
    let (tx, rx) = mpsc::sync_channel(64);
    let handle = std::thread::spawn(move || {
        let reader = ChunkReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
        };
        let mut sink = AnalyzerSink(analyzer);
        let path = std::path::PathBuf::from(format!("<simulated qlog of {name}>"));
        qlog_analysis::reader::read_qlog_from(reader, &path, &mut sink)
            .map_err(|e| e.to_string())?;
        Ok(sink.0)
    });
    (
        QlogPipe {
            buf: Vec::with_capacity(1 << 17),
            tx,
            file: file.map(std::io::BufWriter::new),
        },
        handle,
    )
}

/// Runs `config` with real quiche connections (see the module docs).
pub fn run(config: &Config) -> Result<SimOutput, String> {
    if config.flows.is_empty() {
        return Err("a run needs at least one flow".into());
    }
    let mut client_configs = Vec::new();
    let mut server_configs = Vec::new();
    let mut progress = Vec::new();
    for f in &config.flows {
        if f.receiver_lbe {
            return Err(format!(
                "flow {}: a receiver-driven flow does not run on the quiche engine yet",
                f.name
            ));
        }
        let mut spec = f.sender_cc();
        let total = match f.end {
            FlowEnd::Bytes(b) => b,
            FlowEnd::Stop(_) => 0,
        };
        let handle = quiche_lbe::lbe_cc::deadline::Progress::new(total);
        progress.push(spec.set_progress(handle.clone()).then_some(handle));
        server_configs
            .push(server_config(f, &spec).map_err(|e| format!("flow {} ({}): {e}", f.name, spec))?);
        client_configs.push(client_config(f).map_err(|e| format!("flow {}: {e}", f.name))?);
    }
    // Virtual time starts here; quiche reads `epoch + elapsed`.
    let epoch = Instant::now();
    let link = lbe_link::Link::new(&config.link.bottleneck(config.seed));
    let mut sim = Sim {
        config,
        epoch,
        queue: EventQueue::new(),
        link,
        link_due: None,
        flows: Vec::new(),
        client_configs,
        server_configs,
        events: 0,
        rng: crate::queue::latency_rng(config),
        buf: vec![0; 65536],
        error: None,
        qlogs: vec![None; config.flows.len()],
    };
    if let Some(dir) = &config.qlog_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    for (i, (f, progress)) in config.flows.iter().zip(progress).enumerate() {
        let deadline = epoch
            + match f.end {
                FlowEnd::Stop(t) => t + GRACE,
                FlowEnd::Bytes(_) => f.start + GRACE.max(Duration::from_secs(3600)),
            };
        let port = 10_000 + i as u16;
        sim.flows.push(FlowRun {
            client: Endpoint::new(),
            server: Endpoint::new(),
            written: 0,
            request_sent: false,
            requested: false,
            fin_written: false,
            stopped: false,
            received: 0,
            done_at: None,
            deadline,
            progress,
            analysis: None,
            client_addr: SocketAddr::from(([10, 0, 0, 1], port)),
            server_addr: SocketAddr::from(([10, 0, 0, 2], 443)),
        });
        sim.push(epoch + f.start, Ev::Open(i));
        if let FlowEnd::Stop(t) = f.end {
            sim.push(epoch + t, Ev::Stop(i));
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

    fn fail(&mut self, i: usize, what: String) {
        if self.error.is_none() {
            self.error = Some(format!("flow {}: {what}", self.config.flows[i].name));
        }
    }

    fn run_loop(&mut self) {
        while let Some((at, ev)) = self.queue.pop() {
            if self.error.is_some() || self.flows.iter().all(|f| f.done_at.is_some()) {
                break;
            }
            self.events += 1;
            quiche::clock::set_virtual_now(Some(at));
            match ev {
                Ev::Open(i) => self.open(i, at),
                Ev::Stop(i) => {
                    self.flows[i].stopped = true;
                    self.wake(i, Side::Server, at);
                }
                Ev::Wake(i, side) => {
                    self.flows[i].endpoint(side).wake_scheduled = false;
                    self.wake(i, side, at);
                }
                Ev::Timer(i, side, due) => {
                    if self.flows[i].endpoint(side).timer_at == Some(due) {
                        self.flows[i].endpoint(side).timer_at = None;
                        self.wake(i, side, at);
                    }
                }
                Ev::LinkDue => {
                    if self.link_due == Some(at) {
                        self.link_due = None;
                    }
                    while let Some(d) = self.link.poll(at) {
                        let (i, datagram) = d.item;
                        self.arrive(i, Side::Client, datagram, at);
                    }
                    self.schedule_link();
                }
                Ev::ToServer(i, datagram) => self.arrive(i, Side::Server, datagram, at),
            }
            for i in 0..self.flows.len() {
                let f = &self.flows[i];
                if f.done_at.is_none() && at >= f.deadline {
                    self.flows[i].done_at = Some(at);
                }
            }
        }
    }

    fn open(&mut self, i: usize, now: Instant) {
        let mut scid = [0u8; quiche::MAX_CONN_ID_LEN];
        let mut rng = SplitMix64::new(self.config.seed ^ (i as u64 + 1));
        for b in scid.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        let scid = quiche::ConnectionId::from_ref(&scid[..16]);
        let f = &self.flows[i];
        match quiche::connect(
            None,
            &scid,
            f.client_addr,
            f.server_addr,
            &mut self.client_configs[i],
        ) {
            Ok(conn) => {
                self.flows[i].client.conn = Some(conn);
                self.wake(i, Side::Client, now);
            }
            Err(e) => self.fail(i, format!("cannot connect: quiche: {e}")),
        }
    }

    fn arrive(&mut self, i: usize, side: Side, datagram: Vec<u8>, now: Instant) {
        let latency = self.wake_latency();
        let ep = self.flows[i].endpoint(side);
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
        let mut rng = SplitMix64::new(self.config.seed ^ 0x00ac_ce97 ^ (i as u64 + 1));
        for b in scid.iter_mut() {
            *b = rng.next_u64() as u8;
        }
        let scid = quiche::ConnectionId::from_ref(&scid);
        let f = &self.flows[i];
        let (local, peer) = (f.server_addr, f.client_addr);
        match quiche::accept(&scid, None, local, peer, &mut self.server_configs[i]) {
            Ok(mut conn) => {
                let flow = &self.config.flows[i];
                let (from, to) = match self.config.window {
                    Some((f, t)) => (Some(f.as_secs_f64()), Some(t.as_secs_f64())),
                    None => (None, None),
                };
                let offset = now.saturating_duration_since(self.epoch).as_secs_f64();
                let analyzer = FlowAnalyzer::new(offset, from, to, 0.1);
                let file = match &self.config.qlog_dir {
                    None => None,
                    Some(dir) => {
                        let path = dir.join(qlog_file_name(flow, i));
                        match std::fs::File::create(&path) {
                            Ok(file) => {
                                self.qlogs[i] = Some(path);
                                Some(file)
                            }
                            Err(e) => {
                                self.fail(i, format!("cannot create {}: {e}", path.display()));
                                return;
                            }
                        }
                    }
                };
                let (pipe, handle) = analysis_thread(analyzer, flow.name.clone(), file);
                conn.set_qlog_with_level(
                    Box::new(pipe),
                    format!("lbe-sim server {}", flow.name),
                    format!("cc={} role=server label={}", flow.sender_cc(), flow.name),
                    quiche::QlogLevel::Base,
                );
                self.flows[i].analysis = Some(handle);
                self.flows[i].server.conn = Some(conn);
            }
            Err(e) => self.fail(i, format!("the server cannot accept: quiche: {e}")),
        }
    }

    /// An endpoint's loop: what arrived, its timer, the application, then
    /// sending.
    fn wake(&mut self, i: usize, side: Side, now: Instant) {
        if self.flows[i].done_at.is_some() {
            return;
        }
        if side == Side::Server && self.flows[i].server.conn.is_none() {
            if self.flows[i].server.inbox.is_empty() {
                return;
            }
            self.accept(i, now);
        }
        let from = match side {
            Side::Client => self.flows[i].server_addr,
            Side::Server => self.flows[i].client_addr,
        };
        let to = match side {
            Side::Client => self.flows[i].client_addr,
            Side::Server => self.flows[i].server_addr,
        };
        let inbox = std::mem::take(&mut self.flows[i].endpoint(side).inbox);
        {
            let Some(conn) = self.flows[i].endpoint(side).conn.as_mut() else {
                return;
            };
            for mut d in inbox {
                // A datagram quiche refuses (one it cannot decrypt after a
                // key change, a duplicate) is dropped, as our apps do.
                let _ = conn.recv(&mut d, quiche::RecvInfo { from, to });
            }
            lbe_endpoint::on_timer(conn, now);
        }
        match side {
            Side::Client => self.client_app(i, now),
            Side::Server => self.server_app(i),
        }
        self.send(i, side, now);
    }

    fn client_app(&mut self, i: usize, now: Instant) {
        let f = &mut self.flows[i];
        let Some(conn) = f.client.conn.as_mut() else {
            return;
        };
        if !f.request_sent && conn.is_established() {
            // The request: one byte and the stream's FIN.
            f.request_sent = conn.stream_send(DATA_STREAM, b"?", true) == Ok(1);
        }
        while let Ok((n, fin)) = conn.stream_recv(DATA_STREAM, &mut self.buf) {
            f.received += n as u64;
            if fin && f.done_at.is_none() && matches!(self.config.flows[i].end, FlowEnd::Bytes(_)) {
                f.done_at = Some(now);
            }
        }
    }

    fn server_app(&mut self, i: usize) {
        let end = self.config.flows[i].end;
        let f = &mut self.flows[i];
        let Some(conn) = f.server.conn.as_mut() else {
            return;
        };
        if !f.requested {
            while let Ok((_, fin)) = conn.stream_recv(DATA_STREAM, &mut self.buf) {
                if fin {
                    f.requested = true;
                }
            }
        }
        if f.requested && !f.fin_written {
            loop {
                let left = match end {
                    FlowEnd::Bytes(b) => b - f.written,
                    FlowEnd::Stop(_) if f.stopped => 0,
                    FlowEnd::Stop(_) => u64::MAX,
                };
                let n = left.min(CHUNK.len() as u64) as usize;
                let fin = n as u64 == left;
                match conn.stream_send(DATA_STREAM, &CHUNK[..n], fin) {
                    Ok(w) => {
                        f.written += w as u64;
                        if fin && w == n {
                            f.fin_written = true;
                            break;
                        }
                        if w < n {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        }
        if let Some(p) = &f.progress {
            p.set_done_bytes(quiche_lbe::spec::stream_delivered(
                conn.stream_acked_bytes(DATA_STREAM),
                f.written,
            ));
        }
    }

    fn send(&mut self, i: usize, side: Side, now: Instant) {
        loop {
            let ep = self.flows[i].endpoint(side);
            let Some(conn) = ep.conn.as_mut() else {
                return;
            };
            match ep.sender.next(conn, now, &mut self.buf) {
                Ok(Some((n, _))) => {
                    let d = self.buf[..n].to_vec();
                    self.transmit(i, side, d, now);
                }
                Ok(None) => break,
                Err(e) => {
                    self.fail(i, format!("send: quiche: {e}"));
                    return;
                }
            }
        }
        // The next wake-up: quiche's timer or the held datagram's release.
        let ep = self.flows[i].endpoint(side);
        let next = ep.conn.as_ref().and_then(|c| ep.sender.wake_at(c));
        if let Some(at) = next {
            let at = at.max(now);
            if ep.timer_at != Some(at) {
                ep.timer_at = Some(at);
                self.push(at, Ev::Timer(i, side, at));
            }
        }
    }

    fn transmit(&mut self, i: usize, side: Side, datagram: Vec<u8>, now: Instant) {
        let one_way = self.config.flows[i].rtt / 2;
        match side {
            // The download's direction crosses the bottleneck.
            Side::Server => {
                let size = datagram.len();
                self.link
                    .enqueue_flow(now, i as u64, size, one_way, (i, datagram));
                self.schedule_link();
            }
            // The return path is not congested.
            Side::Client => self.push(now + one_way, Ev::ToServer(i, datagram)),
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
        let end = self
            .flows
            .iter()
            .filter_map(|f| f.done_at)
            .max()
            .unwrap_or(self.epoch);
        let mut stats = Vec::new();
        let mut flows = Vec::new();
        for (i, (state, flow)) in self.flows.iter_mut().zip(&config.flows).enumerate() {
            let server = state.server.conn.take();
            let s = server.as_ref().map(|c| c.stats());
            stats.push(FlowStats {
                sent_packets: s.as_ref().map_or(0, |s| s.sent as u64),
                lost_packets: s.as_ref().map_or(0, |s| s.lost as u64),
                spurious_losses: s.as_ref().map_or(0, |s| s.spurious_lost as u64),
                stream_bytes: state.written,
                finished_s: match flow.end {
                    FlowEnd::Bytes(b) if state.received == b => state
                        .done_at
                        .map(|t| t.saturating_duration_since(self.epoch).as_secs_f64()),
                    _ => None,
                },
                time_in_levels_s: crate::queue::time_in_levels_s(state.progress.as_ref()),
                receiver_window: None,
            });
            // Dropping the connection drops its qlog writer: the analysis
            // thread reads to the end.
            drop(server);
            let analyzer = match state.analysis.take() {
                Some(h) => h
                    .join()
                    .map_err(|_| format!("flow {}: the qlog analysis panicked", flow.name))??,
                None => {
                    return Err(format!(
                        "flow {}: the server never heard from the client",
                        flow.name
                    ))
                }
            };
            flows.push(SimOutput::memory_flow(analyzer, flow, i + 1));
        }
        SimOutput::assemble(
            config,
            flows,
            stats,
            &self.link,
            self.events,
            end.saturating_duration_since(self.epoch),
            std::mem::take(&mut self.qlogs),
        )
    }
}
