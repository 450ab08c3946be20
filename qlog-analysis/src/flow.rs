//! Per-flow figures, computed while the events stream by.
//!
//! # Goodput: application bytes delivered
//!
//! Goodput counts *acknowledged stream data*, from the sender's own qlog:
//!
//! 1. every `packet_sent` in the application packet number space (1-RTT and
//!    0-RTT packets) remembers the stream ranges it carried
//!    (`stream_id`, `offset`, `raw.payload_length` of its STREAM frames);
//! 2. every ACK frame in a received 1-RTT packet acknowledges packet numbers
//!    (`acked_ranges`); the stream ranges of those packets are delivered at
//!    the time the ACK was received;
//! 3. per stream, delivered ranges go into a set of byte ranges, and only
//!    bytes not already in it count. A retransmitted range (the same stream
//!    bytes in a new packet), a spuriously retransmitted one or a repeated ACK
//!    therefore adds nothing: each stream byte counts once.
//!
//! Packets declared lost stay remembered, so if their ACK comes late
//! (spurious loss) their bytes still count, once. QUIC framing, headers,
//! ACK-only packets, crypto data and padding never count.
//!
//! A receiver's qlog has (almost) no stream data of its own to be acked; for
//! it the same byte-range set is filled from the STREAM frames of received
//! packets (unique bytes received, at receive time). Whichever of the two is
//! larger is the flow's goodput ([`GoodputMethod`]), so a trace of either end
//! gives a figure, and the sender's trace gives the method the design asks
//! for.
//!
//! # RTT, and RTT above base (`queuing_delay_ms`)
//!
//! Each `latest_rtt` in `recovery_metrics_updated` is one RTT sample (quiche
//! logs it when it changes, i.e. on every ACK that yields a new sample). The
//! base RTT is the smallest sample of the whole trace; a sample's *RTT above
//! base* is `latest_rtt − base`. Statistics are per sample, over the samples
//! inside the window. Percentiles come from an HDR histogram (3 significant
//! digits, µs units), min and mean are exact.
//!
//! RTT above base is what `summary.json` calls `queuing_delay_ms` (the key
//! the design names). It is *not* the queuing delay the controllers in `cc`
//! act on, which is the minimum of the last 4 samples, ACK delay removed,
//! minus their base (`cc/src/delay/estimator.rs`): this one is measured from outside,
//! per raw sample, against the trace's own minimum, so it includes the
//! peer's ACK delay and every sample's jitter.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use hdrhistogram::Histogram;
use qlog::events::quic::{PacketType, QuicFrame};
use qlog::events::EventData;
use serde::Serialize;

use crate::rangeset::RangeSet;
use crate::reader::{Event, Role};
use crate::series::{ByteBuckets, Points, SeriesBuilder};

/// How a flow's delivered bytes were counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GoodputMethod {
    /// Stream data this endpoint sent and the peer acknowledged (sender's
    /// qlog; the primary method).
    AckedSent,
    /// Unique stream data this endpoint received (receiver's qlog).
    Received,
    /// No stream data either way.
    None,
}

/// RTT statistics over the window, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct RttStats {
    /// Smallest sample.
    pub min: Option<f64>,
    /// Mean of the samples.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
}

/// RTT-above-base statistics over the window (`latest_rtt` − the trace's
/// smallest `latest_rtt`), in ms; see the module docs for how it differs
/// from a controller's queuing delay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct RttAboveBaseStats {
    /// Mean, in milliseconds.
    pub mean: Option<f64>,
    /// 95th percentile, in milliseconds.
    pub p95: Option<f64>,
}

/// The per-flow part of `lbe-lab`'s `summary.json`, exactly its keys.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FlowSummary {
    /// Application bytes delivered inside the window.
    pub bytes: u64,
    /// `bytes × 8 / window length`.
    pub goodput_bps: f64,
    /// RTT samples (`latest_rtt`) in the window, in milliseconds.
    pub rtt_ms: RttStats,
    /// RTT above base (not the controllers' queuing delay: see the module
    /// docs); named `queuing_delay_ms` as `summary.json`'s key.
    pub queuing_delay_ms: RttAboveBaseStats,
    /// Packets declared lost inside the window.
    pub lost_packets: u64,
}

/// A controller state held over `[start_s, end_s)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StateInterval {
    /// The state's name as the trace writes it (e.g. `slowdown`, `congestion_avoidance`).
    pub state: String,
    /// When the state was entered, seconds on the analysis clock.
    pub start_s: f64,
    /// When the next state was entered (or the trace ended), seconds.
    pub end_s: f64,
}

/// Time series for plots; times in seconds on the analysis clock.
#[derive(Debug, Clone, Default)]
pub struct FlowSeries {
    /// Congestion window, bytes.
    pub cwnd_bytes: Points,
    /// The receive window a receiver-side LEDBAT++ granted
    /// (`recovery_metrics_updated`'s `lbe_receiver_window`, written by
    /// `quiche_lbe::receiver`); empty for other traces.
    pub receiver_window_bytes: Points,
    /// Bytes in flight, bytes.
    pub bytes_in_flight: Points,
    /// Latest RTT sample, milliseconds.
    pub latest_rtt_ms: Points,
    /// Smoothed RTT, milliseconds.
    pub smoothed_rtt_ms: Points,
    /// Minimum RTT as the endpoint reports it, milliseconds.
    pub min_rtt_ms: Points,
    /// RTT above base: `latest_rtt − base RTT`.
    pub rtt_above_base_ms: Points,
    /// Controller states over time, in order.
    pub states: Vec<StateInterval>,
    /// Packet losses: (time, packets lost then).
    pub losses: Vec<(f64, u64)>,
    /// Delivered bytes (by the flow's goodput method) in 10 ms buckets.
    pub delivered: ByteBuckets,
}

