//! A flow's kind with its own keys checked, and its sender controller.

use std::ops::Range;

use quiche_lbe::CcSpec;
use toml::Spanned;

use super::keys::{clock_keys, workload_keys};
use super::source::Source;
use super::workload::workload_kind;
use crate::kinds::{lbe_name, parse_lbe, FlowKind, H3Flow, H3Server, Lbe, KIND_NAMES, LBE_NAMES};
use crate::raw::RawFlow;

/// A flow's `kind`, with its own keys; the keys of the other kinds are
/// errors.
pub(super) fn flow_kind(
    src: &Source,
    flow_span: Range<usize>,
    f: &RawFlow,
) -> Result<FlowKind, String> {
    let kind = match &f.kind {
        None => KIND_NAMES[0],
        Some(k) => KIND_NAMES
            .into_iter()
            .find(|n| *n == k.get_ref().as_str())
            .ok_or_else(|| {
                src.error(
                    k.span(),
                    format!(
                        "flow kind: '{}' is not a flow kind (allowed: {})",
                        k.get_ref(),
                        KIND_NAMES.join(", ")
                    ),
                )
            })?,
    };
    if !matches!(kind, "quic-bulk" | "h3") {
        return workload_kind(src, flow_span, f, kind);
    }
    if let Some((key, owner, Some(span))) = workload_keys(f).into_iter().find(|k| k.2.is_some()) {
        return Err(src.error(
            span,
            format!("flow {key}: only {owner} flows (kind = \"{owner}\") take '{key}'"),
        ));
    }
    let h3 = kind == "h3";
    if !h3 {
        let h3_only = [
            ("server", f.server.as_ref().map(|v| v.span())),
            ("background", f.background.as_ref().map(|v| v.span())),
            ("lbe", f.lbe.as_ref().map(|v| v.span())),
        ];
        if let Some((key, Some(span))) = h3_only.into_iter().find(|(_, s)| s.is_some()) {
            return Err(src.error(
                span,
                format!("flow {key}: only h3 flows (kind = \"h3\") take '{key}'"),
            ));
        }
        return Ok(FlowKind::QuicBulk);
    }
    for (key, span) in [
        ("deadline", f.deadline.as_ref().map(|v| v.span())),
        ("pacing", f.pacing.as_ref().map(|v| v.span())),
        ("direction", f.direction.as_ref().map(|v| v.span())),
    ]
    .into_iter()
    .chain(clock_keys(f))
    {
        if let Some(span) = span {
            return Err(src.error(
                span,
                format!("flow {key}: only quic-bulk flows take '{key}' (an h3 flow's sender is its server)"),
            ));
        }
    }
    if let Some(v) = &f.receiver_lbe {
        return Err(src.error(
            v.span(),
            "flow receiver_lbe: only quic-bulk flows take 'receiver_lbe' (an h3 flow sets lbe = \"receiver\")",
        ));
    }
    let server = match &f.server {
        None => H3Server::H3Serve,
        Some(v) => H3Server::parse(v.get_ref()).ok_or_else(|| {
            src.error(
                v.span(),
                format!(
                    "flow server: '{}' is not an h3 server (allowed: {})",
                    v.get_ref(),
                    H3Server::NAMES.join(", ")
                ),
            )
        })?,
    };
    let background = f.background.as_ref().is_some_and(|b| *b.get_ref());
    let lbe = match &f.lbe {
        None => None,
        Some(v) => {
            let lbe = parse_lbe(v.get_ref()).ok_or_else(|| {
                src.error(
                    v.span(),
                    format!(
                        "flow lbe: '{}' is not an lbe mode (allowed: {})",
                        v.get_ref(),
                        LBE_NAMES.join(", ")
                    ),
                )
            })?;
            if !background {
                return Err(src.error(
                    v.span(),
                    "flow lbe: needs background = true (a normal download runs no LBE)",
                ));
            }
            if lbe != Lbe::Receiver && server != H3Server::H3Serve {
                return Err(src.error(
                    v.span(),
                    format!(
                        "flow lbe: '{}' needs server = \"h3-serve\" ('{}' does no LBE of its own; with it lbe = \"receiver\" only)",
                        lbe_name(lbe),
                        server.name()
                    ),
                ));
            }
            if lbe == Lbe::Receiver && server == H3Server::H3Serve {
                return Err(src.error(
                    v.span(),
                    "flow lbe: 'receiver' with server = \"h3-serve\" is both (h3-serve honours the priority u=7 that --background sends); for receiver-only use server = \"quiche-stock\" or \"aioquic\"",
                ));
            }
            Some(lbe)
        }
    };
    Ok(FlowKind::H3(H3Flow {
        server,
        background,
        lbe,
    }))
}

/// A flow's sender controller: quic-bulk's `cc` (required); for an h3
/// flow, `cc` where its server runs it, else the server's own; for a web
/// or video flow `cc` or cubic; cubic (unused) for ping and cbr.
pub(super) fn flow_cc(
    src: &Source,
    flow_span: Range<usize>,
    f: &RawFlow,
    kind: &FlowKind,
) -> Result<CcSpec, String> {
    let parse = |c: &Spanned<String>| {
        src.value(c, "flow cc", |t| {
            t.parse().map_err(|e: quiche_lbe::SpecError| e.to_string())
        })
    };
    match (kind, &f.cc) {
        (FlowKind::Web(_) | FlowKind::Video(_), Some(c)) => parse(c),
        (FlowKind::Web(_) | FlowKind::Video(_) | FlowKind::Ping(_) | FlowKind::Cbr(_), _) => {
            Ok("cubic".parse().expect("a valid spec"))
        }
        (FlowKind::QuicBulk, Some(c)) => parse(c),
        (FlowKind::QuicBulk, None) => Err(src.error(flow_span, "a quic-bulk flow needs 'cc'")),
        (FlowKind::H3(h3), Some(c)) => {
            if !h3.server_lbe() {
                return Err(src.error(
                    c.span(),
                    "flow cc: an h3 flow's controller is its server's; cc (h3-serve's --background-cc) needs server = \"h3-serve\" and background = true",
                ));
            }
            let cc = parse(c)?;
            cc.check_background()
                .map_err(|e| src.error(c.span(), format!("flow cc: {e}")))?;
            Ok(cc)
        }
        (FlowKind::H3(h3), None) => Ok(if h3.server_lbe() {
            "ledbatpp"
        } else {
            h3.server.default_cc()
        }
        .parse()
        .expect("a valid spec")),
    }
}
