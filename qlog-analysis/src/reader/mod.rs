//! Streaming qlog reader for the qlogs people have, by concern:
//!
//! * [`framing`]: bytes to records (JSON-SEQ, NDJSON) with a cap on a
//!   record's size, so memory stays bounded whatever the input;
//! * `json`: the plain JSON serialisation (`traces[]`), streamed event by
//!   event;
//! * [`header`]: a trace's header (role, reference time, time format,
//!   producer, controller) from any dialect;
//! * [`dialect`]: event names and `data` of main-schema 0.3 and drafts
//!   -12/-13/-14, turned into the `qlog` crate's types;
//! * this module: the public API and what every serialisation shares (the
//!   per-trace clock, the role, skipped-input accounting).
//!
//! The format is told by the first non-blank byte (0x1E: JSON-SEQ; `{`:
//! JSON, or NDJSON when the first line is a whole object without
//! `traces`), not by the file name.
//!
//! Reading is lenient: only the fields the analysis uses are read; an
//! unknown frame type, a used field of the wrong JSON type, an event without
//! a numeric `time` or a record that is not JSON is skipped and counted,
//! with one warning per kind (naming the first line). A record cut short at
//! the very end of the file (a killed run) is dropped with a warning. The
//! read fails, with a one-line error naming the file and the line, only when
//! nothing usable is there, or when a record is longer than
//! [`framing::MAX_RECORD_BYTES`].

pub mod dialect;
pub mod framing;
pub mod header;
mod json;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use qlog::events::quic::PacketType;
use qlog::events::EventData;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{Error, Result, Warning};
use framing::{RecordError, Records, MAX_RECORD_BYTES};

pub use framing::RS;
pub use header::format_wall_clock;
pub use header::parse_wall_clock;

/// Which endpoint wrote the trace (the header's `vantage_point.type`, else
/// told from the events: the endpoint that sends the first Initial packet
/// is the client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The client of the connection.
    Client,
    /// The server of the connection.
    Server,
    /// A network observer (e.g. a middlebox), neither endpoint.
    Network,
    #[default]
    /// Neither the header nor the events say.
    Unknown,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Client => "client",
            Role::Server => "server",
            Role::Network => "network",
            Role::Unknown => "unknown",
        })
    }
}

impl From<&qlog::VantagePointType> for Role {
    fn from(v: &qlog::VantagePointType) -> Self {
        match v {
            qlog::VantagePointType::Client => Role::Client,
            qlog::VantagePointType::Server => Role::Server,
            qlog::VantagePointType::Network => Role::Network,
            qlog::VantagePointType::Unknown => Role::Unknown,
        }
    }
}

/// Serialisation of a qlog file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// JSON text sequences (RFC 7464, `.sqlog`): one record per event, each after 0x1E.
    JsonSeq,
    /// One JSON object holding every trace and its events (`.qlog`).
    Json,
    /// Newline-delimited JSON: one record per line.
    NdJson,
}

/// How a trace writes event times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimeFormat {
    /// Milliseconds since the reference time (the default of every draft).
    #[default]
    Relative,
    /// Milliseconds since the previous event (`relative_to_previous_event`,
    /// 0.3's `delta`).
    Delta,
    /// Milliseconds since the Unix epoch.
    Absolute,
    /// Not said, and no reference time: told by the first event (epoch
    /// milliseconds if it is past 1973, as aioquic writes).
    Unknown,
}

/// What a trace's header says.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceHeader {
    /// Index of the trace in the file (always 0 for JSON-SEQ).
    pub index: usize,
    /// Line of the header (JSON-SEQ) or of the trace object (JSON).
    pub line: u64,
    /// The trace's `title`, if any.
    pub title: Option<String>,
    /// The trace's `description`, if any.
    pub description: Option<String>,
    /// Which endpoint wrote the trace.
    pub role: Role,
    /// The wall-clock time the trace's event times are relative to
    /// (`common_fields.reference_time.wall_clock_time`, an older producer's
    /// epoch milliseconds, or for absolute times the first event's). Used
    /// to line up flows written by different processes.
    pub wall_clock: Option<std::time::SystemTime>,
    /// Event times are deltas from the previous event; the reader turns
    /// them into times relative to the reference time.
    pub relative_to_previous: bool,
    /// How the trace writes event times (relative, delta or absolute).
    pub time_format: TimeFormat,
    /// For absolute times: the first event's time (epoch ms), subtracted
    /// from every event's.
    pub time_origin_ms: f64,
    /// The implementation that wrote the trace, if it says
    /// (`vantage_point.name`, or a known name in the title).
    pub producer: Option<String>,
    /// A congestion controller named in the trace's metadata.
    pub controller: Option<String>,
}