impl FlowSeries {
    /// When a flow that started at `start_s` reached steady state, on the
    /// analysis clock: the end of the first 1 s window over which the mean
    /// of the [`FlowSeries::rtt_above_base_ms`] samples is at least
    /// `queue_ms`.
    ///
    /// The windows are `[end − 1 s, end)` with `end` at `start_s` + 2.0,
    /// 2.1, 2.2 ... s (0.1 s apart; the flow's first second, its
    /// handshake's samples, is in none), up to the last sample's time. A
    /// window without samples does not count. `None` when no window
    /// reaches `queue_ms` (or the series is empty).
    ///
    /// Over the whole series, not the analysis window: a time to steady
    /// state is not an average over a window. The samples are the series'
    /// points (per [`crate::Options::series_resolution_s`] bucket the
    /// first, smallest, largest and last), in time order.
    pub fn steady_at_s(&self, start_s: f64, queue_ms: f64) -> Option<f64> {
        let q = &self.rtt_above_base_ms;
        let last = q.last()?.0;
        (20..)
            .map(|tenths| start_s + f64::from(tenths) / 10.0)
            .take_while(|end| *end <= last)
            .find(|end| {
                let lo = q.partition_point(|(t, _)| *t < end - 1.0);
                let hi = q.partition_point(|(t, _)| t < end);
                let window = &q[lo..hi.max(lo)];
                !window.is_empty()
                    && window.iter().map(|(_, v)| v).sum::<f64>() / window.len() as f64 >= queue_ms
            })
    }

    /// When `flows` together took the link back after `after_s`, on the
    /// analysis clock: the end of the first [`REFILL_BIN_S`] bin (bins
    /// aligned to t = 0, as [`ByteBuckets::rate_bps`] makes them) whose
    /// centre is later than `after_s` and in which the flows' delivered
    /// bytes together come to at least `level_bps`. `None` when no such
    /// bin comes (or no flow delivered anything).
    ///
    /// Each flow's rate per bin is [`ByteBuckets::rate_bps`]'s, added up
    /// in the order of `flows`. Over the whole series, not the analysis
    /// window. (`rate_bps` widens its bins for a flow whose bytes span more
    /// than [`crate::series::MAX_BINS`] of them, about 7 hours; the bins
    /// are 250 ms below that.)
    pub fn refill_at_s(flows: &[&FlowSeries], after_s: f64, level_bps: f64) -> Option<f64> {
        // By bin centre in ms: (centre in s, the flows' bit/s together).
        let mut bins = BTreeMap::<i64, (f64, f64)>::new();
        for f in flows {
            for (centre, bps) in f.delivered.rate_bps(REFILL_BIN_S) {
                let bin = bins
                    .entry((centre * 1e3).round() as i64)
                    .or_insert((centre, 0.0));
                bin.1 += bps;
            }
        }
        bins.into_values()
            .find(|&(centre, bps)| centre > after_s && bps >= level_bps)
            .map(|(centre, _)| centre + REFILL_BIN_S / 2.0)
    }
}

/// The bins [`FlowSeries::refill_at_s`] reads the flows' goodput in.
pub const REFILL_BIN_S: f64 = 0.25;

