//! `lbe-scenario`: the scenario model of `lbe-lab` and `lbe-sim`, one
//! emulated bottleneck, several flows: the file's types, its parsing and
//! its checks.
//!
//! ```toml
//! seed = 1              # optional, top level: seeds the random loss; the
//!                       # same scenario and seed give the same simulated
//!                       # run (lbe-lab run --sim), byte for byte
//! [link]
//! rate = "20mbit"
//! rtt = "50ms"
//! buffer = "500ms"      # time at line rate, or bytes like "375kB"
//! loss = 0.0            # optional random loss, 0 to 1
//! cross_traffic = "1mbit"  # optional unresponsive Poisson traffic through
//!                          # the bottleneck (lbe-netem --cross-traffic)
//! pacing = false        # optional: every flow's default (true: paced)
//! aqm = "fifo"          # optional queue discipline: fifo (drop-tail, the
//!                       # default) | codel (RFC 8289) | fq_codel (RFC 8290,
//!                       # the buffer is its memory limit) | pie (RFC 8033);
//!                       # quiche sends no ECN, so the AQMs drop. Parameters
//!                       # (each needs its AQM): codel_target = "5ms",
//!                       # codel_interval = "100ms" (codel, fq_codel),
//!                       # fq_flows = 1024, fq_quantum = 1514 (bytes),
//!                       # pie_target = "15ms", pie_tupdate = "15ms",
//!                       # pie_alpha = 0.125, pie_beta = 1.25,
//!                       # pie_max_burst = "150ms"
//! loss_model = "ge"     # optional: bursty loss instead of `loss`, the
//!                       # Gilbert-Elliott channel: ge_p = P(Good->Bad),
//!                       # ge_r = P(Bad->Good) (both required), ge_h (1-h =
//!                       # loss in Bad, default 0), ge_k (1-k = loss in
//!                       # Good, default 1), per datagram
//! reverse_rate = "2mbit"   # optional: rate-limit the client->server
//!                          # direction (lbe-netem --reverse-rate, and
//!                          # the simulator's second link);
//!                          # reverse_buffer (default: the buffer),
//!                          # reverse_loss (random loss, 0 to 1)
//! [analysis]            # the window the figures are computed over (optional)
//! from = "10s"
//! to = "40s"
//! [ports]               # optional fixed ports (default: any free ones)
//! server = 4433
//! netem = 5000          # and netem+1, netem+2... for extra base RTTs
//! [[flow]]
//! cc = "ledbatpp"
//! start = "0s"
//! stop = "40s"          # or bytes = "100MB"
//! deadline = "120s"     # optional, with bytes, a download, cdg or ledbatpp only: the
//!                       # flow is deadline-aware (lbe_cc::deadline), the
//!                       # deadline counted from its start
//! rtt = "100ms"         # optional per-flow base RTT
//! name = "background"   # optional label (default flowN)
//! pacing = false        # optional: send unpaced (default: the link's)
//! count = 10           # optional: 10 identical flows, named NAME-1 ..
//!                       # NAME-10 (NAME: `name` or flowN), the k-th
//!                       # starting (k-1) x stagger after `start`, all
//!                       # stopping at `stop` (at least 1)
//! stagger = "1s"        # optional, with count (default 0s)
//! direction = "upload"  # optional, quic-bulk flows (real time, and the
//!                       # simulator, where it needs reverse_rate): the
//!                       # client sends the bytes and `cc` is the
//!                       # client's (quic-bulk --upload);
//!                       # "download" (the default): the server sends
//! server_clock_offset = "1s"   # optional, simulator only:
//! server_clock_skew_ppm = 100  # each endpoint's clock reads offset +
//! client_clock_offset = "0s"   # (1 + skew_ppm/1e6) x the simulated time
//! client_clock_skew_ppm = 0    # (defaults 0s and 0; skew from -1000 to
//!                              # 1000 ppm)
//! receiver_lbe = true   # optional, simulator only (lbe-lab run --sim):
//!                       # receiver-driven LBE, the receiver runs LEDBAT++
//!                       # and caps the sender's flow-control credit at its
//!                       # window (h3-fetch --lbe receiver); `cc` stays the
//!                       # sender's controller (default false)
//!
//! [[flow]]              # an HTTP/3 download: h3-fetch against a server
//!                       # (the simulator runs h3-serve
//!                       # and quiche-stock, with lbe_h3's code)
//! kind = "h3"           # "quic-bulk" (the default) or "h3"
//! server = "aioquic"    # h3-serve (default) | quiche-stock | aioquic
//! background = true     # h3-fetch --background (default false)
//! lbe = "receiver"      # h3-fetch --lbe: receiver | sender | both (needs
//!                       # background; receiver needs a server that does no
//!                       # LBE, sender and both need h3-serve)
//! bytes = "50MB"        # or stop = "40s" (the download is cut off then)
//!
//! # Foreground workloads (lbe_workload; real time only for now): what a
//! # user feels beside the bulk flows. Each needs `stop`, takes `start`,
//! # `name`, `rtt` and its own keys; any other key is an error.
//! [[flow]]
//! kind = "web"          # short downloads, each a new QUIC connection
//! arrivals = "2/s"      # Poisson, mean rate (also "30/min", "100/h")
//! size = "500kB"        # or sizes = ["50kB", "500kB", "2MB"], picked
//!                       # uniformly with the seed
//! cc = "cubic"          # optional, the downloads' controller (default)
//! stop = "40s"          # no arrivals from then; downloads under way may
//!                       # finish within 30 s more
//! [[flow]]
//! kind = "ping"         # UDP request/response, like a call's packets
//! interval = "100ms"    # optional (default 100ms)
//! stop = "40s"
//! [[flow]]
//! kind = "video"        # chunks into a playout buffer
//! chunk = "2s"          # optional, each chunk's video (default 2s)
//! bitrate = "5mbit"     # optional (default 5mbit)
//! startup = "2s"        # optional, video buffered before play (default 2s)
//! buffer = "10s"        # optional, a chunk is requested below this (10s)
//! stop = "40s"
//! [[flow]]
//! kind = "cbr"          # unresponsive UDP, server to client
//! rate = "2mbit"
//! on = "5s"             # optional, with off: on and off in turn, on first
//! off = "5s"
//! stop = "40s"
//! ```
//!
//! An h3 flow's sender is its server: `h3-serve` switches a background
//! connection (`priority: u=7`) to `cc` (its `--background-cc`, default
//! ledbatpp), `quiche-stock` is h3-serve that never switches (quiche's
//! CUBIC, a stock quiche server), `aioquic` is aioquic's HTTP/3 server
//! (its default, Reno). h3-fetch's `--background` always sends
//! `priority: u=7`, so h3-serve always yields too: against it `lbe` is
//! `sender` or `both`, and receiver-only is measured against quiche-stock
//! (the same server, switching off). `cc` is taken only where the server
//! runs it (h3-serve, background); `deadline` and `pacing` are quic-bulk's
//! only.
//!
//! `receiver_lbe` with `cc` spans h3-fetch's `--lbe` modes against a
//! server that runs `cc` for the download: `cc = "cubic"` alone is a normal
//! download (none), with `receiver_lbe` it is `--lbe receiver`;
//! `cc = "ledbatpp"` alone is `--lbe sender` (h3-serve yielding on
//! `u=7`), with `receiver_lbe` it is `--lbe both`.
//!
//! Everything is checked before anything starts; an error names the file
//! and the line.
#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use quiche_lbe::CcSpec;
use serde::Deserialize;
use toml::Spanned;

/// A checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub link: Link,
    /// The analysis window, scenario time.
    pub window: Option<(Duration, Duration)>,
    pub ports: Ports,
    pub flows: Vec<Flow>,
    /// Seeds the bottleneck's random loss (`lbe-netem`'s own seed when
    /// unset; 1 in the simulator). Controllers seed themselves from their
    /// spec (CDG's `seed`).
    pub seed: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub rate_bps: u64,
    pub rtt: Duration,
    pub buffer: lbe_link::Buffer,
    pub loss: f64,
    /// Mean rate of the bottleneck's cross traffic
    /// (`lbe_link::CrossTraffic`, which `lbe-netem` runs), bits per
    /// second.
    pub cross_traffic_bps: Option<u64>,
    /// The bottleneck's queue discipline (`aqm` and its parameters).
    pub aqm: lbe_link::Aqm,
    /// Bursty loss (`loss_model = "ge"`), replacing `loss`.
    pub gilbert_elliott: Option<lbe_link::GilbertElliott>,
    /// The client->server direction's rate (`reverse_rate`); not limited
    /// when `None`.
    pub reverse_rate_bps: Option<u64>,
    /// Its buffer (`reverse_buffer`; the link's `buffer` by default).
    pub reverse_buffer: Option<lbe_link::Buffer>,
    /// Its random loss (`reverse_loss`).
    pub reverse_loss: f64,
}

impl Link {
    /// The server->client bottleneck as `lbe-link` runs it (in `lbe-netem`
    /// and in the simulator), seeded with `seed`.
    pub fn bottleneck(&self, seed: u64) -> lbe_link::LinkConfig {
        lbe_link::LinkConfig {
            rate_bps: Some(self.rate_bps),
            buffer: Some(self.buffer),
            loss: self.loss,
            seed,
            overhead: lbe_link::IPV4_UDP_OVERHEAD,
            cross_traffic_bps: self.cross_traffic_bps,
            aqm: self.aqm,
            gilbert_elliott: self.gilbert_elliott,
        }
    }

    /// The client->server direction as `lbe-link` runs it (in `lbe-netem`
    /// and in the simulator): `reverse_rate` with
    /// `reverse_buffer` (the link's `buffer` by default) and
    /// `reverse_loss`; a delay line without loss when none is set. Its loss
    /// is seeded apart from the bottleneck's `seed`.
    pub fn reverse_path(&self, seed: u64) -> lbe_link::LinkConfig {
        lbe_link::LinkConfig {
            rate_bps: self.reverse_rate_bps,
            buffer: self
                .reverse_rate_bps
                .map(|_| self.reverse_buffer.unwrap_or(self.buffer)),
            loss: self.reverse_loss,
            seed: seed ^ 0x9e37_79b9_7f4a_7c15,
            ..lbe_link::LinkConfig::default()
        }
    }

    /// Whether anything is set on the client->server direction.
    pub fn has_reverse(&self) -> bool {
        self.reverse_rate_bps.is_some() || self.reverse_loss > 0.0
    }

    /// The buffer as time at line rate.
    pub fn buffer_ms(&self) -> f64 {
        self.buffer.bytes_at(self.rate_bps) as f64 * 8.0 / self.rate_bps as f64 * 1e3
    }
}

/// Fixed ports; 0 picks a free one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ports {
    pub server: u16,
    pub netem: u16,
}

/// How much a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowEnd {
    /// Until this scenario time.
    Stop(Duration),
    /// This many bytes.
    Bytes(u64),
}

/// What runs a flow.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// A quic-bulk download; `cc` is the sender's controller.
    QuicBulk,
    /// An HTTP/3 download by h3-fetch.
    H3(H3Flow),
    /// Foreground: short downloads, each a new QUIC connection.
    Web(WebFlow),
    /// Foreground: UDP request/response every `interval`.
    Ping(PingFlow),
    /// Foreground: video chunks into a playout buffer.
    Video(VideoFlow),
    /// Foreground: unresponsive UDP at a constant rate.
    Cbr(CbrFlow),
}

/// The `kind` values.
pub const KIND_NAMES: [&str; 6] = ["quic-bulk", "h3", "web", "ping", "video", "cbr"];

