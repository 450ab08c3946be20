//! A foreground workload flow's kind and settings (web, ping, video,
//! cbr).

use std::ops::Range;
use std::time::Duration;

use toml::Spanned;

use super::keys::{clock_keys, workload_keys};
use super::source::Source;
use crate::kinds::{CbrFlow, FlowKind, PingFlow, VideoFlow, WebFlow, PING_INTERVAL};
use crate::raw::RawFlow;

/// A workload flow's kind and settings (`kind` is web, ping, video or
/// cbr): its own keys, `kind`, `name`, `start`, `stop` (required) and
/// `rtt`; any other is an error.
pub(super) fn workload_kind(
    src: &Source,
    flow_span: Range<usize>,
    f: &RawFlow,
    kind: &'static str,
) -> Result<FlowKind, String> {
    let own: &[&str] = match kind {
        "web" => &["arrivals", "size", "sizes", "cc"],
        "ping" => &["interval"],
        "video" => &["chunk", "bitrate", "startup", "buffer", "cc"],
        _ => &["rate", "on", "off"],
    };
    let s = |v: Option<Range<usize>>| v;
    let others = [
        ("server", s(f.server.as_ref().map(|v| v.span()))),
        ("background", s(f.background.as_ref().map(|v| v.span()))),
        ("lbe", s(f.lbe.as_ref().map(|v| v.span()))),
        ("cc", s(f.cc.as_ref().map(|v| v.span()))),
        ("bytes", s(f.bytes.as_ref().map(|v| v.span()))),
        ("deadline", s(f.deadline.as_ref().map(|v| v.span()))),
        ("pacing", s(f.pacing.as_ref().map(|v| v.span()))),
        ("receiver_lbe", s(f.receiver_lbe.as_ref().map(|v| v.span()))),
        ("direction", s(f.direction.as_ref().map(|v| v.span()))),
    ]
    .into_iter()
    .chain(clock_keys(f))
    .chain(workload_keys(f).into_iter().map(|(k, _, span)| (k, span)));
    for (key, span) in others {
        if let (Some(span), false) = (span, own.contains(&key)) {
            return Err(src.error(
                span,
                format!(
                    "flow {key}: a {kind} flow does not take '{key}' (it takes kind, name, start, stop, rtt, {})",
                    own.join(", ")
                ),
            ));
        }
    }
    if f.stop.is_none() {
        return Err(src.error(
            flow_span,
            format!("a {kind} flow needs 'stop' (when it ends)"),
        ));
    }
    let positive_duration = |v: &Spanned<String>, key: &str| {
        let d = src.value(v, &format!("flow {key}"), lbe_units::parse_duration)?;
        if d.is_zero() {
            return Err(src.error(v.span(), format!("flow {key} must be above zero")));
        }
        Ok(d)
    };
    let positive = |v: &Spanned<String>, key: &str, parse: fn(&str) -> Result<u64, String>| {
        let n = src.value(v, &format!("flow {key}"), parse)?;
        if n == 0 {
            return Err(src.error(v.span(), format!("flow {key} must be above zero")));
        }
        Ok(n)
    };
    let needs = |key: &str, what: &str| {
        src.error(
            flow_span.clone(),
            format!("a {kind} flow needs '{key}' ({what})"),
        )
    };
    Ok(match kind {
        "web" => {
            let arrivals = f
                .arrivals
                .as_ref()
                .ok_or_else(|| needs("arrivals", "a mean rate, like \"2/s\""))?;
            let arrivals_per_s = src.value(
                arrivals,
                "flow arrivals",
                lbe_workload::arrivals::parse_arrival_rate,
            )?;
            let sizes_bytes = match (&f.size, &f.sizes) {
                (Some(size), None) => vec![positive(size, "size", lbe_units::parse_size)?],
                (None, Some(sizes)) => {
                    if sizes.get_ref().is_empty() {
                        return Err(
                            src.error(sizes.span(), "flow sizes must list at least one size")
                        );
                    }
                    sizes
                        .get_ref()
                        .iter()
                        .map(|v| positive(v, "sizes", lbe_units::parse_size))
                        .collect::<Result<_, _>>()?
                }
                (Some(_), Some(sizes)) => {
                    return Err(src.error(
                        sizes.span(),
                        "a web flow has either 'size' or 'sizes', not both",
                    ))
                }
                (None, None) => {
                    return Err(needs("size", "or 'sizes': the bytes of each download"))
                }
            };
            FlowKind::Web(WebFlow {
                arrivals_per_s,
                sizes_bytes,
            })
        }
        "ping" => FlowKind::Ping(PingFlow {
            interval: match &f.interval {
                Some(v) => positive_duration(v, "interval")?,
                None => PING_INTERVAL,
            },
        }),
        "video" => {
            let or = |v: &Option<Spanned<String>>, key: &str, default: u64| match v {
                Some(v) => positive_duration(v, key),
                None => Ok(Duration::from_secs(default)),
            };
            let playout = lbe_workload::playout::PlayoutParams {
                chunk: or(&f.chunk, "chunk", 2)?,
                startup: or(&f.startup, "startup", 2)?,
                buffer: or(&f.buffer, "buffer", 10)?,
            };
            if playout.startup > playout.buffer {
                let span = f
                    .startup
                    .as_ref()
                    .or(f.buffer.as_ref())
                    .map_or(flow_span.clone(), |v| v.span());
                return Err(src.error(
                    span,
                    "flow startup must not exceed its buffer (play would never start: no chunk is requested once the buffer holds 'buffer')",
                ));
            }
            FlowKind::Video(VideoFlow {
                playout,
                bitrate_bps: match &f.bitrate {
                    Some(v) => positive(v, "bitrate", lbe_units::parse_rate)?,
                    None => 5_000_000,
                },
            })
        }
        _ => {
            let rate = f
                .rate
                .as_ref()
                .ok_or_else(|| needs("rate", "its sending rate, like \"2mbit\""))?;
            let on_off = match (&f.on, &f.off) {
                (Some(on), Some(off)) => Some((
                    positive_duration(on, "on")?,
                    positive_duration(off, "off")?,
                )),
                (None, None) => None,
                (Some(v), None) | (None, Some(v)) => {
                    return Err(src.error(
                        v.span(),
                        "a cbr flow takes 'on' and 'off' together (on for 'on', then off for 'off', in turn)",
                    ))
                }
            };
            FlowKind::Cbr(CbrFlow {
                rate_bps: positive(rate, "rate", lbe_units::parse_rate)?,
                on_off,
            })
        }
    })
}