/// Everything known about one flow (one trace).
#[derive(Debug, Clone, Serialize)]
pub struct FlowAnalysis {
    /// Position in the analysis' flow list.
    pub index: usize,
    /// The qlog file the flow was read from.
    pub qlog: PathBuf,
    /// Trace index inside the file (JSON qlogs can hold several).
    pub trace_index: usize,
    /// Legend label: the controller, made unique.
    pub label: String,
    /// Flow id (from the caller or the file name), if any.
    pub flow: Option<String>,
    /// The controller (spec) if known: from the caller, the file name, the
    /// trace's metadata or state names, or the producer (`None`: unknown).
    pub cc: Option<String>,
    /// The implementation that wrote the trace, if it says (`quic-go`,
    /// `aioquic`...).
    pub producer: Option<String>,
    /// Which endpoint wrote the trace.
    pub role: Role,
    /// Added to the trace's own times to put it on the analysis clock.
    pub offset_s: f64,
    /// First event on the analysis clock.
    pub start_s: f64,
    /// Last delivered byte (or last event, when nothing was delivered).
    pub end_s: f64,
    /// Last event of any kind on the analysis clock, seconds.
    pub last_event_s: f64,
    /// How goodput was counted: see [`GoodputMethod`].
    pub goodput_method: GoodputMethod,
    /// Application bytes delivered over the whole trace.
    pub total_bytes: u64,
    /// Stream bytes put in packets, retransmissions included.
    pub stream_bytes_sent: u64,
    /// Stream bytes sent more than once.
    pub retransmitted_bytes: u64,
    /// Application bytes delivered over the whole trace, per stream id (by
    /// the flow's goodput method; they add up to `total_bytes`).
    pub stream_bytes: BTreeMap<u64, u64>,
    /// `packet_sent` events, every packet number space.
    pub packets_sent: u64,
    /// `packet_received` events, every packet number space.
    pub packets_received: u64,
    /// What the flow's datagrams that carried stream data held: see
    /// [`DataDatagrams`]; those it sent, or for a receiver's trace (goodput
    /// method `Received`) those it received.
    pub data_datagrams: DataDatagrams,
    #[serde(flatten)]
    /// The figures `summary.json` holds for this flow, in the window.
    pub summary: FlowSummary,
    /// Goodput share of the sum over all flows, in the window.
    pub share: Option<f64>,
    /// Active from (at most tolerance after) the window's start to (at most
    /// tolerance before) its end; only those flows enter Jain's index.
    pub active_whole_window: bool,
    /// Base RTT (the trace's smallest `latest_rtt`), milliseconds.
    pub base_rtt_ms: Option<f64>,
    /// RTT samples over the whole trace.
    pub rtt_samples: u64,
    /// The delay signal the controller read last (`owd`: one-way delay from
    /// QUIC timestamps; `rtt`: the round trip), from the trace's
    /// `lbe_delay_signal` (quiche-lbe's controllers and receiver-side
    /// window write it in `recovery_metrics_updated` each time it changes);
    /// absent when the trace has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_signal: Option<String>,
    /// Queuing-delay target of the controller, if it has one.
    pub target_ms: Option<f64>,
    /// Seconds spent in each controller state inside the window.
    pub state_time_s: BTreeMap<String, f64>,
    /// Entries into each state inside the window.
    pub state_entries: BTreeMap<String, u64>,
    /// Entries into LEDBAT++'s `slowdown` state inside the window.
    pub slowdowns: u64,
    /// Packets declared lost over the whole trace.
    pub lost_packets_total: u64,
    /// Events read from the trace (of the kinds the analysis uses).
    pub events: u64,
    #[serde(skip)]
    /// Time series for the plots (not serialised).
    pub series: FlowSeries,
}

/// The application-space packets a trace sent that carried stream data:
/// how many, their size (`raw.length`, the whole QUIC packet, which is the
/// UDP payload: quiche coalesces packets only during the handshake) and the
/// stream bytes in them. Their ratio is the framing efficiency from which
/// [`crate::analysis::Analysis::max_goodput_bps`] is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DataDatagrams {
    /// How many such datagrams.
    pub count: u64,
    /// Sum of the packets' sizes (UDP payload bytes).
    pub udp_payload_bytes: u64,
    /// Sum of the stream bytes they carried (retransmissions included).
    pub stream_bytes: u64,
}

impl DataDatagrams {
    /// Stream bytes per wire byte, counting `overhead_bytes` of IP and UDP
    /// headers per datagram; `None` without datagrams.
    pub fn efficiency(&self, overhead_bytes: u64) -> Option<f64> {
        let wire = self.udp_payload_bytes + self.count * overhead_bytes;
        (self.count > 0 && wire > 0).then(|| self.stream_bytes as f64 / wire as f64)
    }

    /// Both counts together.
    pub fn add(&mut self, other: &DataDatagrams) {
        self.count += other.count;
        self.udp_payload_bytes += other.udp_payload_bytes;
        self.stream_bytes += other.stream_bytes;
    }
}

#[derive(Debug, Clone, Copy)]
struct Chunk {
    stream: u64,
    offset: u64,
    len: u64,
}

impl Chunk {
    /// The stream bytes a frame carries, if it is a STREAM frame.
    fn of(frame: &QuicFrame) -> Option<Chunk> {
        let QuicFrame::Stream {
            stream_id,
            offset,
            raw,
            ..
        } = frame
        else {
            return None;
        };
        Some(Chunk {
            stream: *stream_id,
            offset: offset.unwrap_or(0),
            len: raw
                .as_ref()
                .and_then(|r| r.payload_length.or(r.length))
                .unwrap_or(0),
        })
    }
}

/// Streams one trace's events into figures. Times are converted to the
/// analysis clock with `offset_s`; the window is `[from_s, to_s)` on that
/// clock (infinite ends for an open window).
pub struct FlowAnalyzer {
    offset_s: f64,
    from_s: f64,
    to_s: f64,
    // goodput
    in_flight_chunks: BTreeMap<u64, Vec<Chunk>>,
    acked: HashMap<u64, RangeSet>,
    received: HashMap<u64, RangeSet>,
    sent_unique: HashMap<u64, RangeSet>,
    stream_bytes_sent: u64,
    data_datagrams: DataDatagrams,
    /// The same for the application-space packets received with stream
    /// data (a receiver's trace).
    received_datagrams: DataDatagrams,
    acked_total: u64,
    acked_window: u64,
    received_total: u64,
    received_window: u64,
    acked_buckets: ByteBuckets,
    received_buckets: ByteBuckets,
    last_ack_s: Option<f64>,
    last_recv_s: Option<f64>,
    // rtt
    rtt_hist: Histogram<u64>,
    rtt_sum_ms: f64,
    rtt_count: u64,
    rtt_min_ms: f64,
    base_rtt_ms: f64,
    logged_min_rtt_ms: f64,
    delay_signal: Option<String>,
    rtt_samples: u64,
    // series
    cwnd: SeriesBuilder,
    receiver_window: SeriesBuilder,
    bif: SeriesBuilder,
    latest_rtt: SeriesBuilder,
    smoothed_rtt: SeriesBuilder,
    min_rtt: SeriesBuilder,
    // losses
    lost_events_total: u64,
    lost_events_window: u64,
    cf_lost_total: u64,
    cf_lost_window: u64,
    cf_last_total: Option<u64>,
    loss_events: Vec<(f64, u64)>,
    cf_losses: Vec<(f64, u64)>,
    // states
    states: Vec<StateInterval>,
    current_state: Option<(String, f64)>,
    packets_sent: u64,
    packets_received: u64,
    // extent
    first_event_s: Option<f64>,
    last_event_s: Option<f64>,
    events: u64,
}

