//! aioquic, an independent HTTP/3 implementation (Python, from PyPI), as a
//! server to download from: the interop tests and `lbe-lab`'s h3 flows
//! (`server = "aioquic"`) both set it up here, the same way.
//!
//! [`Aioquic::install`] makes a virtualenv with [`AIOQUIC`] in it
//! (`lbe_app_kit::python_venv`, the one home of that; a virtualenv that
//! already imports aioquic is used as it is); [`Aioquic::server`] starts our file
//! server on it (`tests/aioquic/server.py`, built into this crate and
//! written into the virtualenv, so any binary can run it) and learns its
//! port. The server is killed when its handle is dropped.
//!
//! The virtualenv lives in the cargo target directory's `tmp/` (the
//! integration tests' `CARGO_TARGET_TMPDIR`), so tests and `lbe-lab`
//! share it; see [`default_venv`].

use std::io::BufRead;
use std::io::BufReader;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;

use quiche_lbe::Error;

/// The aioquic release we test against.
pub const AIOQUIC: &str = "aioquic==1.7.2";

/// The file server (`tests/aioquic/server.py`): see its docstring.
pub const SERVER_PY: &str = include_str!("../tests/aioquic/server.py");

/// Name of the server script inside the virtualenv.
const SERVER_FILE: &str = "h3-download-server.py";

/// Overrides [`default_venv`].
pub const VENV_ENV: &str = "LBE_AIOQUIC_VENV";

pub use lbe_app_kit::python_venv::InstallError;

/// The virtualenv `lbe-lab` uses: `$LBE_AIOQUIC_VENV` if set, else
/// `tmp/aioquic-venv` in the cargo target directory that holds `exe`
/// (found by its `CACHEDIR.TAG`; the interop tests' `CARGO_TARGET_TMPDIR`
/// is that `tmp/`), else `aioquic-venv` in the system temp directory.
pub fn default_venv(exe: &Path) -> PathBuf {
    match std::env::var_os(VENV_ENV).filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => venv_near(exe),
    }
}

/// `tmp/aioquic-venv` in the cargo target directory that holds `exe`, else
/// `aioquic-venv` in the system temp directory.
fn venv_near(exe: &Path) -> PathBuf {
    exe.ancestors()
        .skip(1)
        .find(|d| d.join("CACHEDIR.TAG").is_file())
        .map_or_else(
            || std::env::temp_dir().join("aioquic-venv"),
            |target| target.join("tmp").join("aioquic-venv"),
        )
}

pub use lbe_app_kit::python_venv::pypi_reachable;

/// A virtualenv with aioquic installed.
#[derive(Clone, Debug)]
pub struct Aioquic {
    /// Its python.
    pub python: PathBuf,
    /// The file server script, written into the virtualenv.
    pub server_script: PathBuf,
}

impl Aioquic {
    /// Makes (or reuses) the virtualenv `venv` with [`AIOQUIC`] in it.
    pub fn install(venv: &Path) -> Result<Self, InstallError> {
        let python = lbe_app_kit::python_venv::install(
            venv,
            AIOQUIC,
            "import aioquic, cryptography",
            "aioquic",
        )?;
        let server_script = venv.join(SERVER_FILE);
        let tmp = venv.join(format!("{SERVER_FILE}.{}", std::process::id()));
        std::fs::write(&tmp, SERVER_PY)
            .and_then(|()| std::fs::rename(&tmp, &server_script))
            .map_err(|e| {
                InstallError::Failed(format!(
                    "aioquic: cannot write {}: {e}",
                    server_script.display()
                ))
            })?;
        Ok(Aioquic {
            python,
            server_script,
        })
    }

    /// Starts the file server on `root` (a free port on 127.0.0.1) with
    /// the script's `extra` options; its stderr goes to `stderr`. Returns
    /// once it listens.
    pub fn server(
        &self,
        root: &Path,
        extra: &[&str],
        stderr: Stdio,
    ) -> Result<AioquicServer, Error> {
        let mut child = Command::new(&self.python)
            .arg(&self.server_script)
            .arg("--root")
            .arg(root)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| Error::new(format!("aioquic server: cannot start: {e}")))?;
        let mut line = String::new();
        let read = child
            .stdout
            .take()
            .map(|o| BufReader::new(o).read_line(&mut line));
        let port = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|p| p.parse().ok());
        match (read, port) {
            (Some(Ok(_)), Some(port)) => Ok(AioquicServer { child, port }),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                Err(Error::new(format!(
                    "aioquic server: did not start (it printed {:?})",
                    line.trim()
                )))
            }
        }
    }
}

/// A running aioquic file server; killed on drop.
pub struct AioquicServer {
    child: Child,
    /// Its UDP port on 127.0.0.1.
    pub port: u16,
}

impl AioquicServer {
    /// `https://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for AioquicServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_venv_is_in_the_target_dirs_tmp() {
        let dir = std::env::temp_dir().join(format!("aioquic-venv-test-{}", std::process::id()));
        let release = dir.join("target/release");
        std::fs::create_dir_all(release.join("deps")).unwrap();
        std::fs::write(dir.join("target/CACHEDIR.TAG"), "").unwrap();
        assert_eq!(
            venv_near(&release.join("lbe-lab")),
            dir.join("target/tmp/aioquic-venv")
        );
        assert_eq!(
            venv_near(&release.join("deps/scenarios-0123")),
            dir.join("target/tmp/aioquic-venv")
        );
        assert_eq!(
            venv_near(Path::new("/nonexistent/bin/lbe-lab")),
            std::env::temp_dir().join("aioquic-venv")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
