//! Helpers shared by h3-download's integration tests: an in-process
//! h3-serve, the h3-fetch binary as a child process, a UDP relay that
//! can stop delivering, another stack's file server as a child process
//! and the checks the interop tests share; the workspace's shared set-ups
//! (scratch directories, content, child guards, qlog reading) from
//! lbe-test-support.

#![allow(dead_code)]

use std::io::BufRead;
use std::io::BufReader;
use std::net::SocketAddr;
use std::net::UdpSocket;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use h3_download::server::ServeArgs;
use lbe_app_kit::tls::Certificate;
use lbe_app_kit::tls::SelfSignedCert;
use lbe_app_kit::tls::ServerTrust;

pub use lbe_test_support::*;

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

/// Runs h3-fetch with these arguments.
pub fn fetch(args: &[&str]) -> Run {
    h3_fetch().args(args).output().unwrap().into()
}

/// h3-fetch's arguments for a download of `url` into `target`, trusting
/// the certificate in the file `ca` (`--ca CA URL -o TARGET`), then
/// `options` (`"--json"`).
pub fn fetch_args<'a, P: AsRef<Path> + ?Sized>(
    ca: &'a str,
    url: &'a str,
    target: &'a P,
    options: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["--ca", ca, url, "-o", target.as_ref().to_str().unwrap()];
    args.extend_from_slice(options);
    args
}

/// Runs h3-fetch with [`fetch_args`].
pub fn fetch_to<P: AsRef<Path> + ?Sized>(ca: &str, url: &str, target: &P, options: &[&str]) -> Run {
    fetch(&fetch_args(ca, url, target, options))
}

