//! Event names and `data` of every qlog dialect in use, turned into the
//! `qlog` crate's types, so that [`crate::flow::FlowAnalyzer::event`] is the
//! one consumer whatever wrote the file.
//!
//! Dialects read (field by field, leniently: a field the analysis does not
//! use is never looked at, one it uses with the wrong JSON type is skipped
//! and reported, and an unknown frame type is skipped and reported):
//!
//! * main schema 0.3 (draft-ietf-quic-qlog-main-schema-02/-03, quic-go, aioquic,
//!   quiche before qlog 0.10): `transport:packet_sent`, `recovery:metrics_updated`,
//!   `recovery:packet_lost`...; stream frames carry `length`;
//! * draft -12/-13/-14 (quiche with qlog 0.13+, what we write): `quic:packet_sent`,
//!   `quic:recovery_metrics_updated`, `quic:packet_lost`...; stream frames
//!   carry `raw.payload_length`;
//! * the older spellings inside those: `cwnd` for `congestion_window`,
//!   `new_state` for `new`, a packet type and number at the top of `data`
//!   (aioquic's `packet_lost`), `header.packet_size` for `raw.length`,
//!   numbers written as strings.
//!
//! Event-name and field references: draft-ietf-quic-qlog-quic-events-12
//! §5 "QUIC events" and §6 "Recovery events"
//! (<https://datatracker.ietf.org/doc/html/draft-ietf-quic-qlog-quic-events-12>),
//! draft-marx-qlog-event-definitions-quic-h3-02 §5 and §6 (the 0.3 names,
//! <https://datatracker.ietf.org/doc/html/draft-marx-qlog-event-definitions-quic-h3-02>).

use qlog::events::quic::{
    AckRange, CongestionStateUpdated, PacketHeader, PacketLost, PacketReceived, PacketSent,
    PacketType, QuicFrame, RecoveryMetricsUpdated,
};
use qlog::events::{EventData, RawInfo};
use serde_json::{Map, Value};

/// The events the analysis uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `transport:packet_sent`.
    PacketSent,
    /// `transport:packet_received`.
    PacketReceived,
    /// `recovery:metrics_updated`.
    Metrics,
    /// `recovery:congestion_state_updated`.
    CongestionState,
    /// `recovery:packet_lost`.
    PacketLost,
}

/// The event names decoded (current quiche names first, 0.3 names after);
/// any `quic:`, `transport:` or `recovery:` prefix is accepted with each
/// base name, and so is a name without a category.
pub const DECODED_EVENT_NAMES: &[&str] = &[
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
];

/// What an event name means to the analysis; `None` for events it does not
/// use.
pub fn kind_of(name: &str) -> Option<Kind> {
    let (category, base) = name.rsplit_once(':').unwrap_or(("", name));
    if !matches!(category, "" | "quic" | "transport" | "recovery") {
        return None;
    }
    Some(match base {
        "packet_sent" => Kind::PacketSent,
        "packet_received" => Kind::PacketReceived,
        "metrics_updated" | "recovery_metrics_updated" => Kind::Metrics,
        "congestion_state_updated" => Kind::CongestionState,
        "packet_lost" => Kind::PacketLost,
        _ => return None,
    })
}

/// What an event held as the `qlog` crate's value means to the analysis:
/// the value-side twin of [`kind_of`] (each name `kind_of` knows decodes to
/// the variant here); `None` for events it does not use.
pub fn kind_of_data(data: &EventData) -> Option<Kind> {
    Some(match data {
        EventData::QuicPacketSent(_) => Kind::PacketSent,
        EventData::QuicPacketReceived(_) => Kind::PacketReceived,
        EventData::QuicMetricsUpdated(_) => Kind::Metrics,
        EventData::QuicCongestionStateUpdated(_) => Kind::CongestionState,
        EventData::QuicPacketLost(_) => Kind::PacketLost,
        _ => return None,
    })
}

