//! A scenario's h3 flows in real time: each gets a file to download, a
//! server of its own (h3-serve, h3-serve as a stock quiche server, or
//! aioquic's HTTP/3 server) behind an lbe-netem route, and an `h3-fetch`
//! download (the `h3_download::fetch` library, in this process) whose
//! bytes are checked against the file's SHA-256.
//!
//! - A flow with `bytes` downloads a file of that size to the end; the file
//!   h3-fetch keeps must have the served file's SHA-256.
//! - A flow with `stop` downloads a file larger than the link can carry by
//!   then, and is cut off at `stop`: the bytes received (h3-fetch's part
//!   file) must have the SHA-256 of the served file's first as many bytes.
//!
//! The files live under `OUT/h3/<name>/` while the run lasts and are
//! removed after it (they are reproducible: seeded content); the client's
//! qlog goes to `OUT/qlog/<name>/`, and h3-serve's own (the sender's) to
//! `OUT/h3/<name>/server-qlog/`.

use std::fs::File;
use std::io::BufWriter;
use std::io::Read;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use std::time::Instant;

use h3_download::aioquic::Aioquic;
use h3_download::aioquic::AioquicServer;
use h3_download::digest::hex;
use h3_download::digest::Sha256;
use lbe_app_kit::tls::Certificate;
use lbe_app_kit::tls::SelfSignedCert;
use lbe_app_kit::tls::ServerTrust;
use serde::Serialize;

use crate::scenario::Flow;
use crate::scenario::H3Flow;
use crate::scenario::H3Server;
use crate::scenario::Link;

/// Writes `size` bytes of seeded, incompressible-looking content to
/// `path`; their SHA-256.
pub fn write_content(path: &Path, size: u64, seed: u64) -> std::io::Result<[u8; 32]> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut w = BufWriter::new(File::create(path)?);
    let mut hash = Sha256::new();
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        for b in &mut chunk[..n] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = (x >> 24) as u8;
        }
        hash.update(&chunk[..n]);
        w.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    w.flush()?;
    Ok(hash.finish())
}

/// SHA-256 of the first `len` bytes of `path`, and how many it has (fewer
/// if the file is shorter).
pub fn sha256_prefix(path: &Path, len: u64) -> std::io::Result<([u8; 32], u64)> {
    let mut f = File::open(path)?.take(len);
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok((hash.finish(), total));
        }
        hash.update(&buf[..n]);
        total += n as u64;
    }
}

/// What an h3 flow downloaded, in `summary.json` (`transfer`).
#[derive(Clone, Debug, Serialize)]
pub struct H3Transfer {
    pub server: &'static str,
    pub background: bool,
    /// `h3-fetch --lbe` of a background download (the scenario's, or
    /// h3-fetch's default); null for a normal one.
    pub lbe: Option<&'static str>,
    pub url: String,
    /// The size of the served file.
    pub file_bytes: u64,
    /// Bytes h3-fetch received (the whole file, or what had come by the
    /// flow's stop time).
    pub received_bytes: u64,
    /// Whether the download ran to the end of the file.
    pub complete: bool,
    /// SHA-256 of the received bytes, hex; always equal to that of the
    /// served file's first `received_bytes` (else the run fails).
    pub sha256: String,
    /// What h3-fetch reported (`--json`), for a complete download.
    pub fetch: Option<h3_download::fetch::Summary>,
    /// The receiver-side window's summary (h3-fetch's `receiver_window`)
    /// of a download whose client ran the receiver-side control, complete
    /// or cut off at its stop time; null otherwise.
    pub receiver_window: Option<h3_download::fetch::ReceiverWindowSummary>,
}

/// A running server of one h3 flow.
enum Running {
    H3Serve {
        stop: Arc<AtomicBool>,
        thread: thread::JoinHandle<Result<(), quiche_lbe::Error>>,
    },
    Aioquic(AioquicServer),
}

/// One h3 flow's file and server.
pub struct Served {
    /// The flow's directory, `OUT/h3/<name>/`.
    dir: PathBuf,
    file_name: String,
    file: PathBuf,
    pub size: u64,
    pub sha256: [u8; 32],
    /// Where the server listens.
    pub addr: SocketAddr,
    /// The server's certificate, for its client to verify: h3-serve's made
    /// here, aioquic's written by its server (`--cert-out`).
    pub trust: ServerTrust,
    running: Option<Running>,
}

