//! Several flows on one clock: window, utilisation, shares, Jain's index.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::error::{Error, Result, Warning};
use crate::flow::{FlowAnalysis, FlowAnalyzer};
use crate::naming;
use crate::reader::{self, Event, EventSink, ReadStats, Role, TraceHeader};

/// One qlog file to analyse, with what the caller knows better than the
/// file name.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowInput {
    /// The qlog file (JSON-SEQ `.sqlog`, JSON `.qlog` or NDJSON).
    pub path: PathBuf,
    /// Legend label (default: the controller, else the file stem).
    pub label: Option<String>,
    /// Controller spec, e.g. `ledbatpp` or `cdg:g=3` (default: from the
    /// file name `<flow>-<role>-<cc>.sqlog`).
    pub cc: Option<String>,
    /// Flow id (default: from the file name).
    pub flow: Option<String>,
    /// Seconds to add to this file's event times to put them on the
    /// analysis clock; overrides [`Options::time_base`] for this file.
    pub offset_s: Option<f64>,
    /// Queuing-delay target in ms (default: from the controller spec).
    pub target_ms: Option<f64>,
}

impl FlowInput {
    /// The file at `path`, everything else told from the file and its name.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FlowInput {
            path: path.into(),
            label: None,
            cc: None,
            flow: None,
            offset_s: None,
            target_ms: None,
        }
    }
    /// Sets the legend label.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
    /// Sets the controller spec (e.g. `cdg:g=3`).
    pub fn cc(mut self, cc: impl Into<String>) -> Self {
        self.cc = Some(cc.into());
        self
    }
    /// Sets the flow id.
    pub fn flow(mut self, flow: impl Into<String>) -> Self {
        self.flow = Some(flow.into());
        self
    }
    /// Sets the seconds added to this file's event times (see the field).
    pub fn offset_s(mut self, offset_s: f64) -> Self {
        self.offset_s = Some(offset_s);
        self
    }
    /// Sets the queuing-delay target, in milliseconds.
    pub fn target_ms(mut self, target_ms: f64) -> Self {
        self.target_ms = Some(target_ms);
        self
    }
}

impl From<&Path> for FlowInput {
    fn from(p: &Path) -> Self {
        FlowInput::new(p)
    }
}
impl From<PathBuf> for FlowInput {
    fn from(p: PathBuf) -> Self {
        FlowInput::new(p)
    }
}
impl From<&PathBuf> for FlowInput {
    fn from(p: &PathBuf) -> Self {
        FlowInput::new(p)
    }
}
impl From<&str> for FlowInput {
    fn from(p: &str) -> Self {
        FlowInput::new(p)
    }
}

/// Where time zero of the analysis clock is.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TimeBase {
    /// The earliest trace's reference time: flows are lined up by the
    /// wall-clock time in their headers (quiche writes it), the first one
    /// starting at 0. A lone trace always starts at 0.
    #[default]
    EarliestTrace,
    /// A given wall-clock instant, e.g. when `lbe-lab` started the scenario,
    /// so that the window is in scenario time.
    WallClock(SystemTime),
    /// Every trace on its own clock (times as written in the file).
    TraceStart,
}

/// IPv4 (20) and UDP (8) header bytes: the default per-datagram overhead.
pub const IPV4_UDP_OVERHEAD_BYTES: u64 = 28;

/// How to analyse.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Window start on the analysis clock (default: the earliest flow start).
    pub from_s: Option<f64>,
    /// Window end (default: the latest delivery of any flow).
    pub to_s: Option<f64>,
    /// Bottleneck rate, for utilisation.
    pub link_rate_bps: Option<f64>,
    /// IP and UDP header bytes per datagram on the bottleneck, for
    /// [`Analysis::max_goodput_bps`]. Default 28 (IPv4 20 + UDP 8: what
    /// `lbe-netem` charges each datagram by default; 48 for IPv6).
    pub datagram_overhead_bytes: u64,
    /// How traces written by different processes are put on one clock.
    pub time_base: TimeBase,
    /// A flow counts as active for the whole window (and enters Jain's
    /// index) if it started at most this long after the window's start and
    /// delivered data until at most this long before its end. Default 1 s:
    /// a client started at 10 s has its first server-side event a little
    /// after 10 s.
    pub active_tolerance_s: f64,
    /// Bucket width of the plotted series (first/min/max/last kept per
    /// bucket); 0 keeps every point. Default 5 ms.
    pub series_resolution_s: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            from_s: None,
            to_s: None,
            link_rate_bps: None,
            datagram_overhead_bytes: IPV4_UDP_OVERHEAD_BYTES,
            time_base: TimeBase::EarliestTrace,
            active_tolerance_s: 1.0,
            series_resolution_s: 0.005,
        }
    }
}

