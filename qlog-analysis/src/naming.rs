//! What a qlog file's name says. The format,
//! `<label>-<role>-<cc tag>-<connection id>.sqlog`, is `lbe-cc`'s
//! [`lbe_cc::qlog_name`] (the apps write their files through it), so that
//! flow, role and controller can be told apart. Anything else is accepted;
//! the stem then becomes the label.

use std::path::Path;

use lbe_cc::qlog_name;
use lbe_cc::qlog_name::QlogName;
use lbe_cc::ControllerConfig;

use crate::reader::Role;

/// Parsed from a file name; every part optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameInfo {
    /// The flow id or connection id (the part before the role).
    pub flow: Option<String>,
    /// The endpoint that wrote the file (`client` or `server`), if the name says.
    pub role: Option<Role>,
    /// The controller, possibly a spec with parameters (`ledbatpp:target=40ms`).
    pub cc: Option<String>,
    /// The file name without its qlog extension(s).
    pub stem: String,
}

/// Strip `.sqlog`, `.qlog`, `.json` (and a compression suffix) from a name.
pub fn stem_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = name.as_str();
    for ext in [".gz", ".zst"] {
        stem = stem.strip_suffix(ext).unwrap_or(stem);
    }
    for ext in [".sqlog", ".qlog", ".json"] {
        if let Some(s) = stem.strip_suffix(ext) {
            stem = s;
            break;
        }
    }
    stem.to_string()
}

/// Reads label, role and controller from a file name
/// ([`lbe_cc::qlog_name::QlogName::parse`]).
pub fn parse_file_name(path: &Path) -> NameInfo {
    let stem = stem_of(path);
    match QlogName::parse(&stem) {
        Some(name) => NameInfo {
            flow: name.label,
            role: Some(match name.role {
                qlog_name::Role::Client => Role::Client,
                qlog_name::Role::Server => Role::Server,
            }),
            cc: name.spec,
            stem,
        },
        None => NameInfo {
            stem,
            ..Default::default()
        },
    }
}

/// The controller name of a spec (`ledbatpp:target=40ms` → `ledbatpp`).
pub fn cc_name(spec: &str) -> &str {
    spec.split(':').next().unwrap_or(spec)
}

/// The queuing-delay target a controller spec implies, in ms: an explicit
/// `target=` parameter, or the controller's default from `lbe-cc`
/// (LEDBAT++ 60 ms, LEDBAT 100 ms). `None` for controllers without a delay
/// target.
pub fn target_ms_of(spec: &str) -> Option<f64> {
    if let Some((_, params)) = spec.split_once(':') {
        for kv in params.split(',') {
            if let Some(v) = kv.trim().strip_prefix("target=") {
                if let Ok(secs) = crate::units::parse_duration(v) {
                    return Some(secs * 1e3);
                }
            }
        }
    }
    let name = match cc_name(spec).to_ascii_lowercase().as_str() {
        "ledbat++" | "ledbat_plus_plus" => "ledbatpp".to_string(),
        name => name.to_string(),
    };
    let target = ControllerConfig::default_for(&name)?.target()?;
    Some(target.as_nanos() as f64 / 1e6)
}

// ---- Controller detection fallback ------------------------------------------
// For qlogs not written by quic-bulk (no controller in the file name): what
// the trace itself tells. Kept apart from the file-name format above.

/// The controller a trace's `congestion_state_updated` state names give
/// away, if one is ours alone: LEDBAT++'s `slowdown`/`ramp_up` and
/// `profile=full`'s `filling`/`yielded`/`quiet`, CDG's `backoff` (the
/// `state_name`s of `cc/src/ledbatpp/mod.rs` and `cc/src/cdg.rs`).
/// Generic names (`slow_start`, `recovery`...) tell nothing.
pub fn controller_from_states<'a>(
    states: impl IntoIterator<Item = &'a str>,
) -> Option<&'static str> {
    let mut found = None;
    for s in states {
        match s {
            "slowdown" | "ramp_up" | "filling" | "yielded" | "quiet" => return Some("ledbatpp"),
            "backoff" => found = Some("cdg"),
            _ => {}
        }
    }
    found
}

/// The controller of an implementation that has only one: quic-go's
/// congestion controller is always CUBIC (`internal/congestion`'s
/// `NewCubicSender` with `reno = false`; no option changes it). Others
/// (aioquic, quiche) are configurable, so their name tells nothing.
pub fn controller_of_producer(producer: &str) -> Option<&'static str> {
    match producer.to_ascii_lowercase().as_str() {
        "quic-go" => Some("cubic"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let n = parse_file_name(Path::new("/x/0a1b2c-server-ledbatpp.sqlog"));
        assert_eq!(n.flow.as_deref(), Some("0a1b2c"));
        assert_eq!(n.role, Some(Role::Server));
        assert_eq!(n.cc.as_deref(), Some("ledbatpp"));

        let n = parse_file_name(Path::new("flow-2-client-cubic.sqlog"));
        assert_eq!(n.flow.as_deref(), Some("flow-2"));
        assert_eq!(n.role, Some(Role::Client));
        assert_eq!(n.cc.as_deref(), Some("cubic"));

        let n = parse_file_name(Path::new(
            "flow_1-server-ledbatpp+target=25ms+decrease_constant=2-0123456789abcdef.sqlog",
        ));
        assert_eq!(n.flow.as_deref(), Some("flow_1"));
        assert_eq!(n.role, Some(Role::Server));
        assert_eq!(
            n.cc.as_deref(),
            Some("ledbatpp:target=25ms,decrease_constant=2")
        );

        let n = parse_file_name(Path::new("trace.qlog"));
        assert_eq!(
            n,
            NameInfo {
                stem: "trace".into(),
                ..Default::default()
            }
        );

        let n = parse_file_name(Path::new("server.sqlog"));
        assert_eq!((n.flow, n.cc, n.role), (None, None, Some(Role::Server)));
    }

    #[test]
    fn targets() {
        assert_eq!(target_ms_of("ledbatpp"), Some(60.0));
        assert_eq!(
            target_ms_of("ledbat:target=5ms,decrease_gain=10"),
            Some(5.0)
        );
        assert_eq!(target_ms_of("cubic"), None);
        assert_eq!(cc_name("cdg:g=3"), "cdg");
    }

    #[test]
    fn controller_fallbacks() {
        assert_eq!(
            controller_from_states(["slow_start", "slowdown"]),
            Some("ledbatpp")
        );
        assert_eq!(controller_from_states(["backoff", "recovery"]), Some("cdg"));
        for full in ["filling", "yielded", "quiet"] {
            assert_eq!(
                controller_from_states(["slow_start", full]),
                Some("ledbatpp"),
                "{full}"
            );
        }
        assert_eq!(controller_from_states(["slow_start", "recovery"]), None);
        assert_eq!(controller_of_producer("quic-go"), Some("cubic"));
        assert_eq!(controller_of_producer("aioquic"), None);
    }
}
