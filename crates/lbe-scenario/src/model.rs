//! The types a checked scenario is: the link, the flows with their ends,
//! directions and clocks, the fixed ports, and what a run derives from
//! them (the bottleneck's configuration, a flow's give-up time).

use std::sync::Arc;
use std::time::Duration;

use quiche_lbe::CcSpec;

use crate::kinds::FlowKind;

/// A checked scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub link: Link,
    /// The analysis window, scenario time.
    pub window: Option<(Duration, Duration)>,
    /// `[analysis] steady_queue`: the mean RTT above base over 1 s that
    /// marks a bulk flow's steady state, its summary's `steady_s`
    /// (`qlog_analysis::flow::FlowSeries::steady_at_s`); none without it.
    pub steady_queue: Option<Duration>,
    /// `[analysis] refill_after`: the time after which the run's
    /// `refill_s` counts the seconds until the bulk flows still running
    /// take the link back (`qlog_analysis::flow::FlowSeries::refill_at_s`);
    /// none without it.
    pub refill_after: Option<Duration>,
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
    /// Jitter on the server->client direction (`jitter`, zero for none).
    pub jitter: Duration,
    /// Its distribution (`jitter_model`).
    pub jitter_model: lbe_link::JitterModel,
    /// Whether jitter may reorder a flow's datagrams (`reorder`).
    pub reorder: bool,
    /// Wi-Fi-like aggregation interval on the server->client direction
    /// (`aggregate`).
    pub aggregate: Option<Duration>,
    /// A trace-driven rate on the server->client direction (`trace`),
    /// replacing `rate` (whose place its mean rate takes in `rate_bps`).
    pub trace: Option<Arc<lbe_link::DeliveryTrace>>,
    /// A trace-driven rate on the client->server direction
    /// (`reverse_trace`).
    pub reverse_trace: Option<Arc<lbe_link::DeliveryTrace>>,
    /// `[[link.change]]`, in order of time.
    pub changes: Vec<Change>,
}

/// One `[[link.change]]`: at `at`, what changes (lbe-link's path change).
pub use lbe_link::PathChange as Change;

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
            variation: lbe_link::LinkVariation {
                jitter: self.jitter,
                jitter_model: self.jitter_model,
                reorder: self.reorder,
                aggregate: self.aggregate,
                trace: self.trace.clone(),
                changes: self.link_changes(true),
            },
        }
    }

    /// The changes as `lbe-link` runs them on one direction: the path's
    /// (round trip, outages) on both, the rest on the server->client one.
    fn link_changes(&self, bottleneck: bool) -> Vec<lbe_link::LinkChange> {
        self.changes
            .iter()
            .filter_map(|c| c.on_direction(self.rtt, bottleneck))
            .collect()
    }

    /// When the client's source port changes (`rebind = true`), in order.
    pub fn rebinds(&self) -> Vec<Duration> {
        self.changes
            .iter()
            .filter(|c| c.rebind)
            .map(|c| c.at)
            .collect()
    }

    /// The client->server direction as `lbe-link` runs it (in `lbe-netem`
    /// and in the simulator): `reverse_rate` with
    /// `reverse_buffer` (the link's `buffer` by default) and
    /// `reverse_loss`; a delay line without loss when none is set. Its loss
    /// is seeded apart from the bottleneck's `seed`.
    pub fn reverse_path(&self, seed: u64) -> lbe_link::LinkConfig {
        lbe_link::LinkConfig {
            rate_bps: self.reverse_rate_bps,
            buffer: (self.reverse_rate_bps.is_some() || self.reverse_trace.is_some())
                .then(|| self.reverse_buffer.unwrap_or(self.buffer)),
            loss: self.reverse_loss,
            seed: seed ^ 0x9e37_79b9_7f4a_7c15,
            variation: lbe_link::LinkVariation {
                trace: self.reverse_trace.clone(),
                changes: self.link_changes(false),
                ..lbe_link::LinkVariation::default()
            },
            ..lbe_link::LinkConfig::default()
        }
    }

    /// Whether anything is set on the client->server direction (its rate,
    /// loss or trace, or a change of the path: round trip, outage).
    pub fn has_reverse(&self) -> bool {
        self.reverse_rate_bps.is_some()
            || self.reverse_loss > 0.0
            || self.reverse_trace.is_some()
            || self
                .changes
                .iter()
                .any(|c| c.rtt.is_some() || c.outage.is_some())
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

#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// 1-based position in the file (among the flows a `count` expands
    /// to).
    pub id: usize,
    pub name: String,
    pub kind: FlowKind,
    /// The sender's controller: quic-bulk's `--cc`; for an h3 flow what its
    /// server sends with (h3-serve's background `cc`, else the server's
    /// default, [`H3Server::default_cc`](crate::H3Server::default_cc)); a web or video flow's `cc`
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
