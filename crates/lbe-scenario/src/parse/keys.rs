//! The keys only some flows take, with where the file sets them: what
//! the kind checks refuse for the other flows.

use std::ops::Range;

use toml::Spanned;

use crate::raw::RawFlow;

/// The keys only one workload kind takes, with that kind.
pub(super) fn workload_keys(
    f: &RawFlow,
) -> [(&'static str, &'static str, Option<Range<usize>>); 11] {
    let span = |v: &Option<Spanned<String>>| v.as_ref().map(|v| v.span());
    [
        ("arrivals", "web", span(&f.arrivals)),
        ("size", "web", span(&f.size)),
        ("sizes", "web", f.sizes.as_ref().map(|v| v.span())),
        ("interval", "ping", span(&f.interval)),
        ("chunk", "video", span(&f.chunk)),
        ("bitrate", "video", span(&f.bitrate)),
        ("startup", "video", span(&f.startup)),
        ("buffer", "video", span(&f.buffer)),
        ("rate", "cbr", span(&f.rate)),
        ("on", "cbr", span(&f.on)),
        ("off", "cbr", span(&f.off)),
    ]
}

/// The simulated clock keys a flow sets, with where.
pub(super) fn clock_keys(
    f: &RawFlow,
) -> impl Iterator<Item = (&'static str, Option<Range<usize>>)> {
    [
        (
            "client_clock_offset",
            f.client_clock_offset.as_ref().map(|v| v.span()),
        ),
        (
            "client_clock_skew_ppm",
            f.client_clock_skew_ppm.as_ref().map(|v| v.span()),
        ),
        (
            "server_clock_offset",
            f.server_clock_offset.as_ref().map(|v| v.span()),
        ),
        (
            "server_clock_skew_ppm",
            f.server_clock_skew_ppm.as_ref().map(|v| v.span()),
        ),
    ]
    .into_iter()
}