impl FlowKind {
    /// The `kind` value.
    pub fn name(&self) -> &'static str {
        match self {
            FlowKind::QuicBulk => KIND_NAMES[0],
            FlowKind::H3(_) => KIND_NAMES[1],
            FlowKind::Web(_) => KIND_NAMES[2],
            FlowKind::Ping(_) => KIND_NAMES[3],
            FlowKind::Video(_) => KIND_NAMES[4],
            FlowKind::Cbr(_) => KIND_NAMES[5],
        }
    }

    /// A bulk flow (quic-bulk or h3): what `--baseline` removes.
    pub fn is_bulk(&self) -> bool {
        matches!(self, FlowKind::QuicBulk | FlowKind::H3(_))
    }
}

/// A web flow: "short downloads, each a new QUIC connection with CUBIC
/// (handshake included), arriving as a Poisson process"
/// (`lbe_workload::arrivals`).
#[derive(Clone, Debug, PartialEq)]
pub struct WebFlow {
    /// Mean arrival rate (`arrivals = "2/s"`).
    pub arrivals_per_s: f64,
    /// `size`, or `sizes` to pick from uniformly with the seed.
    pub sizes_bytes: Vec<u64>,
}

/// A ping flow: a small UDP request every `interval`, answered by an echo
/// server behind the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingFlow {
    pub interval: Duration,
}

/// The default `interval` of a ping flow.
pub const PING_INTERVAL: Duration = Duration::from_millis(100);

/// A video flow: chunks of `chunk` of video at `bitrate_bps`, into the
/// playout buffer of `lbe_workload::playout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VideoFlow {
    pub playout: lbe_workload::playout::PlayoutParams,
    pub bitrate_bps: u64,
}

impl VideoFlow {
    /// The bytes of one chunk: `bitrate` × `chunk`.
    pub fn chunk_bytes(&self) -> u64 {
        (self.bitrate_bps as f64 * self.playout.chunk.as_secs_f64() / 8.0).round() as u64
    }
}

/// A cbr flow: unresponsive UDP at `rate_bps`, server to client, on and
/// off in turn (`on` first) when `on_off` is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrFlow {
    pub rate_bps: u64,
    pub on_off: Option<(Duration, Duration)>,
}

/// An h3 flow: which server, and how the client asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct H3Flow {
    pub server: H3Server,
    /// `h3-fetch --background`.
    pub background: bool,
    /// `h3-fetch --lbe` (with `background`); `None` leaves h3-fetch's
    /// default.
    pub lbe: Option<Lbe>,
}

impl H3Flow {
    /// Whether the server sends with a less-than-best-effort controller:
    /// h3-serve asked for background delivery (`priority: u=7`, which
    /// `h3-fetch --background` always sends).
    pub fn server_lbe(&self) -> bool {
        self.server == H3Server::H3Serve && self.background
    }
}

/// The HTTP/3 server of an h3 flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum H3Server {
    /// Our h3-serve: a background request switches its connection to
    /// `cc`.
    H3Serve,
    /// h3-serve with background switching off (`--background-cc cubic`):
    /// quiche as it ships, CUBIC for every connection.
    QuicheStock,
    /// aioquic's HTTP/3 server (`h3_download::aioquic`), Reno.
    Aioquic,
}

impl H3Server {
    pub const NAMES: [&'static str; 3] = ["h3-serve", "quiche-stock", "aioquic"];

    pub fn name(self) -> &'static str {
        match self {
            H3Server::H3Serve => "h3-serve",
            H3Server::QuicheStock => "quiche-stock",
            H3Server::Aioquic => "aioquic",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [H3Server::H3Serve, H3Server::QuicheStock, H3Server::Aioquic]
            .into_iter()
            .find(|v| v.name() == s)
    }

    /// The controller the server sends a normal connection with.
    pub fn default_cc(self) -> &'static str {
        match self {
            H3Server::H3Serve | H3Server::QuicheStock => "cubic",
            H3Server::Aioquic => "reno",
        }
    }
}

/// Which end of an h3 background download runs LEDBAT++: h3-fetch's
/// `--lbe` (`h3_download::fetch::LbeMode`, which `lbe-lab` converts it
/// to), with its default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lbe {
    /// The client (receiver-side LEDBAT++ through flow control).
    Receiver,
    /// The server (asked with `priority: u=7`).
    Sender,
    /// Both.
    #[default]
    Both,
}

/// The `lbe` values, as h3-fetch's `--lbe` spells them.
pub const LBE_NAMES: [&str; 3] = ["receiver", "sender", "both"];

/// An `lbe` value's name.
pub fn lbe_name(lbe: Lbe) -> &'static str {
    match lbe {
        Lbe::Receiver => LBE_NAMES[0],
        Lbe::Sender => LBE_NAMES[1],
        Lbe::Both => LBE_NAMES[2],
    }
}

fn parse_lbe(s: &str) -> Option<Lbe> {
    [Lbe::Receiver, Lbe::Sender, Lbe::Both]
        .into_iter()
        .find(|v| lbe_name(*v) == s)
}

#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// 1-based position in the file (among the flows a `count` expands
    /// to).
    pub id: usize,
    pub name: String,
    pub kind: FlowKind,
    /// The sender's controller: quic-bulk's `--cc`; for an h3 flow what its
    /// server sends with (h3-serve's background `cc`, else the server's
    /// default, [`H3Server::default_cc`]); a web or video flow's `cc`
    /// (default cubic). Ping and cbr flows send plain UDP: theirs is
    /// cubic and unused.
    pub cc: CcSpec,
    pub start: Duration,
    pub end: FlowEnd,
    /// Base RTT; the link's unless given.
    pub rtt: Duration,
    /// Whether the sender paces (quic-bulk `--pacing`).
    pub pacing: bool,
    /// A deadline-aware flow's deadline (quic-bulk `--deadline`); `cc` is
    /// the controller it steers.
    pub deadline: Option<Duration>,
    /// Receiver-driven LBE (simulator only): the receiver runs LEDBAT++ on
    /// what it observes and caps the sender's flow-control credit at its
    /// window, as `h3-fetch --lbe receiver` does (`lbe_sim::stack`); `cc` is
    /// still what the sender runs.
    pub receiver_lbe: bool,
    /// The `count` group it belongs to: the name its copies share (NAME
    /// of NAME-1..NAME-N); `None` for a flow without `count`.
    pub group: Option<String>,
    /// Which end sends the bytes (`direction`).
    pub direction: Direction,
    /// The client's clock (`client_clock_offset`, `client_clock_skew_ppm`;
    /// simulator only).
    pub client_clock: Clock,
    /// The server's clock (`server_clock_offset`, `server_clock_skew_ppm`).
    pub server_clock: Clock,
}

/// Which end of a quic-bulk flow sends the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// The server sends, the client receives (quic-bulk's default).
    #[default]
    Download,
    /// The client sends, the server receives (`direction = "upload"`).
    Upload,
}

/// An endpoint's clock in the simulator: at simulated time `t` since the
/// run's start it reads `offset + (1 + skew_ppm / 10^6) x t`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Clock {
    pub offset: Duration,
    /// Parts per million the clock runs fast (negative: slow), from
    /// [`Clock::MAX_SKEW_PPM`] below to above zero.
    pub skew_ppm: f64,
}

impl Clock {
    /// The largest skew a scenario may give, either way (ppm).
    pub const MAX_SKEW_PPM: f64 = 1000.0;

    /// A clock that reads the simulated time.
    pub fn is_exact(&self) -> bool {
        self.offset.is_zero() && self.skew_ppm == 0.0
    }
}

/// Bytes added to what the link can carry by an h3 flow's stop time
/// ([`Flow::h3_file_bytes`]).
pub const H3_STOP_FILE_MARGIN: u64 = 1_000_000;

impl Flow {
    /// The spec the sender runs: `cc`, with `deadline=` when it has one.
    pub fn sender_cc(&self) -> CcSpec {
        match self.deadline {
            Some(d) => self
                .cc
                .with_deadline(d)
                .expect("the scenario checked that the deadline applies"),
            None => self.cc.clone(),
        }
    }

    /// The size of the file an h3 flow downloads: its `bytes`, or, for a
    /// flow with a stop time, more than the link can carry by then
    /// ([`H3_STOP_FILE_MARGIN`] more), so that the download never ends
    /// before it is cut off. The lab serves a file of this size; the
    /// simulator a response body of this length.
    pub fn h3_file_bytes(&self, link: &Link) -> u64 {
        match self.end {
            FlowEnd::Bytes(b) => b,
            FlowEnd::Stop(stop) => {
                let seconds = stop.saturating_sub(self.start).as_secs_f64();
                (link.rate_bps as f64 / 8.0 * seconds).ceil() as u64 + H3_STOP_FILE_MARGIN
            }
        }
    }

    /// Scenario time at which the flow is due to stop, if it has one.
    pub fn stop(&self) -> Option<Duration> {
        match self.end {
            FlowEnd::Stop(t) => Some(t),
            FlowEnd::Bytes(_) => None,
        }
    }

    /// Scenario time at which a real run gives up on the flow: [`GRACE`]
    /// past its stop time; counting bytes, `GRACE` past its start, or,
    /// with a deadline, `GRACE` past the later of its deadline and `GRACE`
    /// (a loose 400 s deadline must be allowed to take 400 s, and an
    /// impossible 20 s one to run on at a fair share and report the miss).
    /// The simulator, where time costs little, allows an hour
    /// (`lbe_sim::stack`).
    pub fn give_up_at(&self) -> Duration {
        match (self.end, self.deadline) {
            (FlowEnd::Stop(t), _) => t + GRACE,
            (FlowEnd::Bytes(_), None) => self.start + GRACE,
            (FlowEnd::Bytes(_), Some(d)) => self.start + d.max(GRACE) + GRACE,
        }
    }
}

/// How long a flow may run past its stop time (or, counting bytes, past its
/// start) before a run gives up on it ([`Flow::give_up_at`]).
pub const GRACE: Duration = Duration::from_secs(120);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    seed: Option<u64>,
    link: Spanned<RawLink>,
    analysis: Option<RawAnalysis>,
    ports: Option<RawPorts>,
    #[serde(default)]
    flow: Vec<Spanned<RawFlow>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    rate: Spanned<String>,
    rtt: Spanned<String>,
    buffer: Spanned<String>,
    loss: Option<Spanned<f64>>,
    cross_traffic: Option<Spanned<String>>,
    pacing: Option<bool>,
    aqm: Option<Spanned<String>>,
    codel_target: Option<Spanned<toml::Value>>,
    codel_interval: Option<Spanned<toml::Value>>,
    fq_flows: Option<Spanned<toml::Value>>,
    fq_quantum: Option<Spanned<toml::Value>>,
    pie_target: Option<Spanned<toml::Value>>,
    pie_tupdate: Option<Spanned<toml::Value>>,
    pie_alpha: Option<Spanned<toml::Value>>,
    pie_beta: Option<Spanned<toml::Value>>,
    pie_max_burst: Option<Spanned<toml::Value>>,
    loss_model: Option<Spanned<String>>,
    ge_p: Option<Spanned<f64>>,
    ge_r: Option<Spanned<f64>>,
    ge_h: Option<Spanned<f64>>,
    ge_k: Option<Spanned<f64>>,
    reverse_rate: Option<Spanned<String>>,
    reverse_buffer: Option<Spanned<String>>,
    reverse_loss: Option<Spanned<f64>>,
}

/// A TOML scalar as the text `lbe-link`'s parsers take.
fn scalar_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The link's AQM, its loss model and its reverse direction, checked.
#[allow(clippy::type_complexity)]
fn link_extras(
    src: &Source,
    link_span: Range<usize>,
    raw: &RawLink,
) -> Result<
    (
        lbe_link::Aqm,
        Option<lbe_link::GilbertElliott>,
        Option<u64>,
        Option<lbe_link::Buffer>,
        f64,
    ),
    String,