impl TraceHeader {
    /// A header for events that came without one.
    fn implicit(index: usize, line: u64) -> Self {
        TraceHeader {
            index,
            line,
            title: None,
            description: None,
            role: Role::Unknown,
            wall_clock: None,
            relative_to_previous: false,
            time_format: TimeFormat::Unknown,
            time_origin_ms: 0.0,
            producer: None,
            controller: None,
        }
    }
}

/// One decoded event.
#[derive(Debug, Clone)]
pub struct Event {
    /// Index of the trace it belongs to.
    pub trace: usize,
    /// Milliseconds since the trace's reference time.
    pub time_ms: f64,
    /// Line in the file where the event's record starts.
    pub line: u64,
    /// The event, as the `qlog` crate's type (whatever dialect the file is
    /// in).
    pub data: EventData,
}

/// Receives what the reader finds, in file order.
pub trait EventSink {
    /// A trace starts (once per trace, before its events).
    fn trace(&mut self, _header: &TraceHeader) {}
    /// An event the analysis knows how to use (see [`decoded_event_names`]).
    /// An `Err` stops the read; the reader turns it into an
    /// [`Error::Malformed`] naming the event's line.
    fn event(&mut self, event: Event) -> Result<(), String>;
}

impl<F: FnMut(Event)> EventSink for F {
    fn event(&mut self, event: Event) -> Result<(), String> {
        self(event);
        Ok(())
    }
}

/// What a read went through.
#[derive(Debug, Clone, Serialize)]
pub struct ReadStats {
    /// The file's serialisation.
    pub format: Format,
    /// Traces in the file.
    pub traces: usize,
    /// Events decoded and handed to the sink.
    pub decoded_events: u64,
    /// Events whose envelope was read but that were not decoded (names the
    /// analysis does not use).
    pub other_events: u64,
    /// Bytes read.
    pub bytes: u64,
    /// What was skipped, by kind (each kind is also one warning).
    pub skipped: BTreeMap<String, u64>,
    /// Odd but survivable things met while reading (one line each).
    pub warnings: Vec<Warning>,
    /// The trace headers as completed by the read (role told from the
    /// events, fields that came after a JSON trace's events, the origin of
    /// absolute times).
    #[serde(skip)]
    pub headers: Vec<TraceHeader>,
}

/// The event names decoded into `qlog` types.
pub fn decoded_event_names() -> &'static [&'static str] {
    dialect::DECODED_EVENT_NAMES
}

/// Whether the reader hands an event like `data` to its sink: the test for
/// a caller that holds events as values (see
/// [`crate::flow::FlowAnalyzer::record`]) to pass on what the reader would.
pub fn is_decoded(data: &EventData) -> bool {
    dialect::kind_of_data(data).is_some()
}

/// Read a qlog file, handing every decoded event to `sink`.
pub fn read_qlog(path: impl AsRef<Path>, sink: &mut dyn EventSink) -> Result<ReadStats> {
    let path = path.as_ref();
    let file = open(path)?;
    read_qlog_from(BufReader::with_capacity(256 * 1024, file), path, sink)
}

/// Read the trace headers only (the header and first event of each trace:
/// the first event fixes the origin of absolute times).
pub fn read_headers(path: impl AsRef<Path>) -> Result<Vec<TraceHeader>> {
    let path = path.as_ref();
    let file = open(path)?;
    let mut r = Reader::new(path, None, true);
    r.run(&mut BufReader::new(file))?;
    Ok(r.headers)
}

/// Like [`read_qlog`], from any buffered reader; `path` is only used in
/// messages.
pub fn read_qlog_from<R: BufRead>(
    mut input: R,
    path: &Path,
    sink: &mut dyn EventSink,
) -> Result<ReadStats> {
    let mut r = Reader::new(path, Some(sink), false);
    let format = r.run(&mut input)?;
    Ok(ReadStats {
        format,
        traces: r.headers.len(),
        decoded_events: r.decoded,
        other_events: r.other,
        bytes: r.bytes,
        skipped: r.skips.iter().map(|(k, s)| (k.clone(), s.count)).collect(),
        warnings: r.warnings,
        headers: r.headers,
    })
}

