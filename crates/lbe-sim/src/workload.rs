//! The foreground workloads on the quiche engine ([`crate::stack`]): what
//! each workload flow keeps between the engine's events, and its figures
//! (`lbe_workload`'s, the ones a real-time run computes).
//!
//! - web: the flow's seeded Poisson schedule (`lbe_workload::arrivals`);
//!   each arrival is a new quiche connection pair (handshake included)
//!   downloading its size with the flow's `cc`; a download counts from its
//!   arrival to its last byte, and one still running [`WEB_DRAIN`] after
//!   the flow's stop is unfinished;
//! - video: one chunk download at a time, each a new connection, when
//!   `lbe_workload::playout` asks for it, until the flow's stop (a chunk
//!   then in flight is abandoned, as in real time);
//! - ping: a [`PING_BYTES`] datagram every `interval` from the client,
//!   across the client->server path, echoed by the server one host wake-up
//!   later across the bottleneck; a request with no reply [`PING_WAIT`]
//!   after the stop is lost;
//! - cbr: [`CBR_BYTES`] datagrams from the server across the bottleneck on
//!   `lbe_workload::cbr`'s schedule, from the client's hello (rtt/2 after
//!   the flow's start) for the flow's length; arrivals count until
//!   [`CBR_WAIT`] after the stop.

use std::time::Duration;

use lbe_scenario::Flow;
use lbe_scenario::FlowKind;
use lbe_workload::arrivals::Arrival;
use lbe_workload::cbr::CbrSchedule;
use lbe_workload::figures::Download;
use lbe_workload::figures::Echo;
use lbe_workload::figures::Outcome;
use lbe_workload::figures::WorkloadFigures;
use lbe_workload::playout::Playout;

pub use lbe_workload::cbr::CBR_BYTES;
pub use lbe_workload::CBR_WAIT;
pub use lbe_workload::PING_BYTES;
pub use lbe_workload::PING_WAIT;
pub use lbe_workload::WEB_DRAIN;

/// How long a video flow waits after a chunk's download failed before it
/// asks again (as the real-time client does).
pub const VIDEO_RETRY: Duration = Duration::from_millis(100);

/// A workload flow while the engine runs it.
pub(crate) struct WorkloadRun {
    /// Its position among the scenario's flows.
    pub flow: usize,
    pub state: State,
    /// Nothing more happens to it: its figures are final.
    pub finished: bool,
}

pub(crate) enum State {
    Web {
        arrivals: Vec<Arrival>,
        /// Each arrival's outcome once known.
        outcomes: Vec<Option<Outcome>>,
        /// Each arrival's connection, once it arrived.
        conns: Vec<Option<usize>>,
    },
    Video {
        playout: Playout,
        chunk_bytes: u64,
        /// The chunk download in flight: its connection.
        in_flight: Option<usize>,
        failed: usize,
    },
    Ping {
        interval: Duration,
        echoes: Vec<Echo>,
    },
    Cbr {
        schedule: CbrSchedule,
        sent: u64,
        /// Scenario time and payload bytes of each datagram received.
        arrivals: Vec<(Duration, u64)>,
    },
}

impl WorkloadRun {
    /// The run of flow `index` (a workload kind; `None` for a bulk flow),
    /// its draws seeded from the run's `seed`.
    pub fn new(index: usize, flow: &Flow, seed: u64) -> Option<Self> {
        let stop = flow.stop()?;
        let state = match &flow.kind {
            FlowKind::QuicBulk | FlowKind::H3(_) => return None,
            FlowKind::Web(web) => {
                let arrivals = lbe_workload::arrivals::schedule(
                    web.arrivals_per_s,
                    flow.start,
                    stop,
                    &web.sizes_bytes,
                    lbe_workload::arrivals::flow_seed(seed, flow.id),
                );
                State::Web {
                    outcomes: vec![None; arrivals.len()],
                    conns: vec![None; arrivals.len()],
                    arrivals,
                }
            }
            FlowKind::Video(video) => State::Video {
                playout: Playout::new(video.playout, flow.start),
                chunk_bytes: video.chunk_bytes(),
                in_flight: None,
                failed: 0,
            },
            FlowKind::Ping(ping) => State::Ping {
                interval: ping.interval,
                echoes: Vec::new(),
            },
            FlowKind::Cbr(cbr) => State::Cbr {
                schedule: CbrSchedule::new(cbr.rate_bps, cbr.on_off),
                sent: 0,
                arrivals: Vec::new(),
            },
        };
        Some(WorkloadRun {
            flow: index,
            state,
            finished: false,
        })
    }

    /// When the run gives up on it, scenario time: what is not done by
    /// then is unfinished (web), abandoned (video), lost (ping) or not
    /// counted (cbr).
    pub fn end(&self, flow: &Flow) -> Duration {
        let stop = flow.stop().unwrap_or(flow.start);
        stop + match self.state {
            State::Web { .. } => WEB_DRAIN,
            State::Video { .. } => Duration::ZERO,
            State::Ping { .. } => PING_WAIT,
            State::Cbr { .. } => CBR_WAIT,
        }
    }

    /// A web flow's downloads as the figures take them (one not done
    /// when the run gave up on it is unfinished).
    fn downloads(arrivals: &[Arrival], outcomes: &[Option<Outcome>]) -> Vec<Download> {
        arrivals
            .iter()
            .zip(outcomes)
            .map(|(a, o)| Download {
                at: a.at,
                size_bytes: a.size_bytes,
                outcome: o.unwrap_or(Outcome::Unfinished),
            })
            .collect()
    }

    /// The analysis window, else the flow's start to stop.
    fn window(flow: &Flow, window: Option<(Duration, Duration)>) -> (Duration, Duration) {
        window.unwrap_or((flow.start, flow.stop().unwrap_or(flow.start)))
    }

    /// What its figures summarise, for a CDF
    /// ([`crate::WorkloadOutput::samples`]).
    pub fn samples(&self, flow: &Flow, window: Option<(Duration, Duration)>) -> Vec<f64> {
        let window = Self::window(flow, window);
        match &self.state {
            State::Web {
                arrivals, outcomes, ..
            } => lbe_workload::figures::fct_samples(&Self::downloads(arrivals, outcomes), window),
            State::Ping { echoes, .. } => {
                lbe_workload::figures::added_delay_samples_ms(echoes, flow.rtt, window)
            }
            State::Video { .. } | State::Cbr { .. } => Vec::new(),
        }
    }

    /// Its figures over `window` (the analysis window, else the flow's
    /// start to stop).
    pub fn figures(&self, flow: &Flow, window: Option<(Duration, Duration)>) -> WorkloadFigures {
        let stop = flow.stop().unwrap_or(flow.start);
        let window = Self::window(flow, window);
        match &self.state {
            State::Web {
                arrivals, outcomes, ..
            } => WorkloadFigures::web(&Self::downloads(arrivals, outcomes), window),
            State::Video {
                playout, failed, ..
            } => {
                let f = playout.clone().finish(stop);
                WorkloadFigures::Video {
                    stalls: f.stalls,
                    stall_s: f.stall_s,
                    startup_s: f.startup_s,
                    chunks: f.chunks,
                    failed: *failed,
                }
            }
            State::Ping { echoes, .. } => WorkloadFigures::ping(echoes, flow.rtt, window),
            State::Cbr { sent, arrivals, .. } => {
                WorkloadFigures::cbr(*sent, arrivals, (flow.start, stop), window)
            }
        }
    }
}