> {
    let params = [
        ("codel_target", &raw.codel_target),
        ("codel_interval", &raw.codel_interval),
        ("fq_flows", &raw.fq_flows),
        ("fq_quantum", &raw.fq_quantum),
        ("pie_target", &raw.pie_target),
        ("pie_tupdate", &raw.pie_tupdate),
        ("pie_alpha", &raw.pie_alpha),
        ("pie_beta", &raw.pie_beta),
        ("pie_max_burst", &raw.pie_max_burst),
    ];
    let name = raw.aqm.as_ref().map_or("fifo", |a| a.get_ref().as_str());
    let mut aqm = lbe_link::build_aqm(name, &[]).map_err(|e| {
        src.error(
            raw.aqm.as_ref().map_or(link_span.clone(), |a| a.span()),
            format!("link {e}"),
        )
    })?;
    for (key, value) in params {
        if let Some(v) = value {
            let text = scalar_text(v.get_ref());
            // Each parameter on its own, so that an error names its line.
            let mut all: Vec<(&str, String)> = params
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| (*k, scalar_text(v.get_ref()))))
                .take_while(|(k, _)| *k != key)
                .collect();
            all.push((key, text));
            let pairs: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
            aqm = lbe_link::build_aqm(name, &pairs)
                .map_err(|e| src.error(v.span(), format!("link {e}")))?;
        }
    }

    let ge_keys = [
        ("ge_p", &raw.ge_p),
        ("ge_r", &raw.ge_r),
        ("ge_h", &raw.ge_h),
        ("ge_k", &raw.ge_k),
    ];
    let ge = match raw.loss_model.as_ref().map(|m| (m, m.get_ref().as_str())) {
        None | Some((_, "bernoulli")) => {
            if let Some((key, Some(v))) = ge_keys.iter().find(|(_, v)| v.is_some()) {
                return Err(src.error(
                    v.span(),
                    format!("link {key} needs loss_model = \"ge\""),
                ));
            }
            None
        }
        Some((m, "ge")) => {
            if let Some(l) = &raw.loss {
                return Err(src.error(
                    l.span(),
                    "link loss and loss_model = \"ge\" exclude each other: the Gilbert-Elliott channel decides the random loss",
                ));
            }
            for (key, v) in ge_keys {
                if let Some(v) = v {
                    if !(0.0..=1.0).contains(v.get_ref()) {
                        return Err(src.error(
                            v.span(),
                            format!("link {key} must be a probability from 0 to 1"),
                        ));
                    }
                }
            }
            let (Some(p), Some(r)) = (&raw.ge_p, &raw.ge_r) else {
                return Err(src.error(
                    m.span(),
                    "loss_model = \"ge\" needs ge_p (P(Good->Bad)) and ge_r (P(Bad->Good))",
                ));
            };
            let g = lbe_link::GilbertElliott::new(
                *p.get_ref(),
                *r.get_ref(),
                raw.ge_h.as_ref().map_or(0.0, |v| *v.get_ref()),
                raw.ge_k.as_ref().map_or(1.0, |v| *v.get_ref()),
            )
            .map_err(|e| src.error(m.span(), format!("link {e}")))?;
            Some(g)
        }
        Some((m, other)) => {
            return Err(src.error(
                m.span(),
                format!("link loss_model '{other}': expected \"bernoulli\" (the default, with loss) or \"ge\""),
            ))
        }
    };

    let reverse_rate = match &raw.reverse_rate {
        Some(r) => {
            let rate = src.value(r, "link reverse_rate", lbe_units::parse_rate)?;
            if rate == 0 {
                return Err(src.error(r.span(), "link reverse_rate must be above zero"));
            }
            Some(rate)
        }
        None => None,
    };
    let reverse_buffer = match &raw.reverse_buffer {
        Some(b) if reverse_rate.is_none() => {
            return Err(src.error(b.span(), "link reverse_buffer needs reverse_rate"))
        }
        Some(b) => Some(src.value(b, "link reverse_buffer", parse_buffer)?),
        None => None,
    };
    let reverse_loss = match &raw.reverse_loss {
        Some(l) if !(0.0..1.0).contains(l.get_ref()) => {
            return Err(src.error(l.span(), "link reverse_loss must be from 0 to below 1"))
        }
        Some(l) => *l.get_ref(),
        None => 0.0,
    };
    Ok((aqm, ge, reverse_rate, reverse_buffer, reverse_loss))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnalysis {
    from: Spanned<String>,
    to: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPorts {
    server: Option<Spanned<u16>>,
    netem: Option<Spanned<u16>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    kind: Option<Spanned<String>>,
    server: Option<Spanned<String>>,
    background: Option<Spanned<bool>>,
    lbe: Option<Spanned<String>>,
    cc: Option<Spanned<String>>,
    start: Option<Spanned<String>>,
    stop: Option<Spanned<String>>,
    bytes: Option<Spanned<String>>,
    deadline: Option<Spanned<String>>,
    rtt: Option<Spanned<String>>,
    name: Option<Spanned<String>>,
    pacing: Option<Spanned<bool>>,
    receiver_lbe: Option<Spanned<bool>>,
    direction: Option<Spanned<String>>,
    client_clock_offset: Option<Spanned<String>>,
    client_clock_skew_ppm: Option<Spanned<f64>>,
    server_clock_offset: Option<Spanned<String>>,
    server_clock_skew_ppm: Option<Spanned<f64>>,
    count: Option<Spanned<i64>>,
    stagger: Option<Spanned<String>>,
    // Foreground workloads (web, ping, video, cbr).
    arrivals: Option<Spanned<String>>,
    size: Option<Spanned<String>>,
    sizes: Option<Spanned<Vec<Spanned<String>>>>,
    interval: Option<Spanned<String>>,
    chunk: Option<Spanned<String>>,
    bitrate: Option<Spanned<String>>,
    startup: Option<Spanned<String>>,
    buffer: Option<Spanned<String>>,
    rate: Option<Spanned<String>>,
    on: Option<Spanned<String>>,
    off: Option<Spanned<String>>,
}

/// Where in the file a problem is.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn error(&self, span: Range<usize>, message: impl std::fmt::Display) -> String {
        format!(
            "{}:{}: {message}",
            self.path.display(),
            self.line_of(span.start)
        )
    }

    fn value<T>(
        &self,
        field: &Spanned<String>,
        what: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, String> {
        parse(field.get_ref()).map_err(|e| self.error(field.span(), format!("{what}: {e}")))
    }
}

fn parse_buffer(text: &str) -> Result<lbe_link::Buffer, String> {
    lbe_link::parse_buffer(text)
}

/// Reads and checks a scenario file.
pub fn load(path: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(path, &text)
}

/// A toml error's message on one line, as every error of ours (toml's can
/// span lines: "invalid string\nexpected ...").
pub fn toml_message(e: &toml::de::Error) -> String {
    let lines: Vec<&str> = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("; ")
}