fn is_app_space(t: &PacketType) -> bool {
    matches!(t, PacketType::OneRtt | PacketType::ZeroRtt)
}

impl FlowAnalyzer {
    /// `resolution_s`: series bucket width (0 keeps every point).
    pub fn new(offset_s: f64, from_s: Option<f64>, to_s: Option<f64>, resolution_s: f64) -> Self {
        FlowAnalyzer {
            offset_s,
            from_s: from_s.unwrap_or(f64::NEG_INFINITY),
            to_s: to_s.unwrap_or(f64::INFINITY),
            in_flight_chunks: BTreeMap::new(),
            acked: HashMap::new(),
            received: HashMap::new(),
            sent_unique: HashMap::new(),
            stream_bytes_sent: 0,
            data_datagrams: DataDatagrams::default(),
            received_datagrams: DataDatagrams::default(),
            acked_total: 0,
            acked_window: 0,
            received_total: 0,
            received_window: 0,
            acked_buckets: ByteBuckets::default(),
            received_buckets: ByteBuckets::default(),
            last_ack_s: None,
            last_recv_s: None,
            rtt_hist: Histogram::new(3).expect("3 significant digits is a valid histogram"),
            rtt_sum_ms: 0.0,
            rtt_count: 0,
            rtt_min_ms: f64::INFINITY,
            base_rtt_ms: f64::INFINITY,
            logged_min_rtt_ms: f64::INFINITY,
            delay_signal: None,
            rtt_samples: 0,
            cwnd: SeriesBuilder::new(resolution_s),
            receiver_window: SeriesBuilder::new(resolution_s),
            bif: SeriesBuilder::new(resolution_s),
            latest_rtt: SeriesBuilder::new(resolution_s),
            smoothed_rtt: SeriesBuilder::new(resolution_s),
            min_rtt: SeriesBuilder::new(resolution_s),
            lost_events_total: 0,
            lost_events_window: 0,
            cf_lost_total: 0,
            cf_lost_window: 0,
            cf_last_total: None,
            loss_events: Vec::new(),
            cf_losses: Vec::new(),
            states: Vec::new(),
            current_state: None,
            packets_sent: 0,
            packets_received: 0,
            first_event_s: None,
            last_event_s: None,
            events: 0,
        }
    }

    fn in_window(&self, t: f64) -> bool {
        t >= self.from_s && t < self.to_s
    }

    /// Feed one event. An `Err` is a message about a field of the event.
    pub fn event(&mut self, ev: &Event) -> Result<(), String> {
        self.record(ev.time_ms, &ev.data)
    }