/// Frame types of RFC 9000 §19 and its extensions (datagram, ACK
/// frequency, reset_stream_at), as qlog spells them; anything else is an
/// unknown frame, skipped and reported.
const KNOWN_FRAME_TYPES: &[&str] = &[
    "padding",
    "ping",
    "ack",
    "reset_stream",
    "stop_sending",
    "crypto",
    "new_token",
    "stream",
    "max_data",
    "max_stream_data",
    "max_streams",
    "data_blocked",
    "stream_data_blocked",
    "streams_blocked",
    "new_connection_id",
    "retire_connection_id",
    "path_challenge",
    "path_response",
    "connection_close",
    "handshake_done",
    "datagram",
    "ack_frequency",
    "immediate_ack",
    "reset_stream_at",
    "unknown",
];

/// Something in an event that was skipped: a short description that names
/// the event and the field, used as the kind for counting and warning once.
pub type Note = String;

/// Turn an event's `data` into the `qlog` crate's type. Problems go to
/// `note`; `None` when nothing of the event is usable.
pub fn decode(
    kind: Kind,
    name: &str,
    data: &Value,
    note: &mut dyn FnMut(Note),
) -> Option<EventData> {
    let Some(data) = data.as_object() else {
        note(format!("{name}: `data` is not an object"));
        return None;
    };
    let mut d = Decoder { name, note };
    Some(match kind {
        Kind::PacketSent => EventData::QuicPacketSent(PacketSent {
            header: d.header(data),
            raw: d.raw(data),
            frames: d.frames(data),
            ..Default::default()
        }),
        Kind::PacketReceived => EventData::QuicPacketReceived(PacketReceived {
            header: d.header(data),
            raw: d.raw(data),
            frames: d.frames(data),
            ..Default::default()
        }),
        Kind::Metrics => EventData::QuicMetricsUpdated(d.metrics(data)),
        Kind::CongestionState => {
            let new = d.text(data, &["new", "new_state"])?;
            EventData::QuicCongestionStateUpdated(CongestionStateUpdated {
                old: d.text(data, &["old", "old_state"]),
                new,
                trigger: None,
            })
        }
        Kind::PacketLost => EventData::QuicPacketLost(PacketLost {
            header: Some(d.header(data)),
            ..Default::default()
        }),
    })
}

/// The fast path for the `qlog` crate's own dialect (`quic:` names, what
/// quiche writes): its typed decode, taken only when it succeeds and every
/// stream frame's end fits in 64 bits; `None` sends the event down the
/// lenient path, which reports what is odd.
pub fn decode_typed(kind: Kind, json: &str) -> Option<EventData> {
    let data = match kind {
        Kind::PacketSent => {
            EventData::QuicPacketSent(serde_json::from_str::<PacketSent>(json).ok()?)
        }
        Kind::PacketReceived => {
            EventData::QuicPacketReceived(serde_json::from_str::<PacketReceived>(json).ok()?)
        }
        Kind::Metrics => EventData::QuicMetricsUpdated(
            serde_json::from_str::<RecoveryMetricsUpdated>(json).ok()?,
        ),
        Kind::CongestionState => EventData::QuicCongestionStateUpdated(
            serde_json::from_str::<CongestionStateUpdated>(json).ok()?,
        ),
        Kind::PacketLost => {
            EventData::QuicPacketLost(serde_json::from_str::<PacketLost>(json).ok()?)
        }
    };
    typed_is_sound(&data).then_some(data)
}

/// Whether a typed decode can be trusted: every stream frame has a length
/// (a 0.3-style `length` the typed decode does not read leaves none) and
/// an end that fits in a u64, and the RTTs are finite (non-finite ones are
/// the lenient path's to report).
pub fn typed_is_sound(data: &EventData) -> bool {
    let frames = match data {
        EventData::QuicPacketSent(p) => p.frames.as_deref(),
        EventData::QuicPacketReceived(p) => p.frames.as_deref(),
        _ => None,
    };
    let sound = frames.unwrap_or_default().iter().all(|f| match f {
        // Without `raw`, the length may be a 0.3-style `length` the typed
        // decode does not read.
        QuicFrame::Stream { offset, raw, .. } => {
            match raw.as_ref().and_then(|r| r.payload_length.or(r.length)) {
                Some(len) => offset.unwrap_or(0).checked_add(len).is_some(),
                None => false,
            }
        }
        _ => true,
    });
    // Non-finite RTTs are the lenient path's to report.
    let finite = match data {
        EventData::QuicMetricsUpdated(m) => {
            [m.min_rtt, m.smoothed_rtt, m.latest_rtt, m.rtt_variance]
                .iter()
                .flatten()
                .all(|v| v.is_finite())
        }
        _ => true,
    };
    sound && finite
}