fn open(path: &Path) -> Result<File> {
    let file = File::open(path).map_err(|source| Error::Open {
        path: path.to_path_buf(),
        source,
    })?;
    match file.metadata() {
        Ok(m) if m.is_dir() => Err(Error::Open {
            path: path.to_path_buf(),
            source: std::io::Error::other("is a directory"),
        }),
        _ => Ok(file),
    }
}

/// serde_json's message without its " at line L column C" tail (we report
/// the line in the file ourselves).
fn json_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) if e.line() > 0 => s[..i].to_string(),
        _ => s,
    }
}

/// An event's envelope; `data` is only looked at for events the analysis
/// uses. 0.3's split `category` + `event` is read too.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    time: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    category: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    event: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

/// The time of an event the analysis does not use, read from the
/// head of its record without parsing the rest: quiche writes every event as
/// `{"time":<number>,"name":"<name>",...}`. `None` when the record does not
/// start that way, when the name is one the analysis decodes, or when the
/// record does not end in `}` (cut short: the full parse reports it).
///
/// Why: a quiche server's qlog of a bulk download is a quarter
/// `stream_data_moved` events by bytes, which the analysis never reads;
/// parsing them to skip them took about a fifth of reading the file. The
/// JSON of a record skipped this way is not checked past its name.
fn unused_event_time(text: &[u8]) -> Option<f64> {
    const TIME: &[u8] = b"{\"time\":";
    const NAME: &[u8] = b",\"name\":\"";
    if text.last() != Some(&b'}') {
        return None;
    }
    let rest = text.strip_prefix(TIME)?;
    let number_len = rest.iter().position(|&b| b == b',')?;
    let number = std::str::from_utf8(&rest[..number_len]).ok()?;
    if !is_json_number(number) {
        return None;
    }
    let time: f64 = number.parse().ok().filter(|t: &f64| t.is_finite())?;
    let rest = rest[number_len..].strip_prefix(NAME)?;
    let name_len = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    if rest[name_len] != b'"' {
        return None;
    }
    let name = std::str::from_utf8(&rest[..name_len]).ok()?;
    dialect::kind_of(name).is_none().then_some(time)
}

/// RFC 8259 §6's number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn is_json_number(s: &str) -> bool {
    fn digits(b: &[u8]) -> usize {
        b.iter().take_while(|c| c.is_ascii_digit()).count()
    }
    let mut b = s.as_bytes();
    if let Some(r) = b.strip_prefix(b"-") {
        b = r;
    }
    match b.first() {
        Some(b'0') => b = &b[1..],
        Some(b'1'..=b'9') => b = &b[digits(b)..],
        _ => return false,
    }
    if let Some(r) = b.strip_prefix(b".") {
        let n = digits(r);
        if n == 0 {
            return false;
        }
        b = &r[n..];
    }
    if let Some(r) = b.strip_prefix(b"e").or_else(|| b.strip_prefix(b"E")) {
        let r = r
            .strip_prefix(b"+")
            .or_else(|| r.strip_prefix(b"-"))
            .unwrap_or(r);
        let n = digits(r);
        if n == 0 {
            return false;
        }
        b = &r[n..];
    }
    b.is_empty()
}

/// An event's `time` as milliseconds: a JSON number, or a string holding
/// one; finite.
fn time_of(raw: &RawValue) -> Option<f64> {
    match serde_json::from_str::<serde_json::Value>(raw.get()).ok()? {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|t: &f64| t.is_finite())
}

/// An event the analysis uses, in quiche's layout, its `data` decoded in
/// the same pass as the envelope: `name` (a `quic:` name) comes before
/// `data`, so the kind is known when `data` is met. Anything else (another
/// order, another dialect, an escape in a key or the name, a field of
/// another type, a duplicate key) fails, and the record takes the
/// envelope-then-`data` path, which reads it as before. Why: that path
/// scans each `data` twice; with this pass, reading the server qlog of a
/// 10 s simulated LEDBAT++ download (18 MB) took 12.6 % fewer instructions
/// (`valgrind --tool=callgrind`), with byte-identical summaries of every
/// fixture.
struct OnePass<'a> {
    time: &'a RawValue,
    name: &'a str,
    data: EventData,
}

