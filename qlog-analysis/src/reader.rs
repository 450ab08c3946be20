//! Streaming qlog reader.
//!
//! Two serialisations are read, record by record, never holding the file in
//! memory:
//!
//! * JSON-SEQ (`.sqlog`, RFC 7464), what quiche writes: every record starts
//!   with the record separator byte 0x1E and ends with a newline; the first
//!   record is the header (`qlog::QlogSeq`), each following one an event.
//! * plain JSON (`.qlog`): one object with `traces[]`, each holding `events[]`.
//!   It is streamed with a serde visitor, one event at a time.
//!
//! The format is told by the first non-blank byte (0x1E or `{`), not by the
//! file name. Events the analysis uses are decoded into the `qlog` crate's own
//! types (`qlog::events::EventData`), so a field of the wrong JSON type is an
//! error that names the file, the line and the field. Other events only have
//! their envelope (`time`, `name`) checked and are counted, not decoded.
//!
//! A record cut short at the very end of the file (a run that was killed
//! while writing) is dropped with a [`Warning`]; anything else malformed is an
//! [`Error::Malformed`] naming the file and the 1-based line.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use qlog::events::quic::{
    CongestionStateUpdated, PacketLost, PacketReceived, PacketSent, RecoveryMetricsUpdated,
};
use qlog::events::EventData;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{Error, Result, Warning};

/// The JSON-SEQ record separator.
pub const RS: u8 = 0x1e;

/// Which endpoint wrote the trace (the header's `vantage_point.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Client,
    Server,
    Network,
    #[default]
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
    JsonSeq,
    Json,
}

/// What a trace's header says.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceHeader {
    /// Index of the trace in the file (always 0 for JSON-SEQ).
    pub index: usize,
    /// Line of the header (JSON-SEQ) or of the trace object (JSON).
    pub line: u64,
    pub title: Option<String>,
    pub description: Option<String>,
    pub role: Role,
    /// The wall-clock time the trace's event times are relative to
    /// (`common_fields.reference_time.wall_clock_time`, or an older producer's
    /// epoch milliseconds). Used to line up flows written by different
    /// processes.
    pub wall_clock: Option<SystemTime>,
    /// Event times are deltas from the previous event
    /// (`time_format: relative_to_previous_event`); the reader turns them into
    /// times relative to the reference time.
    pub relative_to_previous: bool,
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
    /// The event, as the `qlog` crate's type.
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
    pub format: Format,
    pub traces: usize,
    /// Events decoded and handed to the sink.
    pub decoded_events: u64,
    /// Events whose envelope was checked but that were not decoded (names
    /// the analysis does not use).
    pub other_events: u64,
    /// Bytes read.
    pub bytes: u64,
    pub warnings: Vec<Warning>,
}

/// The event names decoded into `qlog` types (current quiche names first,
/// older draft names after).
pub fn decoded_event_names() -> &'static [&'static str] {
    &[
        "quic:packet_sent",
        "quic:packet_received",
        "quic:recovery_metrics_updated",
        "quic:congestion_state_updated",
        "quic:packet_lost",
        "transport:packet_sent",
        "transport:packet_received",
        "recovery:metrics_updated",
        "recovery:congestion_state_updated",
        "recovery:packet_lost",
    ]
}

#[derive(Clone, Copy)]
enum Kind {
    PacketSent,
    PacketReceived,
    Metrics,
    CongestionState,
    PacketLost,
}

fn kind_of(name: &str) -> Option<Kind> {
    Some(match name {
        "quic:packet_sent" | "transport:packet_sent" => Kind::PacketSent,
        "quic:packet_received" | "transport:packet_received" => Kind::PacketReceived,
        "quic:recovery_metrics_updated" | "recovery:metrics_updated" | "quic:metrics_updated" => {
            Kind::Metrics
        }
        "quic:congestion_state_updated" | "recovery:congestion_state_updated" => {
            Kind::CongestionState
        }
        "quic:packet_lost" | "recovery:packet_lost" => Kind::PacketLost,
        _ => return None,
    })
}

