//! Child processes and waiting.

use std::io::BufRead;
use std::io::BufReader;
use std::process::Child;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

/// A finished command: exit status, stdout, stderr.
pub struct Run {
    pub ok: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Stdout as one JSON value; panics (with stderr) if the run failed.
    pub fn json(&self) -> serde_json::Value {
        assert!(self.ok, "failed: {}", self.stderr);
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", self.stdout))
    }

    /// The error line, checked to be one `PROGRAM: error: ...` line of a
    /// failed run.
    pub fn error_line(&self, program: &str) -> &str {
        assert!(!self.ok, "expected a failure; stdout: {}", self.stdout);
        let line = self.stderr.trim_end();
        assert_eq!(line.lines().count(), 1, "not one line: {line:?}");
        assert!(
            line.starts_with(&format!("{program}: error: ")),
            "unexpected: {line}"
        );
        line
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            ok: o.status.success(),
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// A child process killed (SIGKILL) and reaped on drop: a test that fails
/// half way leaves no server behind.
pub struct ChildGuard(pub Child);

impl ChildGuard {
    /// Starts `command` with its stdout piped and waits for the first line
    /// there: the JSON line a server (lbe-netem, quic-bulk) prints once it
    /// listens, saying where. Returns the guarded child and that line
    /// parsed; stdout is closed after it.
    pub fn spawn_ready(command: &mut Command) -> (ChildGuard, serde_json::Value) {
        let mut child = ChildGuard(command.stdout(Stdio::piped()).spawn().unwrap());
        let mut line = String::new();
        BufReader::new(child.0.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a JSON ready line ({e}): {line:?}"));
        (child, ready)
    }

    /// Waits for the child to exit on its own; what it printed (the piped
    /// streams; an inherited or null one reads as empty).
    pub fn finish(&mut self) -> Run {
        use std::io::Read;
        let (mut stdout, mut stderr) = (String::new(), String::new());
        if let Some(mut o) = self.0.stdout.take() {
            o.read_to_string(&mut stdout).unwrap();
        }
        if let Some(mut e) = self.0.stderr.take() {
            e.read_to_string(&mut stderr).unwrap();
        }
        let status = self.0.wait().unwrap();
        Run {
            ok: status.success(),
            code: status.code(),
            stdout,
            stderr,
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits for `cond`, polling every 5 ms; panics after `limit` (a hang
/// guard, not a measurement).
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_run_reads_json_and_error_lines() {
        let ok = Run::from(sh("echo '{\"a\": 1}'").output().unwrap());
        assert_eq!((ok.ok, ok.code), (true, Some(0)));
        assert_eq!(ok.json(), serde_json::json!({"a": 1}));
        let bad = Run::from(sh("echo 'prog: error: no' >&2; exit 2").output().unwrap());
        assert_eq!((bad.ok, bad.code), (false, Some(2)));
        assert_eq!(bad.error_line("prog"), "prog: error: no");
    }

    #[test]
    #[should_panic(expected = "not one line")]
    fn two_error_lines_are_refused() {
        let bad = Run::from(sh("printf 'a\\nb\\n' >&2; exit 1").output().unwrap());
        bad.error_line("prog");
    }

    #[test]
    fn a_guarded_child_is_killed_on_drop_and_finish_reads_its_output() {
        let guard = ChildGuard(sh("sleep 60").spawn().unwrap());
        let pid = guard.0.id();
        drop(guard);
        // Reaped: no such process any more.
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        let mut g = ChildGuard(
            sh("echo out; echo err >&2; exit 3")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let r = g.finish();
        assert_eq!(
            (r.ok, r.code, r.stdout.as_str(), r.stderr.as_str()),
            (false, Some(3), "out\n", "err\n")
        );
    }

    #[test]
    fn spawn_ready_returns_the_ready_line_with_the_child_still_running() {
        let (mut child, ready) =
            ChildGuard::spawn_ready(&mut sh("echo '{\"listen\": [\"127.0.0.1:7\"]}'; sleep 60"));
        assert_eq!(ready["listen"][0], "127.0.0.1:7");
        assert!(child.0.try_wait().unwrap().is_none(), "still running");
    }

    #[test]
    #[should_panic(expected = "not a JSON ready line")]
    fn a_ready_line_that_is_not_json_is_refused() {
        ChildGuard::spawn_ready(&mut sh("echo listening"));
    }

    #[test]
    fn wait_for_returns_once_true_and_panics_after_the_limit() {
        let mut n = 0;
        wait_for("three polls", Duration::from_secs(5), || {
            n += 1;
            n == 3
        });
        assert_eq!(n, 3);
        let r = std::panic::catch_unwind(|| wait_for("never", Duration::from_millis(20), || false));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert_eq!(msg, "timed out waiting for never");
    }
}