impl Served {
    /// Makes the flow's file and starts its server; `aioquic` is set up on
    /// first need (`h3_download::aioquic`, shared with the interop tests).
    pub fn start(
        link: &Link,
        flow: &Flow,
        h3: &H3Flow,
        out: &Path,
        aioquic: &mut Option<Aioquic>,
    ) -> Result<Self, String> {
        let dir = out.join("h3").join(&flow.name);
        let root = dir.join("root");
        std::fs::create_dir_all(&root)
            .map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        let file_name = format!("{}.bin", flow.name);
        let file = root.join(&file_name);
        let size = flow.h3_file_bytes(link);
        let sha256 = write_content(&file, size, flow.id as u64)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let (addr, running, trust) = match h3.server {
            H3Server::H3Serve | H3Server::QuicheStock => {
                let mut args = h3_download::server::ServeArgs::new(
                    SocketAddr::from(([127, 0, 0, 1], 0)),
                    root,
                );
                // A stock quiche server: h3-serve that "switches" background
                // connections to CUBIC, what they already run.
                args.background_cc = if h3.server == H3Server::H3Serve {
                    flow.cc.clone()
                } else {
                    "cubic".parse().expect("a valid spec")
                };
                let server_qlog = dir.join("server-qlog");
                std::fs::create_dir_all(&server_qlog)
                    .map_err(|e| format!("cannot create {}: {e}", server_qlog.display()))?;
                args.qlog_dir = Some(server_qlog);
                let cert = SelfSignedCert::generate()
                    .map_err(|e| format!("{} ({}): {e}", flow.name, h3.server.name()))?;
                let trust = ServerTrust::Pem(cert.pem());
                args.certificate = Certificate::Generated(cert);
                let server = h3_download::server::bind(&args)
                    .map_err(|e| format!("{} ({}): {e}", flow.name, h3.server.name()))?;
                let addr = server.local_addr();
                let stop = Arc::new(AtomicBool::new(false));
                let flag = stop.clone();
                let thread = thread::spawn(move || server.run(&flag));
                (addr, Running::H3Serve { stop, thread }, trust)
            }
            H3Server::Aioquic => {
                if aioquic.is_none() {
                    let exe = std::env::current_exe().unwrap_or_default();
                    let venv = h3_download::aioquic::default_venv(&exe);
                    *aioquic = Some(
                        Aioquic::install(&venv)
                            .map_err(|e| format!("{} (server = \"aioquic\"): {e}", flow.name))?,
                    );
                }
                let log = dir.join("aioquic.log");
                let stderr = File::create(&log)
                    .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
                let cert = dir.join("aioquic-cert.pem");
                let cert_arg = cert.to_str().ok_or_else(|| {
                    format!("{}: {} is not a UTF-8 path", flow.name, cert.display())
                })?;
                let server = aioquic
                    .as_ref()
                    .expect("installed above")
                    .server(&root, &["--cert-out", cert_arg], Stdio::from(stderr))
                    .map_err(|e| format!("{} ({e}; see {})", flow.name, log.display()))?;
                let trust = ServerTrust::ca_file(&cert)
                    .map_err(|e| format!("{} (server = \"aioquic\"): {e}", flow.name))?;
                (
                    SocketAddr::from(([127, 0, 0, 1], server.port)),
                    Running::Aioquic(server),
                    trust,
                )
            }
        };
        Ok(Served {
            dir,
            file_name,
            file,
            size,
            sha256,
            addr,
            trust,
            running: Some(running),
        })
    }

