//! The I/O layer: sockets, the flow table and the timing loop around the two
//! [`Link`](lbe_link::Link) models (server→client: the bottleneck; client→server: the
//! reverse path).
//!
//! One thread does everything, so nothing is shared or locked on the data
//! path: a `mio` poll waits on the listening sockets, one connected upstream
//! socket per flow, a `timerfd` armed for the next delivery (see
//! [`crate::timer`]) and a waker for [`Stopper::stop`]. Each datagram is
//! stamped with `Instant::now()` as it is read and handed to the model; the
//! model says when it is due and the loop sends it then.
//!
//! - this module: the emulator's [`Config`] (and its [`Route`]s), [`Netem::spawn`] (binds every
//!   socket, then starts the thread) and the [`NetemHandle`] to stop it;
//! - `event_loop`: the thread's loop, the flow table and the stats lines;
//! - [`report`]: what it reports, the [`Summary`] and the stats lines;
//! - `os`: socket buffer sizes and the thread's CPU time.

mod event_loop;
mod os;
pub mod report;

use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{SocketAddr, UdpSocket as StdUdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mio::net::UdpSocket;
use mio::unix::SourceFd;
use mio::{Interest, Poll, Waker};

use crate::rx;
use crate::timer::TimerFd;
use crate::units::{PathSpec, RouteSpec};
use event_loop::{Listener, Relay, Source, TIMER, WAKER};
use lbe_link::Buffer;
use lbe_link::LinkConfig;
use os::set_buffers;
pub use report::{CrossTotals, FlowDropTotals, Lateness, Summary};

/// Everything the emulator needs to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where clients send (port 0 picks a free port; see
    /// [`NetemHandle::listen_addrs`]).
    pub listen: SocketAddr,
    /// The server every flow is relayed to.
    pub upstream: SocketAddr,
    /// Base RTT of flows through `listen`: rtt/2 is added each way.
    pub rtt: Duration,
    /// Extra listening addresses whose flows get their own base RTT, all
    /// through the same bottleneck, relayed to `upstream`.
    pub paths: Vec<PathSpec>,
    /// Extra listening addresses relayed to upstreams of their own, all
    /// through the same bottleneck (one FIFO, one rate).
    pub routes: Vec<Route>,
    /// The server→client bottleneck: rate, buffer, loss, seed, overhead.
    pub down: LinkConfig,
    /// The client→server direction: by default no rate limit and no loss.
    pub up: LinkConfig,
    /// Where to write the per-interval JSON lines, if anywhere.
    pub stats: Option<PathBuf>,
    /// Length of one stats interval (1 s).
    pub stats_interval: Duration,
    /// Busy-wait this long before each deadline instead of sleeping (0 by
    /// default: the timerfd alone is accurate enough, see the README).
    pub spin: Duration,
    /// Run the I/O thread under `SCHED_FIFO` (priority 10) if permitted
    /// (root or `CAP_SYS_NICE`); on by default. Without the permission the
    /// thread runs at normal priority and says so at `info` level.
    pub realtime: bool,
    /// Forget a flow (and close its upstream socket) after this long without
    /// traffic in either direction; `None` keeps every flow until the end.
    pub idle_timeout: Option<Duration>,
    /// Rebind every flow this long after the start, as a NAT that loses
    /// its mappings does: each flow's upstream socket is replaced by a new
    /// one (a new source port), and the old one is closed, so the server
    /// sees the client from a new address and what it sends to the old one
    /// is lost, including what the bottleneck still holds (a home router
    /// behind its uplink's queue drops it on arrival). The client's
    /// datagrams still queued leave from the new port. `None` never
    /// rebinds.
    pub rebind_at: Option<Duration>,
    /// `SO_RCVBUF`/`SO_SNDBUF` asked for every socket, in bytes.
    pub socket_buffer: usize,
    /// Take each datagram's arrival time from the kernel's receive
    /// timestamp (`SO_TIMESTAMPNS`) rather than from when it was read.
    pub rx_timestamps: bool,
}

impl Config {
    /// A bottleneck of `rate_bps` with `buffer`, base RTT `rtt`, no loss, no
    /// stats, no reverse rate limit.
    pub fn new(
        listen: SocketAddr,
        upstream: SocketAddr,
        rate_bps: u64,
        rtt: Duration,
        buffer: Buffer,
    ) -> Self {
        Self {
            listen,
            upstream,
            rtt,
            paths: Vec::new(),
            routes: Vec::new(),
            down: LinkConfig {
                rate_bps: Some(rate_bps),
                buffer: Some(buffer),
                ..LinkConfig::default()
            },
            up: LinkConfig {
                seed: 0x9e37_79b9_7f4a_7c15,
                ..LinkConfig::default()
            },
            stats: None,
            stats_interval: Duration::from_secs(1),
            spin: Duration::ZERO,
            realtime: true,
            idle_timeout: None,
            rebind_at: None,
            socket_buffer: 4 << 20,
            rx_timestamps: true,
        }
    }
}