    /// Feed one event given as its time (milliseconds since the trace's
    /// reference time) and data: what [`Self::event`] reads of an
    /// [`Event`], for a caller that holds the `qlog` crate's values without
    /// a file (the simulator, handed quiche's events as they happen). Feed
    /// only the events the reader decodes
    /// ([`crate::reader::is_decoded`]), as the reader does.
    pub fn record(&mut self, time_ms: f64, data: &EventData) -> Result<(), String> {
        let t = time_ms / 1e3 + self.offset_s;
        if !t.is_finite() {
            return Err(format!(
                "time {time_ms} is not a finite number of milliseconds"
            ));
        }
        self.events += 1;
        self.first_event_s = Some(self.first_event_s.map_or(t, |f| f.min(t)));
        self.last_event_s = Some(self.last_event_s.map_or(t, |l| l.max(t)));
        match data {
            EventData::QuicPacketSent(p) => {
                self.packets_sent += 1;
                let (Some(pn), true) =
                    (p.header.packet_number, is_app_space(&p.header.packet_type))
                else {
                    return Ok(());
                };
                let chunks: Vec<Chunk> = p
                    .frames
                    .iter()
                    .flatten()
                    .filter_map(Chunk::of)
                    .filter(|c| c.len > 0)
                    .collect();
                for c in &chunks {
                    let end = c
                        .offset
                        .checked_add(c.len)
                        .ok_or("stream frame offset + length overflows")?;
                    self.stream_bytes_sent += c.len;
                    self.sent_unique
                        .entry(c.stream)
                        .or_default()
                        .insert(c.offset, end);
                }
                if !chunks.is_empty() {
                    if let Some(size) = p.raw.as_ref().and_then(|r| r.length) {
                        self.data_datagrams.count += 1;
                        self.data_datagrams.udp_payload_bytes += size;
                        self.data_datagrams.stream_bytes +=
                            chunks.iter().map(|c| c.len).sum::<u64>();
                    }
                    self.in_flight_chunks.insert(pn, chunks);
                }
            }
            EventData::QuicPacketReceived(p) => {
                self.packets_received += 1;
                if !is_app_space(&p.header.packet_type) {
                    return Ok(());
                }
                for f in p.frames.iter().flatten() {
                    match f {
                        QuicFrame::Ack {
                            acked_ranges: Some(ranges),
                            ..
                        } => {
                            for r in ranges {
                                let (lo, hi) = (r.start.min(r.end), r.start.max(r.end));
                                let pns: Vec<u64> = self
                                    .in_flight_chunks
                                    .range(lo..=hi)
                                    .map(|(k, _)| *k)
                                    .collect();
                                for pn in pns {
                                    let chunks =
                                        self.in_flight_chunks.remove(&pn).unwrap_or_default();
                                    for c in chunks {
                                        let new = self
                                            .acked
                                            .entry(c.stream)
                                            .or_default()
                                            .insert(c.offset, c.offset + c.len);
                                        if new > 0 {
                                            self.acked_total += new;
                                            if self.in_window(t) {
                                                self.acked_window += new;
                                            }
                                            self.acked_buckets.add(t, new);
                                            self.last_ack_s =
                                                Some(self.last_ack_s.map_or(t, |l| l.max(t)));
                                        }
                                    }
                                }
                            }
                        }
                        QuicFrame::Stream { .. } => {
                            let Some(c) = Chunk::of(f) else { continue };
                            let end = c
                                .offset
                                .checked_add(c.len)
                                .ok_or("stream frame offset + length overflows")?;
                            let new = self
                                .received
                                .entry(c.stream)
                                .or_default()
                                .insert(c.offset, end);
                            if new > 0 {
                                self.received_total += new;
                                if self.in_window(t) {
                                    self.received_window += new;
                                }
                                self.received_buckets.add(t, new);
                                self.last_recv_s = Some(self.last_recv_s.map_or(t, |l| l.max(t)));
                            }
                        }
                        _ => {}
                    }
                }
                let stream_bytes: u64 = p
                    .frames
                    .iter()
                    .flatten()
                    .filter_map(Chunk::of)
                    .map(|c| c.len)
                    .sum();
                if stream_bytes > 0 {
                    if let Some(size) = p.raw.as_ref().and_then(|r| r.length) {
                        self.received_datagrams.count += 1;
                        self.received_datagrams.udp_payload_bytes += size;
                        self.received_datagrams.stream_bytes += stream_bytes;
                    }
                }
            }
            EventData::QuicMetricsUpdated(m) => {
                if let Some(rtt) = m.latest_rtt {
                    let rtt = rtt as f64;
                    if rtt.is_finite() && rtt >= 0.0 {
                        self.rtt_sample(t, rtt);
                    }
                }
                if let Some(v) = m.smoothed_rtt {
                    self.smoothed_rtt.push(t, v as f64);
                }
                if let Some(v) = m.min_rtt {
                    let v = v as f64;
                    self.min_rtt.push(t, v);
                    if v.is_finite() && v >= 0.0 {
                        self.logged_min_rtt_ms = self.logged_min_rtt_ms.min(v);
                    }
                }
                if let Some(v) = m.congestion_window {
                    self.cwnd.push(t, v as f64);
                }
                if let Some(v) = m.bytes_in_flight {
                    self.bif.push(t, v as f64);
                }
                if let Some(v) = m.ex_data.get("lbe_receiver_window") {
                    let v = v.as_u64().ok_or_else(|| {
                        format!("field `data.lbe_receiver_window` must be a u64, found {v}")
                    })?;
                    self.receiver_window.push(t, v as f64);
                }
                if let Some(v) = m.ex_data.get("lbe_delay_signal") {
                    let v = v.as_str().ok_or_else(|| {
                        format!("field `data.lbe_delay_signal` must be a string, found {v}")
                    })?;
                    if self.delay_signal.as_deref() != Some(v) {
                        self.delay_signal = Some(v.to_string());
                    }
                }
                if let Some(v) = m.ex_data.get("cf_lost_packets") {
                    self.cf_lost(t, v)?;
                }
            }
            EventData::QuicCongestionStateUpdated(c) => {
                let new = c.new.as_str();
                match &self.current_state {
                    Some((s, _)) if s == new => {}
                    _ => {
                        if let Some((s, since)) = self.current_state.take() {
                            self.states.push(StateInterval {
                                state: s,
                                start_s: since,
                                end_s: t,
                            });
                        }
                        self.current_state = Some((new.to_string(), t));
                    }
                }
            }
            EventData::QuicPacketLost(_) => {
                self.lost_events_total += 1;
                if self.in_window(t) {
                    self.lost_events_window += 1;
                }
                self.loss_events.push((t, 1));
            }
            _ => {}
        }
        Ok(())
    }

    fn rtt_sample(&mut self, t: f64, rtt_ms: f64) {
        self.rtt_samples += 1;
        self.base_rtt_ms = self.base_rtt_ms.min(rtt_ms);
        self.latest_rtt.push(t, rtt_ms);
        if self.in_window(t) {
            let us = (rtt_ms * 1e3).round() as u64;
            // An auto-resizing histogram only fails on absurd values; skip those.
            let _ = self.rtt_hist.record(us);
            self.rtt_sum_ms += rtt_ms;
            self.rtt_count += 1;
            self.rtt_min_ms = self.rtt_min_ms.min(rtt_ms);
        }
    }