/// The resolved window, on the analysis clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Window {
    /// Window start, seconds on the analysis clock (inclusive).
    pub from_s: f64,
    /// Window end, seconds on the analysis clock (exclusive).
    pub to_s: f64,
}

impl Window {
    /// `to_s − from_s`, in seconds.
    pub fn duration_s(&self) -> f64 {
        self.to_s - self.from_s
    }
}

/// All flows, and the figures across them.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// The window every figure is computed over.
    pub window: Window,
    /// Bottleneck rate in bit/s, if known (for utilisation).
    pub link_rate_bps: Option<f64>,
    /// Every flow (one per trace), in input order.
    pub flows: Vec<FlowAnalysis>,
    /// Sum of the flows' goodputs in the window.
    pub total_goodput_bps: f64,
    /// `total_goodput_bps / link_rate_bps`.
    pub utilization: Option<f64>,
    /// The largest application-layer goodput the link can carry: the link
    /// rate times the stream bytes per wire byte of the datagrams that
    /// carried stream data, over every flow's trace (wire = UDP payload +
    /// [`Options::datagram_overhead_bytes`]). The seeds plot the same
    /// "maximum application layer rate"; full 1350-byte datagrams with QUIC
    /// and UDP/IPv4 headers put it near 0.95 of the link rate.
    pub max_goodput_bps: Option<f64>,
    /// `total_goodput_bps / max_goodput_bps`.
    pub utilization_of_max: Option<f64>,
    /// Jain's fairness index `(Σx)² / (n·Σx²)` over the goodputs of the
    /// flows active for the whole window; `None` if there is none or all
    /// delivered nothing.
    pub jain_index: Option<f64>,
    /// Indices (into `flows`) of the flows in Jain's index.
    pub jain_flows: Vec<usize>,
    /// See [`Options::datagram_overhead_bytes`].
    pub datagram_overhead_bytes: u64,
    /// See [`Options::active_tolerance_s`].
    pub active_tolerance_s: f64,
    /// Odd but survivable things met while reading (one line each).
    pub warnings: Vec<Warning>,
}

/// What `lbe-lab` writes into `summary.json` from this crate: the per-flow
/// figures (in input order; one per trace) and the aggregates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryParts {
    /// The window the figures are computed over.
    pub window: Window,
    /// Each flow's `summary.json` figures, in input order.
    pub flows: Vec<crate::flow::FlowSummary>,
    /// See [`Analysis::utilization`].
    pub utilization: Option<f64>,
    /// See [`Analysis::max_goodput_bps`] (bit/s).
    pub max_goodput_bps: Option<f64>,
    /// See [`Analysis::utilization_of_max`].
    pub utilization_of_max: Option<f64>,
    /// See [`Analysis::jain_index`].
    pub jain_index: Option<f64>,
}

/// [`analyze`], keeping only what `summary.json` needs.
pub fn summary_parts<I, T>(inputs: I, options: &Options) -> Result<SummaryParts>
where
    I: IntoIterator<Item = T>,
    T: Into<FlowInput>,
{
    Ok(analyze(inputs, options)?.summary_parts())
}

/// Jain's fairness index of `xs`; `None` for an empty list or all zeros.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    (n > 0.0 && sum_sq > 0.0).then(|| sum * sum / (n * sum_sq))
}

struct Sink<'a> {
    analyzers: &'a mut Vec<FlowAnalyzer>,
    first: usize,
}

impl EventSink for Sink<'_> {
    fn event(&mut self, event: Event) -> Result<(), String> {
        match self.analyzers.get_mut(self.first + event.trace) {
            Some(a) => a.event(&event),
            None => Ok(()),
        }
    }
}