/// Checks a scenario's text; `path` only names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, String> {
    let src = Source { path, text };
    let raw: RawScenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| src.line_of(s.start));
        format!("{}:{line}: {}", path.display(), toml_message(&e))
    })?;

    let link_span = raw.link.span();
    let raw_link = raw.link.into_inner();
    let (aqm, gilbert_elliott, reverse_rate_bps, reverse_buffer, reverse_loss) =
        link_extras(&src, link_span.clone(), &raw_link)?;
    let link = Link {
        aqm,
        gilbert_elliott,
        reverse_rate_bps,
        reverse_buffer,
        reverse_loss,
        rate_bps: src.value(&raw_link.rate, "link rate", lbe_units::parse_rate)?,
        rtt: src.value(&raw_link.rtt, "link rtt", lbe_units::parse_duration)?,
        buffer: src.value(&raw_link.buffer, "link buffer", parse_buffer)?,
        loss: match &raw_link.loss {
            Some(l) if !(0.0..1.0).contains(l.get_ref()) => {
                return Err(src.error(l.span(), "link loss must be from 0 to below 1"))
            }
            Some(l) => *l.get_ref(),
            None => 0.0,
        },
        cross_traffic_bps: match &raw_link.cross_traffic {
            Some(c) => Some(src.value(c, "link cross_traffic", lbe_units::parse_rate)?),
            None => None,
        },
    };
    if let (Some(c), Some(cross)) = (&raw_link.cross_traffic, link.cross_traffic_bps) {
        if cross == 0 || cross >= link.rate_bps {
            return Err(src.error(
                c.span(),
                "link cross_traffic must be above zero and below the link rate",
            ));
        }
    }
    if link.rtt.is_zero() {
        return Err(src.error(raw_link.rtt.span(), "link rtt must be above zero"));
    }
    if link.buffer.bytes_at(link.rate_bps) < 1500 {
        return Err(src.error(
            raw_link.buffer.span(),
            "link buffer must hold at least one packet (1500 bytes)",
        ));
    }

    let window = match &raw.analysis {
        Some(a) => {
            let from = src.value(&a.from, "analysis from", lbe_units::parse_duration)?;
            let to = src.value(&a.to, "analysis to", lbe_units::parse_duration)?;
            if to <= from {
                return Err(src.error(a.to.span(), "analysis 'to' must be after 'from'"));
            }
            Some((from, to))
        }
        None => None,
    };

    if raw.flow.is_empty() {
        return Err(src.error(link_span, "the scenario has no [[flow]]"));
    }
    let mut flows: Vec<Flow> = Vec::new();
    let mut names = BTreeSet::new();
    for (i, spanned) in raw.flow.iter().enumerate() {
        let f = spanned.get_ref();
        let id = i + 1;
        let count = match &f.count {
            Some(c) if *c.get_ref() < 1 || *c.get_ref() > 10_000 => {
                return Err(src.error(
                    c.span(),
                    format!("flow count = {}: must be from 1 to 10000", c.get_ref()),
                ))
            }
            Some(c) => *c.get_ref() as usize,
            None => 1,
        };
        let stagger = match (&f.stagger, &f.count) {
            (Some(s), None) => return Err(src.error(s.span(), "flow stagger needs count")),
            (Some(s), Some(_)) => src.value(s, "flow stagger", lbe_units::parse_duration)?,
            (None, _) => Duration::ZERO,
        };
        let kind = flow_kind(&src, spanned.span(), f)?;
        let cc = flow_cc(&src, spanned.span(), f, &kind)?;
        let start = match &f.start {
            Some(s) => src.value(s, "flow start", lbe_units::parse_duration)?,
            None => Duration::ZERO,
        };
        let end = match (&f.stop, &f.bytes) {
            (Some(stop), None) => {
                let t = src.value(stop, "flow stop", lbe_units::parse_duration)?;
                if t <= start {
                    return Err(src.error(stop.span(), "flow stop must be after its start"));
                }
                FlowEnd::Stop(t)
            }
            (None, Some(bytes)) => {
                let b = src.value(bytes, "flow bytes", lbe_units::parse_size)?;
                if b == 0 {
                    return Err(src.error(bytes.span(), "flow bytes must be above zero"));
                }
                FlowEnd::Bytes(b)
            }
            (Some(_), Some(bytes)) => {
                return Err(src.error(
                    bytes.span(),
                    "a flow has either 'stop' or 'bytes', not both",
                ))
            }
            (None, None) => return Err(src.error(spanned.span(), "a flow needs 'stop' or 'bytes'")),
        };
        let deadline = match &f.deadline {
            Some(d) => {
                let deadline = src.value(d, "flow deadline", lbe_units::parse_duration)?;
                if !matches!(end, FlowEnd::Bytes(_)) {
                    return Err(src.error(d.span(), "a flow's deadline needs 'bytes' (not 'stop')"));
                }
                cc.with_deadline(deadline)
                    .map_err(|e| src.error(d.span(), format!("flow deadline: {e}")))?;
                Some(deadline)
            }
            None => None,
        };
        let rtt = match &f.rtt {
            Some(r) => {
                let rtt = src.value(r, "flow rtt", lbe_units::parse_duration)?;
                if rtt.is_zero() {
                    return Err(src.error(r.span(), "flow rtt must be above zero"));
                }
                rtt
            }
            None => link.rtt,
        };
        let name = match &f.name {
            Some(n) => {
                let ok = !n.get_ref().is_empty()
                    && n.get_ref()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ok {
                    return Err(src.error(n.span(), "flow name: letters, digits and '_' only"));
                }
                n.get_ref().clone()
            }
            None => format!("flow{id}"),
        };
        let direction = match &f.direction {
            None => Direction::Download,
            Some(d) => match d.get_ref().as_str() {
                "download" => Direction::Download,
                "upload" => Direction::Upload,
                other => {
                    return Err(src.error(
                        d.span(),
                        format!("flow direction: '{other}' (allowed: download, upload)"),
                    ))
                }
            },
        };
        if let (Direction::Upload, Some(d)) = (direction, &f.deadline) {
            // quic-bulk's server steers its own sending only.
            return Err(src.error(
                d.span(),
                "a flow's deadline needs a download (not direction = \"upload\")",
            ));
        }
        if let (Direction::Upload, Some(r)) = (direction, &f.receiver_lbe) {
            if *r.get_ref() {
                return Err(src.error(
                    r.span(),
                    "flow receiver_lbe: a receiver-driven flow is a download, not direction = \"upload\"",
                ));
            }
        }
        let clock = |offset: &Option<Spanned<String>>,
                     skew: &Option<Spanned<f64>>,
                     end: &str|
         -> Result<Clock, String> {
            let offset = match offset {
                Some(o) => src.value(
                    o,
                    &format!("flow {end}_clock_offset"),
                    lbe_units::parse_duration,
                )?,
                None => Duration::ZERO,
            };
            let skew_ppm = match skew {
                Some(s) if s.get_ref().is_nan() || s.get_ref().abs() > Clock::MAX_SKEW_PPM => {
                    return Err(src.error(
                        s.span(),
                        format!(
                            "flow {end}_clock_skew_ppm = {}: must be from -{max} to {max}",
                            s.get_ref(),
                            max = Clock::MAX_SKEW_PPM
                        ),
                    ))
                }
                Some(s) => *s.get_ref(),
                None => 0.0,
            };
            Ok(Clock { offset, skew_ppm })
        };
        let client_clock = clock(&f.client_clock_offset, &f.client_clock_skew_ppm, "client")?;
        let server_clock = clock(&f.server_clock_offset, &f.server_clock_skew_ppm, "server")?;
        let last_start = start + stagger * (count as u32 - 1);
        if let (FlowEnd::Stop(stop), Some(s)) = (end, &f.stagger) {
            if last_start >= stop {
                return Err(src.error(
                    s.span(),
                    format!(
                        "flow stagger: the last of the {count} flows would start at {last_start:?}, not before its stop {stop:?}"
                    ),
                ));
            }
        }
        // `count = N`: N identical flows named NAME-1..NAME-N, the k-th
        // starting (k - 1) x stagger after `start`; all stop at `stop`.
        let name_base = name.clone();
        for k in 0..count {
            let name = if f.count.is_some() {
                format!("{name}-{}", k + 1)
            } else {
                name.clone()
            };
            if !names.insert(name.clone()) {
                let span = f.name.as_ref().map_or(spanned.span(), |n| n.span());
                return Err(src.error(span, format!("flow name '{name}' is used twice")));
            }
            flows.push(Flow {
                id: flows.len() + 1,
                name,
                kind: kind.clone(),
                cc: cc.clone(),
                start: start + stagger * k as u32,
                end,
                rtt,
                pacing: f
                    .pacing
                    .as_ref()
                    .map(|p| *p.get_ref())
                    .or(raw_link.pacing)
                    .unwrap_or(true),
                deadline,
                receiver_lbe: f.receiver_lbe.as_ref().is_some_and(|v| *v.get_ref()),
                group: f.count.is_some().then(|| name_base.clone()),
                direction,
                client_clock,
                server_clock,
            });
        }
    }

    let ports = Ports {
        server: raw
            .ports
            .as_ref()
            .and_then(|p| p.server.as_ref())
            .map_or(0, |p| *p.get_ref()),
        netem: raw
            .ports
            .as_ref()
            .and_then(|p| p.netem.as_ref())
            .map_or(0, |p| *p.get_ref()),
    };
    if ports.server != 0 && ports.netem != 0 {
        let paths = netem_paths(&link, &flows).len() as u32;
        let netem_ports = u32::from(ports.netem)..u32::from(ports.netem) + paths;
        if netem_ports.contains(&u32::from(ports.server)) || netem_ports.end > 65536 {
            let span = raw
                .ports
                .as_ref()
                .and_then(|p| p.server.as_ref())
                .map_or(link_span, |p| p.span());
            return Err(src.error(
                span,
                format!(
                    "ports overlap: the server's {} is among lbe-netem's {}..{} (one per base RTT of quic-bulk flows, one per h3 or workload flow)",
                    ports.server,
                    netem_ports.start,
                    netem_ports.end - 1
                ),
            ));
        }
    }

    Ok(Scenario {
        link,
        window,
        ports,
        flows,
        seed: raw.seed,
    })
}

/// Where an lbe-netem listening address relays to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upstream {
    /// The quic-bulk server (every quic-bulk flow).
    QuicBulk,
    /// The server of the h3 flow with this index in `flows`.
    H3(usize),
    /// The server of the workload flow with this index in `flows`: a
    /// quic-bulk server of the workloads (web, video), a UDP echo (ping),
    /// a UDP sender (cbr).
    Workload(usize),
}

/// lbe-netem's listening addresses for a scenario, in order: the link's
/// RTT to the quic-bulk server first (`--listen`), one per other base RTT
/// of quic-bulk flows (`--path`), then one per h3 flow to its own server
/// with its RTT (`--route`), then one per workload flow (web, ping, video,
/// cbr) to its server (`--route`).
pub fn netem_paths(link: &Link, flows: &[Flow]) -> Vec<(Upstream, Duration)> {
    let mut paths = vec![(Upstream::QuicBulk, link.rtt)];
    for f in flows {
        if f.kind == FlowKind::QuicBulk && !paths.contains(&(Upstream::QuicBulk, f.rtt)) {
            paths.push((Upstream::QuicBulk, f.rtt));
        }
    }
    for (i, f) in flows.iter().enumerate() {
        if let FlowKind::H3(_) = f.kind {
            paths.push((Upstream::H3(i), f.rtt));
        }
    }
    for (i, f) in flows.iter().enumerate() {
        if !f.kind.is_bulk() {
            paths.push((Upstream::Workload(i), f.rtt));
        }
    }
    paths
}

/// The flow's path among [`netem_paths`].
pub fn netem_path(flows: &[Flow], index: usize) -> (Upstream, Duration) {
    let f = &flows[index];
    let upstream = match f.kind {
        FlowKind::QuicBulk => Upstream::QuicBulk,
        FlowKind::H3(_) => Upstream::H3(index),
        _ => Upstream::Workload(index),
    };
    (upstream, f.rtt)
}

impl Scenario {
    /// The same scenario with every bulk flow (quic-bulk and h3) removed:
    /// the foreground workloads alone, what `lbe-lab run --baseline`
    /// compares them with. `None` if nothing would be left, or nothing
    /// removed.
    pub fn without_bulk(&self) -> Option<Scenario> {
        let flows: Vec<Flow> = self
            .flows
            .iter()
            .filter(|f| !f.kind.is_bulk())
            .cloned()
            .collect();
        if flows.is_empty() || flows.len() == self.flows.len() {
            return None;
        }
        Some(Scenario {
            flows,
            ..self.clone()
        })
    }
}

/// The keys only one workload kind takes, with that kind.
fn workload_keys(f: &RawFlow) -> [(&'static str, &'static str, Option<Range<usize>>); 11] {
    let span = |v: &Option<Spanned<String>>| v.as_ref().map(|v| v.span());
    [
        ("arrivals", "web", span(&f.arrivals)),
        ("size", "web", span(&f.size)),
        ("sizes", "web", f.sizes.as_ref().map(|v| v.span())),
        ("interval", "ping", span(&f.interval)),
        ("chunk", "video", span(&f.chunk)),
        ("bitrate", "video", span(&f.bitrate)),
        ("startup", "video", span(&f.startup)),
        ("buffer", "video", span(&f.buffer)),
        ("rate", "cbr", span(&f.rate)),
        ("on", "cbr", span(&f.on)),
        ("off", "cbr", span(&f.off)),
    ]
}

/// A flow's `kind`, with its own keys; the keys of the other kinds are
/// errors.
/// The simulated clock keys a flow sets, with where.
fn clock_keys(f: &RawFlow) -> impl Iterator<Item = (&'static str, Option<Range<usize>>)> {
    [
        (
            "client_clock_offset",
            f.client_clock_offset.as_ref().map(|v| v.span()),
        ),
        (
            "client_clock_skew_ppm",
            f.client_clock_skew_ppm.as_ref().map(|v| v.span()),
        ),
        (
            "server_clock_offset",
            f.server_clock_offset.as_ref().map(|v| v.span()),
        ),
        (
            "server_clock_skew_ppm",
            f.server_clock_skew_ppm.as_ref().map(|v| v.span()),
        ),
    ]
    .into_iter()
}

fn flow_kind(src: &Source, flow_span: Range<usize>, f: &RawFlow) -> Result<FlowKind, String> {
    let kind = match &f.kind {
        None => KIND_NAMES[0],
        Some(k) => KIND_NAMES
            .into_iter()
            .find(|n| *n == k.get_ref().as_str())
            .ok_or_else(|| {
                src.error(
                    k.span(),
                    format!(
                        "flow kind: '{}' is not a flow kind (allowed: {})",
                        k.get_ref(),
                        KIND_NAMES.join(", ")
                    ),
                )
            })?,
    };
    if !matches!(kind, "quic-bulk" | "h3") {
        return workload_kind(src, flow_span, f, kind);
    }
    if let Some((key, owner, Some(span))) = workload_keys(f).into_iter().find(|k| k.2.is_some()) {
        return Err(src.error(
            span,
            format!("flow {key}: only {owner} flows (kind = \"{owner}\") take '{key}'"),
        ));
    }
    let h3 = kind == "h3";
    if !h3 {
        let h3_only = [
            ("server", f.server.as_ref().map(|v| v.span())),
            ("background", f.background.as_ref().map(|v| v.span())),
            ("lbe", f.lbe.as_ref().map(|v| v.span())),
        ];
        if let Some((key, Some(span))) = h3_only.into_iter().find(|(_, s)| s.is_some()) {
            return Err(src.error(
                span,
                format!("flow {key}: only h3 flows (kind = \"h3\") take '{key}'"),
            ));
        }
        return Ok(FlowKind::QuicBulk);
    }
    for (key, span) in [
        ("deadline", f.deadline.as_ref().map(|v| v.span())),
        ("pacing", f.pacing.as_ref().map(|v| v.span())),
        ("direction", f.direction.as_ref().map(|v| v.span())),
    ]
    .into_iter()
    .chain(clock_keys(f))
    {
        if let Some(span) = span {
            return Err(src.error(
                span,
                format!("flow {key}: only quic-bulk flows take '{key}' (an h3 flow's sender is its server)"),
            ));
        }
    }
    if let Some(v) = &f.receiver_lbe {
        return Err(src.error(
            v.span(),
            "flow receiver_lbe: only quic-bulk flows take 'receiver_lbe' (an h3 flow sets lbe = \"receiver\")",
        ));
    }
    let server = match &f.server {
        None => H3Server::H3Serve,
        Some(v) => H3Server::parse(v.get_ref()).ok_or_else(|| {
            src.error(
                v.span(),
                format!(
                    "flow server: '{}' is not an h3 server (allowed: {})",
                    v.get_ref(),
                    H3Server::NAMES.join(", ")
                ),
            )
        })?,
    };
    let background = f.background.as_ref().is_some_and(|b| *b.get_ref());
    let lbe = match &f.lbe {
        None => None,
        Some(v) => {
            let lbe = parse_lbe(v.get_ref()).ok_or_else(|| {
                src.error(
                    v.span(),
                    format!(
                        "flow lbe: '{}' is not an lbe mode (allowed: {})",
                        v.get_ref(),
                        LBE_NAMES.join(", ")
                    ),
                )
            })?;
            if !background {
                return Err(src.error(
                    v.span(),
                    "flow lbe: needs background = true (a normal download runs no LBE)",
                ));
            }
            if lbe != Lbe::Receiver && server != H3Server::H3Serve {
                return Err(src.error(
                    v.span(),
                    format!(
                        "flow lbe: '{}' needs server = \"h3-serve\" ('{}' does no LBE of its own; with it lbe = \"receiver\" only)",
                        lbe_name(lbe),
                        server.name()
                    ),
                ));
            }
            if lbe == Lbe::Receiver && server == H3Server::H3Serve {
                return Err(src.error(
                    v.span(),
                    "flow lbe: 'receiver' with server = \"h3-serve\" is both (h3-serve honours the priority u=7 that --background sends); for receiver-only use server = \"quiche-stock\" or \"aioquic\"",
                ));
            }
            Some(lbe)
        }
    };
    Ok(FlowKind::H3(H3Flow {
        server,
        background,
        lbe,
    }))
}

