//! Interop with stock quiche: quiche 0.30.0 exactly as crates.io serves
//! it, with none of our patches (patches/), so an endpoint that has never
//! heard of the TIMESTAMP extension (transport parameter 0x7158) that
//! h3-serve and h3-fetch offer. Its client downloads from h3-serve (and
//! verifies its certificate), h3-fetch downloads from its server, and
//! qlog-analysis reads the qlog stock quiche writes; no TIMESTAMP frame
//! is sent either way. The peer program is `tests/stock-quiche/`
//! (`stock-quiche-peer`, a cargo project of its own with its own
//! workspace and Cargo.lock, so the main workspace's `[patch.crates-io]`
//! does not reach it).
//!
//! The tests build it once per run with cargo into the workspace's own
//! target directory (`<target>/release/stock-quiche-peer`): its quiche
//! comes from crates.io, not from the patched path, so cargo keeps the two
//! apart. BoringSSL is the repository's one build, `target/boringssl`
//! (`scripts/boringssl.sh`): cargo runs from inside the repository, so
//! `.cargo/config.toml`'s `BORING_BSSL_PATH` reaches the peer's boring-sys
//! too. Its Cargo.lock pins boring-sys and its build dependencies at the
//! workspace's versions and its `[profile.release]` is the workspace's, so
//! the crates both build are compiled once. cargo is always there, so a
//! failed build fails the tests: none is skipped.

mod common;

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use common::*;
use qlog_analysis::flow::GoodputMethod;
use qlog_analysis::Role;

/// The id of the TIMESTAMP extension's transport parameter
/// (draft-huitema-quic-ts-08 §2), which every endpoint of ours sends.
const ENABLE_TIMESTAMP_PARAMETER: u64 = 0x7158;

/// How a TIMESTAMP frame (type 0x2f5) appears in quiche's qlog: as an
/// unknown frame of that type.
const TIMESTAMP_FRAME_IN_QLOG: &str = "\"frame_type_bytes\":757";

/// The built `stock-quiche-peer`, built on first use by any test of this
/// file.
fn peer() -> PathBuf {
    static PEER: OnceLock<PathBuf> = OnceLock::new();
    PEER.get_or_init(|| {
        let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stock-quiche");
        // CARGO_TARGET_TMPDIR is <target>/tmp.
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let build: Run = Command::new(cargo)
            .args(["build", "--release", "--locked", "--manifest-path"])
            .arg(project.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target)
            .output()
            .unwrap()
            .into();
        assert!(
            build.ok,
            "cargo build of {} failed:\n{}",
            project.display(),
            build.stderr
        );
        target.join("release/stock-quiche-peer")
    })
    .clone()
}

/// Runs `stock-quiche-peer client URL OUT ARGS... --timeout 60`; its JSON
/// line.
fn stock_get(url: &str, out: &Path, args: &[&str]) -> serde_json::Value {
    let run: Run = Command::new(peer())
        .arg("client")
        .arg(url)
        .arg(out)
        .args(args)
        .args(["--timeout", "60"])
        .output()
        .unwrap()
        .into();
    run.json()
}

/// Stock quiche's file server on a free port of 127.0.0.1, serving `root`
/// with a certificate the peer makes with BoringSSL; killed on drop.
fn stock_server(root: &Path) -> PeerServer {
    PeerServer::start(&peer(), "stock-quiche", root, &["--timeout", "300"])
}

/// How many TIMESTAMP frames the qlog `path` records, sent or received.
fn timestamp_frames(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .matches(TIMESTAMP_FRAME_IN_QLOG)
        .count()
}

