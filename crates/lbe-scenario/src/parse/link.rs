//! The `[link]` table checked: rate, RTT, buffer, loss, cross traffic,
//! the AQM, the loss model and the reverse direction.

use std::ops::Range;

use super::source::Source;
use crate::model::Link;
use crate::raw::RawLink;

/// A TOML scalar as the text `lbe-link`'s parsers take.
fn scalar_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The link's AQM, its loss model and its reverse direction, checked.
#[allow(clippy::type_complexity)]
fn link_extras(
    src: &Source,
    link_span: Range<usize>,
    raw: &RawLink,
) -> Result<
    (
        lbe_link::Aqm,
        Option<lbe_link::GilbertElliott>,
        Option<u64>,
        Option<lbe_link::Buffer>,
        f64,
    ),
    String,
> {
    let params = [
        ("codel_target", &raw.codel_target),
        ("codel_interval", &raw.codel_interval),
        ("fq_flows", &raw.fq_flows),
        ("fq_quantum", &raw.fq_quantum),
        ("pie_target", &raw.pie_target),
        ("pie_tupdate", &raw.pie_tupdate),
        ("pie_alpha", &raw.pie_alpha),
        ("pie_beta", &raw.pie_beta),
        ("pie_max_burst", &raw.pie_max_burst),
    ];
    let name = raw.aqm.as_ref().map_or("fifo", |a| a.get_ref().as_str());
    let mut aqm = lbe_link::build_aqm(name, &[]).map_err(|e| {
        src.error(
            raw.aqm.as_ref().map_or(link_span.clone(), |a| a.span()),
            format!("link {e}"),
        )
    })?;
    for (key, value) in params {
        if let Some(v) = value {
            let text = scalar_text(v.get_ref());
            // Each parameter on its own, so that an error names its line.
            let mut all: Vec<(&str, String)> = params
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| (*k, scalar_text(v.get_ref()))))
                .take_while(|(k, _)| *k != key)
                .collect();
            all.push((key, text));
            let pairs: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
            aqm = lbe_link::build_aqm(name, &pairs)
                .map_err(|e| src.error(v.span(), format!("link {e}")))?;
        }
    }

    let ge_keys = [
        ("ge_p", &raw.ge_p),
        ("ge_r", &raw.ge_r),
        ("ge_h", &raw.ge_h),
        ("ge_k", &raw.ge_k),
    ];
    let ge = match raw.loss_model.as_ref().map(|m| (m, m.get_ref().as_str())) {
        None | Some((_, "bernoulli")) => {
            if let Some((key, Some(v))) = ge_keys.iter().find(|(_, v)| v.is_some()) {
                return Err(src.error(
                    v.span(),
                    format!("link {key} needs loss_model = \"ge\""),
                ));
            }
            None
        }
        Some((m, "ge")) => {
            if let Some(l) = &raw.loss {
                return Err(src.error(
                    l.span(),
                    "link loss and loss_model = \"ge\" exclude each other: the Gilbert-Elliott channel decides the random loss",
                ));
            }
            for (key, v) in ge_keys {
                if let Some(v) = v {
                    if !(0.0..=1.0).contains(v.get_ref()) {
                        return Err(src.error(
                            v.span(),
                            format!("link {key} must be a probability from 0 to 1"),
                        ));
                    }
                }
            }
            let (Some(p), Some(r)) = (&raw.ge_p, &raw.ge_r) else {
                return Err(src.error(
                    m.span(),
                    "loss_model = \"ge\" needs ge_p (P(Good->Bad)) and ge_r (P(Bad->Good))",
                ));
            };
            let g = lbe_link::GilbertElliott::new(
                *p.get_ref(),
                *r.get_ref(),
                raw.ge_h.as_ref().map_or(0.0, |v| *v.get_ref()),
                raw.ge_k.as_ref().map_or(1.0, |v| *v.get_ref()),
            )
            .map_err(|e| src.error(m.span(), format!("link {e}")))?;
            Some(g)
        }
        Some((m, other)) => {
            return Err(src.error(
                m.span(),
                format!("link loss_model '{other}': expected \"bernoulli\" (the default, with loss) or \"ge\""),
            ))
        }
    };

    let reverse_rate = match &raw.reverse_rate {
        Some(r) => {
            let rate = src.value(r, "link reverse_rate", lbe_units::parse_rate)?;
            if rate == 0 {
                return Err(src.error(r.span(), "link reverse_rate must be above zero"));
            }
            Some(rate)
        }
        None => None,
    };
    let reverse_buffer = match &raw.reverse_buffer {
        Some(b) if reverse_rate.is_none() => {
            return Err(src.error(b.span(), "link reverse_buffer needs reverse_rate"))
        }
        Some(b) => Some(src.value(b, "link reverse_buffer", parse_buffer)?),
        None => None,
    };
    let reverse_loss = match &raw.reverse_loss {
        Some(l) if !(0.0..1.0).contains(l.get_ref()) => {
            return Err(src.error(l.span(), "link reverse_loss must be from 0 to below 1"))
        }
        Some(l) => *l.get_ref(),
        None => 0.0,
    };
    Ok((aqm, ge, reverse_rate, reverse_buffer, reverse_loss))
}

