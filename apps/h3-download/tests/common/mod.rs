//! Helpers shared by the integration tests: an in-process h3-serve, the
//! h3-fetch binary as a child process, scratch directories, qlog reading,
//! and a UDP relay that can stop delivering.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::net::UdpSocket;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Output;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;
use std::time::Instant;

use h3_download::server::ServeArgs;
use lbe_app_kit::tls::Certificate;
use lbe_app_kit::tls::SelfSignedCert;
use lbe_app_kit::tls::ServerTrust;

pub const MB: u64 = 1_000_000;

/// A scratch directory under the system temp dir, removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("h3-download-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }

    /// A subdirectory, created.
    pub fn dir(&self, p: &str) -> PathBuf {
        let d = self.0.join(p);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Deterministic, incompressible-looking content.
pub fn content(len: u64, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// h3-serve on a thread, on a free port; stopped (and its qlogs flushed)
/// on drop or [`TestServer::stop`]. Its self-signed certificate is written
/// beside `root` (`ca`), for h3-fetch's `--ca`.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The server's certificate, PEM (for `h3-fetch --ca`).
    pub ca_path: PathBuf,
    /// The server's certificate, for an in-process client.
    pub trust: ServerTrust,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl TestServer {
    pub fn start(root: &Path, configure: impl FnOnce(&mut ServeArgs)) -> Self {
        let mut args = ServeArgs::new("127.0.0.1:0".parse().unwrap(), root.to_path_buf());
        let cert = SelfSignedCert::generate().unwrap();
        let trust = ServerTrust::Pem(cert.pem());
        args.certificate = Certificate::Generated(cert.clone());
        configure(&mut args);
        let server = h3_download::server::bind(&args).unwrap();
        let addr = server.local_addr();
        let ca_path = root.with_file_name(format!("cert-{}.pem", addr.port()));
        cert.write_pem(&ca_path).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::spawn(move || server.run(&flag).unwrap());
        TestServer {
            addr,
            ca_path,
            trust,
            stop,
            thread: Some(thread),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// The server's certificate file, for `h3-fetch --ca`.
    pub fn ca(&self) -> &str {
        self.ca_path.to_str().unwrap()
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The h3-fetch binary.
pub fn h3_fetch() -> Command {
    Command::new(env!("CARGO_BIN_EXE_h3-fetch"))
}

/// The h3-serve binary.
pub fn h3_serve() -> Command {
    Command::new(env!("CARGO_BIN_EXE_h3-serve"))
}

/// A finished command: exit status, stdout, stderr.
pub struct Run {
    pub ok: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        assert!(self.ok, "failed: {}", self.stderr);
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", self.stdout))
    }

    /// The error line, checked to be one `PROGRAM: error: ...` line.
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

/// Runs h3-fetch with these arguments.
pub fn fetch(args: &[&str]) -> Run {
    h3_fetch().args(args).output().unwrap().into()
}

/// A child process killed (SIGKILL) and reaped on drop.
pub struct ChildGuard(pub Child);

impl ChildGuard {
    /// Waits for the child to exit on its own; what it printed.
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

/// Waits for `cond`, polling; panics after `limit` (a hang guard, not a
/// measurement).
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

/// `(name, data)` of every event in a JSON-SEQ qlog, in order.
pub fn qlog_events(path: &Path) -> Vec<(String, serde_json::Value)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .skip(1)
        .filter_map(|r| serde_json::from_str::<serde_json::Value>(r).ok())
        .map(|v| {
            (
                v["name"].as_str().unwrap_or("").to_string(),
                v["data"].clone(),
            )
        })
        .collect()
}

/// The `new` states of every `congestion_state_updated` event.
pub fn cc_states(path: &Path) -> Vec<String> {
    qlog_events(path)
        .into_iter()
        .filter(|(n, _)| n == "quic:congestion_state_updated")
        .map(|(_, d)| d["new"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The `.sqlog` files in `dir` whose names contain `part`.
pub fn qlogs_named(dir: &Path, part: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".sqlog") && name.contains(part)
        })
        .collect();
    v.sort();
    v
}

/// A UDP relay between one client and a server that stops delivering the
/// server's datagrams once `limit` bytes of them have gone through: a
/// download through it stalls part way, deterministically.
pub struct CutRelay {
    pub addr: SocketAddr,
    pub delivered: Arc<AtomicU64>,
    limit: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl CutRelay {
    pub fn start(server: SocketAddr, limit: u64) -> Self {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(server).unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let delivered = Arc::new(AtomicU64::new(0));
        let limit = Arc::new(AtomicU64::new(limit));

        let up = {
            let (front, back) = (front.try_clone().unwrap(), back.try_clone().unwrap());
            let (client, stop) = (client.clone(), stop.clone());
            thread::spawn(move || {
                let mut buf = vec![0u8; 65535];
                while !stop.load(Ordering::Relaxed) {
                    if let Ok((n, from)) = front.recv_from(&mut buf) {
                        *client.lock().unwrap() = Some(from);
                        let _ = back.send(&buf[..n]);
                    }
                }
            })
        };
        let down = {
            let (stop, delivered, limit) = (stop.clone(), delivered.clone(), limit.clone());
            thread::spawn(move || {
                let mut buf = vec![0u8; 65535];
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(n) = back.recv(&mut buf) {
                        if delivered.load(Ordering::Relaxed) >= limit.load(Ordering::Relaxed) {
                            continue;
                        }
                        let to = *client.lock().unwrap();
                        if let Some(to) = to {
                            if front.send_to(&buf[..n], to).is_ok() {
                                delivered.fetch_add(n as u64, Ordering::Relaxed);
                            }
                        }
                    }
                }
            })
        };
        CutRelay {
            addr,
            delivered,
            limit,
            stop,
            threads: vec![up, down],
        }
    }
}

impl CutRelay {
    /// Delivers everything from now on.
    pub fn open(&self) {
        self.limit.store(u64::MAX, Ordering::Relaxed);
    }
}

impl Drop for CutRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

pub fn sha256_hex(data: &[u8]) -> String {
    h3_download::digest::hex(&h3_download::digest::sha256_reader(&mut &data[..]).unwrap())
}
