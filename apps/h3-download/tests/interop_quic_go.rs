//! Interop with quic-go, an independent QUIC and HTTP/3 implementation in
//! Go: its client downloads from h3-serve, h3-fetch downloads from its
//! server, and qlog-analysis reads the qlog quic-go writes. The Go program
//! is `tests/quic-go/` (`quic-go-peer`; quic-go v0.65.0, pinned by its
//! go.sum).
//!
//! The tests build it once per run with the Go toolchain into cargo's
//! target tmp dir (the module comes from the Go module proxy, or Go's
//! module cache). They are skipped, with a message saying so, only when
//! `go` is not installed or the build fails with the module proxy out of
//! reach; any other build failure fails them.

mod common;

use std::net::TcpStream;
use std::net::ToSocketAddrs;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use qlog_analysis::flow::GoodputMethod;
use qlog_analysis::Role;

/// The Go module of the peer program.
fn module_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/quic-go")
}

/// The host and port of the first module proxy in `go env GOPROXY`
/// (`https://proxy.golang.org,direct` by default), if it names one.
fn module_proxy() -> Option<(String, u16)> {
    let out = Command::new("go").args(["env", "GOPROXY"]).output().ok()?;
    let list = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let first = list.split([',', '|']).next()?;
    let (default_port, rest) = if let Some(r) = first.strip_prefix("https://") {
        (443, r)
    } else {
        (80, first.strip_prefix("http://")?)
    };
    let authority = rest.split('/').next()?;
    Some(match authority.rsplit_once(':') {
        Some((host, port)) => (host.to_string(), port.parse().ok()?),
        None => (authority.to_string(), default_port),
    })
}

/// Whether the module proxy accepts a TCP connection within 10 s.
fn module_proxy_reachable() -> bool {
    module_proxy().is_some_and(|(host, port)| {
        (host.as_str(), port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(10)).is_ok())
    })
}

/// The built `quic-go-peer`; `None` (the tests skip) if there is no Go
/// toolchain or its build failed with the module proxy out of reach.
fn peer() -> Option<PathBuf> {
    static PEER: OnceLock<Option<PathBuf>> = OnceLock::new();
    PEER.get_or_init(|| {
        if let Err(e) = Command::new("go").arg("version").output() {
            eprintln!("SKIPPED: quic-go interop tests because `go` cannot be run ({e})");
            return None;
        }
        let bin = Path::new(env!("CARGO_TARGET_TMPDIR")).join("quic-go-peer");
        let build: Run = Command::new("go")
            .args(["build", "-o"])
            .arg(&bin)
            .arg(".")
            .current_dir(module_dir())
            .env("GOFLAGS", "-buildvcs=false")
            .output()
            .unwrap()
            .into();
        if build.ok {
            return Some(bin);
        }
        let last_line = build.stderr.lines().rev().find(|l| !l.trim().is_empty());
        if !module_proxy_reachable() {
            let proxy = match module_proxy() {
                Some((host, port)) => format!("{host}:{port} is unreachable"),
                None => "is off (GOPROXY names none)".to_string(),
            };
            eprintln!(
                "SKIPPED: quic-go interop tests because `go build` failed and the Go module \
                 proxy {proxy}: {}",
                last_line.unwrap_or("")
            );
            return None;
        }
        panic!(
            "go build of {} failed although the module proxy is reachable:\n{}",
            module_dir().display(),
            build.stderr
        );
    })
    .clone()
}

/// Runs `quic-go-peer client URL OUT ARGS...` (QLOGDIR set if `qlog_dir`
/// is); its JSON line.
fn go_get(
    peer: &Path,
    url: &str,
    out: &Path,
    args: &[&str],
    qlog_dir: Option<&Path>,
) -> serde_json::Value {
    let mut cmd = Command::new(peer);
    cmd.arg("client").arg(url).arg(out).args(args);
    if let Some(dir) = qlog_dir {
        cmd.env("QLOGDIR", dir);
    }
    let run: Run = cmd.output().unwrap().into();
    run.json()
}

/// quic-go's file server on a free port of 127.0.0.1, serving `root`
/// with a certificate made by Go's crypto/x509; killed on drop.
fn go_server(peer: &Path, root: &Path) -> PeerServer {
    PeerServer::start(peer, "quic-go", root, &[])
}