struct Decoder<'a, 'n> {
    name: &'a str,
    note: &'n mut dyn FnMut(Note),
}

/// A non-negative integer written as a JSON number (integral) or a string.
fn u64_of(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 18_446_744_073_709_551_616.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A finite number written as a JSON number or a string.
fn f64_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|f| f.is_finite())
}

fn packet_type_of(s: &str) -> PacketType {
    match s.to_ascii_lowercase().as_str() {
        "1rtt" | "onertt" | "one_rtt" | "short" => PacketType::OneRtt,
        "0rtt" | "zerortt" | "zero_rtt" => PacketType::ZeroRtt,
        "initial" => PacketType::Initial,
        "handshake" => PacketType::Handshake,
        "retry" => PacketType::Retry,
        "version_negotiation" => PacketType::VersionNegotiation,
        "stateless_reset" => PacketType::StatelessReset,
        _ => PacketType::Unknown,
    }
}

impl Decoder<'_, '_> {
    fn note(&mut self, what: String) {
        (self.note)(format!("{}: {what}", self.name));
    }

    /// The first of `keys` present in `obj`, as a u64; reported if present
    /// but not one.
    fn u64(&mut self, obj: &Map<String, Value>, prefix: &str, keys: &[&str]) -> Option<u64> {
        let (k, v) = keys.iter().find_map(|k| obj.get(*k).map(|v| (*k, v)))?;
        if v.is_null() {
            return None;
        }
        let n = u64_of(v);
        if n.is_none() {
            self.note(format!("field `{prefix}{k}` is not a non-negative integer"));
        }
        n
    }

    fn f32(&mut self, obj: &Map<String, Value>, key: &str) -> Option<f32> {
        let v = obj.get(key)?;
        if v.is_null() {
            return None;
        }
        let n = f64_of(v).map(|f| f as f32).filter(|f| f.is_finite());
        if n.is_none() {
            self.note(format!("field `data.{key}` is not a finite number"));
        }
        n
    }

    fn text(&mut self, obj: &Map<String, Value>, keys: &[&str]) -> Option<String> {
        let (k, v) = keys.iter().find_map(|k| obj.get(*k).map(|v| (*k, v)))?;
        let s = v.as_str().map(str::to_string);
        if s.is_none() {
            self.note(format!("field `data.{k}` is not a string"));
        }
        s
    }

    /// `data.header`, or (older drafts, aioquic's `packet_lost`) the packet
    /// type and number at the top of `data`.
    fn header(&mut self, data: &Map<String, Value>) -> PacketHeader {
        let h = match data.get("header") {
            Some(Value::Object(h)) => h,
            Some(_) => {
                self.note("field `data.header` is not an object".into());
                data
            }
            None => data,
        };
        let prefix = if std::ptr::eq(h, data) {
            "data."
        } else {
            "data.header."
        };
        let ty = ["packet_type", "type"]
            .iter()
            .find_map(|k| h.get(*k).or_else(|| data.get(*k)))
            .and_then(Value::as_str)
            .map(packet_type_of)
            .unwrap_or(PacketType::Unknown);
        let pn = self.u64(h, prefix, &["packet_number"]).or_else(|| {
            if std::ptr::eq(h, data) {
                None
            } else {
                u64_of(data.get("packet_number")?)
            }
        });
        PacketHeader {
            packet_type: ty,
            packet_number: pn,
            ..Default::default()
        }
    }