    /// Stops the server (h3-serve flushes its qlogs) and removes the files.
    pub fn finish(mut self) -> Result<(), String> {
        let result = match self.running.take() {
            Some(Running::H3Serve { stop, thread }) => {
                stop.store(true, Ordering::Relaxed);
                thread
                    .join()
                    .unwrap_or_else(|_| Err(quiche_lbe::Error::new("h3-serve panicked")))
                    .map_err(|e| format!("h3-serve: {e}"))
            }
            Some(Running::Aioquic(server)) => {
                drop(server);
                Ok(())
            }
            None => Ok(()),
        };
        for d in ["root", "download"] {
            let _ = std::fs::remove_dir_all(self.dir.join(d));
        }
        result
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(Running::H3Serve { stop, .. }) = &self.running {
            stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Runs one h3 flow's download through `connect` (its lbe-netem route) and
/// checks its bytes; its transfer and the client's qlog. `abort` cuts it
/// off: at its stop time (then `stopped_at_stop()` is true and the bytes
/// so far are checked), or when the run gives up (an error).
pub fn fetch(
    h3: &H3Flow,
    served: &Served,
    connect: SocketAddr,
    qlog_dir: &Path,
    abort: &AtomicBool,
    stopped_at_stop: &dyn Fn() -> bool,
) -> Result<(H3Transfer, PathBuf), String> {
    let download = served.dir.join("download");
    std::fs::create_dir_all(&download)
        .and_then(|()| std::fs::create_dir_all(qlog_dir))
        .map_err(|e| format!("cannot create {}: {e}", download.display()))?;
    let output = download.join(&served.file_name);
    let url = format!("https://{connect}/{}", served.file_name);
    let args = h3_download::fetch::FetchArgs {
        url: url.clone(),
        output: output.clone(),
        background: h3.background,
        lbe: fetch_lbe_mode(h3.lbe.unwrap_or_default()),
        lbe_delay: Default::default(),
        deadline: None,
        resume: false,
        qlog_dir: Some(qlog_dir.to_path_buf()),
        trust: served.trust.clone(),
        timeout: Duration::from_secs(10),
        idle_timeout: lbe_app_kit::tls::Transport::default().idle_timeout,
        // A lab run measures one connection.
        retry_for: Duration::ZERO,
        progress: false,
    };
    let (result, receiver_window) = h3_download::fetch::run_with_receiver_window(&args, abort);
    let qlog = find_qlog(qlog_dir)?;
    let (received_bytes, sha256, complete, fetch) = match result {
        Ok(summary) => {
            let sha = hex(&served.sha256);
            if summary.sha256 != sha || summary.size != served.size {
                return Err(format!(
                    "downloaded {} bytes with SHA-256 {}, but the served file has {} bytes with {sha}",
                    summary.size, summary.sha256, served.size
                ));
            }
            (summary.size, summary.sha256.clone(), true, Some(summary))
        }
        Err(e) if stopped_at_stop() => {
            // Cut off at the stop time: the bytes so far are in the part
            // file, and must be the served file's first bytes.
            let part = h3_download::fetch::part_path(&output);
            let (got, n) = sha256_prefix(&part, u64::MAX)
                .map_err(|io| format!("{e}; and cannot read {}: {io}", part.display()))?;
            let (want, _) = sha256_prefix(&served.file, n)
                .map_err(|io| format!("cannot read {}: {io}", served.file.display()))?;
            if got != want {
                return Err(format!(
                    "the {n} bytes received by the stop time are not the served file's first {n} bytes (SHA-256 {} vs {})",
                    hex(&got),
                    hex(&want)
                ));
            }
            (n, hex(&got), false, None)
        }
        Err(e) => return Err(e.to_string()),
    };
    Ok((
        H3Transfer {
            server: h3.server.name(),
            background: h3.background,
            lbe: h3
                .background
                .then(|| crate::scenario::lbe_name(h3.lbe.unwrap_or_default())),
            url,
            file_bytes: served.size,
            received_bytes,
            complete,
            sha256,
            fetch,
            receiver_window,
        },
        qlog,
    ))
}

/// A scenario's `lbe` as h3-fetch's `--lbe`.
fn fetch_lbe_mode(lbe: crate::scenario::Lbe) -> h3_download::fetch::LbeMode {
    use crate::scenario::Lbe;
    use h3_download::fetch::LbeMode;
    match lbe {
        Lbe::Receiver => LbeMode::Receiver,
        Lbe::Sender => LbeMode::Sender,
        Lbe::Both => LbeMode::Both,
    }
}

/// The one qlog h3-fetch wrote into `dir`.
fn find_qlog(dir: &Path) -> Result<PathBuf, String> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sqlog"))
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        n => Err(format!(
            "h3-fetch wrote {n} qlog files into {}, expected one",
            dir.display()
        )),
    }
}

/// Waits until `t0 + at`, or until `stop`; false if stopped.
pub fn wait_until(t0: Instant, at: Duration, stop: &AtomicBool) -> bool {
    while t0.elapsed() < at {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        thread::sleep((at - t0.elapsed()).min(Duration::from_millis(50)));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_seeded_and_its_prefix_hashes_match() {
        let dir = std::env::temp_dir().join(format!("lbe-lab-h3-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        let sha_a = write_content(&a, 3_000_001, 7).unwrap();
        assert_eq!(write_content(&b, 3_000_001, 7).unwrap(), sha_a);
        assert_eq!(sha256_prefix(&a, u64::MAX).unwrap(), (sha_a, 3_000_001));
        let (short, n) = sha256_prefix(&a, 1000).unwrap();
        assert_eq!(n, 1000);
        let data = std::fs::read(&a).unwrap();
        assert_eq!(
            h3_download::digest::sha256_reader(&mut &data[..1000]).unwrap(),
            short
        );
        assert_ne!(write_content(&b, 3_000_001, 8).unwrap(), sha_a);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
