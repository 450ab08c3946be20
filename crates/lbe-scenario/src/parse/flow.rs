//! The `[[flow]]` tables checked, one section of a flow at a time, and
//! each `count` expanded into its identical flows.

use std::collections::BTreeSet;
use std::ops::Range;
use std::time::Duration;

use quiche_lbe::CcSpec;
use toml::Spanned;

use super::kind::{flow_cc, flow_kind};
use super::source::Source;
use crate::model::{Clock, Direction, Flow, FlowEnd};
use crate::raw::RawFlow;

/// Every flow of the file, checked, in order, a `count` expanded in place;
/// `link_rtt` is a flow's RTT unless it sets one, `link_pacing` its pacing.
pub(super) fn flows(
    src: &Source,
    raw_flows: &[Spanned<RawFlow>],
    link_rtt: Duration,
    link_pacing: Option<bool>,
) -> Result<Vec<Flow>, String> {
    let mut flows: Vec<Flow> = Vec::new();
    let mut names = BTreeSet::new();
    for (i, spanned) in raw_flows.iter().enumerate() {
        let f = spanned.get_ref();
        let id = i + 1;
        let (count, stagger) = count_and_stagger(src, f)?;
        let kind = flow_kind(src, spanned.span(), f)?;
        let cc = flow_cc(src, spanned.span(), f, &kind)?;
        let start = match &f.start {
            Some(s) => src.value(s, "flow start", lbe_units::parse_duration)?,
            None => Duration::ZERO,
        };
        let end = flow_end(src, spanned.span(), f, start)?;
        let deadline = flow_deadline(src, f, end, &cc)?;
        let rtt = match &f.rtt {
            Some(r) => {
                let rtt = src.value(r, "flow rtt", lbe_units::parse_duration)?;
                if rtt.is_zero() {
                    return Err(src.error(r.span(), "flow rtt must be above zero"));
                }
                rtt
            }
            None => link_rtt,
        };
        let name = flow_name(src, f, id)?;
        let direction = flow_direction(src, f)?;
        let client_clock = clock(
            src,
            &f.client_clock_offset,
            &f.client_clock_skew_ppm,
            "client",
        )?;
        let server_clock = clock(
            src,
            &f.server_clock_offset,
            &f.server_clock_skew_ppm,
            "server",
        )?;
        let last_start = start + stagger * (count as u32 - 1);
        if let (FlowEnd::Stop(stop), Some(s)) = (end, &f.stagger) {
            if last_start >= stop {
                return Err(src.error(
                    s.span(),
                    format!(
                        "flow stagger: the last of the {count} flows would start at {last_start:?}, not before its stop {stop:?}"
                    ),
                ));
            }
        }
        // `count = N`: N identical flows named NAME-1..NAME-N, the k-th
        // starting (k - 1) x stagger after `start`; all stop at `stop`.
        let name_base = name.clone();
        for k in 0..count {
            let name = if f.count.is_some() {
                format!("{name}-{}", k + 1)
            } else {
                name.clone()
            };
            if !names.insert(name.clone()) {
                let span = f.name.as_ref().map_or(spanned.span(), |n| n.span());
                return Err(src.error(span, format!("flow name '{name}' is used twice")));
            }
            flows.push(Flow {
                id: flows.len() + 1,
                name,
                kind: kind.clone(),
                cc: cc.clone(),
                start: start + stagger * k as u32,
                end,
                rtt,
                pacing: f
                    .pacing
                    .as_ref()
                    .map(|p| *p.get_ref())
                    .or(link_pacing)
                    .unwrap_or(true),
                deadline,
                receiver_lbe: f.receiver_lbe.as_ref().is_some_and(|v| *v.get_ref()),
                group: f.count.is_some().then(|| name_base.clone()),
                direction,
                client_clock,
                server_clock,
            });
        }
    }
    Ok(flows)
}

/// How many identical flows a table stands for (`count`, 1 without), and
/// the gap between their starts (`stagger`, which needs `count`).
fn count_and_stagger(src: &Source, f: &RawFlow) -> Result<(usize, Duration), String> {
    let count = match &f.count {
        Some(c) if *c.get_ref() < 1 || *c.get_ref() > 10_000 => {
            return Err(src.error(
                c.span(),
                format!("flow count = {}: must be from 1 to 10000", c.get_ref()),
            ))
        }
        Some(c) => *c.get_ref() as usize,
        None => 1,
    };
    let stagger = match (&f.stagger, &f.count) {
        (Some(s), None) => return Err(src.error(s.span(), "flow stagger needs count")),
        (Some(s), Some(_)) => src.value(s, "flow stagger", lbe_units::parse_duration)?,
        (None, _) => Duration::ZERO,
    };
    Ok((count, stagger))
}