    /// `data.raw` (`length`: the whole packet; `payload_length`), or an
    /// older `header.packet_size`.
    fn raw(&mut self, data: &Map<String, Value>) -> Option<RawInfo> {
        let (length, payload_length) = match data.get("raw") {
            Some(Value::Object(r)) => (
                self.u64(r, "data.raw.", &["length"]),
                self.u64(r, "data.raw.", &["payload_length"]),
            ),
            _ => {
                let size = match data.get("header") {
                    Some(Value::Object(h)) => self.u64(h, "data.header.", &["packet_size"]),
                    _ => None,
                };
                (size, None)
            }
        };
        (length.is_some() || payload_length.is_some()).then_some(RawInfo {
            length,
            payload_length,
            data: None,
        })
    }

    /// The STREAM and ACK frames (the analysis uses no other); other known
    /// frame types are passed over, unknown ones reported.
    fn frames(&mut self, data: &Map<String, Value>) -> Option<Vec<QuicFrame>> {
        let list = match data.get("frames")? {
            Value::Array(list) => list,
            Value::Null => return None,
            _ => {
                self.note("field `data.frames` is not an array".into());
                return None;
            }
        };
        let mut frames = Vec::new();
        for f in list {
            let Some(f) = f.as_object() else {
                self.note("a frame that is not an object".into());
                continue;
            };
            let Some(ty) = f.get("frame_type").and_then(Value::as_str) else {
                self.note("a frame without a `frame_type` string".into());
                continue;
            };
            match ty {
                "stream" => frames.extend(self.stream_frame(f)),
                "ack" => frames.push(self.ack_frame(f)),
                t if KNOWN_FRAME_TYPES.contains(&t) => {}
                t => self.note(format!("unknown frame type `{}`", short(t))),
            }
        }
        Some(frames)
    }

    fn stream_frame(&mut self, f: &Map<String, Value>) -> Option<QuicFrame> {
        let p = "frames[].";
        let Some(stream_id) = self.u64(f, p, &["stream_id"]) else {
            if !f.contains_key("stream_id") {
                self.note("a stream frame without `stream_id`".into());
            }
            return None;
        };
        let offset = self.u64(f, p, &["offset"]).unwrap_or(0);
        // 0.3: `length`; -12 and later: `raw.payload_length`.
        let len = match f.get("raw") {
            Some(Value::Object(r)) if r.contains_key("payload_length") => {
                self.u64(r, "frames[].raw.", &["payload_length"])
            }
            _ => self.u64(f, p, &["length"]),
        }
        .unwrap_or(0);
        if offset.checked_add(len).is_none() {
            self.note("a stream frame whose offset + length overflows 2^64".into());
            return None;
        }
        Some(QuicFrame::Stream {
            stream_id,
            offset: Some(offset),
            fin: f.get("fin").and_then(Value::as_bool),
            raw: Some(Box::new(RawInfo {
                length: None,
                payload_length: Some(len),
                data: None,
            })),
        })
    }

    /// `acked_ranges`: `[[first, last], [single], ...]`.
    fn ack_frame(&mut self, f: &Map<String, Value>) -> QuicFrame {
        let ranges = match f.get("acked_ranges") {
            Some(Value::Array(rs)) => {
                let mut out = Vec::with_capacity(rs.len());
                for r in rs {
                    let pair = r.as_array().and_then(|a| match a.as_slice() {
                        [x] => u64_of(x).map(|x| (x, x)),
                        [x, y] => Some((u64_of(x)?, u64_of(y)?)),
                        _ => None,
                    });
                    match pair {
                        Some((a, b)) => out.push(AckRange::new(a.min(b), a.max(b))),
                        None => {
                            self.note("an ACK range that is not [first, last] or [number]".into())
                        }
                    }
                }
                Some(out)
            }
            None | Some(Value::Null) => None,
            Some(_) => {
                self.note("field `frames[].acked_ranges` is not an array".into());
                None
            }
        };
        QuicFrame::Ack {
            ack_delay: f.get("ack_delay").and_then(f64_of).map(|d| d as f32),
            acked_ranges: ranges,
            ect1: None,
            ect0: None,
            ce: None,
            raw: None,
        }
    }