/// Read a qlog file, handing every decoded event to `sink`.
pub fn read_qlog(path: impl AsRef<Path>, sink: &mut dyn EventSink) -> Result<ReadStats> {
    let path = path.as_ref();
    let file = open(path)?;
    read_qlog_from(BufReader::with_capacity(256 * 1024, file), path, sink)
}

/// Read the trace headers only (cheap for JSON-SEQ: the first record).
pub fn read_headers(path: impl AsRef<Path>) -> Result<Vec<TraceHeader>> {
    let path = path.as_ref();
    let file = open(path)?;
    let mut r = Reader::new(path, None);
    r.run(&mut BufReader::new(file), true)?;
    Ok(r.headers)
}

/// Like [`read_qlog`], from any buffered reader; `path` is only used in
/// messages.
pub fn read_qlog_from<R: BufRead>(
    reader: R,
    path: &Path,
    sink: &mut dyn EventSink,
) -> Result<ReadStats> {
    let mut reader = reader;
    let mut r = Reader::new(path, Some(sink));
    let format = r.run(&mut reader, false)?;
    Ok(ReadStats {
        format,
        traces: r.headers.len(),
        decoded_events: r.decoded,
        other_events: r.other,
        bytes: r.bytes.get(),
        warnings: r.warnings,
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

struct Reader<'s> {
    path: &'s Path,
    sink: Option<&'s mut dyn EventSink>,
    headers: Vec<TraceHeader>,
    warnings: Vec<Warning>,
    decoded: u64,
    other: u64,
    bytes: Rc<Cell<u64>>,
    /// Last absolute event time per trace (for relative time formats).
    last_time: f64,
}

/// Counts bytes and newlines that go through it: the plain JSON path relies
/// on it for line numbers, since serde_json pulls bytes one at a time.
struct CountingReader<'a, R> {
    inner: &'a mut R,
    newlines: Rc<Cell<u64>>,
    bytes: Rc<Cell<u64>>,
}

impl<R: BufRead> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.set(self.bytes.get() + n as u64);
        self.newlines
            .set(self.newlines.get() + count_newlines(&buf[..n]));
        Ok(n)
    }
}

/// Lines into a JSON text at which serde_json saw its error (0 = first).
fn extra_lines(e: &serde_json::Error) -> u64 {
    e.line().saturating_sub(1) as u64
}

