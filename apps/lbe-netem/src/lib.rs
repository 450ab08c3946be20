//! `lbe-netem`: a userspace UDP bottleneck emulator, for machines without the
//! `netem` qdisc.
//!
//! It relays datagrams between clients (on one or more listening addresses)
//! and a server (one per listening address with routes, `--route`), giving
//! each client its own upstream socket, like a NAT, so the server sees one
//! address per client. Each direction adds a one-way
//! propagation delay of rtt/2; the server→client direction also goes
//! through one drop-tail FIFO shared by every flow, served at a fixed rate.
//!
//! - the sans-IO model of one direction (loss, drop-tail FIFO at a rate,
//!   delay line, cross traffic) is `lbe-link`'s ([`lbe_link::Link`]), the
//!   one the simulator (`lbe-sim`) drives too; its types are re-exported
//!   here because [`Config`] and [`Summary`] are made of them.
//! - [`relay`]: sockets and the timing loop: [`Netem::spawn`] runs the
//!   emulator on its own thread and returns a [`NetemHandle`].
//! - [`units`]: parsers for the command line: rates (`20mbit`), durations
//!   (`50ms`), buffers (`500ms`, `375kB`), paths and routes.
//!
//! ```no_run
//! use std::time::Duration;
//! use lbe_netem::{Buffer, Config, Netem};
//!
//! let config = Config::new(
//!     "127.0.0.1:0".parse().unwrap(),    // listen (0: any free port)
//!     "127.0.0.1:4433".parse().unwrap(), // upstream server
//!     20_000_000,                        // 20 Mbit/s
//!     Duration::from_millis(50),         // base RTT
//!     Buffer::Time(Duration::from_millis(500)),
//! );
//! let netem = Netem::spawn(config).unwrap();
//! let clients_connect_to = netem.listen_addr();
//! // ... run the endpoints ...
//! let summary = netem.stop().unwrap();
//! println!("{clients_connect_to}: {} drops", summary.down.drops_buffer);
//! ```

pub mod relay;
pub mod rx;
pub mod timer;
pub mod units;

pub use lbe_link::{
    CrossTraffic, Delivery, IntervalStats, Link, LinkConfig, Totals, Verdict,
    CROSS_TRAFFIC_PACKET_BYTES, IPV4_UDP_OVERHEAD,
};
pub use relay::{
    Config, CrossTotals, FlowDropTotals, Lateness, Netem, NetemHandle, Route, Stopper, Summary,
};
pub use units::{
    parse_buffer, parse_duration, parse_loss, parse_path, parse_rate, parse_route, Buffer,
    PathSpec, RouteSpec,
};