    fn metrics(&mut self, data: &Map<String, Value>) -> RecoveryMetricsUpdated {
        let p = "data.";
        let mut m = RecoveryMetricsUpdated {
            min_rtt: self.f32(data, "min_rtt"),
            smoothed_rtt: self.f32(data, "smoothed_rtt"),
            latest_rtt: self.f32(data, "latest_rtt"),
            rtt_variance: self.f32(data, "rtt_variance"),
            pto_count: self
                .u64(data, p, &["pto_count"])
                .and_then(|n| u16::try_from(n).ok()),
            congestion_window: self.u64(data, p, &["congestion_window", "cwnd"]),
            bytes_in_flight: self.u64(data, p, &["bytes_in_flight"]),
            ssthresh: self.u64(data, p, &["ssthresh"]),
            packets_in_flight: self.u64(data, p, &["packets_in_flight"]),
            pacing_rate: self.u64(data, p, &["pacing_rate"]),
            ..Default::default()
        };
        // Non-standard fields (quiche's `cf_lost_packets`) stay as they are.
        const STANDARD: &[&str] = &[
            "min_rtt",
            "smoothed_rtt",
            "latest_rtt",
            "rtt_variance",
            "pto_count",
            "congestion_window",
            "cwnd",
            "bytes_in_flight",
            "ssthresh",
            "packets_in_flight",
            "pacing_rate",
        ];
        for (k, v) in data {
            if !STANDARD.contains(&k.as_str()) {
                m.ex_data.insert(k.clone(), v.clone());
            }
        }
        m
    }
}

