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
//! steady_queue = "20ms" # optional: each bulk flow's summary gets
//!                       # steady_s, the seconds from its start to the end
//!                       # of the first 1 s over which its mean RTT above
//!                       # base is at least this (windows ending 2 s after
//!                       # its start and every 0.1 s on), over the whole
//!                       # run, not the window; absent when never reached
//! refill_after = "28min" # optional: the summary gets refill_s, the
//!                       # seconds from this time to the end of the first
//!                       # 250 ms bin (bins from t = 0, its centre later)
//!                       # in which the bulk flows still running (each
//!                       # one's stop later than this, or of bytes)
//!                       # together deliver at least 0.9 of the most
//!                       # goodput the link carries; over the whole run,
//!                       # not the window; absent when never
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

mod kinds;
mod model;
mod netem;
mod parse;
mod raw;

pub use kinds::{
    lbe_name, CbrFlow, FlowKind, H3Flow, H3Server, Lbe, PingFlow, VideoFlow, WebFlow, KIND_NAMES,
    LBE_NAMES, PING_INTERVAL,
};
pub use model::{
    Change, Clock, Direction, Flow, FlowEnd, Link, Ports, Scenario, GRACE, H3_STOP_FILE_MARGIN,
};
pub use netem::{netem_path, netem_paths, Upstream};
pub use parse::{load, parse, toml_error, toml_message};