#[test]
fn quic_go_client_downloads_from_h3_serve() {
    let Some(peer) = peer() else { return };
    let s = Scratch::new("h3-download-interop-quic-go-client");
    let (root, qlogs, go_qlogs, out) =
        (s.dir("root"), s.dir("qlog"), s.dir("go-qlog"), s.dir("out"));
    let data = content(8 * MB, 31);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    let sha = sha256_hex(&data);
    let mut server = TestServer::start(&root, |a| a.qlog_dir = Some(qlogs.clone()));

    // `priority: u=7` (RFC 9218's least urgent) makes the connection
    // background: h3-serve sends it with LEDBAT++. quic-go verifies
    // h3-serve's certificate (the one it trusts by --ca).
    let j = go_get(
        &peer,
        &server.url("/f.bin"),
        &out.join("a"),
        &["--ca", server.ca(), "--header", "priority: u=7"],
        Some(&go_qlogs),
    );
    assert_eq!(j["status"], 200);
    assert_eq!(j["proto"], "HTTP/3.0");
    assert_eq!(j["bytes"], 8 * MB);
    assert_eq!(j["sha256"], sha.as_str());
    assert!(std::fs::read(out.join("a")).unwrap() == data);

    // A range request, on a connection of the default priority.
    let j = go_get(
        &peer,
        &server.url("/f.bin"),
        &out.join("b"),
        &["--ca", server.ca(), "--header", "range: bytes=1000-1999"],
        None,
    );
    assert_eq!(j["status"], 206);
    assert_eq!(j["bytes"], 1000);
    assert!(std::fs::read(out.join("b")).unwrap() == data[1000..2000]);

    server.stop();
    assert_eq!(qlogs_named(&qlogs, "h3-server-ledbatpp").len(), 1);
    assert_eq!(qlogs_named(&qlogs, "h3-server-cubic").len(), 1);

    // quic-go's own qlog of the first download (a foreign JSON-SEQ trace):
    // qlog-analysis reads it whole and sees the receiver's side.
    let traces = qlogs_named(&go_qlogs, "_client.sqlog");
    assert_eq!(traces.len(), 1, "{traces:?}");
    let f = only_flow(&traces[0]);
    assert_eq!(f.producer.as_deref(), Some("quic-go"));
    assert_eq!(f.role, Role::Client);
    assert_eq!(f.goodput_method, GoodputMethod::Received);
    // The response stream (id 0) carries the file plus HTTP/3 framing
    // (a HEADERS frame and each DATA frame's type and length): h3-serve
    // chooses the DATA frame sizes, so the framing total is not fixed, but
    // it is more than nothing and well under 1 % of 8 MB.
    let response = f.stream_bytes[&0];
    assert!(
        response > 8 * MB && response < 8 * MB + 80_000,
        "stream 0 carried {response} bytes"
    );
}

#[test]
fn h3_fetch_downloads_and_resumes_from_quic_go() {
    let Some(peer) = peer() else { return };
    let s = Scratch::new("h3-download-interop-quic-go-server");
    let (root, out) = (s.dir("root"), s.dir("out"));
    let data = content(8 * MB, 32);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    let server = go_server(&peer, &root);
    // h3-fetch verifies quic-go's certificate (trusted by --ca) and the
    // Repr-Digest quic-go-peer sends; then it resumes from a part file of
    // 5 MB, and quic-go's net/http file server answers the range (If-Range
    // matches its ETag) with 206.
    fetch_then_resume(&server.url("/f.bin"), &server.ca, &out, &data, 5 * MB);

    // A missing file: quic-go's 404, one error line, nothing written.
    fetch_missing_is_a_404(&server.url("/nope"), &server.ca, &out);
}

/// A certificate made by Go's crypto/x509, served by quic-go's TLS stack:
/// refused without --ca (h3-fetch verifies by default), trusted with it,
/// not checked with -k.
#[test]
fn h3_fetch_verifies_the_certificate_of_quic_go() {
    let Some(peer) = peer() else { return };
    let s = Scratch::new("h3-download-interop-quic-go-verify");
    let (root, out) = (s.dir("root"), s.dir("out"));
    std::fs::write(root.join("f"), b"from quic-go").unwrap();
    let server = go_server(&peer, &root);
    fetch_verifies_the_certificate(&server.url("/f"), &server.ca, &out, b"from quic-go");
}