#[test]
fn stock_quiche_client_downloads_from_h3_serve() {
    let s = Scratch::new("h3-download-interop-stock-quiche-client");
    let (root, qlogs, out) = (s.dir("root"), s.dir("qlog"), s.dir("out"));
    let data = content(8 * MB, 41);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    let sha = sha256_hex(&data);
    let mut server = TestServer::start(&root, |a| a.qlog_dir = Some(qlogs.clone()));
    let stock_qlog = out.join("stock-client.sqlog");

    // `priority: u=7` (RFC 9218's least urgent) makes the connection
    // background: h3-serve sends it with LEDBAT++. Stock quiche verifies
    // h3-serve's certificate (the one it trusts by --ca).
    let j = stock_get(
        &server.url("/f.bin"),
        &out.join("a"),
        &[
            "--ca",
            server.ca(),
            "--header",
            "priority: u=7",
            "--qlog",
            stock_qlog.to_str().unwrap(),
        ],
    );
    assert_eq!(j["status"], 200);
    assert_eq!(j["proto"], "HTTP/3");
    assert_eq!(j["bytes"], 8 * MB);
    assert_eq!(j["sha256"], sha.as_str());
    assert!(std::fs::read(out.join("a")).unwrap() == data);
    // h3-serve offered the TIMESTAMP extension; to stock quiche it is an
    // unknown transport parameter, ignored (RFC 9000 §7.4.2: "An endpoint
    // MUST ignore transport parameters that it does not support"), and
    // the only one it did not know.
    assert_eq!(
        j["peer_unknown_transport_parameters"],
        serde_json::json!([ENABLE_TIMESTAMP_PARAMETER])
    );

    // A range request, on a connection of the default priority.
    let j = stock_get(
        &server.url("/f.bin"),
        &out.join("b"),
        &["--ca", server.ca(), "--header", "range: bytes=1000-1999"],
    );
    assert_eq!(j["status"], 206);
    assert_eq!(j["bytes"], 1000);
    assert!(std::fs::read(out.join("b")).unwrap() == data[1000..2000]);

    server.stop();
    let background = qlogs_named(&qlogs, "h3-server-ledbatpp");
    let normal = qlogs_named(&qlogs, "h3-server-cubic");
    assert_eq!((background.len(), normal.len()), (1, 1));
    // Stock quiche did not ask for TIMESTAMP frames, so h3-serve sent none
    // (one would have been a FRAME_ENCODING_ERROR to it).
    assert_eq!(timestamp_frames(&background[0]), 0);
    assert_eq!(timestamp_frames(&normal[0]), 0);

    // Stock quiche's own qlog of the first download: qlog-analysis reads
    // it whole and sees the receiver's side.
    let f = only_flow(&stock_qlog);
    assert_eq!(f.role, Role::Client);
    assert_eq!(f.goodput_method, GoodputMethod::Received);
    assert_eq!(timestamp_frames(&stock_qlog), 0);
    // The response stream (id 0) carries the file plus HTTP/3 framing (a
    // HEADERS frame and each DATA frame's type and length): more than
    // nothing and well under 1 % of 8 MB.
    let response = f.stream_bytes[&0];
    assert!(
        response > 8 * MB && response < 8 * MB + 80_000,
        "stream 0 carried {response} bytes"
    );
}

/// Stock quiche's client verifies h3-serve's self-signed certificate: it
/// refuses it without --ca (the system's roots do not hold it), and does
/// not check it with --insecure.
#[test]
fn stock_quiche_client_verifies_the_certificate_of_h3_serve() {
    let s = Scratch::new("h3-download-interop-stock-quiche-client-verify");
    let (root, out) = (s.dir("root"), s.dir("out"));
    std::fs::write(root.join("f"), b"from h3-serve").unwrap();
    let server = TestServer::start(&root, |_| {});
    let target = out.join("f");

    let r: Run = Command::new(peer())
        .arg("client")
        .arg(server.url("/f"))
        .arg(&target)
        .args(["--timeout", "60"])
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, Some(1));
    assert_eq!(
        r.error_line("stock-quiche-peer"),
        "stock-quiche-peer: error: the TLS handshake failed: this end sent alert 48, \
         unknown_ca: the server's certificate did not verify"
    );

    let j = stock_get(&server.url("/f"), &target, &["--insecure"]);
    assert_eq!(j["status"], 200);
    assert_eq!(std::fs::read(&target).unwrap(), b"from h3-serve");
}

#[test]
fn h3_fetch_downloads_and_resumes_from_stock_quiche() {
    let s = Scratch::new("h3-download-interop-stock-quiche-server");
    let (root, out, qlogs) = (s.dir("root"), s.dir("out"), s.dir("qlog"));
    let data = content(8 * MB, 42);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    let server = stock_server(&root);
    // h3-fetch verifies the stock server's certificate (trusted by --ca)
    // and the Repr-Digest it sends; then it resumes from a part file of
    // 5 MB, and the stock server answers the range (If-Range matches its
    // ETag) with 206.
    fetch_then_resume(&server.url("/f.bin"), &server.ca, &out, &data, 5 * MB);

    // h3-fetch offers the TIMESTAMP extension; the stock server does not,
    // so none is sent either way: its qlog of a whole download has none.
    let target = out.join("again.bin");
    let j = fetch(&[
        &server.url("/f.bin"),
        "-o",
        target.to_str().unwrap(),
        "--ca",
        &server.ca,
        "--qlog-dir",
        qlogs.to_str().unwrap(),
        "--json",
    ])
    .json();
    assert_eq!(j["status"], 200);
    assert_eq!(j["digest_verified"], true);
    assert!(std::fs::read(&target).unwrap() == data);
    let traces = qlogs_named(&qlogs, ".sqlog");
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert_eq!(timestamp_frames(&traces[0]), 0);

    // A missing file: the stock server's 404, one error line, nothing
    // written.
    fetch_missing_is_a_404(&server.url("/nope"), &server.ca, &out);
}

/// A certificate the stock peer made: refused without --ca (h3-fetch
/// verifies by default), trusted with it, not checked with -k.
#[test]
fn h3_fetch_verifies_the_certificate_of_stock_quiche() {
    let s = Scratch::new("h3-download-interop-stock-quiche-verify");
    let (root, out) = (s.dir("root"), s.dir("out"));
    std::fs::write(root.join("f"), b"from stock quiche").unwrap();
    let server = stock_server(&root);
    fetch_verifies_the_certificate(&server.url("/f"), &server.ca, &out, b"from stock quiche");
}