/// At most 40 characters of a name from the input, for a message.
fn short(s: &str) -> String {
    if s.chars().count() <= 40 {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(40).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(kind: Kind, data: Value) -> (Option<EventData>, Vec<String>) {
        let mut notes = Vec::new();
        let ev = decode(kind, "x", &data, &mut |n| notes.push(n));
        (ev, notes)
    }

    #[test]
    fn every_decoded_name_decodes_to_a_value_of_its_own_kind() {
        for name in DECODED_EVENT_NAMES {
            let kind = kind_of(name).unwrap();
            let (ev, _) = run(kind, json!({"new": "recovery"}));
            assert_eq!(kind_of_data(&ev.unwrap()), Some(kind), "{name}");
        }
        let other = EventData::QuicStreamDataMoved(Default::default());
        assert_eq!(kind_of_data(&other), None);
    }

    #[test]
    fn names_of_every_dialect() {
        assert_eq!(kind_of("quic:packet_sent"), Some(Kind::PacketSent));
        assert_eq!(kind_of("transport:packet_sent"), Some(Kind::PacketSent));
        assert_eq!(kind_of("recovery:metrics_updated"), Some(Kind::Metrics));
        assert_eq!(
            kind_of("quic:recovery_metrics_updated"),
            Some(Kind::Metrics)
        );
        assert_eq!(kind_of("packet_lost"), Some(Kind::PacketLost));
        assert_eq!(kind_of("http:packet_sent"), None);
        assert_eq!(kind_of("quic:parameters_set"), None);
    }

    #[test]
    fn stream_length_of_both_schemas() {
        let (ev, notes) = run(
            Kind::PacketSent,
            json!({"header": {"packet_type": "1RTT", "packet_number": "7"},
                   "raw": {"length": 1280},
                   "frames": [{"frame_type": "stream", "stream_id": 0, "offset": 10, "length": 5},
                              {"frame_type": "stream", "stream_id": 4, "raw": {"payload_length": 6}},
                              {"frame_type": "stop_sending", "stream_id": 0},
                              {"frame_type": "teleport"}]}),
        );
        let Some(EventData::QuicPacketSent(p)) = ev else {
            panic!()
        };
        assert_eq!(p.header.packet_type, PacketType::OneRtt);
        assert_eq!(p.header.packet_number, Some(7));
        assert_eq!(p.raw.unwrap().length, Some(1280));
        let lens: Vec<(u64, u64, u64)> = p
            .frames
            .unwrap()
            .iter()
            .map(|f| match f {
                QuicFrame::Stream {
                    stream_id,
                    offset,
                    raw,
                    ..
                } => (
                    *stream_id,
                    offset.unwrap(),
                    raw.as_ref().unwrap().payload_length.unwrap(),
                ),
                _ => panic!(),
            })
            .collect();
        assert_eq!(lens, vec![(0, 10, 5), (4, 0, 6)]);
        assert_eq!(notes, vec!["x: unknown frame type `teleport`".to_string()]);
    }

    #[test]
    fn wrong_types_are_skipped_and_noted() {
        let (ev, notes) = run(
            Kind::Metrics,
            json!({"cwnd": "big", "latest_rtt": 12.5, "bytes_in_flight": -1, "cf_lost_packets": {"total": 1}}),
        );
        let Some(EventData::QuicMetricsUpdated(m)) = ev else {
            panic!()
        };
        assert_eq!(m.congestion_window, None);
        assert_eq!(m.latest_rtt, Some(12.5));
        assert_eq!(m.bytes_in_flight, None);
        assert_eq!(m.ex_data["cf_lost_packets"], json!({"total": 1}));
        assert_eq!(
            notes,
            vec![
                "x: field `data.cwnd` is not a non-negative integer".to_string(),
                "x: field `data.bytes_in_flight` is not a non-negative integer".to_string(),
            ]
        );
    }

    #[test]
    fn aioquic_packet_lost_and_ack_ranges() {
        let (ev, _) = run(
            Kind::PacketLost,
            json!({"type": "1RTT", "packet_number": 30}),
        );
        let Some(EventData::QuicPacketLost(l)) = ev else {
            panic!()
        };
        let h = l.header.unwrap();
        assert_eq!(
            (h.packet_type, h.packet_number),
            (PacketType::OneRtt, Some(30))
        );

        let (ev, notes) = run(
            Kind::PacketReceived,
            json!({"header": {"packet_type": "1RTT", "packet_number": 1},
                   "frames": [{"frame_type": "ack", "acked_ranges": [[3, 5], [9], [1, 2, 3]]}]}),
        );
        let Some(EventData::QuicPacketReceived(p)) = ev else {
            panic!()
        };
        let QuicFrame::Ack {
            acked_ranges: Some(r),
            ..
        } = &p.frames.unwrap()[0]
        else {
            panic!()
        };
        assert_eq!(r, &vec![AckRange::new(3, 5), AckRange::new(9, 9)]);
        assert_eq!(notes.len(), 1);
    }

    #[test]
    fn typed_fast_path_only_for_what_it_reads_right() {
        let frames = |f: &str| {
            format!(r#"{{"header":{{"packet_type":"1RTT","packet_number":1}},"frames":[{f}]}}"#)
        };
        let ok = frames(
            r#"{"frame_type":"stream","stream_id":0,"offset":0,"raw":{"payload_length":5}}"#,
        );
        assert!(decode_typed(Kind::PacketSent, &ok).is_some());
        // 0.3's `length` under a quic: name: the lenient path reads it.
        let old = frames(r#"{"frame_type":"stream","stream_id":0,"offset":0,"length":5}"#);
        assert!(decode_typed(Kind::PacketSent, &old).is_none());
        let (ev, _) = run(Kind::PacketSent, serde_json::from_str(&old).unwrap());
        let Some(EventData::QuicPacketSent(p)) = ev else {
            panic!()
        };
        let QuicFrame::Stream { raw, .. } = &p.frames.unwrap()[0] else {
            panic!()
        };
        assert_eq!(raw.as_ref().unwrap().payload_length, Some(5));
        // An unknown frame type fails the typed decode.
        assert!(decode_typed(Kind::PacketSent, &frames(r#"{"frame_type":"teleport"}"#)).is_none());
    }

    #[test]
    fn overflowing_stream_frame_is_dropped() {
        let (ev, notes) = run(
            Kind::PacketReceived,
            json!({"header": {"packet_type": "1RTT"},
                   "frames": [{"frame_type": "stream", "stream_id": 0, "offset": 18446744073709551615u64, "length": 2}]}),
        );
        let Some(EventData::QuicPacketReceived(p)) = ev else {
            panic!()
        };
        assert!(p.frames.unwrap().is_empty());
        assert_eq!(notes.len(), 1);
    }
}