/// A workload flow's kind and settings (`kind` is web, ping, video or
/// cbr): its own keys, `kind`, `name`, `start`, `stop` (required) and
/// `rtt`; any other is an error.
fn workload_kind(
    src: &Source,
    flow_span: Range<usize>,
    f: &RawFlow,
    kind: &'static str,
) -> Result<FlowKind, String> {
    let own: &[&str] = match kind {
        "web" => &["arrivals", "size", "sizes", "cc"],
        "ping" => &["interval"],
        "video" => &["chunk", "bitrate", "startup", "buffer", "cc"],
        _ => &["rate", "on", "off"],
    };
    let s = |v: Option<Range<usize>>| v;
    let others = [
        ("server", s(f.server.as_ref().map(|v| v.span()))),
        ("background", s(f.background.as_ref().map(|v| v.span()))),
        ("lbe", s(f.lbe.as_ref().map(|v| v.span()))),
        ("cc", s(f.cc.as_ref().map(|v| v.span()))),
        ("bytes", s(f.bytes.as_ref().map(|v| v.span()))),
        ("deadline", s(f.deadline.as_ref().map(|v| v.span()))),
        ("pacing", s(f.pacing.as_ref().map(|v| v.span()))),
        ("receiver_lbe", s(f.receiver_lbe.as_ref().map(|v| v.span()))),
        ("direction", s(f.direction.as_ref().map(|v| v.span()))),
    ]
    .into_iter()
    .chain(clock_keys(f))
    .chain(workload_keys(f).into_iter().map(|(k, _, span)| (k, span)));
    for (key, span) in others {
        if let (Some(span), false) = (span, own.contains(&key)) {
            return Err(src.error(
                span,
                format!(
                    "flow {key}: a {kind} flow does not take '{key}' (it takes kind, name, start, stop, rtt, {})",
                    own.join(", ")
                ),
            ));
        }
    }
    if f.stop.is_none() {
        return Err(src.error(
            flow_span,
            format!("a {kind} flow needs 'stop' (when it ends)"),
        ));
    }
    let positive_duration = |v: &Spanned<String>, key: &str| {
        let d = src.value(v, &format!("flow {key}"), lbe_units::parse_duration)?;
        if d.is_zero() {
            return Err(src.error(v.span(), format!("flow {key} must be above zero")));
        }
        Ok(d)
    };
    let positive = |v: &Spanned<String>, key: &str, parse: fn(&str) -> Result<u64, String>| {
        let n = src.value(v, &format!("flow {key}"), parse)?;
        if n == 0 {
            return Err(src.error(v.span(), format!("flow {key} must be above zero")));
        }
        Ok(n)
    };
    let needs = |key: &str, what: &str| {
        src.error(
            flow_span.clone(),
            format!("a {kind} flow needs '{key}' ({what})"),
        )
    };
    Ok(match kind {
        "web" => {
            let arrivals = f
                .arrivals
                .as_ref()
                .ok_or_else(|| needs("arrivals", "a mean rate, like \"2/s\""))?;
            let arrivals_per_s = src.value(
                arrivals,
                "flow arrivals",
                lbe_workload::arrivals::parse_arrival_rate,
            )?;
            let sizes_bytes = match (&f.size, &f.sizes) {
                (Some(size), None) => vec![positive(size, "size", lbe_units::parse_size)?],
                (None, Some(sizes)) => {
                    if sizes.get_ref().is_empty() {
                        return Err(
                            src.error(sizes.span(), "flow sizes must list at least one size")
                        );
                    }
                    sizes
                        .get_ref()
                        .iter()
                        .map(|v| positive(v, "sizes", lbe_units::parse_size))
                        .collect::<Result<_, _>>()?
                }
                (Some(_), Some(sizes)) => {
                    return Err(src.error(
                        sizes.span(),
                        "a web flow has either 'size' or 'sizes', not both",
                    ))
                }
                (None, None) => {
                    return Err(needs("size", "or 'sizes': the bytes of each download"))
                }
            };
            FlowKind::Web(WebFlow {
                arrivals_per_s,
                sizes_bytes,
            })
        }
        "ping" => FlowKind::Ping(PingFlow {
            interval: match &f.interval {
                Some(v) => positive_duration(v, "interval")?,
                None => PING_INTERVAL,
            },
        }),
        "video" => {
            let or = |v: &Option<Spanned<String>>, key: &str, default: u64| match v {
                Some(v) => positive_duration(v, key),
                None => Ok(Duration::from_secs(default)),
            };
            let playout = lbe_workload::playout::PlayoutParams {
                chunk: or(&f.chunk, "chunk", 2)?,
                startup: or(&f.startup, "startup", 2)?,
                buffer: or(&f.buffer, "buffer", 10)?,
            };
            if playout.startup > playout.buffer {
                let span = f
                    .startup
                    .as_ref()
                    .or(f.buffer.as_ref())
                    .map_or(flow_span.clone(), |v| v.span());
                return Err(src.error(
                    span,
                    "flow startup must not exceed its buffer (play would never start: no chunk is requested once the buffer holds 'buffer')",
                ));
            }
            FlowKind::Video(VideoFlow {
                playout,
                bitrate_bps: match &f.bitrate {
                    Some(v) => positive(v, "bitrate", lbe_units::parse_rate)?,
                    None => 5_000_000,
                },
            })
        }
        _ => {
            let rate = f
                .rate
                .as_ref()
                .ok_or_else(|| needs("rate", "its sending rate, like \"2mbit\""))?;
            let on_off = match (&f.on, &f.off) {
                (Some(on), Some(off)) => Some((
                    positive_duration(on, "on")?,
                    positive_duration(off, "off")?,
                )),
                (None, None) => None,
                (Some(v), None) | (None, Some(v)) => {
                    return Err(src.error(
                        v.span(),
                        "a cbr flow takes 'on' and 'off' together (on for 'on', then off for 'off', in turn)",
                    ))
                }
            };
            FlowKind::Cbr(CbrFlow {
                rate_bps: positive(rate, "rate", lbe_units::parse_rate)?,
                on_off,
            })
        }
    })
}