/// A listening address relayed to its own server (`--route`), with the
/// base RTT of its flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// Where the route's clients connect (port 0 picks a free port).
    pub listen: SocketAddr,
    /// The server its flows are relayed to.
    pub upstream: SocketAddr,
    /// Base RTT of its flows: rtt/2 is added each way.
    pub rtt: Duration,
}

impl Config {
    /// Adds the command line's `--path`s and `--route`s: a `--path` whose
    /// address is a route's listening address (port not 0) sets that
    /// route's RTT; a route without one gets `rtt`; every other `--path` is
    /// an extra address relayed to `upstream`. An address given twice (or
    /// the same as `listen`) is an error, on one line.
    pub fn add_paths_and_routes(
        &mut self,
        paths: &[PathSpec],
        routes: &[RouteSpec],
    ) -> Result<(), String> {
        // Port 0 picks a free port, so only fixed addresses can clash.
        let fixed = |a: &SocketAddr| a.port() != 0;
        let mut listening = vec![self.listen];
        for r in routes {
            if fixed(&r.listen) && listening.contains(&r.listen) {
                return Err(format!(
                    "--route {}={}: {} is listened on already (by --listen or another --route)",
                    r.listen, r.upstream, r.listen
                ));
            }
            listening.push(r.listen);
        }
        let mut path_addrs = vec![self.listen];
        for p in paths {
            if fixed(&p.listen) && path_addrs.contains(&p.listen) {
                return Err(format!(
                    "--path {}={:?}: {} has an RTT already (--rtt for --listen, or another --path)",
                    p.listen, p.rtt, p.listen
                ));
            }
            path_addrs.push(p.listen);
        }
        let path_of =
            |addr: SocketAddr| paths.iter().find(|p| fixed(&p.listen) && p.listen == addr);
        for r in routes {
            self.routes.push(Route {
                listen: r.listen,
                upstream: r.upstream,
                rtt: path_of(r.listen).map_or(self.rtt, |p| p.rtt),
            });
        }
        let routed =
            |p: &&PathSpec| fixed(&p.listen) && routes.iter().any(|r| r.listen == p.listen);
        self.paths
            .extend(paths.iter().filter(|p| !routed(p)).copied());
        Ok(())
    }
}

/// Stops a running emulator; cheap to clone and to send to another thread.
#[derive(Clone)]
pub struct Stopper {
    flag: Arc<AtomicBool>,
    waker: Arc<Waker>,
}

impl Stopper {
    /// Asks the emulator to stop: it writes its last stats line and ends.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
    }
}

/// The emulator.
pub struct Netem;

impl Netem {
    /// Binds every socket and starts the emulator on its own thread. Errors
    /// (address in use, stats file not writable) are returned here, before
    /// anything runs.
    pub fn spawn(config: Config) -> io::Result<NetemHandle> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let timer = TimerFd::new()?;
        poll.registry()
            .register(&mut SourceFd(&timer.as_raw_fd()), TIMER, Interest::READABLE)?;

        let mut paths = vec![Route {
            listen: config.listen,
            upstream: config.upstream,
            rtt: config.rtt,
        }];
        paths.extend(config.paths.iter().map(|p| Route {
            listen: p.listen,
            upstream: config.upstream,
            rtt: p.rtt,
        }));
        paths.extend(config.routes.iter().copied());
        let mut listeners = Vec::with_capacity(paths.len());
        let mut listen_addrs = Vec::with_capacity(paths.len());
        for (i, p) in paths.iter().enumerate() {
            let std_sock = StdUdpSocket::bind(p.listen).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot listen on {}: {e}", p.listen))
            })?;
            set_buffers(&std_sock, config.socket_buffer);
            if config.rx_timestamps {
                rx::enable_timestamps(std_sock.as_raw_fd())?;
            }
            std_sock.set_nonblocking(true)?;
            listen_addrs.push(std_sock.local_addr()?);
            let mut sock = UdpSocket::from_std(std_sock);
            poll.registry()
                .register(&mut sock, Source::Listener(i).token(), Interest::READABLE)?;
            listeners.push(Listener {
                socket: sock,
                owd: p.rtt / 2,
                upstream: p.upstream,
            });
        }

        let stats = match &config.stats {
            Some(path) => Some(BufWriter::new(File::create(path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot create stats file {}: {e}", path.display()),
                )
            })?)),
            None => None,
        };

        let flag = Arc::new(AtomicBool::new(false));
        let stopper = Stopper {
            flag: flag.clone(),
            waker,
        };
        let relay = Relay::new(config, flag, poll, timer, listeners, stats);
        let thread = std::thread::Builder::new()
            .name("lbe-netem".into())
            .spawn(move || relay.run())?;
        Ok(NetemHandle {
            listen_addrs,
            stopper,
            thread: Some(thread),
        })
    }
}

