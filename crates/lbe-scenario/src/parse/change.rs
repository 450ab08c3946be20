//! The link's keys that make it change: `jitter`, `jitter_model`,
//! `reorder`, `aggregate`, `trace`, `reverse_trace` and the
//! `[[link.change]]` tables, checked. Traces are read relative to the
//! scenario file; every error names the file and the line.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;

use super::source::Source;
use crate::model::Change;
use crate::raw::{RawChange, RawLink};

/// What `[link]` sets beyond the fixed link.
pub(super) struct Variation {
    pub(super) jitter: Duration,
    pub(super) jitter_model: lbe_link::JitterModel,
    pub(super) reorder: bool,
    pub(super) aggregate: Option<Duration>,
    pub(super) trace: Option<Arc<lbe_link::DeliveryTrace>>,
    pub(super) reverse_trace: Option<Arc<lbe_link::DeliveryTrace>>,
    pub(super) changes: Vec<Change>,
}

/// A trace file named relative to the scenario file.
fn trace(
    src: &Source,
    field: &Spanned<String>,
    key: &str,
) -> Result<Arc<lbe_link::DeliveryTrace>, String> {
    let dir = src.path.parent().unwrap_or(std::path::Path::new(""));
    let path = dir.join(field.get_ref());
    if !path.is_file() {
        return Err(src.error(
            field.span(),
            format!("link {key}: no trace file {}", path.display()),
        ));
    }
    // The trace's own errors name its file and line.
    lbe_link::DeliveryTrace::read(&path)
        .map(Arc::new)
        .map_err(|e| src.error(field.span(), format!("link {key}: {e}")))
}

fn duration(src: &Source, field: &Spanned<String>, what: &str) -> Result<Duration, String> {
    src.value(field, what, lbe_units::parse_duration)
}

/// The keys of `[link]` that make it change, checked.
pub(super) fn variation(
    src: &Source,
    link_span: Range<usize>,
    raw: &RawLink,
) -> Result<Variation, String> {
    let jitter = match &raw.jitter {
        Some(j) => duration(src, j, "link jitter")?,
        None => Duration::ZERO,
    };
    let jitter_model = match &raw.jitter_model {
        Some(m) => src.value(m, "link jitter_model", lbe_link::JitterModel::parse)?,
        None => lbe_link::JitterModel::default(),
    };
    let aggregate = match &raw.aggregate {
        Some(a) => {
            let d = duration(src, a, "link aggregate")?;
            if d.is_zero() {
                return Err(src.error(a.span(), "link aggregate must be above zero"));
            }
            Some(d)
        }
        None => None,
    };
    let trace_of = |t: &Option<Spanned<String>>, key| t.as_ref().map(|t| trace(src, t, key));
    let trace = trace_of(&raw.trace, "trace").transpose()?;
    let reverse_trace = trace_of(&raw.reverse_trace, "reverse_trace").transpose()?;
    if let (Some(_), Some(r)) = (&raw.trace, &raw.rate) {
        return Err(src.error(
            r.span(),
            "link rate and trace exclude each other: the trace is the rate",
        ));
    }
    if let (Some(_), Some(r)) = (&raw.reverse_trace, &raw.reverse_rate) {
        return Err(src.error(
            r.span(),
            "link reverse_rate and reverse_trace exclude each other: the trace is the rate",
        ));
    }
    if let (Some(t), Some(a)) = (&raw.trace, &raw.aqm) {
        if a.get_ref() != "fifo" {
            return Err(src.error(t.span(), "link trace runs under the FIFO; it excludes aqm"));
        }
    }
    if raw.rate.is_none() && raw.trace.is_none() {
        return Err(src.error(link_span, "link needs a rate (or a trace)"));
    }
    let ge = raw.loss_model.as_ref().is_some_and(|m| m.get_ref() == "ge");
    if let Some(l) = raw
        .change
        .iter()
        .filter_map(|c| c.get_ref().loss.as_ref())
        .next()
        .filter(|_| ge)
    {
        return Err(src.error(
            l.span(),
            "link change loss and loss_model = \"ge\" exclude each other: the Gilbert-Elliott channel decides the random loss",
        ));
    }
    let mut changes = Vec::new();
    for c in &raw.change {
        let prev = changes.last().map(|c: &Change| c.at);
        changes.push(change(src, c, prev, raw.trace.is_some())?);
    }
    Ok(Variation {
        jitter,
        jitter_model,
        reorder: raw.reorder.as_ref().is_some_and(|r| *r.get_ref()),
        aggregate,
        trace,
        reverse_trace,
        changes,
    })
}

/// One `[[link.change]]`, after the one at `prev`.
fn change(
    src: &Source,
    raw: &Spanned<RawChange>,
    prev: Option<Duration>,
    traced: bool,
) -> Result<Change, String> {
    let span = raw.span();
    let raw = raw.get_ref();
    let Some(at_field) = &raw.at else {
        return Err(src.error(span, "link change needs 'at' (when it happens)"));
    };
    let at = duration(src, at_field, "link change at")?;
    if prev.is_some_and(|p| at <= p) {
        return Err(src.error(
            at_field.span(),
            "link change at must be after the previous change's",
        ));
    }
    let rate_bps = match &raw.rate {
        Some(_) if traced => {
            return Err(src.error(
                span,
                "link change rate on a traced link: the trace is the rate",
            ))
        }
        Some(r) => {
            let rate = src.value(r, "link change rate", lbe_units::parse_rate)?;
            if rate == 0 {
                return Err(src.error(
                    r.span(),
                    "link change rate must be above zero (an outage stops the link)",
                ));
            }
            Some(rate)
        }
        None => None,
    };
    let rtt = match &raw.rtt {
        Some(r) => {
            let rtt = duration(src, r, "link change rtt")?;
            if rtt.is_zero() {
                return Err(src.error(r.span(), "link change rtt must be above zero"));
            }
            Some(rtt)
        }
        None => None,
    };
    let outage = match &raw.outage {
        Some(o) => {
            let d = duration(src, o, "link change outage")?;
            if d.is_zero() {
                return Err(src.error(o.span(), "link change outage must be above zero"));
            }
            Some(d)
        }
        None => None,
    };
    let loss = match &raw.loss {
        Some(l) if !(0.0..1.0).contains(l.get_ref()) => {
            return Err(src.error(l.span(), "link change loss must be from 0 to below 1"))
        }
        Some(l) => Some(*l.get_ref()),
        None => None,
    };
    let change = Change {
        at,
        rate_bps,
        rtt,
        jitter: raw
            .jitter
            .as_ref()
            .map(|j| duration(src, j, "link change jitter"))
            .transpose()?,
        loss,
        outage,
        rebind: raw.rebind.as_ref().is_some_and(|r| *r.get_ref()),
    };
    if change
        == (Change {
            at,
            ..Change::default()
        })
    {
        return Err(src.error(
            span,
            "link change changes nothing: give rate, rtt, jitter, loss, outage or rebind = true",
        ));
    }
    Ok(change)
}

/// The changes must fall within the run (before `end`).
pub(super) fn within_run(
    src: &Source,
    raw: &RawLink,
    changes: &[Change],
    end: Duration,
) -> Result<(), String> {
    for (c, r) in changes.iter().zip(&raw.change) {
        if c.at >= end {
            let span = r.get_ref().at.as_ref().map_or(r.span(), |a| a.span());
            return Err(src.error(
                span,
                format!(
                    "link change at {:?} is beyond the run, which ends at {end:?}",
                    c.at
                ),
            ));
        }
    }
    Ok(())
}