/// A flow's sender controller: quic-bulk's `cc` (required); for an h3
/// flow, `cc` where its server runs it, else the server's own; for a web
/// or video flow `cc` or cubic; cubic (unused) for ping and cbr.
fn flow_cc(
    src: &Source,
    flow_span: Range<usize>,
    f: &RawFlow,
    kind: &FlowKind,
) -> Result<CcSpec, String> {
    let parse = |c: &Spanned<String>| {
        src.value(c, "flow cc", |t| {
            t.parse().map_err(|e: quiche_lbe::SpecError| e.to_string())
        })
    };
    match (kind, &f.cc) {
        (FlowKind::Web(_) | FlowKind::Video(_), Some(c)) => parse(c),
        (FlowKind::Web(_) | FlowKind::Video(_) | FlowKind::Ping(_) | FlowKind::Cbr(_), _) => {
            Ok("cubic".parse().expect("a valid spec"))
        }
        (FlowKind::QuicBulk, Some(c)) => parse(c),
        (FlowKind::QuicBulk, None) => Err(src.error(flow_span, "a quic-bulk flow needs 'cc'")),
        (FlowKind::H3(h3), Some(c)) => {
            if !h3.server_lbe() {
                return Err(src.error(
                    c.span(),
                    "flow cc: an h3 flow's controller is its server's; cc (h3-serve's --background-cc) needs server = \"h3-serve\" and background = true",
                ));
            }
            let cc = parse(c)?;
            cc.check_background()
                .map_err(|e| src.error(c.span(), format!("flow cc: {e}")))?;
            Ok(cc)
        }
        (FlowKind::H3(h3), None) => Ok(if h3.server_lbe() {
            "ledbatpp"
        } else {
            h3.server.default_cc()
        }
        .parse()
        .expect("a valid spec")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_h3_flows_file_is_more_than_the_link_carries_by_then() {
        let text = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                    [[flow]]\nkind = \"h3\"\nstart = \"5s\"\nstop = \"35s\"\n\
                    [[flow]]\nkind = \"h3\"\nbytes = \"3MB\"\n";
        let s = parse(Path::new("s.toml"), text).unwrap();
        // 20 Mbit/s for 30 s is 75 MB; 1 MB more.
        assert_eq!(s.flows[0].h3_file_bytes(&s.link), 76_000_000);
        assert_eq!(s.flows[1].h3_file_bytes(&s.link), 3_000_000);
    }

    const GOOD: &str = r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[analysis]
from = "10s"
to = "40s"
[[flow]]
cc = "ledbatpp"
start = "0s"
stop = "40s"
[[flow]]
cc = "cubic"
start = "10s"
bytes = "10MB"
rtt = "100ms"
name = "fg"
"#;

    fn err(text: &str) -> String {
        parse(Path::new("s.toml"), text).unwrap_err()
    }

    /// A scenario whose [link] has `extra` lines after rate, rtt, buffer
    /// (lines 2-4): `extra` starts on line 5.
    fn with_link(extra: &str) -> String {
        format!(
            "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n{extra}\n[[flow]]\ncc = \"cubic\"\nstop = \"10s\"\n"
        )
    }

    #[test]
    fn count_expands_to_staggered_identical_flows() {
        let text = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                    [[flow]]\ncc = \"cubic\"\nstop = \"30s\"\n\
                    [[flow]]\ncc = \"ledbatpp\"\nname = \"bg\"\ncount = 3\nstagger = \"1s\"\nstart = \"5s\"\nstop = \"30s\"\n";
        let s = parse(Path::new("s.toml"), text).unwrap();
        let got: Vec<(usize, &str, Duration)> = s
            .flows
            .iter()
            .map(|f| (f.id, f.name.as_str(), f.start))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "flow1", Duration::ZERO),
                (2, "bg-1", Duration::from_secs(5)),
                (3, "bg-2", Duration::from_secs(6)),
                (4, "bg-3", Duration::from_secs(7)),
            ]
        );
        assert!(s.flows[1..]
            .iter()
            .all(|f| f.end == FlowEnd::Stop(Duration::from_secs(30))
                && f.cc.to_string() == s.flows[1].cc.to_string()));
        // Without a name: flowN-1.., N the position in the file.
        let text = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                    [[flow]]\ncc = \"cubic\"\nstop = \"30s\"\ncount = 2\n";
        let s = parse(Path::new("s.toml"), text).unwrap();
        let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["flow1-1", "flow1-2"]);
        assert!(s.flows.iter().all(|f| f.start.is_zero()));
    }

    #[test]
    fn count_errors_name_the_line() {
        let flow = |extra: &str| {
            format!("[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n[[flow]]\ncc = \"cubic\"\nstop = \"10s\"\n{extra}\n")
        };
        for (extra, want) in [
            ("count = 0", "s.toml:8: flow count = 0: must be from 1 to 10000"),
            ("count = -2", "s.toml:8: flow count = -2: must be from 1 to 10000"),
            ("stagger = \"1s\"", "s.toml:8: flow stagger needs count"),
            ("count = 11\nstagger = \"1s\"", "s.toml:9: flow stagger: the last of the 11 flows would start at 10s, not before its stop 10s"),
            ("count = 2\nstagger = \"soon\"", "s.toml:9: flow stagger: bad duration"),
        ] {
            let e = err(&flow(extra));
            assert!(e.starts_with(want), "{extra}: {e}");
        }
    }

    #[test]
    fn aqm_keys_build_the_rfcs_disciplines() {
        let s = parse(Path::new("s.toml"), &with_link("")).unwrap();
        assert_eq!(s.link.aqm, lbe_link::Aqm::Fifo);
        assert_eq!(s.link.gilbert_elliott, None);
        assert!(!s.link.has_reverse());
        let s = parse(
            Path::new("s.toml"),
            &with_link(
                "aqm = \"fq_codel\"\ncodel_target = \"10ms\"\nfq_flows = 64\nfq_quantum = 300",
            ),
        )
        .unwrap();
        let lbe_link::Aqm::FqCodel(q) = s.link.aqm else {
            panic!("{:?}", s.link.aqm)
        };
        assert_eq!(
            (q.codel.target, q.codel.interval),
            (Duration::from_millis(10), Duration::from_millis(100))
        );
        assert_eq!((q.flows, q.quantum), (64, 300));
        let s = parse(
            Path::new("s.toml"),
            &with_link("aqm = \"pie\"\npie_alpha = 0.25\npie_tupdate = \"30ms\""),
        )
        .unwrap();
        let lbe_link::Aqm::Pie(p) = s.link.aqm else {
            panic!()
        };
        assert_eq!(
            (p.alpha, p.t_update, p.beta),
            (0.25, Duration::from_millis(30), 1.25)
        );
        assert_eq!(s.link.bottleneck(7).aqm, s.link.aqm);
        assert_eq!(s.link.bottleneck(7).seed, 7);
    }

    #[test]
    fn aqm_errors_name_the_file_and_line() {
        for (extra, want) in [
            ("aqm = \"red\"", "s.toml:5: link unknown aqm 'red': expected one of fifo, codel, fq_codel, pie"),
            ("codel_target = \"5ms\"", "s.toml:5: link codel_target applies to aqm codel or fq_codel only, not to aqm fifo"),
            ("aqm = \"codel\"\nfq_flows = 8", "s.toml:6: link fq_flows applies to aqm fq_codel only, not to aqm codel"),
            ("aqm = \"pie\"\npie_target = \"0ms\"", "s.toml:6: link bad pie_target '0ms': must be greater than zero"),
            ("aqm = \"fq_codel\"\nfq_flows = 0", "s.toml:6: link bad fq_flows '0': expected a whole number from 1 to 65536"),
            ("aqm = \"fq_codel\"\nfq_quantum = \"x\"", "s.toml:6: link bad fq_quantum 'x': expected a whole number from 1 to 1048576"),
            ("aqm_target = \"5ms\"", "s.toml:5: unknown field `aqm_target`"),
        ] {
            let e = err(&with_link(extra));
            assert!(e.starts_with(want), "{extra}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn gilbert_elliott_and_reverse_keys() {
        let s = parse(
            Path::new("s.toml"),
            &with_link("loss_model = \"ge\"\nge_p = 0.01\nge_r = 0.3\nge_h = 0.1"),
        )
        .unwrap();
        assert_eq!(
            s.link.gilbert_elliott,
            Some(lbe_link::GilbertElliott {
                p: 0.01,
                r: 0.3,
                h: 0.1,
                k: 1.0
            })
        );
        assert_eq!(s.link.bottleneck(1).gilbert_elliott, s.link.gilbert_elliott);
        let s = parse(
            Path::new("s.toml"),
            &with_link("reverse_rate = \"2mbit\"\nreverse_buffer = \"100ms\"\nreverse_loss = 0.01"),
        )
        .unwrap();
        assert_eq!(s.link.reverse_rate_bps, Some(2_000_000));
        assert_eq!(
            s.link.reverse_buffer,
            Some(lbe_link::Buffer::Time(Duration::from_millis(100)))
        );
        assert_eq!(s.link.reverse_loss, 0.01);
        assert!(s.link.has_reverse());
        for (extra, want) in [
            (
                "ge_p = 0.1",
                "s.toml:5: link ge_p needs loss_model = \"ge\"",
            ),
            (
                "loss_model = \"ge\"\nge_p = 1.5\nge_r = 0.1",
                "s.toml:6: link ge_p must be a probability from 0 to 1",
            ),
            (
                "loss_model = \"ge\"\nge_p = 0.1\nge_r = -0.1",
                "s.toml:7: link ge_r must be a probability from 0 to 1",
            ),
            (
                "loss_model = \"ge\"\nge_p = 0.1",
                "s.toml:5: loss_model = \"ge\" needs ge_p (P(Good->Bad)) and ge_r (P(Bad->Good))",
            ),
            (
                "loss = 0.01\nloss_model = \"ge\"\nge_p = 0.1\nge_r = 0.5",
                "s.toml:5: link loss and loss_model = \"ge\" exclude each other",
            ),
            (
                "loss_model = \"markov\"",
                "s.toml:5: link loss_model 'markov': expected \"bernoulli\"",
            ),
            (
                "reverse_buffer = \"1s\"",
                "s.toml:5: link reverse_buffer needs reverse_rate",
            ),
            (
                "reverse_rate = \"0mbit\"",
                "s.toml:5: link reverse_rate: bad rate '0mbit': must be above zero",
            ),
            (
                "reverse_loss = 1.0",
                "s.toml:5: link reverse_loss must be from 0 to below 1",
            ),
        ] {
            let e = err(&with_link(extra));
            assert!(e.starts_with(want), "{extra}: {e}");
        }
    }

    #[test]
    fn the_reverse_path_is_lbe_links_uplink() {
        let s = parse(
            Path::new("s.toml"),
            &with_link("reverse_rate = \"2mbit\"\nreverse_loss = 0.01"),
        )
        .unwrap();
        assert_eq!(
            s.link.reverse_path(7),
            lbe_link::LinkConfig {
                rate_bps: Some(2_000_000),
                // The link's buffer when reverse_buffer is not given.
                buffer: Some(lbe_link::Buffer::Time(Duration::from_millis(500))),
                loss: 0.01,
                seed: 7 ^ 0x9e37_79b9_7f4a_7c15,
                ..lbe_link::LinkConfig::default()
            }
        );
        let s = parse(Path::new("s.toml"), &with_link("")).unwrap();
        assert!(!s.link.has_reverse());
        assert_eq!(
            s.link.reverse_path(7),
            lbe_link::LinkConfig {
                seed: 7 ^ 0x9e37_79b9_7f4a_7c15,
                ..lbe_link::LinkConfig::default()
            }
        );
    }

    /// `with_link("")` with `extra` lines in its flow (line 9 onwards).
    fn with_flow(extra: &str) -> String {
        format!("{}{extra}\n", with_link(""))
    }

    #[test]
    fn direction_and_clock_keys() {
        let s = parse(Path::new("s.toml"), &with_flow("")).unwrap();
        assert_eq!(s.flows[0].direction, Direction::Download);
        assert_eq!(s.flows[0].client_clock, Clock::default());
        assert!(s.flows[0].server_clock.is_exact());
        let s = parse(
            Path::new("s.toml"),
            &with_flow(
                "direction = \"upload\"\nclient_clock_offset = \"2s\"\nclient_clock_skew_ppm = -100\nserver_clock_skew_ppm = 100.5",
            ),
        )
        .unwrap();
        let f = &s.flows[0];
        assert_eq!(f.direction, Direction::Upload);
        assert_eq!(
            f.client_clock,
            Clock {
                offset: Duration::from_secs(2),
                skew_ppm: -100.0
            }
        );
        assert_eq!(
            f.server_clock,
            Clock {
                offset: Duration::ZERO,
                skew_ppm: 100.5
            }
        );
        for (extra, want) in [
            (
                "direction = \"sideways\"",
                "s.toml:9: flow direction: 'sideways' (allowed: download, upload)",
            ),
            (
                "direction = \"upload\"\nreceiver_lbe = true",
                "s.toml:10: flow receiver_lbe: a receiver-driven flow is a download, not direction = \"upload\"",
            ),
            (
                "server_clock_skew_ppm = 1000.5",
                "s.toml:9: flow server_clock_skew_ppm = 1000.5: must be from -1000 to 1000",
            ),
            (
                "client_clock_skew_ppm = nan",
                "s.toml:9: flow client_clock_skew_ppm = NaN: must be from -1000 to 1000",
            ),
            (
                "client_clock_offset = \"-1s\"",
                "s.toml:9: flow client_clock_offset: bad duration '-1s'",
            ),
        ] {
            let e = err(&with_flow(extra));
            assert!(e.starts_with(want), "{extra}: {e}");
        }
        assert_eq!(
            err(&h3("direction = \"upload\"")),
            "s.toml:12: flow direction: only quic-bulk flows take 'direction' (an h3 flow's sender is its server)"
        );
        assert_eq!(
            err(&h3("server_clock_offset = \"1s\"")),
            "s.toml:12: flow server_clock_offset: only quic-bulk flows take 'server_clock_offset' (an h3 flow's sender is its server)"
        );
        let ping = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n[[flow]]\nkind = \"ping\"\nstop = \"10s\"\ndirection = \"upload\"\n";
        let e = err(ping);
        assert!(
            e.starts_with("s.toml:8: flow direction: a ping flow does not take 'direction'"),
            "{e}"
        );
    }

    #[test]
    fn parses_the_design_example() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert_eq!(s.link.rate_bps, 20_000_000);
        assert_eq!(s.link.buffer_ms(), 500.0);
        assert_eq!(
            s.window,
            Some((Duration::from_secs(10), Duration::from_secs(40)))
        );
        assert_eq!(s.flows.len(), 2);
        assert_eq!(s.flows[0].name, "flow1");
        assert_eq!(s.flows[0].end, FlowEnd::Stop(Duration::from_secs(40)));
        assert_eq!(s.flows[1].name, "fg");
        assert_eq!(s.flows[1].end, FlowEnd::Bytes(10_000_000));
        assert_eq!(s.flows[1].rtt, Duration::from_millis(100));
        assert_eq!(
            netem_paths(&s.link, &s.flows),
            vec![
                (Upstream::QuicBulk, Duration::from_millis(50)),
                (Upstream::QuicBulk, Duration::from_millis(100))
            ]
        );
        assert!(s.flows.iter().all(|f| f.kind == FlowKind::QuicBulk));
    }

    #[test]
    fn pacing_is_on_unless_the_flow_or_the_link_says_otherwise() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert!(s.flows.iter().all(|f| f.pacing));
        let one_flow = GOOD.replace("name = \"fg\"", "name = \"fg\"\npacing = false");
        let s = parse(Path::new("s.toml"), &one_flow).unwrap();
        assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (true, false));
        let link_wide = GOOD.replace("buffer = \"500ms\"", "buffer = \"500ms\"\npacing = false");
        let s = parse(Path::new("s.toml"), &link_wide).unwrap();
        assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (false, false));
        let flow_overrides = link_wide.replace("name = \"fg\"", "name = \"fg\"\npacing = true");
        let s = parse(Path::new("s.toml"), &flow_overrides).unwrap();
        assert_eq!((s.flows[0].pacing, s.flows[1].pacing), (false, true));
        assert!(
            err(&GOOD.replace("name = \"fg\"", "name = \"fg\"\npacing = \"off\""))
                .starts_with("s.toml:19: invalid type: string \"off\", expected a boolean")
        );
    }

    #[test]
    fn cross_traffic_is_a_rate_below_the_link_rate() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert_eq!(s.link.cross_traffic_bps, None);
        let with = |v: &str| {
            GOOD.replace(
                "buffer = \"500ms\"",
                &format!("buffer = \"500ms\"\ncross_traffic = \"{v}\""),
            )
        };
        let s = parse(Path::new("s.toml"), &with("1mbit")).unwrap();
        assert_eq!(s.link.cross_traffic_bps, Some(1_000_000));
        assert_eq!(
            err(&with("20mbit")),
            "s.toml:6: link cross_traffic must be above zero and below the link rate"
        );
        assert!(
            err(&with("1 mbit/s")).starts_with("s.toml:6: link cross_traffic: "),
            "{}",
            err(&with("1 mbit/s"))
        );
    }

    #[test]
    fn a_real_run_gives_up_grace_past_the_stop_the_start_or_a_deadline() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        // stop = 40s: 40 + 120.
        assert_eq!(s.flows[0].give_up_at(), Duration::from_secs(160));
        // bytes from 10 s, no deadline: 10 + 120.
        assert_eq!(s.flows[1].give_up_at(), Duration::from_secs(130));
        let with = |deadline: &str| {
            let text = GOOD.replace("cc = \"cubic\"", "cc = \"cdg\"").replace(
                "bytes = \"10MB\"",
                &format!("bytes = \"10MB\"\ndeadline = \"{deadline}\""),
            );
            parse(Path::new("s.toml"), &text).unwrap().flows[1].give_up_at()
        };
        // A loose deadline may be used in full: 10 + 400 + 120.
        assert_eq!(with("400s"), Duration::from_secs(530));
        // An impossible one runs on at a fair share: 10 + 120 + 120.
        assert_eq!(with("20s"), Duration::from_secs(250));
    }

    #[test]
    fn a_deadline_needs_bytes_and_a_steerable_controller() {
        let s = parse(Path::new("s.toml"), GOOD).unwrap();
        assert_eq!(s.flows[1].deadline, None);
        let good = GOOD
            .replace("cc = \"cubic\"", "cc = \"cdg\"")
            .replace("bytes = \"10MB\"", "bytes = \"10MB\"\ndeadline = \"2m\"");
        let s = parse(Path::new("s.toml"), &good).unwrap();
        assert_eq!(s.flows[1].deadline, Some(Duration::from_secs(120)));
        assert_eq!(s.flows[1].cc.as_str(), "cdg");
        assert_eq!(s.flows[1].sender_cc().as_str(), "cdg:deadline=120s");
        assert_eq!(
            err(&GOOD.replace("bytes = \"10MB\"", "bytes = \"10MB\"\ndeadline = \"2m\"")),
            "s.toml:17: flow deadline: 'cubic' is quiche's own controller: a deadline steers only cdg and ledbatpp"
        );
        assert_eq!(
            err(&GOOD.replace(
                "stop = \"40s\"\n[[flow]]",
                "stop = \"40s\"\ndeadline = \"9s\"\n[[flow]]"
            )),
            "s.toml:13: a flow's deadline needs 'bytes' (not 'stop')"
        );
        assert_eq!(
            err(&good.replace(
                "deadline = \"2m\"",
                "deadline = \"2m\"\ndirection = \"upload\""
            )),
            "s.toml:17: a flow's deadline needs a download (not direction = \"upload\")"
        );
        assert_eq!(
            err(&good.replace("\"2m\"", "\"2\"")),
            "s.toml:17: flow deadline: bad duration '2': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
        );
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            err(&GOOD.replace("rate = \"20mbit\"", "rate = \"20mbit\"\nspeed = 3")),
            "s.toml:4: unknown field `speed`, expected one of `rate`, `rtt`, `buffer`, `loss`, `cross_traffic`, `pacing`, `aqm`, `codel_target`, `codel_interval`, `fq_flows`, `fq_quantum`, `pie_target`, `pie_tupdate`, `pie_alpha`, `pie_beta`, `pie_max_burst`, `loss_model`, `ge_p`, `ge_r`, `ge_h`, `ge_k`, `reverse_rate`, `reverse_buffer`, `reverse_loss`"
        );
        assert_eq!(
            err(&GOOD.replace("\"50ms\"", "\"50\"")),
            "s.toml:4: link rtt: bad duration '50': missing unit; expected a number with a unit ns, us, ms, s, m or h (e.g. 30s)"
        );
        assert!(err("[[flow]]\ncc = \"cubic\"\nstop = \"1s\"\n").contains("missing field `link`"));
        assert_eq!(
            err(&GOOD.replace("cc = \"cubic\"", "cc = \"vegas\"")),
            "s.toml:14: flow cc: unknown congestion controller 'vegas' (allowed: cubic, reno, bbr2, ledbatpp, ledbat, cdg, fixed)"
        );
        assert_eq!(
            err(&GOOD.replace("stop = \"40s\"\n[[flow]]", "stop = \"0s\"\n[[flow]]")),
            "s.toml:12: flow stop must be after its start"
        );
        assert_eq!(
            err(&GOOD.replace("bytes = \"10MB\"", "bytes = \"10MB\"\nstop = \"20s\"")),
            "s.toml:16: a flow has either 'stop' or 'bytes', not both"
        );
        assert_eq!(
            err(&GOOD.replace("to = \"40s\"", "to = \"5s\"")),
            "s.toml:8: analysis 'to' must be after 'from'"
        );
        assert_eq!(
            err(&GOOD.replace("name = \"fg\"", "name = \"flow1\"")),
            "s.toml:18: flow name 'flow1' is used twice"
        );
        assert_eq!(
            err(&format!("{GOOD}[ports]\nserver = 5001\nnetem = 5000\n")),
            "s.toml:20: ports overlap: the server's 5001 is among lbe-netem's 5000..5001 (one per base RTT of quic-bulk flows, one per h3 or workload flow)"
        );
        assert_eq!(
            err("[link]\nrate = \"20mbit\"\nrtt = \"5ms\"\nbuffer = \"0.1ms\"\n"),
            "s.toml:4: link buffer must hold at least one packet (1500 bytes)"
        );
        assert_eq!(
            err("[link]\nrate = \"20mbit\"\nrtt = \"5ms\"\nbuffer = \"10ms\"\n"),
            "s.toml:1: the scenario has no [[flow]]"
        );
        assert!(err("[link\n").starts_with("s.toml:1: "));
    }

    const WORKLOADS: &str = r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[[flow]]
