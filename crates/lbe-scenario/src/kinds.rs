//! What runs a flow: the flow kinds (quic-bulk, h3, and the foreground
//! workloads web, ping, video, cbr) with each kind's settings, and an h3
//! flow's server and `lbe` mode.

use std::time::Duration;

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

    pub(crate) fn parse(s: &str) -> Option<Self> {
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

/// The `lbe` value named `s`.
pub(crate) fn parse_lbe(s: &str) -> Option<Lbe> {
    [Lbe::Receiver, Lbe::Sender, Lbe::Both]
        .into_iter()
        .find(|v| lbe_name(*v) == s)
}
