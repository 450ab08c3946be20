//! tokio-h3-server end to end over loopback: `h3-fetch` downloads a file
//! through it, trusting the certificate the server wrote, and gets the same
//! bytes; the server's qlog shows that LEDBAT++, chosen by name in
//! tokio-quiche's `QuicSettings::cc_algorithm`, is the controller that sent.

use std::io::BufRead;
use std::io::BufReader;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;
use std::time::Instant;

use quiche_lbe::lbe_cc::ledbatpp::STATE_NAMES;

const FILE_BYTES: usize = 4_000_000;
const SERVER_START: Duration = Duration::from_secs(30);
const FETCH_LIMIT: Duration = Duration::from_secs(60);
const QLOG_LIMIT: Duration = Duration::from_secs(10);

/// Kills the server when the test ends, passing or not.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tempdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("tokio-h3-server-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `h3-fetch`, built beside this test's directory (`target/release/`) by
/// `cargo test --workspace` (`make test`) or `cargo build --release -p
/// h3-download`.
fn h3_fetch() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let release = exe.parent().unwrap().parent().unwrap();
    let fetch = release.join("h3-fetch");
    assert!(
        fetch.is_file(),
        "{} is missing: build it with `cargo build --release -p h3-download`",
        fetch.display()
    );
    fetch
}

/// Deterministic, non-repeating content (a 64-bit LCG's high bytes).
fn content(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x5eed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 56) as u8
        })
        .collect()
}

/// Starts the server on a free loopback port; its address.
fn start(root: &Path, cert: &Path, qlog_dir: &Path) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokio-h3-server"))
        .args(["--listen", "127.0.0.1:0", "--cc", "ledbatpp:profile=full"])
        .arg("--root")
        .arg(root)
        .arg("--write-cert")
        .arg(cert)
        .arg("--qlog-dir")
        .arg(qlog_dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(SERVER_START)
        .expect("the server did not say where it listens");
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (server, addr)
}

/// Runs `h3-fetch ARGS`, killed after `FETCH_LIMIT`.
fn fetch(args: &[&std::ffi::OsStr]) -> Output {
    let mut child = Command::new(h3_fetch())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > FETCH_LIMIT {
            let _ = child.kill();
            panic!("h3-fetch did not finish within {FETCH_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The qlog records (JSON-SEQ: the header, then one event a record).
fn qlog_events(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .skip(1)
        .filter_map(|r| serde_json::from_str(r.trim()).ok())
        .collect()
}

/// The congestion windows and the states of the one connection's qlog in
/// `dir`, once the connection has ended and its log holds both.
fn windows_and_states(dir: &Path) -> (Vec<u64>, Vec<String>) {
    let started = Instant::now();
    loop {
        let logs: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sqlog"))
            .collect();
        if let [log] = logs.as_slice() {
            let events = qlog_events(log);
            let windows: Vec<u64> = events
                .iter()
                .filter(|e| e["name"] == "quic:recovery_metrics_updated")
                .filter_map(|e| e["data"]["congestion_window"].as_u64())
                .collect();
            let states: Vec<String> = events
                .iter()
                .filter(|e| e["name"] == "quic:congestion_state_updated")
                .filter_map(|e| e["data"]["new"].as_str().map(String::from))
                .collect();
            if !windows.is_empty() && !states.is_empty() {
                return (windows, states);
            }
        }
        assert!(
            started.elapsed() < QLOG_LIMIT,
            "no qlog with windows and states in {} ({logs:?})",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn h3_fetch_downloads_byte_identical_through_ledbatpp_chosen_by_name() {
    let dir = tempdir("download");
    let root = dir.join("root");
    let qlog_dir = dir.join("qlog");
    std::fs::create_dir_all(&root).unwrap();
    let expected = content(FILE_BYTES);
    std::fs::write(root.join("update.bin"), &expected).unwrap();
    std::fs::write(dir.join("secret"), b"outside the root").unwrap();
    let cert = dir.join("server.pem");

    let (server, addr) = start(&root, &cert, &qlog_dir);
    let out = dir.join("update.bin");
    // h3-fetch checks the name in the URL against the certificate's DNS
    // names; the server listens on 127.0.0.1, which localhost names.
    let port = addr.rsplit(':').next().unwrap();
    let url = format!("https://localhost:{port}/update.bin");
    let run = fetch(&[
        "--ca".as_ref(),
        cert.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        url.as_ref(),
    ]);
    assert!(
        run.status.success(),
        "h3-fetch failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got = std::fs::read(&out).unwrap();
    assert_eq!(got.len(), FILE_BYTES);
    assert!(got == expected, "the download differs from the file served");

    // LEDBAT++ starts from two packets ("LEDBAT++ sender limits the initial
    // window to 2 packets", draft -01 §4.1) in slow start, where quiche's
    // CUBIC would start from tokio-quiche's 10; every state is one of
    // LEDBAT++'s.
    let mss = tokio_quiche::settings::QuicSettings::default().max_send_udp_payload_size as u64;
    let (windows, states) = windows_and_states(&qlog_dir);
    assert_eq!(windows.first(), Some(&(2 * mss)), "{windows:?}");
    assert_eq!(states.first().map(String::as_str), Some("slow_start"));
    assert!(
        states.iter().all(|s| STATE_NAMES.contains(&s.as_str())),
        "{states:?}"
    );

    // A path out of the root is refused; the client says so and keeps nothing.
    let escaped = dir.join("secret-copy");
    let run = fetch(&[
        "--ca".as_ref(),
        cert.as_os_str(),
        "-o".as_ref(),
        escaped.as_os_str(),
        format!("https://localhost:{port}/%2e%2e/secret").as_ref(),
    ]);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("403"), "{stderr}");
    assert!(!escaped.exists());
    drop(server);
}

#[test]
fn a_controller_name_quiche_does_not_know_is_refused_with_the_reason() {
    let dir = tempdir("bad-cc");
    let run = Command::new(env!("CARGO_BIN_EXE_tokio-h3-server"))
        .args(["--listen", "127.0.0.1:0", "--cc", "ledbatpp:profile=fast"])
        .arg("--root")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.starts_with("tokio-h3-server: --cc 'ledbatpp:profile=fast': bad value"),
        "{stderr}"
    );
    assert!(
        stderr.contains("bad value 'fast' for 'profile': expected one of draft, seed, full"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