impl<'de> Deserialize<'de> for OnePass<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{Error as _, IgnoredAny, MapAccess, Visitor};
        struct OnePassVisitor;
        impl<'de> Visitor<'de> for OnePassVisitor {
            type Value = OnePass<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a qlog event with `time` and `name` before `data`")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let (mut time, mut name, mut data) = (None, None, None);
                while let Some(key) = map.next_key::<&'de str>()? {
                    match key {
                        "time" if time.is_none() => time = Some(map.next_value::<&RawValue>()?),
                        "name" if name.is_none() => name = Some(map.next_value::<&str>()?),
                        "data" if data.is_none() => {
                            let kind = name
                                .filter(|n: &&str| n.starts_with("quic:"))
                                .and_then(dialect::kind_of)
                                .ok_or_else(|| A::Error::custom("not read in one pass"))?;
                            data = Some(match kind {
                                dialect::Kind::PacketSent => {
                                    EventData::QuicPacketSent(map.next_value()?)
                                }
                                dialect::Kind::PacketReceived => {
                                    EventData::QuicPacketReceived(map.next_value()?)
                                }
                                dialect::Kind::Metrics => {
                                    EventData::QuicMetricsUpdated(map.next_value()?)
                                }
                                dialect::Kind::CongestionState => {
                                    EventData::QuicCongestionStateUpdated(map.next_value()?)
                                }
                                dialect::Kind::PacketLost => {
                                    EventData::QuicPacketLost(map.next_value()?)
                                }
                            });
                        }
                        "time" | "name" | "data" | "category" | "event" => {
                            return Err(A::Error::custom("not read in one pass"));
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                match (time, name, data) {
                    (Some(time), Some(name), Some(data)) => Ok(OnePass { time, name, data }),
                    _ => Err(A::Error::custom("not read in one pass")),
                }
            }
        }
        d.deserialize_map(OnePassVisitor)
    }
}

/// Whether a read goes on.
pub(crate) enum Step {
    Continue,
    /// Enough read (headers only), or the last record was cut short.
    Stop,
}

struct Skip {
    count: u64,
    first_line: u64,
}

/// Epoch milliseconds above this (1973) are taken for absolute times when
/// the trace does not say.
const ABSOLUTE_TIME_MS: f64 = 1e11;

pub(crate) struct Reader<'s> {
    path: &'s Path,
    sink: Option<&'s mut dyn EventSink>,
    headers_only: bool,
    headers: Vec<TraceHeader>,
    warnings: Vec<Warning>,
    skips: BTreeMap<String, Skip>,
    decoded: u64,
    other: u64,
    /// Events whose envelope (name, numeric time) was read.
    timed_events: u64,
    bytes: u64,
    // The current trace.
    last_time_ms: f64,
    clock_set: bool,
    role_open: bool,
}

impl<'s> Reader<'s> {
    fn new(path: &'s Path, sink: Option<&'s mut dyn EventSink>, headers_only: bool) -> Self {
        Reader {
            path,
            sink,
            headers_only,
            headers: Vec::new(),
            warnings: Vec::new(),
            skips: BTreeMap::new(),
            decoded: 0,
            other: 0,
            timed_events: 0,
            bytes: 0,
            last_time_ms: 0.0,
            clock_set: false,
            role_open: false,
        }
    }

    fn warn(&mut self, line: Option<u64>, message: String) {
        self.warnings.push(Warning {
            path: self.path.to_path_buf(),
            line,
            message,
        });
    }

    /// Count something skipped; one warning per kind comes at the end.
    fn skip(&mut self, kind: String, line: u64) {
        self.skips
            .entry(kind)
            .or_insert(Skip {
                count: 0,
                first_line: line,
            })
            .count += 1;
    }

    /// Anything read that the analysis can use: a trace with an event, or
    /// with nothing skipped (a header-only file is an idle flow).
    fn usable(&self) -> bool {
        !self.headers.is_empty() && (self.timed_events > 0 || self.skips.is_empty())
    }