fn count_newlines(data: &[u8]) -> u64 {
    data.iter().filter(|&&b| b == b'\n').count() as u64
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

/// Re-run a failed decode with path tracking to name the offending field.
fn field_path<'de, T: Deserialize<'de>>(json: &'de str) -> Option<String> {
    let mut de = serde_json::Deserializer::from_str(json);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(e) => {
            let p = e.path().to_string();
            (p != ".").then_some(p)
        }
        Ok(_) => None,
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    time: f64,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

enum Outcome {
    Continue,
    /// The last record was cut short; stop here.
    Truncated,
}

impl<'s> Reader<'s> {
    fn new(path: &'s Path, sink: Option<&'s mut dyn EventSink>) -> Self {
        let bytes = Rc::new(Cell::new(0));
        Reader {
            path,
            sink,
            headers: Vec::new(),
            warnings: Vec::new(),
            decoded: 0,
            other: 0,
            bytes,
            last_time: 0.0,
        }
    }

    fn read_err(&self, source: std::io::Error) -> Error {
        Error::Read {
            path: self.path.to_path_buf(),
            source,
        }
    }

    fn warn(&mut self, line: Option<u64>, message: String) {
        self.warnings.push(Warning {
            path: self.path.to_path_buf(),
            line,
            message,
        });
    }

    /// Look at the first non-blank byte without consuming it; count the
    /// blank lines skipped.
    fn sniff<R: BufRead>(&mut self, input: &mut R) -> Result<(Option<u8>, u64)> {
        let mut lines = 0;
        loop {
            let buf = match input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_err(e)),
            };
            if buf.is_empty() {
                return Ok((None, lines));
            }
            // Skip a UTF-8 byte order mark and whitespace.
            let skip = buf
                .iter()
                .take_while(|b| {
                    b.is_ascii_whitespace() || **b == 0xef || **b == 0xbb || **b == 0xbf
                })
                .count();
            lines += count_newlines(&buf[..skip]);
            if skip < buf.len() {
                let first = buf[skip];
                input.consume(skip);
                self.bytes.set(self.bytes.get() + skip as u64);
                return Ok((Some(first), lines));
            }
            let n = buf.len();
            input.consume(n);
            self.bytes.set(self.bytes.get() + n as u64);
        }
    }

    fn run<R: BufRead>(&mut self, input: &mut R, headers_only: bool) -> Result<Format> {
        let (first, blank_lines) = self.sniff(input)?;
        match first {
            None => Err(Error::Empty { path: self.path.to_path_buf() }),
            Some(RS) => {
                self.read_seq(input, 1 + blank_lines, headers_only)?;
                Ok(Format::JsonSeq)
            }
            Some(b'{') => {
                self.read_json(input, blank_lines, headers_only)?;
                Ok(Format::Json)
            }
            Some(_) => Err(Error::malformed(
                self.path,
                1 + blank_lines,
                "not a qlog file: expected JSON-SEQ (records starting with the 0x1E separator) or a JSON object",
            )),
        }
    }

    // ---------------------------------------------------------------- JSON-SEQ

    fn read_seq<R: BufRead>(
        &mut self,
        input: &mut R,
        mut line: u64,
        headers_only: bool,
    ) -> Result<()> {
        let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
        // Consume the first separator.
        let n = input
            .read_until(RS, &mut buf)
            .map_err(|e| self.read_err(e))?;
        self.bytes.set(self.bytes.get() + n as u64);
        let mut have_header = false;
        loop {
            buf.clear();
            let n = input
                .read_until(RS, &mut buf)
                .map_err(|e| self.read_err(e))?;
            if n == 0 {
                break;
            }
            self.bytes.set(self.bytes.get() + n as u64);
            let at_eof = buf.last() != Some(&RS);
            if !at_eof {
                buf.pop();
            }
            let record_line = line;
            line += count_newlines(&buf);
            let lead = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let start_line = record_line + count_newlines(&buf[..lead]);
            let mut end = buf.len();
            while end > lead && buf[end - 1].is_ascii_whitespace() {
                end -= 1;
            }
            if end == lead {
                continue; // an empty record
            }
            let body = &buf[lead..end];
            if !have_header {
                let header = self.seq_header(body, start_line, at_eof)?;
                if let Some(sink) = self.sink.as_mut() {
                    sink.trace(&header);
                }
                self.headers.push(header);
                have_header = true;
                if headers_only {
                    return Ok(());
                }
                continue;
            }
            match self.seq_event(body, start_line, at_eof)? {
                Outcome::Continue => {}
                Outcome::Truncated => break,
            }
        }
        if !have_header {
            return Err(Error::Empty {
                path: self.path.to_path_buf(),
            });
        }
        Ok(())
    }

    fn seq_header(&self, body: &[u8], line: u64, at_eof: bool) -> Result<TraceHeader> {
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
            let what = if e.is_eof() && at_eof {
                "the qlog header record is cut short (file truncated?)".to_string()
            } else {
                format!("bad qlog header record: {}", json_message(&e))
            };
            Error::malformed(self.path, line + extra_lines(&e), what)
        })?;
        let obj = value.as_object();
        if obj.is_some_and(|o| o.contains_key("trace")) {
            // What quiche writes, read with the qlog crate's type.
            if let Ok(seq) = qlog::QlogSeq::deserialize(&value) {
                let t = seq.trace;
                let mut h = TraceHeader {
                    index: 0,
                    line,
                    title: t.title.or(seq.title),
                    description: t.description.or(seq.description),
                    role: t
                        .vantage_point
                        .as_ref()
                        .map(|v| Role::from(&v.ty))
                        .unwrap_or_default(),
                    wall_clock: None,
                    relative_to_previous: false,
                };
                if let Some(cf) = &t.common_fields {
                    h.wall_clock = cf
                        .reference_time
                        .wall_clock_time
                        .as_deref()
                        .and_then(parse_wall_clock);
                    h.relative_to_previous =
                        cf.time_format == Some(qlog::TimeFormat::RelativeToPreviousEvent);
                }
                return Ok(h);
            }
            // An older or foreign producer: read what we use, leniently.
            return self.lenient_header(&value["trace"], 0, line);
        }
        let msg = if obj.is_some_and(|o| o.contains_key("time") && o.contains_key("name")) {
            "the first record is an event, not a qlog header (no \"trace\")"
        } else {
            "not a qlog JSON-SEQ header: no \"trace\" object in the first record"
        };
        Err(Error::malformed(self.path, line, msg))
    }

    fn lenient_header(
        &self,
        trace: &serde_json::Value,
        index: usize,
        line: u64,
    ) -> Result<TraceHeader> {
        let Some(t) = trace.as_object() else {
            return Err(Error::malformed(
                self.path,
                line,
                "qlog header: \"trace\" is not an object",
            ));
        };
        let text = |k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let role = match t.get("vantage_point") {
            None | Some(serde_json::Value::Null) => Role::Unknown,
            Some(v) => {
                let vp = qlog::VantagePoint::deserialize(v).map_err(|e| {
                    Error::malformed(
                        self.path,
                        line,
                        format!("qlog header: vantage_point: {}", json_message(&e)),
                    )
                })?;
                Role::from(&vp.ty)
            }
        };
        let mut h = TraceHeader {
            index,
            line,
            title: text("title"),
            description: text("description"),
            role,
            wall_clock: None,
            relative_to_previous: false,
        };
        if let Some(cf) = t.get("common_fields").and_then(|v| v.as_object()) {
            match cf.get("reference_time") {
                Some(serde_json::Value::Object(rt)) => {
                    h.wall_clock = rt
                        .get("wall_clock_time")
                        .and_then(|v| v.as_str())
                        .and_then(parse_wall_clock);
                }
                // Older drafts: milliseconds since the Unix epoch.
                Some(v) => {
                    let ms = v
                        .as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.parse().ok()));
                    h.wall_clock = ms
                        .filter(|m| *m > 0.0)
                        .map(|m| UNIX_EPOCH + Duration::from_secs_f64(m / 1e3));
                }
                None => {}
            }
            h.relative_to_previous = matches!(
                cf.get("time_format").and_then(|v| v.as_str()),
                Some("relative_to_previous_event" | "delta")
            );
        }
        Ok(h)
    }

    fn seq_event(&mut self, body: &[u8], line: u64, at_eof: bool) -> Result<Outcome> {
        match serde_json::from_slice::<Envelope>(body) {
            Ok(env) => {
                self.event(env, body, line)?;
                Ok(Outcome::Continue)
            }
            Err(e) if e.is_eof() && at_eof => {
                self.warn(
                    Some(line),
                    "last record is cut short (the run was probably killed); ignored it"
                        .to_string(),
                );
                Ok(Outcome::Truncated)
            }
            Err(e) => {
                let what = if e.is_eof() {
                    "record ends before its JSON value does (a cut-short record followed by more records)"
                        .to_string()
                } else {
                    format!("bad event record: {}", json_message(&e))
                };
                Err(Error::malformed(self.path, line + extra_lines(&e), what))
            }
        }
    }

    /// Decode an event whose envelope parsed; `record` is the whole record
    /// text (for locating errors), `line` where it starts.
    fn event(&mut self, env: Envelope<'_>, record: &[u8], line: u64) -> Result<()> {
        let trace = self.headers.len().saturating_sub(1);
        let relative = self.headers.last().is_some_and(|h| h.relative_to_previous);
        let time_ms = if relative {
            self.last_time + env.time
        } else {
            env.time
        };
        self.last_time = time_ms;
        let Some(kind) = kind_of(&env.name) else {
            self.other += 1;
            return Ok(());
        };
        let Some(raw) = env.data else {
            return Err(Error::malformed(
                self.path,
                line,
                format!("{}: missing field `data`", env.name),
            ));
        };
        let json = raw.get();
        let decoded = match kind {
            Kind::PacketSent => {
                serde_json::from_str::<PacketSent>(json).map(EventData::QuicPacketSent)
            }
            Kind::PacketReceived => {
                serde_json::from_str::<PacketReceived>(json).map(EventData::QuicPacketReceived)
            }
            Kind::Metrics => serde_json::from_str::<RecoveryMetricsUpdated>(json)
                .map(EventData::QuicMetricsUpdated),
            Kind::CongestionState => serde_json::from_str::<CongestionStateUpdated>(json)
                .map(EventData::QuicCongestionStateUpdated),
            Kind::PacketLost => {
                serde_json::from_str::<PacketLost>(json).map(EventData::QuicPacketLost)
            }
        };
        let data = match decoded {
            Ok(d) => d,
            Err(e) => {
                let field = match kind {
                    Kind::PacketSent => field_path::<PacketSent>(json),
                    Kind::PacketReceived => field_path::<PacketReceived>(json),
                    Kind::Metrics => field_path::<RecoveryMetricsUpdated>(json),
                    Kind::CongestionState => field_path::<CongestionStateUpdated>(json),
                    Kind::PacketLost => field_path::<PacketLost>(json),
                };
                // Where `data` starts inside the record, to count lines.
                let offset = (json.as_ptr() as usize).saturating_sub(record.as_ptr() as usize);
                let data_line = line + count_newlines(&record[..offset.min(record.len())]);
                let at = data_line + extra_lines(&e);
                let field = field
                    .map(|f| format!(" (field `data.{f}`)"))
                    .unwrap_or_default();
                return Err(Error::malformed(
                    self.path,
                    at,
                    format!("{}: {}{}", env.name, json_message(&e), field),
                ));
            }
        };
        self.decoded += 1;
        if let Some(sink) = self.sink.as_mut() {
            sink.event(Event {
                trace,
                time_ms,
                line,
                data,
            })
            .map_err(|m| Error::malformed(self.path, line, format!("{}: {m}", env.name)))?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- JSON

    fn read_json<R: BufRead>(
        &mut self,
        input: &mut R,
        blank_lines: u64,
        headers_only: bool,
    ) -> Result<()> {
        let newlines = Rc::new(Cell::new(blank_lines));
        let mut state = JsonState {
            failure: None,
            in_events: false,
            saw_traces: false,
            headers_only,
        };
        let result = {
            let input = CountingReader {
                inner: input,
                newlines: newlines.clone(),
                bytes: self.bytes.clone(),
            };
            let mut de = serde_json::Deserializer::from_reader(input);
            let r = TopSeed {
                reader: self,
                state: &mut state,
                newlines: &newlines,
            }
            .deserialize(&mut de);
            r.and_then(|_| de.end())
        };
        if let Some(failure) = state.failure.take() {
            return Err(failure);
        }
        match result {
            Ok(()) => {}
            Err(e) if e.is_eof() && state.in_events => {
                let line = e.line().max(1) as u64;
                self.warn(
                    Some(line),
                    "file ends inside the events array (the run was probably killed); kept the events before".into(),
                );
            }
            Err(e) if e.is_io() => {
                return Err(Error::Read {
                    path: self.path.to_path_buf(),
                    source: std::io::Error::other(e),
                });
            }
            Err(e) => {
                let what = if e.is_eof() {
                    "file ends before the JSON document does (truncated?)".to_string()
                } else {
                    format!("not a valid qlog JSON file: {}", json_message(&e))
                };
                return Err(Error::malformed(self.path, (e.line() as u64).max(1), what));
            }
        }
        if !state.saw_traces {
            return Err(Error::malformed(
                self.path,
                1,
                "not a qlog file: the JSON object has no \"traces\" array",
            ));
        }
        Ok(())
    }
}

struct JsonState {
    /// An error of ours that aborted the serde walk.
    failure: Option<Error>,
    in_events: bool,
    saw_traces: bool,
    headers_only: bool,
}

struct TopSeed<'a, 's> {
    reader: &'a mut Reader<'s>,
    state: &'a mut JsonState,
    newlines: &'a Rc<Cell<u64>>,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a qlog JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "traces" {
                self.state.saw_traces = true;
                map.next_value_seed(TracesSeed {
                    reader: self.reader,
                    state: self.state,
                    newlines: self.newlines,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct TracesSeed<'a, 's> {
    reader: &'a mut Reader<'s>,
    state: &'a mut JsonState,
    newlines: &'a Rc<Cell<u64>>,
}

impl<'de> DeserializeSeed<'de> for TracesSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for TracesSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of traces")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            let seed = TraceSeed {
                reader: &mut *self.reader,
                state: &mut *self.state,
                newlines: self.newlines,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
        }
    }
}

struct TraceSeed<'a, 's> {
    reader: &'a mut Reader<'s>,
    state: &'a mut JsonState,
    newlines: &'a Rc<Cell<u64>>,
}

impl<'de> DeserializeSeed<'de> for TraceSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TraceSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace object")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let line = self.newlines.get() + 1;
        let index = self.reader.headers.len();
        // Header fields, gathered as a JSON object and read like a lenient
        // JSON-SEQ header.
        let mut fields = serde_json::Map::new();
        let mut announced = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "events" && !announced {
                // The header is what came before the events (as in quiche's
                // field order), in both passes.
                let header = self
                    .make_header(&fields, index, line)
                    .map_err(|e| self.fail(e))?;
                if let Some(sink) = self.reader.sink.as_mut() {
                    sink.trace(&header);
                }
                self.reader.headers.push(header);
                self.reader.last_time = 0.0;
                announced = true;
                self.state.in_events = true;
                if self.state.headers_only {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    map.next_value_seed(EventsSeed {
                        reader: &mut *self.reader,
                        state: &mut *self.state,
                        newlines: self.newlines,
                    })?;
                }
                self.state.in_events = false;
            } else if key == "events" {
                return Err(self.fail(Error::malformed(
                    self.reader.path,
                    line,
                    "trace has two \"events\" arrays",
                )));
            } else if matches!(
                key.as_str(),
                "title" | "description" | "vantage_point" | "common_fields"
            ) {
                let v: serde_json::Value = map.next_value()?;
                fields.insert(key, v);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if !announced {
            let header = self
                .make_header(&fields, index, line)
                .map_err(|e| self.fail(e))?;
            if let Some(sink) = self.reader.sink.as_mut() {
                sink.trace(&header);
            }
            self.reader.headers.push(header);
        }
        Ok(())
    }
}

