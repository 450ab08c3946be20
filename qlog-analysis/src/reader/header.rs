//! What a trace's header says, read leniently from any qlog dialect: the
//! JSON-SEQ/NDJSON header record (`{"qlog_version", "trace": {...}}`) and a
//! JSON file's trace object (`traces[i]` without its `events`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::{Role, TimeFormat, TraceHeader};

/// Read a header from the trace object `trace` (missing or odd fields are
/// left at their defaults; a header never fails to read). `file` is the
/// enclosing object, whose `title`/`description` stand in for the trace's.
pub fn parse(
    trace: &Map<String, Value>,
    file: Option<&Map<String, Value>>,
    index: usize,
    line: u64,
) -> TraceHeader {
    let text = |k: &str| {
        trace
            .get(k)
            .or_else(|| file.and_then(|f| f.get(k)))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let vp = trace.get("vantage_point").and_then(Value::as_object);
    let role = vp
        .and_then(|v| v.get("type"))
        .and_then(Value::as_str)
        .map(role_of)
        .unwrap_or_default();
    let common = trace.get("common_fields").and_then(Value::as_object);
    let reference = common.and_then(|c| c.get("reference_time"));
    let wall_clock = match reference {
        Some(Value::Object(rt)) => rt
            .get("wall_clock_time")
            .and_then(Value::as_str)
            .and_then(parse_wall_clock),
        // Older drafts: milliseconds since the Unix epoch.
        Some(v) => v
            .as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .filter(|m| m.is_finite() && *m > 0.0 && *m < 1e15)
            .map(|m| UNIX_EPOCH + Duration::from_secs_f64(m / 1e3)),
        None => None,
    };
    let format = common
        .and_then(|c| c.get("time_format"))
        .or_else(|| trace.get("time_format"))
        .and_then(Value::as_str);
    let time_format = match format {
        Some("relative_to_previous_event" | "delta") => TimeFormat::Delta,
        Some("absolute") => TimeFormat::Absolute,
        Some(_) => TimeFormat::Relative,
        // Without a reference time, an implementation may write epoch
        // milliseconds (aioquic does): told by the first event.
        None if wall_clock.is_none() => TimeFormat::Unknown,
        None => TimeFormat::Relative,
    };
    let producer = vp
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| producer_from_title(text("title").as_deref()));
    TraceHeader {
        index,
        line,
        title: text("title"),
        description: text("description"),
        role,
        wall_clock,
        relative_to_previous: time_format == TimeFormat::Delta,
        time_format,
        time_origin_ms: 0.0,
        producer,
        controller: controller_of(trace, common),
    }
}

fn role_of(s: &str) -> Role {
    match s.to_ascii_lowercase().as_str() {
        "client" => Role::Client,
        "server" => Role::Server,
        "network" => Role::Network,
        _ => Role::Unknown,
    }
}

/// quic-go titles its traces "quic-go qlog"; quiche "quiche-..." .
fn producer_from_title(title: Option<&str>) -> Option<String> {
    let t = title?.to_ascii_lowercase();
    [
        "quic-go", "quiche", "aioquic", "ngtcp2", "picoquic", "mvfst", "quinn", "lsquic", "msquic",
    ]
    .into_iter()
    .find(|p| t.contains(p))
    .map(str::to_string)
}

/// A congestion controller named in the trace's metadata, under any of the
/// keys implementations use (`congestion_control`, `cc`, ...), in the trace,
/// its `common_fields` or its `configuration`.
fn controller_of(
    trace: &Map<String, Value>,
    common: Option<&Map<String, Value>>,
) -> Option<String> {
    const KEYS: &[&str] = &[
        "congestion_control",
        "congestion_controller",
        "congestion_control_algorithm",
        "cc_algorithm",
        "cc",
    ];
    let places = [
        Some(trace),
        common,
        trace.get("configuration").and_then(Value::as_object),
    ];
    places.into_iter().flatten().find_map(|m| {
        KEYS.iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str))
            .filter(|s| !s.is_empty() && s.len() <= 64)
            .map(str::to_ascii_lowercase)
    })
}

/// Parse an RFC 3339 wall-clock time as quiche writes it
/// (`2026-11-21T23:39:27.123456789Z`).
pub fn parse_wall_clock(s: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339(s)
        .ok()
        .or_else(|| humantime::parse_rfc3339_weak(s).ok())
}

/// `t` as RFC 3339 in UTC with nanoseconds, the form quiche writes and
/// [`parse_wall_clock`] reads back to the same instant.
pub fn format_wall_clock(t: SystemTime) -> String {
    humantime::format_rfc3339_nanos(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formatted_wall_clock_reads_back_to_the_same_instant() {
        let t = UNIX_EPOCH + Duration::new(15, 75_000_001);
        assert_eq!(format_wall_clock(t), "1970-01-01T00:00:15.075000001Z");
        assert_eq!(parse_wall_clock(&format_wall_clock(t)), Some(t));
        let quiche = "2026-11-21T23:39:27.123456789Z";
        assert_eq!(format_wall_clock(parse_wall_clock(quiche).unwrap()), quiche);
    }
}