/// How much the flow sends: until `stop` (after its `start`) or `bytes`,
/// one of them.
fn flow_end(
    src: &Source,
    flow_span: Range<usize>,
    f: &RawFlow,
    start: Duration,
) -> Result<FlowEnd, String> {
    Ok(match (&f.stop, &f.bytes) {
        (Some(stop), None) => {
            let t = src.value(stop, "flow stop", lbe_units::parse_duration)?;
            if t <= start {
                return Err(src.error(stop.span(), "flow stop must be after its start"));
            }
            FlowEnd::Stop(t)
        }
        (None, Some(bytes)) => {
            let b = src.value(bytes, "flow bytes", lbe_units::parse_size)?;
            if b == 0 {
                return Err(src.error(bytes.span(), "flow bytes must be above zero"));
            }
            FlowEnd::Bytes(b)
        }
        (Some(_), Some(bytes)) => {
            return Err(src.error(
                bytes.span(),
                "a flow has either 'stop' or 'bytes', not both",
            ))
        }
        (None, None) => return Err(src.error(flow_span, "a flow needs 'stop' or 'bytes'")),
    })
}

/// A deadline-aware flow's `deadline`: with `bytes`, and a controller it
/// can steer.
fn flow_deadline(
    src: &Source,
    f: &RawFlow,
    end: FlowEnd,
    cc: &CcSpec,
) -> Result<Option<Duration>, String> {
    Ok(match &f.deadline {
        Some(d) => {
            let deadline = src.value(d, "flow deadline", lbe_units::parse_duration)?;
            if !matches!(end, FlowEnd::Bytes(_)) {
                return Err(src.error(d.span(), "a flow's deadline needs 'bytes' (not 'stop')"));
            }
            cc.with_deadline(deadline)
                .map_err(|e| src.error(d.span(), format!("flow deadline: {e}")))?;
            Some(deadline)
        }
        None => None,
    })
}

/// The flow's `name` (letters, digits and '_'), or flowN, N its place in
/// the file.
fn flow_name(src: &Source, f: &RawFlow, id: usize) -> Result<String, String> {
    Ok(match &f.name {
        Some(n) => {
            let ok = !n.get_ref().is_empty()
                && n.get_ref()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(src.error(n.span(), "flow name: letters, digits and '_' only"));
            }
            n.get_ref().clone()
        }
        None => format!("flow{id}"),
    })
}

/// Which end sends (`direction`); an upload takes neither a deadline nor
/// receiver-driven LBE.
fn flow_direction(src: &Source, f: &RawFlow) -> Result<Direction, String> {
    let direction = match &f.direction {
        None => Direction::Download,
        Some(d) => match d.get_ref().as_str() {
            "download" => Direction::Download,
            "upload" => Direction::Upload,
            other => {
                return Err(src.error(
                    d.span(),
                    format!("flow direction: '{other}' (allowed: download, upload)"),
                ))
            }
        },
    };
    if let (Direction::Upload, Some(d)) = (direction, &f.deadline) {
        // quic-bulk's server steers its own sending only.
        return Err(src.error(
            d.span(),
            "a flow's deadline needs a download (not direction = \"upload\")",
        ));
    }
    if let (Direction::Upload, Some(r)) = (direction, &f.receiver_lbe) {
        if *r.get_ref() {
            return Err(src.error(
                r.span(),
                "flow receiver_lbe: a receiver-driven flow is a download, not direction = \"upload\"",
            ));
        }
    }
    Ok(direction)
}

/// One end's simulated clock (`end` is client or server): its offset and
/// its skew within [`Clock::MAX_SKEW_PPM`].
fn clock(
    src: &Source,
    offset: &Option<Spanned<String>>,
    skew: &Option<Spanned<f64>>,
    end: &str,
) -> Result<Clock, String> {
    let offset = match offset {
        Some(o) => src.value(
            o,
            &format!("flow {end}_clock_offset"),
            lbe_units::parse_duration,
        )?,
        None => Duration::ZERO,
    };
    let skew_ppm = match skew {
        Some(s) if s.get_ref().is_nan() || s.get_ref().abs() > Clock::MAX_SKEW_PPM => {
            return Err(src.error(
                s.span(),
                format!(
                    "flow {end}_clock_skew_ppm = {}: must be from -{max} to {max}",
                    s.get_ref(),
                    max = Clock::MAX_SKEW_PPM
                ),
            ))
        }
        Some(s) => *s.get_ref(),
        None => 0.0,
    };
    Ok(Clock { offset, skew_ppm })
}