/// A running emulator. Dropping it stops it.
pub struct NetemHandle {
    listen_addrs: Vec<SocketAddr>,
    stopper: Stopper,
    thread: Option<JoinHandle<io::Result<Summary>>>,
}

impl NetemHandle {
    /// The main listening address (`--listen`), with its real port.
    pub fn listen_addr(&self) -> SocketAddr {
        self.listen_addrs[0]
    }

    /// Every listening address: `--listen` first, then each `--path` in the
    /// order given, then each `--route` in the order given.
    pub fn listen_addrs(&self) -> &[SocketAddr] {
        &self.listen_addrs
    }

    /// A handle that can stop the emulator from elsewhere.
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Whether the emulator thread has ended (stopped, or failed).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops the emulator and waits for it to flush its stats.
    pub fn stop(mut self) -> io::Result<Summary> {
        self.stopper.stop();
        self.join_thread()
    }

    /// Waits until the emulator ends (after [`Stopper::stop`], or an error).
    pub fn join(mut self) -> io::Result<Summary> {
        self.join_thread()
    }

    fn join_thread(&mut self) -> io::Result<Summary> {
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("lbe-netem thread panicked"))),
            None => Err(io::Error::other("lbe-netem already joined")),
        }
    }
}

impl Drop for NetemHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stopper.stop();
            let _ = self.join_thread();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn config() -> Config {
        Config::new(
            addr("127.0.0.1:5000"),
            addr("127.0.0.1:4433"),
            20_000_000,
            Duration::from_millis(50),
            Buffer::Time(Duration::from_millis(500)),
        )
    }

    fn path(listen: &str, rtt_ms: u64) -> PathSpec {
        PathSpec {
            listen: addr(listen),
            rtt: Duration::from_millis(rtt_ms),
        }
    }

    fn route(listen: &str, upstream: &str) -> RouteSpec {
        RouteSpec {
            listen: addr(listen),
            upstream: addr(upstream),
        }
    }

    #[test]
    fn a_path_for_a_routes_address_sets_its_rtt() {
        let mut c = config();
        c.add_paths_and_routes(
            &[path("127.0.0.1:5001", 100), path("127.0.0.1:5002", 20)],
            &[
                route("127.0.0.1:5002", "127.0.0.1:4434"),
                route("127.0.0.1:5003", "127.0.0.1:4435"),
            ],
        )
        .unwrap();
        assert_eq!(c.paths, vec![path("127.0.0.1:5001", 100)]);
        assert_eq!(
            c.routes,
            vec![
                Route {
                    listen: addr("127.0.0.1:5002"),
                    upstream: addr("127.0.0.1:4434"),
                    rtt: Duration::from_millis(20),
                },
                Route {
                    listen: addr("127.0.0.1:5003"),
                    upstream: addr("127.0.0.1:4435"),
                    rtt: Duration::from_millis(50),
                },
            ]
        );
    }

    #[test]
    fn port_zero_addresses_never_clash_nor_match() {
        let mut c = config();
        c.listen = addr("127.0.0.1:0");
        c.add_paths_and_routes(
            &[path("127.0.0.1:0", 100)],
            &[
                route("127.0.0.1:0", "127.0.0.1:4434"),
                route("127.0.0.1:0", "127.0.0.1:4435"),
            ],
        )
        .unwrap();
        assert_eq!(c.paths, vec![path("127.0.0.1:0", 100)]);
        assert_eq!(c.routes.len(), 2);
        assert!(c.routes.iter().all(|r| r.rtt == Duration::from_millis(50)));
    }

    #[test]
    fn an_address_given_twice_is_an_error() {
        let err = |paths: &[PathSpec], routes: &[RouteSpec]| {
            config().add_paths_and_routes(paths, routes).unwrap_err()
        };
        assert_eq!(
            err(&[], &[route("127.0.0.1:5000", "127.0.0.1:4434")]),
            "--route 127.0.0.1:5000=127.0.0.1:4434: 127.0.0.1:5000 is listened on already (by --listen or another --route)"
        );
        assert_eq!(
            err(
                &[],
                &[
                    route("127.0.0.1:5001", "127.0.0.1:4434"),
                    route("127.0.0.1:5001", "127.0.0.1:4435")
                ]
            ),
            "--route 127.0.0.1:5001=127.0.0.1:4435: 127.0.0.1:5001 is listened on already (by --listen or another --route)"
        );
        assert_eq!(
            err(&[path("127.0.0.1:5000", 10)], &[]),
            "--path 127.0.0.1:5000=10ms: 127.0.0.1:5000 has an RTT already (--rtt for --listen, or another --path)"
        );
        assert_eq!(
            err(
                &[path("127.0.0.1:5001", 10), path("127.0.0.1:5001", 20)],
                &[route("127.0.0.1:5001", "127.0.0.1:4434")]
            ),
            "--path 127.0.0.1:5001=20ms: 127.0.0.1:5001 has an RTT already (--rtt for --listen, or another --path)"
        );
    }
}