fn parse_buffer(text: &str) -> Result<lbe_link::Buffer, String> {
    lbe_link::parse_buffer(text)
}

/// The `[link]` table checked: its own keys, then the link's (rate, RTT,
/// buffer, loss, cross traffic) with their bounds.
pub(super) fn link(
    src: &Source,
    link_span: Range<usize>,
    raw_link: &RawLink,
) -> Result<Link, String> {
    let (aqm, gilbert_elliott, reverse_rate_bps, reverse_buffer, reverse_loss) =
        link_extras(src, link_span.clone(), raw_link)?;
    let v = super::change::variation(src, link_span, raw_link)?;
    let rate_bps = match (&raw_link.rate, &v.trace) {
        (Some(r), _) => src.value(r, "link rate", lbe_units::parse_rate)?,
        (None, Some(t)) => t.mean_rate_bps(),
        (None, None) => unreachable!("variation() checked that the link has a rate or a trace"),
    };
    let link = Link {
        jitter: v.jitter,
        jitter_model: v.jitter_model,
        reorder: v.reorder,
        aggregate: v.aggregate,
        trace: v.trace,
        reverse_trace: v.reverse_trace,
        changes: v.changes,
        aqm,
        gilbert_elliott,
        reverse_rate_bps,
        reverse_buffer,
        reverse_loss,
        rate_bps,
        rtt: src.value(&raw_link.rtt, "link rtt", lbe_units::parse_duration)?,
        buffer: src.value(&raw_link.buffer, "link buffer", parse_buffer)?,
        loss: match &raw_link.loss {
            Some(l) if !(0.0..1.0).contains(l.get_ref()) => {
                return Err(src.error(l.span(), "link loss must be from 0 to below 1"))
            }
            Some(l) => *l.get_ref(),
            None => 0.0,
        },
        cross_traffic_bps: match &raw_link.cross_traffic {
            Some(c) => Some(src.value(c, "link cross_traffic", lbe_units::parse_rate)?),
            None => None,
        },
    };
    if let (Some(c), Some(cross)) = (&raw_link.cross_traffic, link.cross_traffic_bps) {
        if cross == 0 || cross >= link.rate_bps {
            return Err(src.error(
                c.span(),
                "link cross_traffic must be above zero and below the link rate",
            ));
        }
    }
    if link.rtt.is_zero() {
        return Err(src.error(raw_link.rtt.span(), "link rtt must be above zero"));
    }
    if link.buffer.bytes_at(link.rate_bps) < 1500 {
        return Err(src.error(
            raw_link.buffer.span(),
            "link buffer must hold at least one packet (1500 bytes)",
        ));
    }
    Ok(link)
}