cc = "ledbatpp"
stop = "30s"
[[flow]]
kind = "web"
arrivals = "2/s"
sizes = ["50kB", "500kB", "2MB"]
start = "2s"
stop = "30s"
[[flow]]
kind = "ping"
stop = "30s"
rtt = "20ms"
[[flow]]
kind = "video"
stop = "30s"
[[flow]]
kind = "cbr"
rate = "2mbit"
on = "5s"
off = "5s"
stop = "30s"
"#;

    #[test]
    fn workload_kinds_and_their_defaults() {
        let s = parse(Path::new("s.toml"), WORKLOADS).unwrap();
        let kinds: Vec<&str> = s.flows.iter().map(|f| f.kind.name()).collect();
        assert_eq!(kinds, ["quic-bulk", "web", "ping", "video", "cbr"]);
        assert_eq!(
            s.flows[1].kind,
            FlowKind::Web(WebFlow {
                arrivals_per_s: 2.0,
                sizes_bytes: vec![50_000, 500_000, 2_000_000],
            })
        );
        assert_eq!(s.flows[1].cc.as_str(), "cubic");
        assert_eq!(s.flows[1].start, Duration::from_secs(2));
        assert_eq!(s.flows[1].end, FlowEnd::Stop(Duration::from_secs(30)));
        assert_eq!(
            s.flows[2].kind,
            FlowKind::Ping(PingFlow {
                interval: Duration::from_millis(100)
            })
        );
        let video = VideoFlow {
            playout: lbe_workload::playout::PlayoutParams {
                chunk: Duration::from_secs(2),
                startup: Duration::from_secs(2),
                buffer: Duration::from_secs(10),
            },
            bitrate_bps: 5_000_000,
        };
        assert_eq!(s.flows[3].kind, FlowKind::Video(video));
        // 5 Mbit/s × 2 s.
        assert_eq!(video.chunk_bytes(), 1_250_000);
        assert_eq!(
            s.flows[4].kind,
            FlowKind::Cbr(CbrFlow {
                rate_bps: 2_000_000,
                on_off: Some((Duration::from_secs(5), Duration::from_secs(5))),
            })
        );
        // A route per workload flow to its server, at its RTT.
        let ms = Duration::from_millis;
        assert_eq!(
            netem_paths(&s.link, &s.flows),
            vec![
                (Upstream::QuicBulk, ms(50)),
                (Upstream::Workload(1), ms(50)),
                (Upstream::Workload(2), ms(20)),
                (Upstream::Workload(3), ms(50)),
                (Upstream::Workload(4), ms(50)),
            ]
        );
        assert_eq!(netem_path(&s.flows, 2), (Upstream::Workload(2), ms(20)));
        assert_eq!(netem_path(&s.flows, 0), (Upstream::QuicBulk, ms(50)));
        let alone = s.without_bulk().unwrap();
        let names: Vec<&str> = alone.flows.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["flow2", "flow3", "flow4", "flow5"]);
        assert_eq!(alone.link, s.link);
        assert!(alone.without_bulk().is_none(), "nothing to remove");
    }

    #[test]
    fn workload_settings_parse_with_their_units() {
        let text = WORKLOADS
            .replace(
                "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
                "size = \"1MB\"\ncc = \"reno\"",
            )
            .replace("kind = \"ping\"", "kind = \"ping\"\ninterval = \"20ms\"")
            .replace(
                "kind = \"video\"",
                "kind = \"video\"\nchunk = \"4s\"\nbitrate = \"2.5mbit\"\nstartup = \"4s\"\nbuffer = \"30s\"",
            )
            .replace("on = \"5s\"\noff = \"5s\"\n", "");
        let s = parse(Path::new("s.toml"), &text).unwrap();
        assert_eq!(
            s.flows[1].kind,
            FlowKind::Web(WebFlow {
                arrivals_per_s: 2.0,
                sizes_bytes: vec![1_000_000]
            })
        );
        assert_eq!(s.flows[1].cc.as_str(), "reno");
        assert_eq!(
            s.flows[2].kind,
            FlowKind::Ping(PingFlow {
                interval: Duration::from_millis(20)
            })
        );
        let FlowKind::Video(video) = s.flows[3].kind else {
            panic!("not video")
        };
        assert_eq!(
            (
                video.playout.chunk,
                video.playout.startup,
                video.playout.buffer
            ),
            (
                Duration::from_secs(4),
                Duration::from_secs(4),
                Duration::from_secs(30)
            )
        );
        assert_eq!(
            (video.bitrate_bps, video.chunk_bytes()),
            (2_500_000, 1_250_000)
        );
        assert_eq!(
            s.flows[4].kind,
            FlowKind::Cbr(CbrFlow {
                rate_bps: 2_000_000,
                on_off: None
            })
        );
    }

    #[test]
    fn workload_errors_name_the_line_and_what_is_allowed() {
        for (from, to, expected) in [
            (
                "arrivals = \"2/s\"",
                "arrivals = \"0/s\"",
                "s.toml:11: flow arrivals: arrival rate '0/s' must be above zero",
            ),
            (
                "arrivals = \"2/s\"",
                "arrivals = \"2\"",
                "s.toml:11: flow arrivals: bad arrival rate '2': expected arrivals per unit of time, like 2/s, 30/min or 100/h",
            ),
            (
                "arrivals = \"2/s\"\n",
                "",
                "s.toml:9: a web flow needs 'arrivals' (a mean rate, like \"2/s\")",
            ),
            (
                "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
                "sizes = [\"50kB\", \"0B\"]",
                "s.toml:12: flow sizes must be above zero",
            ),
            (
                "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
                "sizes = []",
                "s.toml:12: flow sizes must list at least one size",
            ),
            (
                "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
                "size = \"0kB\"",
                "s.toml:12: flow size must be above zero",
            ),
            (
                "sizes = [\"50kB\", \"500kB\", \"2MB\"]",
                "size = \"1MB\"\nsizes = [\"1MB\"]",
                "s.toml:13: a web flow has either 'size' or 'sizes', not both",
            ),
            (
                "sizes = [\"50kB\", \"500kB\", \"2MB\"]\n",
                "",
                "s.toml:9: a web flow needs 'size' (or 'sizes': the bytes of each download)",
            ),
            (
                "start = \"2s\"\nstop = \"30s\"",
                "start = \"2s\"\nbytes = \"1MB\"",
                "s.toml:14: flow bytes: a web flow does not take 'bytes' (it takes kind, name, start, stop, rtt, arrivals, size, sizes, cc)",
            ),
            (
                "start = \"2s\"\nstop = \"30s\"",
                "start = \"2s\"",
                "s.toml:9: a web flow needs 'stop' (when it ends)",
            ),
            (
                "kind = \"ping\"",
                "kind = \"ping\"\ninterval = \"0ms\"",
                "s.toml:17: flow interval must be above zero",
            ),
            (
                "kind = \"ping\"",
                "kind = \"ping\"\ncc = \"cubic\"",
                "s.toml:17: flow cc: a ping flow does not take 'cc' (it takes kind, name, start, stop, rtt, interval)",
            ),
            (
                "kind = \"ping\"",
                "kind = \"ping\"\nrate = \"1mbit\"",
                "s.toml:17: flow rate: a ping flow does not take 'rate' (it takes kind, name, start, stop, rtt, interval)",
            ),
            (
                "kind = \"video\"",
                "kind = \"video\"\nstartup = \"12s\"",
                "s.toml:21: flow startup must not exceed its buffer (play would never start: no chunk is requested once the buffer holds 'buffer')",
            ),
            (
                "kind = \"video\"",
                "kind = \"video\"\nbitrate = \"0mbit\"",
                "s.toml:21: flow bitrate: bad rate '0mbit': must be above zero",
            ),
            (
                "rate = \"2mbit\"",
                "rate = \"-2mbit\"",
                "s.toml:24: flow rate: bad rate '-2mbit': expected a number with a unit bit, kbit, mbit, gbit or tbit (e.g. 20mbit)",
            ),
            (
                "rate = \"2mbit\"\n",
                "",
                "s.toml:22: a cbr flow needs 'rate' (its sending rate, like \"2mbit\")",
            ),
            (
                "off = \"5s\"\n",
                "",
                "s.toml:25: a cbr flow takes 'on' and 'off' together (on for 'on', then off for 'off', in turn)",
            ),
            (
                "kind = \"cbr\"",
                "kind = \"udp\"",
                "s.toml:23: flow kind: 'udp' is not a flow kind (allowed: quic-bulk, h3, web, ping, video, cbr)",
            ),
            (
                "cc = \"ledbatpp\"",
                "cc = \"ledbatpp\"\ninterval = \"1s\"",
                "s.toml:8: flow interval: only ping flows (kind = \"ping\") take 'interval'",
            ),
        ] {
            assert_eq!(text_count(WORKLOADS, from), 1, "{from}");
            assert_eq!(err(&WORKLOADS.replacen(from, to, 1)), expected, "{to}");
        }
    }

    fn text_count(text: &str, part: &str) -> usize {
        text.matches(part).count()
    }

    const H3: &str = r#"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[[flow]]