    fn begin_trace(&mut self, header: TraceHeader) {
        if let Some(sink) = self.sink.as_mut() {
            sink.trace(&header);
        }
        self.role_open = header.role == Role::Unknown;
        self.headers.push(header);
        self.last_time_ms = 0.0;
        self.clock_set = false;
    }

    /// Fields of a JSON trace that came after its events.
    fn complete_trace(&mut self, full: TraceHeader) {
        let Some(h) = self.headers.last_mut() else {
            return;
        };
        // An explicit vantage point wins over the role told by the events.
        if full.role != Role::Unknown {
            h.role = full.role;
        }
        h.title = h.title.take().or(full.title);
        h.description = h.description.take().or(full.description);
        h.producer = h.producer.take().or(full.producer);
        h.controller = h.controller.take().or(full.controller);
        if h.wall_clock.is_none() && h.time_format != TimeFormat::Absolute {
            h.wall_clock = full.wall_clock;
        }
    }

    fn run<R: BufRead>(&mut self, input: &mut R) -> Result<Format> {
        let (first, blank_lines, blank_bytes) =
            framing::sniff(input).map_err(|e| self.read_err(e))?;
        self.bytes += blank_bytes;
        let format = match first {
            None => return Err(Error::Empty { path: self.path.to_path_buf() }),
            Some(RS) => {
                self.read_records(input, RS, 1 + blank_lines)?;
                Format::JsonSeq
            }
            Some(b'{') => {
                let (line, complete) = framing::first_line(input, MAX_RECORD_BYTES)
                    .map_err(|e| self.read_err(e))?;
                let ndjson = complete
                    && matches!(
                        serde_json::from_slice::<serde_json::Value>(&line),
                        Ok(serde_json::Value::Object(o)) if !o.contains_key("traces")
                    );
                let mut chained = Cursor::new(line).chain(input);
                if ndjson {
                    self.read_records(&mut chained, b'\n', 1 + blank_lines)?;
                    Format::NdJson
                } else {
                    json::read(self, &mut chained, blank_lines)?;
                    Format::Json
                }
            }
            Some(_) => {
                return Err(Error::malformed(
                    self.path,
                    1 + blank_lines,
                    "not a qlog file: expected JSON-SEQ (records starting with the 0x1E separator), JSON or NDJSON (a JSON object first)",
                ))
            }
        };
        self.finish()?;
        Ok(format)
    }