/// Analyse qlog files (one flow per trace) on one clock.
///
/// Each file is streamed once (plus its header read up front, to line the
/// clocks up), so memory stays bounded by the flows' state, not file size.
pub fn analyze<I, T>(inputs: I, options: &Options) -> Result<Analysis>
where
    I: IntoIterator<Item = T>,
    T: Into<FlowInput>,
{
    let inputs: Vec<FlowInput> = inputs.into_iter().map(Into::into).collect();
    if inputs.is_empty() {
        return Err(Error::Invalid("no qlog files given".into()));
    }
    if let (Some(f), Some(t)) = (options.from_s, options.to_s) {
        if t <= f {
            return Err(Error::Invalid(format!(
                "empty window: --to ({t} s) must be after --from ({f} s)"
            )));
        }
    }
    let mut warnings = Vec::new();

    // 1. Headers, to put every trace on the analysis clock.
    let mut headers: Vec<Vec<TraceHeader>> = Vec::with_capacity(inputs.len());
    for input in &inputs {
        headers.push(reader::read_headers(&input.path)?);
    }
    let total_traces: usize = headers.iter().map(Vec::len).sum();
    let zero: Option<SystemTime> = match options.time_base {
        TimeBase::TraceStart => None,
        TimeBase::WallClock(t) => Some(t),
        TimeBase::EarliestTrace if total_traces > 1 => {
            headers.iter().flatten().filter_map(|h| h.wall_clock).min()
        }
        TimeBase::EarliestTrace => None,
    };
    let mut offsets: Vec<Vec<f64>> = Vec::with_capacity(inputs.len());
    for (input, hs) in inputs.iter().zip(&headers) {
        let mut v = Vec::with_capacity(hs.len());
        for h in hs {
            let off = match (input.offset_s, zero, h.wall_clock) {
                (Some(o), _, _) => o,
                (None, None, _) => 0.0,
                (None, Some(z), Some(w)) => match w.duration_since(z) {
                    Ok(d) => d.as_secs_f64(),
                    Err(e) => -e.duration().as_secs_f64(),
                },
                (None, Some(_), None) => {
                    warnings.push(Warning {
                        path: input.path.clone(),
                        line: Some(h.line),
                        message: "no wall-clock reference time in the header; this trace starts at 0 on the analysis clock".into(),
                    });
                    0.0
                }
            };
            v.push(off);
        }
        offsets.push(v);
    }

    // 2. Stream every file.
    let mut flows: Vec<FlowAnalysis> = Vec::new();
    let mut stats: Vec<ReadStats> = Vec::new();
    // Headers as completed by the full read (role from the events, fields
    // after a JSON trace's events).
    let mut full_headers: Vec<Vec<TraceHeader>> = Vec::with_capacity(inputs.len());
    let mut pending: Vec<(usize, FlowAnalyzer)> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let mut analyzers: Vec<FlowAnalyzer> = offsets[i]
            .iter()
            .map(|&o| {
                FlowAnalyzer::new(o, options.from_s, options.to_s, options.series_resolution_s)
            })
            .collect();
        let mut sink = Sink {
            analyzers: &mut analyzers,
            first: 0,
        };
        let st = reader::read_qlog(&input.path, &mut sink)?;
        warnings.extend(st.warnings.iter().cloned());
        full_headers.push(st.headers.clone());
        stats.push(st);
        pending.extend(analyzers.into_iter().map(|a| (i, a)));
    }

    // 3. Resolve the window.
    let extents: Vec<(f64, f64)> = pending.iter().map(|(_, a)| a.extent()).collect();
    let window = resolve_window(&extents, options);
    let Window { from_s, to_s } = window;

    // 4. Finish each flow and name it.
    let mut trace_counter: HashMap<usize, usize> = HashMap::new();
    for (i, analyzer) in pending {
        let input = &inputs[i];
        let k = trace_counter.entry(i).or_insert(0);
        let trace_index = *k;
        *k += 1;
        let header = full_headers[i]
            .get(trace_index)
            .or_else(|| headers[i].get(trace_index.min(headers[i].len().saturating_sub(1))))
            .cloned()
            .unwrap_or_else(|| headers[i][0].clone());
        let mut fa = analyzer.finish(from_s, to_s);
        let name = naming::parse_file_name(&input.path);
        fa.index = flows.len();
        fa.qlog = input.path.clone();
        fa.trace_index = trace_index;
        fa.role = match header.role {
            Role::Unknown => name.role.unwrap_or(Role::Unknown),
            r => r,
        };
        // The controller: the caller's, our file name's, the trace's metadata,
        // state names only one of ours logs, the producer's only controller;
        // else unknown (None).
        fa.cc = input
            .cc
            .clone()
            .or(name.cc.clone())
            .or(header.controller.clone())
            .or_else(|| {
                naming::controller_from_states(fa.series.states.iter().map(|s| s.state.as_str()))
                    .map(str::to_string)
            })
            .or_else(|| {
                header
                    .producer
                    .as_deref()
                    .and_then(naming::controller_of_producer)
                    .map(str::to_string)
            });
        fa.producer = header.producer.clone();
        fa.flow = input.flow.clone().or(name.flow.clone());
        fa.target_ms = input
            .target_ms
            .or_else(|| fa.cc.as_deref().and_then(naming::target_ms_of));
        fa.label = input.label.clone().unwrap_or_else(|| {
            let base = match (&fa.cc, &fa.producer) {
                (Some(c), _) => c.clone(),
                (None, Some(p)) => format!("{p} (cc unknown)"),
                (None, None) => name.stem.clone(),
            };
            if headers[i].len() > 1 {
                format!("{base}#{trace_index}")
            } else {
                base
            }
        });
        flows.push(fa);
    }
    make_labels_unique(&mut flows);

    Ok(Analysis::assemble(window, flows, warnings, options))
}

