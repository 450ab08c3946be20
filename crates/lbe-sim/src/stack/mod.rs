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
//!
//! The files: `setup.rs` sets a run up and `sim.rs` runs its event loop
//! over the events (`events.rs`); `connection.rs` is one connection's
//! state, `endpoint.rs` an endpoint's loop around quiche, `apps.rs` the
//! applications it runs (quic-bulk's sessions, `bulk.rs`; HTTP/3's layers,
//! `h3.rs`), `path.rs` the links between the ends, `workloads.rs` the
//! foreground workloads' events; `clock.rs` the endpoints' clocks,
//! `quiche_config.rs` each end's quiche configuration, `analysis.rs` the
//! sender's qlog; `finish.rs` what a run gives back.

mod analysis;
mod apps;
mod bulk;
mod clock;
mod connection;
mod endpoint;
mod events;
mod finish;
mod h3;
#[cfg(test)]
mod link_change_tests;
mod path;
mod quiche_config;
mod setup;
mod sim;
mod workloads;

/// How early a paced datagram may leave, as in our apps.
pub use lbe_endpoint::RELEASE_SLACK;

pub use setup::run;