/// h3-fetch of a URL nothing answers (`https://127.0.0.1:1/f -o /tmp/x`)
/// with these options: for command lines refused before any connection.
pub fn fetch_nowhere(options: &[&str]) -> Run {
    let mut args = vec!["https://127.0.0.1:1/f", "-o", "/tmp/x"];
    args.extend_from_slice(options);
    fetch(&args)
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

/// h3-fetch against another stack's HTTP/3 file server that serves `data`
/// at `url` under a certificate `ca` signed: a background download that
/// must be byte-identical and digest-verified, then a resume from a part
/// file holding the first `kept` bytes (as an interrupted run leaves it,
/// with its metadata) that must get a 206 and move only the rest.
pub fn fetch_then_resume(url: &str, ca: &str, out: &Path, data: &[u8], kept: u64) {
    let size = data.len() as u64;
    let target = out.join("f.bin");
    let t = target.to_str().unwrap();
    let j = fetch(&[url, "-o", t, "--ca", ca, "--json", "--background"]).json();
    assert_eq!(j["status"], 200);
    assert_eq!(j["size"], size);
    assert_eq!(j["digest_verified"], true);
    assert_eq!(j["sha256"], sha256_hex(data).as_str());
    assert!(std::fs::read(&target).unwrap() == data);
    // The other stack sends no QUIC timestamps (it does not know the
    // extension h3-fetch offers): the receiver-side window read the round
    // trip of the client's own packets, and nothing else was sent back.
    let w = &j["receiver_window"];
    assert_eq!(w["delay_signal"], "rtt", "{w}");
    assert_eq!(w["owd_samples"], 0, "{w}");
    let etag = j["etag"].as_str().unwrap().to_string();

    std::fs::remove_file(&target).unwrap();
    std::fs::write(out.join("f.bin.part"), &data[..kept as usize]).unwrap();
    let meta = serde_json::json!({"url": url, "etag": etag, "size": size, "repr_digest": null});
    std::fs::write(out.join("f.bin.part.meta"), meta.to_string()).unwrap();
    let j = fetch(&[url, "-o", t, "--ca", ca, "--resume", "--json"]).json();
    assert_eq!(j["status"], 206);
    assert_eq!(j["resumed_from"], kept);
    assert_eq!(j["bytes_transferred"], size - kept);
    assert_eq!(j["digest_verified"], true);
    assert!(std::fs::read(&target).unwrap() == data);
}

/// Another stack's HTTP/3 file server (an interop peer program) as a child
/// process on a free port of 127.0.0.1; killed on drop.
pub struct PeerServer {
    _child: ChildGuard,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The server's self-signed certificate, PEM (for `h3-fetch --ca`).
    pub ca: String,
}

impl PeerServer {
    /// Starts an interop peer program `peer` (`tests/quic-go/`,
    /// `tests/stock-quiche/`), whose command lines are the same:
    /// `PEER cert --cert PEM --key PEM` makes a self-signed certificate
    /// (written beside `root`, its files named after `name`), then `PEER
    /// server --addr 127.0.0.1:0 --root ROOT --cert PEM --key PEM ARGS...`
    /// serves `root` with it and prints its bound address
    /// (`127.0.0.1:PORT`) as its first line on stdout once it listens.
    pub fn start(peer: &Path, name: &str, root: &Path, args: &[&str]) -> Self {
        let cert = root.with_file_name(format!("{name}-cert.pem"));
        let key = root.with_file_name(format!("{name}-key.pem"));
        let made: Run = Command::new(peer)
            .arg("cert")
            .arg("--cert")
            .arg(&cert)
            .arg("--key")
            .arg(&key)
            .output()
            .unwrap()
            .into();
        assert!(made.ok, "{name} peer cert: {}", made.stderr);
        let mut child = ChildGuard(
            Command::new(peer)
                .args(["server", "--addr", "127.0.0.1:0", "--root"])
                .arg(root)
                .arg("--cert")
                .arg(&cert)
                .arg("--key")
                .arg(&key)
                .args(args)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        // The first line is the bound address; nothing (end of file) if
        // the server failed (its error is on stderr).
        let mut line = String::new();
        BufReader::new(child.0.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line.trim().to_string();
        assert!(
            addr.starts_with("127.0.0.1:"),
            "{name} peer server did not start: {line:?}"
        );
        PeerServer {
            _child: child,
            addr,
            ca: cert.to_str().unwrap().to_string(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }
}

/// The one flow of a qlog, read by qlog-analysis with nothing skipped.
pub fn only_flow(qlog: &Path) -> qlog_analysis::FlowAnalysis {
    let a = qlog_analysis::analyze([qlog], &qlog_analysis::Options::default()).unwrap();
    assert!(
        a.warnings.is_empty(),
        "{}: {:?}",
        qlog.display(),
        a.warnings
    );
    assert_eq!(a.flows.len(), 1);
    a.flows.into_iter().next().unwrap()
}

/// h3-fetch against another stack's HTTP/3 file server whose self-signed
/// certificate `ca` is: refused without `--ca` (the exact one-line error),
/// downloaded with it, and downloaded unverified with `-k` (with a
/// warning). `url` serves `body`.
pub fn fetch_verifies_the_certificate(url: &str, ca: &str, out: &Path, body: &[u8]) {
    let target = out.join("f");
    let t = target.to_str().unwrap();

    let r = fetch(&[url, "-o", t]);
    assert_eq!(
        r.error_line("h3-fetch"),
        "h3-fetch: error: the server's certificate for 127.0.0.1 did not verify: self \
         signed certificate (TLS alert 48, unknown_ca); use --ca PATH to trust that \
         certificate or its CA, or -k/--insecure to skip verification"
    );
    assert!(!target.exists());

    let j = fetch(&[url, "-o", t, "--ca", ca, "--json"]).json();
    assert_eq!(j["size"], body.len());
    assert_eq!(std::fs::read(&target).unwrap(), body);
    std::fs::remove_file(&target).unwrap();

    let r = fetch(&[url, "-o", t, "-k", "--json"]);
    assert!(
        r.stderr.starts_with("h3-fetch: warning: not verifying"),
        "{}",
        r.stderr
    );
    assert_eq!(r.json()["size"], body.len());
    assert_eq!(std::fs::read(&target).unwrap(), body);
}

/// h3-fetch of a `url` another stack's server does not have: its 404 as
/// one error line, and nothing written.
pub fn fetch_missing_is_a_404(url: &str, ca: &str, out: &Path) {
    let missing = out.join("nope");
    let r = fetch(&[url, "-o", missing.to_str().unwrap(), "--ca", ca]);
    assert!(
        r.error_line("h3-fetch").contains("404 Not Found"),
        "{}",
        r.stderr
    );
    assert!(!missing.exists());
}

/// The real-time bottleneck the rebind and outage tests put in front of
/// `server`: 20 Mbit/s, 50 ms base RTT, 500 ms of buffer, on a listening
/// port of its own, at normal priority.
pub fn bottleneck_to(server: SocketAddr) -> lbe_netem::Config {
    let mut config = lbe_netem::Config::new(
        "127.0.0.1:0".parse().unwrap(),
        server,
        BOTTLENECK_RATE_BPS,
        BOTTLENECK_RTT,
        lbe_netem::Buffer::Time(Duration::from_millis(500)),
    );
    config.realtime = false;
    config
}

/// [`bottleneck_to`]'s rate.
pub const BOTTLENECK_RATE_BPS: u64 = 20_000_000;
/// [`bottleneck_to`]'s base round trip.
pub const BOTTLENECK_RTT: Duration = Duration::from_millis(50);