    /// quiche's extension: `cf_lost_packets: {total, delta}`.
    fn cf_lost(&mut self, t: f64, v: &serde_json::Value) -> Result<(), String> {
        let bad = || {
            format!("field `data.cf_lost_packets` must be {{\"total\": u64, \"delta\": u64}}, found {v}")
        };
        let obj = v.as_object().ok_or_else(bad)?;
        let get = |k: &str| -> Result<Option<u64>, String> {
            match obj.get(k) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(x) => x.as_u64().map(Some).ok_or_else(bad),
            }
        };
        let total = get("total")?;
        let delta = get("delta")?;
        let delta = match (delta, total) {
            (Some(d), _) => d,
            (None, Some(tot)) => tot.saturating_sub(self.cf_last_total.unwrap_or(0)),
            (None, None) => 0,
        };
        if let Some(tot) = total {
            self.cf_last_total = Some(tot);
        }
        self.cf_lost_total += delta;
        if self.in_window(t) {
            self.cf_lost_window += delta;
        }
        if delta > 0 {
            self.cf_losses.push((t, delta));
        }
        Ok(())
    }

    /// The flow's activity interval on the analysis clock: first event, last
    /// delivery (or last event when nothing was delivered).
    pub fn extent(&self) -> (f64, f64) {
        let start = self.first_event_s.unwrap_or(self.offset_s);
        let last_event = self.last_event_s.unwrap_or(start);
        let end = match self.method() {
            GoodputMethod::AckedSent => self.last_ack_s,
            GoodputMethod::Received => self.last_recv_s,
            GoodputMethod::None => None,
        }
        .unwrap_or(last_event);
        (start, end)
    }

    fn method(&self) -> GoodputMethod {
        if self.acked_total == 0 && self.received_total == 0 {
            GoodputMethod::None
        } else if self.acked_total >= self.received_total {
            GoodputMethod::AckedSent
        } else {
            GoodputMethod::Received
        }
    }

    /// Close the books over the resolved window `[from_s, to_s)` (the one
    /// given to [`FlowAnalyzer::new`], with open ends filled in).
    pub fn finish(mut self, from_s: f64, to_s: f64) -> FlowAnalysis {
        let (start_s, end_s) = self.extent();
        let last_event_s = self.last_event_s.unwrap_or(start_s);
        if let Some((s, since)) = self.current_state.take() {
            self.states.push(StateInterval {
                state: s,
                start_s: since,
                end_s: last_event_s.max(since),
            });
        }
        let method = self.method();
        let per_stream = match method {
            GoodputMethod::Received => &self.received,
            GoodputMethod::AckedSent | GoodputMethod::None => &self.acked,
        };
        let stream_bytes: BTreeMap<u64, u64> = per_stream
            .iter()
            .map(|(id, set)| (*id, set.len()))
            .collect();
        let (bytes, total_bytes, delivered) = match method {
            GoodputMethod::AckedSent | GoodputMethod::None => {
                (self.acked_window, self.acked_total, self.acked_buckets)
            }
            GoodputMethod::Received => (
                self.received_window,
                self.received_total,
                self.received_buckets,
            ),
        };
        let window_len = to_s - from_s;
        let goodput_bps = if window_len > 0.0 {
            bytes as f64 * 8.0 / window_len
        } else {
            0.0
        };

        let base = if self.base_rtt_ms.is_finite() {
            Some(self.base_rtt_ms)
        } else if self.logged_min_rtt_ms.is_finite() {
            Some(self.logged_min_rtt_ms)
        } else {
            None
        };
        let q = |us: u64| self.rtt_hist.median_equivalent(us) as f64 / 1e3;
        let (rtt_ms, queuing_delay_ms) = if self.rtt_count > 0 {
            let mean = self.rtt_sum_ms / self.rtt_count as f64;
            let p95 = q(self.rtt_hist.value_at_quantile(0.95));
            let rtt = RttStats {
                min: Some(self.rtt_min_ms),
                mean: Some(mean),
                p50: Some(q(self.rtt_hist.value_at_quantile(0.50))),
                p95: Some(p95),
                p99: Some(q(self.rtt_hist.value_at_quantile(0.99))),
            };
            let b = base.unwrap_or(self.rtt_min_ms);
            let qd = RttAboveBaseStats {
                mean: Some((mean - b).max(0.0)),
                p95: Some((p95 - b).max(0.0)),
            };
            (rtt, qd)
        } else {
            (RttStats::default(), RttAboveBaseStats::default())
        };

        let lost_packets = if self.lost_events_total > 0 {
            self.lost_events_window
        } else {
            self.cf_lost_window
        };
        let lost_packets_total = if self.lost_events_total > 0 {
            self.lost_events_total
        } else {
            self.cf_lost_total
        };

        let mut state_time_s: BTreeMap<String, f64> = BTreeMap::new();
        let mut state_entries: BTreeMap<String, u64> = BTreeMap::new();
        for iv in &self.states {
            let overlap = iv.end_s.min(to_s) - iv.start_s.max(from_s);
            if overlap > 0.0 {
                *state_time_s.entry(iv.state.clone()).or_insert(0.0) += overlap;
            }
            if iv.start_s >= from_s && iv.start_s < to_s {
                *state_entries.entry(iv.state.clone()).or_insert(0) += 1;
            }
        }
        let slowdowns = state_entries.get("slowdown").copied().unwrap_or(0);

        let latest = self.latest_rtt.finish();
        let queuing = match base {
            Some(b) => latest.iter().map(|&(t, v)| (t, v - b)).collect(),
            None => Vec::new(),
        };
        let retransmitted_bytes = self
            .stream_bytes_sent
            .saturating_sub(self.sent_unique.values().map(RangeSet::len).sum());

        FlowAnalysis {
            index: 0,
            qlog: PathBuf::new(),
            trace_index: 0,
            label: String::new(),
            flow: None,
            cc: None,
            producer: None,
            role: Role::Unknown,
            offset_s: self.offset_s,
            start_s,
            end_s,
            last_event_s,
            goodput_method: method,
            total_bytes,
            stream_bytes_sent: self.stream_bytes_sent,
            // A receiver's trace: the datagrams that brought its data.
            data_datagrams: if method == GoodputMethod::Received {
                self.received_datagrams
            } else {
                self.data_datagrams
            },
            retransmitted_bytes,
            stream_bytes,
            packets_sent: self.packets_sent,
            packets_received: self.packets_received,
            summary: FlowSummary {
                bytes,
                goodput_bps,
                rtt_ms,
                queuing_delay_ms,
                lost_packets,
            },
            share: None,
            active_whole_window: false,
            base_rtt_ms: base,
            rtt_samples: self.rtt_samples,
            delay_signal: self.delay_signal.take(),
            target_ms: None,
            state_time_s,
            state_entries,
            slowdowns,
            lost_packets_total,
            events: self.events,
            series: FlowSeries {
                cwnd_bytes: self.cwnd.finish(),
                receiver_window_bytes: self.receiver_window.finish(),
                bytes_in_flight: self.bif.finish(),
                latest_rtt_ms: latest,
                smoothed_rtt_ms: self.smoothed_rtt.finish(),
                min_rtt_ms: self.min_rtt.finish(),
                rtt_above_base_ms: queuing,
                states: self.states,
                losses: if self.lost_events_total > 0 {
                    self.loss_events
                } else {
                    self.cf_losses
                },
                delivered,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow's series with these RTT-above-base points.
    fn queue(points: &[(f64, f64)]) -> FlowSeries {
        FlowSeries {
            rtt_above_base_ms: points.to_vec(),
            ..FlowSeries::default()
        }
    }

    /// Points every 0.25 s over `[from, to)`, each `ms`.
    fn flat(from: f64, to: f64, ms: f64) -> Vec<(f64, f64)> {
        (0..)
            .map(|k| from + f64::from(k) * 0.25)
            .take_while(|t| *t < to)
            .map(|t| (t, ms))
            .collect()
    }

    #[test]
    fn steady_state_is_the_end_of_the_first_second_whose_mean_reaches_it() {
        // 0 ms until 3 s, 40 ms from then: [2.2, 3.2) holds 2.25, 2.5,
        // 2.75 and 3.0 (mean 10), [2.3, 3.3) 2.5 to 3.25 (mean 20).
        let mut points = flat(0.0, 3.0, 0.0);
        points.extend(flat(3.0, 6.0, 40.0));
        let s = queue(&points);
        assert_eq!(s.steady_at_s(0.0, 20.0), Some(3.3));
        // At least the threshold: a mean of 20 reaches 20 ms; 20.5 needs
        // three 40s of four points, [2.6, 3.6).
        assert_eq!(s.steady_at_s(0.0, 20.5), Some(3.6));
        // The same series 10 s later, for a flow started then.
        let later: Vec<(f64, f64)> = points.iter().map(|&(t, v)| (t + 10.0, v)).collect();
        assert_eq!(queue(&later).steady_at_s(10.0, 20.0), Some(10.0 + 3.3));
    }

    #[test]
    fn a_queue_never_reached_or_no_samples_gives_none() {
        let s = queue(&flat(0.0, 60.0, 19.9));
        assert_eq!(s.steady_at_s(0.0, 20.0), None);
        assert_eq!(queue(&[]).steady_at_s(0.0, 0.0), None);
        // The windows end by the last sample: one reached only past it is
        // not.
        let s = queue(&[(2.0, 0.0), (2.5, 50.0)]);
        assert_eq!(s.steady_at_s(0.0, 20.0), None);
    }

    #[test]
    fn the_first_second_and_windows_without_samples_do_not_count() {
        // A queue in the flow's first second only, then nothing until 5 s:
        // with a threshold of 0 ms any sample reaches it, so the windows
        // up to [4.0, 5.0), which hold none, are not reached.
        let s = queue(&[(0.5, 50.0), (5.0, 50.0), (5.5, 50.0), (6.0, 50.0)]);
        assert_eq!(s.steady_at_s(0.0, 0.0), Some(5.1));
        assert_eq!(s.steady_at_s(0.0, 50.0), Some(5.1));
    }

    /// A flow's series that delivered `bytes(k)` in the 250 ms bin `k`
    /// (at its middle, clear of bucket edges), for `k` in `bins`.
    fn delivered(bins: std::ops::Range<i64>, bytes: impl Fn(i64) -> u64) -> FlowSeries {
        let mut s = FlowSeries::default();
        for k in bins {
            s.delivered.add(k as f64 * 0.25 + 0.1, bytes(k));
        }
        s
    }

    #[test]
    fn the_link_is_back_at_the_end_of_the_first_bin_the_flows_fill_together() {
        // 100 000 bytes a bin is 3.2 Mbit/s; a from 0 to 10 s, b from 5 s
        // with 200 000 (6.4 Mbit/s): 9.6 together from the bin [5, 5.25).
        let a = delivered(0..40, |_| 100_000);
        let b = delivered(20..40, |_| 200_000);
        assert_eq!(FlowSeries::refill_at_s(&[&a, &b], 2.0, 8e6), Some(5.25));
        assert_eq!(FlowSeries::refill_at_s(&[&b, &a], 2.0, 9.6e6), Some(5.25));
        // Neither alone, nor together above 9.6.
        assert_eq!(FlowSeries::refill_at_s(&[&a], 2.0, 8e6), None);
        assert_eq!(FlowSeries::refill_at_s(&[&b], 2.0, 8e6), None);
        assert_eq!(FlowSeries::refill_at_s(&[&a, &b], 2.0, 9.7e6), None);
        assert_eq!(FlowSeries::refill_at_s(&[], 0.0, 0.0), None);
        let none = FlowSeries::default();
        assert_eq!(FlowSeries::refill_at_s(&[&none], 0.0, 0.0), None);
        // Only bins whose centre is later than `after_s`: [5, 5.25)'s is
        // 5.125.
        assert_eq!(FlowSeries::refill_at_s(&[&a, &b], 5.1, 8e6), Some(5.25));
        assert_eq!(FlowSeries::refill_at_s(&[&a, &b], 5.125, 8e6), Some(5.5));
        assert_eq!(FlowSeries::refill_at_s(&[&a, &b], 7.0, 8e6), Some(7.25));
        // A bin between the flows' bytes counts as nothing delivered.
        let gap = delivered(0..4, |_| 300_000);
        let late = delivered(12..16, |_| 300_000);
        assert_eq!(
            FlowSeries::refill_at_s(&[&gap, &late], 0.0, 8e6),
            Some(0.25)
        );
        assert_eq!(
            FlowSeries::refill_at_s(&[&gap, &late], 1.0, 1.0),
            Some(3.25)
        );
    }

    /// The computations the lbe-lab tests made before this one:
    /// `reverse_path.rs`' skew bars (the flows' 250 ms bins added up by
    /// their centres in ms, from `after_s` on a bin edge) and
    /// `ledbatpp_profiles.rs`' `time_back` (one flow, bins whose centre is
    /// after any `after_s`), both as seconds after `after_s`. The shared
    /// one gives the same numbers, to the last bit.
    #[test]
    fn the_same_times_as_the_tests_computations_it_replaces() {
        let skew_bars = |flows: &[&FlowSeries], after_s: f64, level: f64| {
            let mut sum = BTreeMap::<i64, f64>::new();
            for f in flows {
                for (t, bps) in f.delivered.rate_bps(0.25) {
                    *sum.entry((t * 1000.0).round() as i64).or_default() += bps;
                }
            }
            let back_ms = sum
                .range((after_s * 1000.0) as i64..)
                .find(|(_, bps)| **bps >= level)
                .map(|(centre, _)| *centre)?;
            Some((back_ms + 125) as f64 / 1000.0 - after_s)
        };
        let time_back = |f: &FlowSeries, after_s: f64, level: f64| {
            let bins = f.delivered.rate_bps(0.25);
            let (centre, _) = bins.iter().find(|(t, bps)| *t > after_s && *bps >= level)?;
            Some(centre + 0.125 - after_s)
        };
        // Uneven bytes in uneven buckets (a fixed linear congruential
        // sequence), over a 10-minute run, two flows (0.8 and 0.6 Mbit/s
        // on average).
        let mut x: u64 = 12345;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        let (mut a, mut b) = (FlowSeries::default(), FlowSeries::default());
        for k in 0..60_000_i64 {
            let t = k as f64 * 0.01 + 0.005;
            a.delivered.add(t, next() % 2_000);
            if k >= 1_000 {
                b.delivered.add(t, next() % 1_500);
            }
        }
        let mut checked = 0;
        for after_s in [0.0, 10.0, 240.0, 420.0, 480.25, 599.0] {
            for level in [1e6, 1.4e6, 1.5e6, 1.6e6, 4e6] {
                let shared =
                    FlowSeries::refill_at_s(&[&a, &b], after_s, level).map(|at| at - after_s);
                assert_eq!(
                    shared,
                    skew_bars(&[&a, &b], after_s, level),
                    "{after_s} {level}"
                );
                checked += usize::from(shared.is_some());
            }
        }
        for after_s in [0.0, 3.3, 100.01, 420.125, 420.2, 599.9] {
            for level in [0.5e6, 0.8e6, 0.9e6, 2e6] {
                let shared = FlowSeries::refill_at_s(&[&a], after_s, level).map(|at| at - after_s);
                assert_eq!(shared, time_back(&a, after_s, level), "{after_s} {level}");
                checked += usize::from(shared.is_some());
            }
        }
        // Most of them found a bin (not only agreeing on none).
        assert!(checked >= 30, "{checked}");
    }
}
