//! One qlog file per connection and role, named by
//! [`lbe_cc::qlog_name`] (`<label>-<role>-<cc tag>-<connection id>.sqlog`).

use std::fs;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use crate::Error;

pub use lbe_cc::qlog_name::file_name;
pub use lbe_cc::qlog_name::Role;

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