cc = "cubic"
stop = "40s"
[[flow]]
kind = "h3"
bytes = "10MB"
"#;

    /// `H3` with `extra` lines added to its h3 flow (line 12 onwards).
    fn h3(extra: &str) -> String {
        format!("{H3}{extra}")
    }

    fn h3_flow(text: &str) -> (FlowKind, String) {
        let s = parse(Path::new("s.toml"), text).unwrap();
        (s.flows[1].kind.clone(), s.flows[1].cc.to_string())
    }

    #[test]
    fn h3_flows_default_to_h3_serve_without_background() {
        let plain = H3Flow {
            server: H3Server::H3Serve,
            background: false,
            lbe: None,
        };
        assert_eq!(h3_flow(H3), (FlowKind::H3(plain), "cubic".to_string()));
        let s = parse(Path::new("s.toml"), H3).unwrap();
        assert_eq!(s.flows[0].kind, FlowKind::QuicBulk);
        assert_eq!(s.flows[1].end, FlowEnd::Bytes(10_000_000));
        // One listening address for the quic-bulk flows, a route for the
        // h3 flow.
        assert_eq!(
            netem_paths(&s.link, &s.flows),
            vec![
                (Upstream::QuicBulk, Duration::from_millis(50)),
                (Upstream::H3(1), Duration::from_millis(50))
            ]
        );
    }

    #[test]
    fn an_h3_flows_controller_is_its_servers() {
        let with = |server: &str, background: bool, lbe: Option<Lbe>| H3Flow {
            server: match server {
                "aioquic" => H3Server::Aioquic,
                "quiche-stock" => H3Server::QuicheStock,
                _ => H3Server::H3Serve,
            },
            background,
            lbe,
        };
        for (extra, flow, cc) in [
            (
                "background = true",
                with("h3-serve", true, None),
                "ledbatpp",
            ),
            (
                "background = true\nlbe = \"sender\"\ncc = \"cdg:g=3\"",
                with("h3-serve", true, Some(Lbe::Sender)),
                "cdg:g=3",
            ),
            (
                "background = true\nlbe = \"both\"",
                with("h3-serve", true, Some(Lbe::Both)),
                "ledbatpp",
            ),
            (
                "server = \"quiche-stock\"\nbackground = true",
                with("quiche-stock", true, None),
                "cubic",
            ),
            (
                "server = \"aioquic\"\nbackground = true\nlbe = \"receiver\"",
                with("aioquic", true, Some(Lbe::Receiver)),
                "reno",
            ),
            ("server = \"aioquic\"", with("aioquic", false, None), "reno"),
        ] {
            assert_eq!(
                h3_flow(&h3(extra)),
                (FlowKind::H3(flow), cc.to_string()),
                "{extra}"
            );
        }
    }

    #[test]
    fn h3_keys_are_checked_on_one_line() {
        for (text, expected) in [
            (
                h3("kind = \"h2\""),
                "s.toml:12: duplicate key `kind` in table `flow`",
            ),
            (
                H3.replace("kind = \"h3\"", "kind = \"h2\""),
                "s.toml:10: flow kind: 'h2' is not a flow kind (allowed: quic-bulk, h3, web, ping, video, cbr)",
            ),
            (
                h3("server = \"nginx\""),
                "s.toml:12: flow server: 'nginx' is not an h3 server (allowed: h3-serve, quiche-stock, aioquic)",
            ),
            (
                h3("background = true\nlbe = \"client\""),
                "s.toml:13: flow lbe: 'client' is not an lbe mode (allowed: receiver, sender, both)",
            ),
            (
                h3("lbe = \"receiver\""),
                "s.toml:12: flow lbe: needs background = true (a normal download runs no LBE)",
            ),
            (
                h3("background = false\nlbe = \"receiver\""),
                "s.toml:13: flow lbe: needs background = true (a normal download runs no LBE)",
            ),
            (
                h3("server = \"aioquic\"\nbackground = true\nlbe = \"sender\""),
                "s.toml:14: flow lbe: 'sender' needs server = \"h3-serve\" ('aioquic' does no LBE of its own; with it lbe = \"receiver\" only)",
            ),
            (
                h3("server = \"quiche-stock\"\nbackground = true\nlbe = \"both\""),
                "s.toml:14: flow lbe: 'both' needs server = \"h3-serve\" ('quiche-stock' does no LBE of its own; with it lbe = \"receiver\" only)",
            ),
            (
                h3("cc = \"ledbatpp\""),
                "s.toml:12: flow cc: an h3 flow's controller is its server's; cc (h3-serve's --background-cc) needs server = \"h3-serve\" and background = true",
            ),
            (
                h3("server = \"aioquic\"\nbackground = true\ncc = \"ledbatpp\""),
                "s.toml:14: flow cc: an h3 flow's controller is its server's; cc (h3-serve's --background-cc) needs server = \"h3-serve\" and background = true",
            ),
            (
                h3("background = true\nlbe = \"receiver\""),
                "s.toml:13: flow lbe: 'receiver' with server = \"h3-serve\" is both (h3-serve honours the priority u=7 that --background sends); for receiver-only use server = \"quiche-stock\" or \"aioquic\"",
            ),
            (
                h3("background = true\ncc = \"bbr2\""),
                "s.toml:13: flow cc: --background-cc 'bbr2': quiche cannot switch a live connection to its own 'bbr2'; use one of the plug-ins (ledbatpp, ledbat, cdg, fixed) or plain cubic",
            ),
            (
                h3("pacing = false"),
                "s.toml:12: flow pacing: only quic-bulk flows take 'pacing' (an h3 flow's sender is its server)",
            ),
            (
                h3("deadline = \"60s\""),
                "s.toml:12: flow deadline: only quic-bulk flows take 'deadline' (an h3 flow's sender is its server)",
            ),
            (
                h3("receiver_lbe = true"),
                "s.toml:12: flow receiver_lbe: only quic-bulk flows take 'receiver_lbe' (an h3 flow sets lbe = \"receiver\")",
            ),
            (
                h3("background = \"yes\""),
                "s.toml:12: invalid type: string \"yes\", expected a boolean",
            ),
            (
                H3.replace("cc = \"cubic\"\n", "cc = \"cubic\"\nserver = \"aioquic\"\n"),
                "s.toml:8: flow server: only h3 flows (kind = \"h3\") take 'server'",
            ),
            (
                H3.replace("cc = \"cubic\"\n", "cc = \"cubic\"\nbackground = true\n"),
                "s.toml:8: flow background: only h3 flows (kind = \"h3\") take 'background'",
            ),
            (
                H3.replace("cc = \"cubic\"\n", "cc = \"cubic\"\nkind = \"quic-bulk\"\nlbe = \"both\"\n"),
                "s.toml:9: flow lbe: only h3 flows (kind = \"h3\") take 'lbe'",
            ),
            (
                H3.replace("cc = \"cubic\"\n", ""),
                "s.toml:6: a quic-bulk flow needs 'cc'",
            ),
        ] {
            assert_eq!(err(&text), expected, "{text}");
        }
    }
}