    fn read_err(&self, source: std::io::Error) -> Error {
        Error::Read {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// One warning per kind of skipped input; an error if nothing usable
    /// was read.
    fn finish(&mut self) -> Result<()> {
        let mut skips: Vec<(&String, &Skip)> = self.skips.iter().collect();
        skips.sort_by_key(|(_, s)| s.first_line);
        if !self.usable() {
            if let Some((kind, s)) = skips.first() {
                return Err(Error::malformed(
                    self.path,
                    s.first_line,
                    format!("no usable qlog event in the file; the first record skipped: {kind}"),
                ));
            }
            return Err(Error::Empty {
                path: self.path.to_path_buf(),
            });
        }
        let warnings: Vec<Warning> = skips
            .iter()
            .map(|(kind, s)| Warning {
                path: self.path.to_path_buf(),
                line: Some(s.first_line),
                message: if s.count == 1 {
                    format!("{kind}; skipped it")
                } else {
                    format!("{kind}; skipped {} like it (the first here)", s.count)
                },
            })
            .collect();
        self.warnings.extend(warnings);
        Ok(())
    }

    /// JSON-SEQ (`sep` 0x1E) or NDJSON (`sep` newline): a header record,
    /// then events.
    fn read_records<R: BufRead>(&mut self, input: &mut R, sep: u8, line: u64) -> Result<()> {
        let mut records = Records::new(input, sep, line);
        let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
        let mut have_header = false;
        let result = loop {
            let rec = match records.next(&mut buf) {
                Ok(Some(r)) => r,
                Ok(None) => break Ok(()),
                Err(RecordError::Io(e)) => break Err(self.read_err(e)),
                Err(RecordError::TooLong { line }) => {
                    break Err(Error::malformed(
                        self.path,
                        line,
                        format!(
                            "record longer than {} MiB (the most one qlog record may take); stopped reading",
                            MAX_RECORD_BYTES >> 20
                        ),
                    ))
                }
            };
            if !have_header {
                match serde_json::from_slice::<serde_json::Value>(&buf) {
                    Ok(serde_json::Value::Object(o)) => {
                        have_header = true;
                        if o.contains_key("name") && o.contains_key("time") {
                            self.warn(
                                Some(rec.line),
                                "no qlog header record: the first record is an event; read the events without one".into(),
                            );
                            self.begin_trace(TraceHeader::implicit(0, rec.line));
                        } else {
                            let trace = o.get("trace").and_then(|t| t.as_object()).unwrap_or(&o);
                            self.begin_trace(header::parse(trace, Some(&o), 0, rec.line));
                            continue;
                        }
                    }
                    Ok(_) => {
                        self.skip("a record that is not a JSON object".into(), rec.line);
                        continue;
                    }
                    Err(e) if e.is_eof() && rec.at_eof => {
                        break Err(Error::malformed(
                            self.path,
                            rec.line,
                            "the qlog header record is cut short (file truncated?)",
                        ));
                    }
                    Err(_) => {
                        self.skip("a record that is not valid JSON".into(), rec.line);
                        continue;
                    }
                }
            }
            match self.event_text(&buf, rec.line, rec.at_eof) {
                Ok(Step::Continue) => {}
                Ok(Step::Stop) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.bytes += records.bytes;
        result
    }

    /// One event's JSON text, starting at `line`; `at_eof`: nothing follows
    /// it in the file.
    fn event_text(&mut self, text: &[u8], line: u64, at_eof: bool) -> Result<Step> {
        if !at_eof {
            if let Some(time) = unused_event_time(text) {
                // The same steps as an unused event below, without parsing
                // the rest of the record.
                if self.headers.is_empty() {
                    self.begin_trace(TraceHeader::implicit(0, line));
                }
                self.clock(time);
                self.timed_events += 1;
                self.other += 1;
                return Ok(if self.headers_only {
                    Step::Stop
                } else {
                    Step::Continue
                });
            }
        }
        if let Ok(one) = serde_json::from_slice::<OnePass>(text) {
            if let Some(time) = time_of(one.time) {
                if dialect::typed_is_sound(&one.data) {
                    if self.headers.is_empty() {
                        self.begin_trace(TraceHeader::implicit(0, line));
                    }
                    let time_ms = self.clock(time);
                    self.timed_events += 1;
                    if self.headers_only {
                        return Ok(Step::Stop);
                    }
                    return self.deliver(one.name, time_ms, one.data, line);
                }
            }
        }
        let env = match serde_json::from_slice::<Envelope>(text) {
            Ok(env) => env,
            Err(e) if e.is_eof() && at_eof => {
                self.warn(
                    Some(line),
                    "last record is cut short (the run was probably killed); ignored it".into(),
                );
                return Ok(Step::Stop);
            }
            Err(e) if e.is_eof() => {
                self.skip("a record cut short before the next one".into(), line);
                return Ok(Step::Continue);
            }
            Err(e) if e.is_data() => {
                self.skip(
                    "a record that is not a qlog event (an object with `time`, `name`, `data`)"
                        .into(),
                    line,
                );
                return Ok(Step::Continue);
            }
            Err(_) => {
                self.skip("a record that is not valid JSON".into(), line);
                return Ok(Step::Continue);
            }
        };
        if self.headers.is_empty() {
            self.begin_trace(TraceHeader::implicit(0, line));
        }
        let name: Cow<'_, str> = match (&env.name, &env.category, &env.event) {
            (Some(n), _, _) => Cow::Borrowed(n.as_ref()),
            (None, Some(c), Some(e)) => Cow::Owned(format!("{c}:{e}")),
            _ => {
                self.skip("an event without a `name`".into(), line);
                return Ok(Step::Continue);
            }
        };
        let Some(time) = env.time.and_then(time_of) else {
            self.skip("an event without a numeric `time`".into(), line);
            return Ok(Step::Continue);
        };
        let time_ms = self.clock(time);
        self.timed_events += 1;
        let Some(kind) = dialect::kind_of(&name) else {
            self.other += 1;
            return Ok(if self.headers_only {
                Step::Stop
            } else {
                Step::Continue
            });
        };
        if self.headers_only {
            return Ok(Step::Stop);
        }
        let Some(raw) = env.data else {
            self.skip(format!("{name}: an event without `data`"), line);
            return Ok(Step::Continue);
        };
        let typed = if name.starts_with("quic:") {
            dialect::decode_typed(kind, raw.get())
        } else {
            None
        };
        let data = match typed {
            Some(d) => Some(d),
            None => self.decode_lenient(kind, &name, raw, line),
        };
        let Some(data) = data else {
            return Ok(Step::Continue);
        };
        self.deliver(&name, time_ms, data, line)
    }

    /// Hands a decoded event to the sink.
    fn deliver(&mut self, name: &str, time_ms: f64, data: EventData, line: u64) -> Result<Step> {
        self.infer_role(&data);
        self.decoded += 1;
        let trace = self.headers.len() - 1;
        if let Some(sink) = self.sink.as_mut() {
            sink.event(Event {
                trace,
                time_ms,
                line,
                data,
            })
            .map_err(|m| Error::malformed(self.path, line, format!("{name}: {m}")))?;
        }
        Ok(Step::Continue)
    }

    /// Any dialect, field by field; what is odd is counted.
    fn decode_lenient(
        &mut self,
        kind: dialect::Kind,
        name: &str,
        raw: &RawValue,
        line: u64,
    ) -> Option<EventData> {
        let value = match serde_json::from_str::<serde_json::Value>(raw.get()) {
            Ok(v) => v,
            Err(_) => {
                self.skip(format!("{name}: `data` is not valid JSON"), line);
                return None;
            }
        };
        let mut notes = Vec::new();
        let data = dialect::decode(kind, name, &value, &mut |n| notes.push(n));
        for n in notes {
            self.skip(n, line);
        }
        data
    }

    /// An event's time as milliseconds since the trace's reference time.
    fn clock(&mut self, time: f64) -> f64 {
        let first = !self.clock_set;
        self.clock_set = true;
        let Some(h) = self.headers.last_mut() else {
            return time;
        };
        if first && h.time_format == TimeFormat::Unknown {
            h.time_format = if time > ABSOLUTE_TIME_MS {
                TimeFormat::Absolute
            } else {
                TimeFormat::Relative
            };
        }
        let t = match h.time_format {
            TimeFormat::Absolute => {
                if first {
                    h.time_origin_ms = time;
                    h.wall_clock = (time > 0.0 && time < 1e15)
                        .then(|| UNIX_EPOCH + Duration::from_secs_f64(time / 1e3));
                }
                time - h.time_origin_ms
            }
            TimeFormat::Delta => self.last_time_ms + time,
            TimeFormat::Relative | TimeFormat::Unknown => time,
        };
        self.last_time_ms = t;
        t
    }

    /// A trace without a vantage point: the endpoint that sends the first
    /// Initial packet is the client, the one that receives it the server.
    fn infer_role(&mut self, data: &EventData) {
        if !self.role_open {
            return;
        }
        let role = match data {
            EventData::QuicPacketSent(p) if p.header.packet_type == PacketType::Initial => {
                Role::Client
            }
            EventData::QuicPacketReceived(p) if p.header.packet_type == PacketType::Initial => {
                Role::Server
            }
            _ => return,
        };
        self.role_open = false;
        if let Some(h) = self.headers.last_mut() {
            h.role = role;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_json_number, read_qlog_from, unused_event_time, Event, OnePass};

    /// The events a JSON-SEQ text gives, and the read's counts.
    fn events_of(records: &[&str]) -> (Vec<(f64, qlog::events::EventData)>, u64, u64) {
        let mut text = String::from("\u{1e}{\"qlog_version\":\"0.3\",\"trace\":{}}\n");
        for r in records {
            text.push('\u{1e}');
            text.push_str(r);
            text.push('\n');
        }
        let mut events = Vec::new();
        let stats = read_qlog_from(
            std::io::Cursor::new(text),
            std::path::Path::new("test.sqlog"),
            &mut |e: Event| events.push((e.time_ms, e.data)),
        )
        .unwrap();
        (events, stats.decoded_events, stats.other_events)
    }

    #[test]
    fn one_pass_and_two_passes_read_the_same_events() {
        let sent = r#"{"header":{"packet_type":"1RTT","packet_number":7},"raw":{"length":1350},"frames":[{"frame_type":"stream","stream_id":0,"offset":4096,"fin":false,"raw":{"payload_length":1300}}]}"#;
        let metrics = r#"{"min_rtt":50.0,"smoothed_rtt":61.5,"latest_rtt":70.25,"congestion_window":40500,"bytes_in_flight":27000}"#;
        // quiche's layout: `name` before `data` (the one-pass read).
        let quiche_layout = [
            format!(r#"{{"time":1.5,"name":"quic:packet_sent","data":{sent}}}"#),
            format!(r#"{{"time":2,"name":"quic:recovery_metrics_updated","data":{metrics}}}"#),
        ];
        // The same events with `data` first, and one with an extra key:
        // the envelope-then-data read.
        let other_layout = [
            format!(r#"{{"data":{sent},"time":1.5,"name":"quic:packet_sent"}}"#),
            format!(
                r#"{{"time":2,"data":{metrics},"name":"quic:recovery_metrics_updated","x":[1]}}"#
            ),
        ];
        for r in &quiche_layout {
            assert!(serde_json::from_str::<OnePass>(r).is_ok(), "{r}");
        }
        for r in &other_layout {
            assert!(serde_json::from_str::<OnePass>(r).is_err(), "{r}");
        }
        let (a, a_decoded, a_other) = events_of(&quiche_layout.each_ref().map(String::as_str));
        let (b, b_decoded, b_other) = events_of(&other_layout.each_ref().map(String::as_str));
        assert_eq!((a_decoded, a_other), (2, 0));
        assert_eq!((b_decoded, b_other), (2, 0));
        assert_eq!(a.len(), 2);
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "the two reads must give the same events"
        );
        assert_eq!((a[0].0, a[1].0), (1.5, 2.0));
    }

    #[test]
    fn a_field_of_another_type_falls_back_and_is_reported_as_before() {
        // `latest_rtt` as a string: the one-pass read fails; the lenient
        // path keeps the other fields.
        let (events, decoded, _) = events_of(&[
            r#"{"time":3,"name":"quic:recovery_metrics_updated","data":{"latest_rtt":"x","congestion_window":1200}}"#,
        ]);
        assert_eq!(decoded, 1);
        match &events[0].1 {
            qlog::events::EventData::QuicMetricsUpdated(m) => {
                assert_eq!((m.latest_rtt, m.congestion_window), (None, Some(1200)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn json_numbers_are_rfc_8259_numbers() {
        for ok in ["0", "-0", "51.534", "12", "1e3", "1E+3", "2.5e-7", "-0.0"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in [
            "", "-", "01", "1.", ".5", "+1", "1e", "1e+", "inf", "NaN", "0x10", "1 ", "1_0",
        ] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn an_unused_event_is_read_up_to_its_name() {
        let moved = br#"{"time":51.534,"name":"quic:stream_data_moved","data":{"stream_id":0}}"#;
        assert_eq!(unused_event_time(moved), Some(51.534));
        // What follows the name is not parsed.
        assert_eq!(
            unused_event_time(br#"{"time":2,"name":"quic:stream_data_moved","data":{]}"#),
            Some(2.0)
        );
    }

    #[test]
    fn anything_else_takes_the_full_parse() {
        for text in [
            // Names the analysis decodes.
            &br#"{"time":1,"name":"quic:packet_sent","data":{}}"#[..],
            br#"{"time":1,"name":"recovery:metrics_updated","data":{}}"#,
            // Another layout: keys in another order, spaces, a string time.
            br#"{"name":"quic:stream_data_moved","time":1,"data":{}}"#,
            br#"{ "time":1,"name":"quic:stream_data_moved","data":{}}"#,
            br#"{"time":"1","name":"quic:stream_data_moved","data":{}}"#,
            // Not a JSON number, or not finite.
            br#"{"time":01,"name":"quic:stream_data_moved","data":{}}"#,
            br#"{"time":1e999,"name":"quic:stream_data_moved","data":{}}"#,
            // An escape in the name.
            br#"{"time":1,"name":"quic:stream\u005fdata_moved","data":{}}"#,
            // Cut short.
            br#"{"time":1,"name":"quic:stream_data_moved","data":{"#,
            br#"{"time":1,"name":"quic:stream_data_moved"#,
        ] {
            assert_eq!(
                unused_event_time(text),
                None,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