impl TraceSeed<'_, '_> {
    fn make_header(
        &self,
        fields: &serde_json::Map<String, serde_json::Value>,
        index: usize,
        line: u64,
    ) -> Result<TraceHeader> {
        self.reader
            .lenient_header(&serde_json::Value::Object(fields.clone()), index, line)
    }
    fn fail<E: de::Error>(&mut self, e: Error) -> E {
        self.state.failure = Some(e);
        E::custom("aborted")
    }
}

struct EventsSeed<'a, 's> {
    reader: &'a mut Reader<'s>,
    state: &'a mut JsonState,
    newlines: &'a Rc<Cell<u64>>,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            let text = raw.get();
            // The reader stops right after the closing brace, so the current
            // line is the event's last line.
            let line = self.newlines.get() + 1 - count_newlines(text.as_bytes());
            let result = match serde_json::from_str::<Envelope>(text) {
                Ok(env) => self.reader.event(env, text.as_bytes(), line),
                Err(e) => Err(Error::malformed(
                    self.reader.path,
                    line + extra_lines(&e),
                    format!("bad event: {}", json_message(&e)),
                )),
            };
            if let Err(e) = result {
                self.state.failure = Some(e);
                return Err(de::Error::custom("aborted"));
            }
        }
        Ok(())
    }
}

/// Parse an RFC 3339 wall-clock time as quiche writes it
/// (`2026-11-21T23:39:27.123456789Z`).
pub fn parse_wall_clock(s: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339(s)
        .ok()
        .or_else(|| humantime::parse_rfc3339_weak(s).ok())
}
