//! One qlog file per connection and role.

use std::fmt;
use std::fs;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use crate::Error;

/// Which end of a connection wrote a qlog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
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

/// Checks up front that `dir` exists (or can be made) and is writable.
pub fn prepare_dir(dir: &Path) -> Result<(), Error> {
    fs::create_dir_all(dir)
        .map_err(|e| Error::new(format!("cannot create qlog dir {}: {e}", dir.display())))?;
    static PROBES: AtomicU64 = AtomicU64::new(0);
    let probe = dir.join(format!(
        ".lbe-write-test-{}-{}",
        std::process::id(),
        PROBES.fetch_add(1, Ordering::Relaxed)
    ));
    File::create(&probe)
        .and_then(|_| fs::remove_file(&probe))
        .map_err(|e| Error::new(format!("qlog dir {} is not writable: {e}", dir.display())))
}

/// `<label>-<role>-<cc>-<connection id>.sqlog`: the flow's label (as the
/// client named it), who wrote it, with which controller, and which
/// connection.
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
    format!("{}-{role}-{}-{id}.sqlog", safe(label), safe(cc_tag))
}

/// Starts writing `conn`'s qlog into `dir` (JSON-SEQ). Returns the path.
pub fn attach(
    conn: &mut quiche::Connection,
    dir: &Path,
    label: &str,
    role: Role,
    cc_tag: &str,
    conn_id: &[u8],
) -> Result<PathBuf, Error> {
    let path = dir.join(file_name(label, role, cc_tag, conn_id));
    let file = File::create(&path)
        .map_err(|e| Error::new(format!("cannot create qlog file {}: {e}", path.display())))?;
    conn.set_qlog_with_level(
        Box::new(BufWriter::new(file)),
        format!("quiche-lbe {role} {label}"),
        format!("cc={cc_tag} role={role} label={label}"),
        quiche::QlogLevel::Base,
    );
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_label_role_cc_and_id() {
        assert_eq!(
            file_name(
                "flow-1",
                Role::Server,
                "ledbatpp+target=25ms",
                &[0xab, 0x01, 2, 3, 4, 5, 6, 7, 8, 9]
            ),
            "flow_1-server-ledbatpp+target=25ms-ab01020304050607.sqlog"
        );
    }
}