/// The window over every flow's extent when `options` leaves an end open.
fn resolve_window(extents: &[(f64, f64)], options: &Options) -> Window {
    let from_s = options
        .from_s
        .unwrap_or_else(|| extents.iter().map(|e| e.0).fold(f64::INFINITY, f64::min));
    let to_s = options.to_s.unwrap_or_else(|| {
        extents
            .iter()
            .map(|e| e.1)
            .fold(f64::NEG_INFINITY, f64::max)
    });
    // No events at all: an empty window at 0.
    let from_s = if from_s.is_finite() { from_s } else { 0.0 };
    let to_s = if to_s.is_finite() && to_s > from_s {
        to_s
    } else {
        from_s
    };
    Window { from_s, to_s }
}

/// A flow whose events were fed to a [`FlowAnalyzer`] in memory (by a
/// simulator) rather than read from a qlog file.
pub struct MemoryFlow {
    /// The analyzer the flow's events were fed to.
    pub analyzer: FlowAnalyzer,
    /// Legend label.
    pub label: String,
    /// Controller spec, e.g. `ledbatpp`.
    pub cc: Option<String>,
    /// Flow id, if any.
    pub flow: Option<String>,
    /// Queuing-delay target in ms (default: from the controller spec).
    pub target_ms: Option<f64>,
    /// Which endpoint the events are from.
    pub role: Role,
}

/// [`analyze`] for flows fed in memory: the same window, per-flow figures,
/// shares, utilisation and Jain's index. Times are on the analysis clock
/// already (each analyzer's offset).
pub fn analyze_in_memory(flows: Vec<MemoryFlow>, options: &Options) -> Result<Analysis> {
    if flows.is_empty() {
        return Err(Error::Invalid("no flows given".into()));
    }
    let extents: Vec<(f64, f64)> = flows.iter().map(|f| f.analyzer.extent()).collect();
    let window = resolve_window(&extents, options);
    let mut out = Vec::with_capacity(flows.len());
    for (i, f) in flows.into_iter().enumerate() {
        let mut fa = f.analyzer.finish(window.from_s, window.to_s);
        fa.index = i;
        fa.qlog = PathBuf::new();
        fa.role = f.role;
        fa.target_ms = f
            .target_ms
            .or_else(|| f.cc.as_deref().and_then(naming::target_ms_of));
        fa.cc = f.cc;
        fa.flow = f.flow;
        fa.label = f.label;
        out.push(fa);
    }
    make_labels_unique(&mut out);
    Ok(Analysis::assemble(window, out, Vec::new(), options))
}

