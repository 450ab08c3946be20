//! Python packages from PyPI in a virtualenv of their own, for the tests
//! and tools that need one (aioquic as an independent HTTP/3 server,
//! Playwright to open our reports in a real browser): one way to make it,
//! one way to say why it could not be made.
//!
//! [`install`] makes a virtualenv (`python3 -m venv`) and pip-installs one
//! pinned requirement into it, once: a virtualenv whose python already
//! runs the given import check is used as it is.

use std::net::TcpStream;
use std::net::ToSocketAddrs;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;

/// Why [`install`] failed.
#[derive(Debug)]
pub enum InstallError {
    /// pip could not install the package and PyPI (pypi.org:443) is out
    /// of reach: the caller may skip what needs it.
    PypiUnreachable(String),
    /// Anything else (no python3, no venv module, pip failed with PyPI in
    /// reach), on one line.
    Failed(String),
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallError::PypiUnreachable(m) | InstallError::Failed(m) => f.write_str(m),
        }
    }
}

/// Whether pypi.org:443 accepts a TCP connection within 10 s.
pub fn pypi_reachable() -> bool {
    ("pypi.org", 443)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(10)).is_ok())
}

/// Makes (or reuses) the virtualenv `venv` with `requirement` (a pip
/// requirement, e.g. `aioquic==1.7.2`) installed, and returns its python.
/// `check` is Python source that succeeds once the package is usable
/// (e.g. `import aioquic`); `name` prefixes every error message.
pub fn install(
    venv: &Path,
    requirement: &str,
    check: &str,
    name: &str,
) -> Result<PathBuf, InstallError> {
    let how = format!(
        "install it with: python3 -m venv {v} && {v}/bin/pip install {requirement}",
        v = venv.display()
    );
    let python = venv.join("bin/python");
    let ready = || {
        Command::new(&python)
            .args(["-c", check])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if ready() {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(venv)
        .output()
        .map_err(|e| InstallError::Failed(format!("{name}: cannot run python3 ({e}); {how}")))?;
    if !made.status.success() {
        return Err(InstallError::Failed(format!(
            "{name}: python3 -m venv {} failed: {} (Debian/Ubuntu: apt-get install python3-venv); {how}",
            venv.display(),
            last_line(&made.stderr)
        )));
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            requirement,
        ])
        .output()
        .map_err(|e| InstallError::Failed(format!("{name}: cannot run pip ({e}); {how}")))?;
    if !pip.status.success() {
        if !pypi_reachable() {
            return Err(InstallError::PypiUnreachable(format!(
                "{name}: PyPI (pypi.org:443) is unreachable, cannot install {requirement}; {how}"
            )));
        }
        return Err(InstallError::Failed(format!(
            "{name}: pip install {requirement} failed although PyPI is reachable: {}; {how}",
            last_line(&pip.stderr)
        )));
    }
    if !ready() {
        return Err(InstallError::Failed(format!(
            "{name}: it does not import after installing it; {how}"
        )));
    }
    Ok(python)
}

/// The last non-empty line of a command's output.
fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no output")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_line_of_output() {
        assert_eq!(
            last_line(b"a\nERROR: no such version\n\n"),
            "ERROR: no such version"
        );
        assert_eq!(last_line(b""), "no output");
    }
}
