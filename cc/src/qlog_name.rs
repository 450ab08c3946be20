//! The qlog file-name format: `<label>-<role>-<cc tag>-<connection id>.sqlog`.
//!
//! The apps (through the root crate's `qlog` module) write one file per
//! connection and role under this name, and `qlog-analysis` reads flow,
//! role and controller back from it; both use this module, so the format
//! has one home.
//!
//! * `label`: the flow's label as the client named it;
//! * `role`: `client` or `server`, who wrote the file;
//! * `cc tag`: the `--cc` spec as [`cc_tag`] writes it
//!   (`ledbatpp+target=25ms`);
//! * `connection id`: the first 8 bytes of the connection ID, 16 lowercase
//!   hex digits.
//!
//! In `label` and `cc tag` any character other than ASCII letters, digits,
//! `=`, `.`, `_` and `+` is written as `_`. Reading is lenient: `_` also
//! separates the parts, the rightmost `client`/`server` part (any case) is
//! the role, and label, tag and connection ID may each be missing, so
//! hand-named files such as `flow-2-client-cubic.sqlog` still read.

use std::fmt;

/// The extension of the files, JSON-SEQ qlog (RFC 7464).
pub const EXTENSION: &str = "sqlog";

/// Which end of a connection wrote a qlog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The endpoint that opened the connection (`client` in the name).
    Client,
    /// The endpoint that accepted it (`server` in the name).
    Server,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Client => "client",
            Role::Server => "server",
        })
    }
}

/// The file name for a connection's qlog.
pub fn file_name(label: &str, role: Role, cc_tag: &str, conn_id: &[u8]) -> String {
    let id: String = conn_id.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '=' | '.' | '_' | '+') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}-{role}-{}-{id}.{EXTENSION}", safe(label), safe(cc_tag))
}

/// A spec as file names carry it: `:` and `,` become `+`
/// (`ledbatpp:target=25ms,ss_exit=0.5` → `ledbatpp+target=25ms+ss_exit=0.5`);
/// any character other than ASCII letters, digits, `=`, `.` and `_`
/// becomes `_`. [`spec_of_cc_tag`] reverses it.
pub fn cc_tag(spec: &str) -> String {
    spec.chars()
        .map(|c| match c {
            ':' | ',' => '+',
            c if c.is_ascii_alphanumeric() || matches!(c, '=' | '.' | '_') => c,
            _ => '_',
        })
        .collect()
}

/// The spec a [`cc_tag`] was made from: the first `+` is the `:`, the
/// others are `,`.
pub fn spec_of_cc_tag(tag: &str) -> String {
    match tag.split_once('+') {
        Some((name, params)) => format!("{name}:{}", params.replace('+', ",")),
        None => tag.to_string(),
    }
}

/// What a file name's stem (extension removed) says; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QlogName {
    /// The label (flow), if any came before the role.
    pub label: Option<String>,
    /// Which end of the connection wrote the file.
    pub role: Role,
    /// The controller spec, decoded from its tag
    /// (`ledbatpp:target=25ms`), if any came after the role.
    pub spec: Option<String>,
}

impl QlogName {
    /// Reads a stem; `None` when it has no `client`/`server` part.
    pub fn parse(stem: &str) -> Option<Self> {
        let parts: Vec<&str> = stem.split(['-', '_']).collect();
        let i = parts
            .iter()
            .rposition(|p| matches!(p.to_ascii_lowercase().as_str(), "client" | "server"))?;
        let role = if parts[i].eq_ignore_ascii_case("client") {
            Role::Client
        } else {
            Role::Server
        };
        // Offsets into the stem, to keep the separators inside label and tag.
        let start: usize = parts[..i].iter().map(|p| p.len() + 1).sum();
        let label = (i > 0)
            .then(|| stem[..start - 1].to_string())
            .filter(|s| !s.is_empty());
        let after_role = start + parts[i].len() + 1;
        let spec = (i + 1 < parts.len())
            .then(|| spec_of_cc_tag(strip_conn_id(&stem[after_role..])))
            .filter(|s| !s.is_empty());
        Some(Self { label, role, spec })
    }
}

/// The tag without its `-<16 hex digits>` connection ID.
fn strip_conn_id(tail: &str) -> &str {
    match tail.rsplit_once('-') {
        Some((head, id)) if id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()) => head,
        _ => tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_label_role_cc_and_id_and_read_back() {
        let name = file_name(
            "flow-1",
            Role::Server,
            &cc_tag("ledbatpp:target=25ms"),
            &[0xab, 0x01, 2, 3, 4, 5, 6, 7, 8, 9],
        );
        assert_eq!(
            name,
            "flow_1-server-ledbatpp+target=25ms-ab01020304050607.sqlog"
        );
        let stem = name.strip_suffix(".sqlog").unwrap();
        assert_eq!(
            QlogName::parse(stem),
            Some(QlogName {
                label: Some("flow_1".into()),
                role: Role::Server,
                spec: Some("ledbatpp:target=25ms".into()),
            })
        );
    }

    #[test]
    fn hand_named_files_read_too() {
        assert_eq!(
            QlogName::parse("flow-2-Client-cubic"),
            Some(QlogName {
                label: Some("flow-2".into()),
                role: Role::Client,
                spec: Some("cubic".into()),
            })
        );
        assert_eq!(
            QlogName::parse("server"),
            Some(QlogName {
                label: None,
                role: Role::Server,
                spec: None,
            })
        );
        assert_eq!(QlogName::parse("trace"), None);
    }

    #[test]
    fn cc_tags_round_trip() {
        let spec = "ledbatpp:target=25ms,ss_exit=0.5";
        assert_eq!(cc_tag(spec), "ledbatpp+target=25ms+ss_exit=0.5");
        assert_eq!(spec_of_cc_tag(&cc_tag(spec)), spec);
        assert_eq!(cc_tag("cubic"), "cubic");
        assert_eq!(spec_of_cc_tag("cubic"), "cubic");
        assert_eq!(cc_tag("a b/c"), "a_b_c");
    }
}