/// Give flows with the same label a distinguishing suffix (flow id, role or
/// position).
fn make_labels_unique(flows: &mut [FlowAnalysis]) {
    let mut count: HashMap<String, usize> = HashMap::new();
    for f in flows.iter() {
        *count.entry(f.label.clone()).or_insert(0) += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for f in flows.iter_mut() {
        if count[&f.label] > 1 {
            let n = seen.entry(f.label.clone()).or_insert(0);
            *n += 1;
            f.label = match &f.flow {
                Some(id) => format!("{} [{}]", f.label, short(id)),
                None => format!("{} #{}", f.label, n),
            };
        }
    }
    // Still clashing (same flow id): add the role, then the position.
    let mut count: HashMap<String, usize> = HashMap::new();
    for f in flows.iter() {
        *count.entry(f.label.clone()).or_insert(0) += 1;
    }
    for f in flows.iter_mut() {
        if count[&f.label] > 1 {
            f.label = format!("{} ({}, #{})", f.label, f.role, f.index + 1);
        }
    }
}

fn short(id: &str) -> &str {
    if id.len() > 8 && id.is_char_boundary(8) {
        &id[..8]
    } else {
        id
    }
}

impl Analysis {
    fn assemble(
        window: Window,
        flows: Vec<FlowAnalysis>,
        warnings: Vec<Warning>,
        options: &Options,
    ) -> Analysis {
        let mut analysis = Analysis {
            window,
            link_rate_bps: options.link_rate_bps,
            datagram_overhead_bytes: options.datagram_overhead_bytes,
            active_tolerance_s: options.active_tolerance_s,
            total_goodput_bps: 0.0,
            utilization: None,
            max_goodput_bps: None,
            utilization_of_max: None,
            jain_index: None,
            jain_flows: Vec::new(),
            flows,
            warnings,
        };
        analysis.aggregate();
        analysis
    }

    /// The `summary.json` parts of this analysis.
    pub fn summary_parts(&self) -> SummaryParts {
        SummaryParts {
            window: self.window,
            flows: self.flows.iter().map(|f| f.summary.clone()).collect(),
            utilization: self.utilization,
            max_goodput_bps: self.max_goodput_bps,
            utilization_of_max: self.utilization_of_max,
            jain_index: self.jain_index,
        }
    }

    /// (Re)compute shares, activity, utilisation and Jain's index from the
    /// per-flow figures.
    fn aggregate(&mut self) {
        let Window { from_s, to_s } = self.window;
        let tol = self.active_tolerance_s;
        self.total_goodput_bps = self.flows.iter().map(|f| f.summary.goodput_bps).sum();
        let total = self.total_goodput_bps;
        for (i, f) in self.flows.iter_mut().enumerate() {
            f.index = i;
            f.share = (total > 0.0).then(|| f.summary.goodput_bps / total);
            f.active_whole_window = f.start_s <= from_s + tol && f.end_s >= to_s - tol;
        }
        self.jain_flows = self
            .flows
            .iter()
            .filter(|f| f.active_whole_window)
            .map(|f| f.index)
            .collect();
        let goodputs: Vec<f64> = self
            .jain_flows
            .iter()
            .map(|&i| self.flows[i].summary.goodput_bps)
            .collect();
        self.jain_index = jain_index(&goodputs);
        let link_rate = self.link_rate_bps.filter(|r| *r > 0.0);
        self.utilization = link_rate.map(|r| total / r);
        let mut datagrams = crate::flow::DataDatagrams::default();
        for f in &self.flows {
            datagrams.add(&f.data_datagrams);
        }
        self.max_goodput_bps = link_rate
            .zip(datagrams.efficiency(self.datagram_overhead_bytes))
            .map(|(r, e)| r * e);
        self.utilization_of_max = self.max_goodput_bps.filter(|m| *m > 0.0).map(|m| total / m);
    }

    /// Keep only the flows at `indices` (in that order) and recompute the
    /// figures across flows; the window stays as it was.
    pub fn retain_flows(&mut self, indices: &[usize]) {
        let mut old: Vec<Option<FlowAnalysis>> = std::mem::take(&mut self.flows)
            .into_iter()
            .map(Some)
            .collect();
        self.flows = indices
            .iter()
            .filter_map(|&i| old.get_mut(i).and_then(Option::take))
            .collect();
        self.aggregate();
    }

    /// The flows whose trace is the data sender's (the ones a plot or report
    /// of a directory holding both ends' qlogs should show). If no flow is a
    /// sender, all flows.
    pub fn sender_indices(&self) -> Vec<usize> {
        let senders: Vec<usize> = self
            .flows
            .iter()
            .filter(|f| f.goodput_method == crate::flow::GoodputMethod::AckedSent)
            .map(|f| f.index)
            .collect();
        if senders.is_empty() {
            (0..self.flows.len()).collect()
        } else {
            senders
        }
    }
}
