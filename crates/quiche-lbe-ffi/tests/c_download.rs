//! A C program selects LEDBAT++ by name through quiche's own C API and
//! downloads from a `quic-bulk` server over 127.0.0.1: `tests/c/download.c`,
//! compiled with the system's C compiler (`cc`) against quiche's
//! `include/quiche.h`, this crate's `include/quiche_lbe.h` and the static
//! library cargo built for this crate (`libquiche_lbe_ffi-HASH.a`).

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use lbe_app_kit::tls::Certificate;
use lbe_test_support::{fresh_dir, qlog_events, Scratch};
use quic_bulk::server::ServerArgs;

/// The bytes the C program downloads.
const DOWNLOAD_BYTES: u64 = 3_000_000;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The static library cargo built for this test: `cargo test` leaves it in
/// `target/release/deps/` (beside this test) as `libquiche_lbe_ffi-HASH.a`;
/// the newest one, should other builds have left theirs.
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    std::fs::read_dir(deps)
        .unwrap()
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("libquiche_lbe_ffi-") && name.ends_with(".a")
        })
        .max_by_key(|path| path.metadata().and_then(|m| m.modified()).ok())
        .unwrap_or_else(|| panic!("no libquiche_lbe_ffi-*.a in {}", deps.display()))
}

/// download.c, compiled once for all tests of this file, into cargo's
/// scratch directory for this crate's tests (under `target/`, overwritten
/// by the next run: the program is 80 MB with its debug information, too
/// much to leave behind in the system's temporary directory per run).
fn program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile(&fresh_dir(
            &Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-download-program"),
        ))
    })
}

/// Compiles download.c into `dir`; returns the program's path.
fn compile(dir: &Path) -> PathBuf {
    let library = static_library();
    let quiche_include = manifest_dir().join("../../target/quiche-patched/quiche-0.30.0/include");
    assert!(
        quiche_include.join("quiche.h").is_file(),
        "{} has no quiche.h (run `make quiche`)",
        quiche_include.display()
    );
    let program = dir.join("download");
    let output = Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(&quiche_include)
        .arg("-I")
        .arg(manifest_dir().join("include"))
        .arg(manifest_dir().join("tests/c/download.c"))
        .arg(&library)
        // What BoringSSL (C++) and the Rust standard library need from the
        // system (`cargo rustc -- --print native-static-libs` lists them).
        .args(["-lstdc++", "-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&program)
        .output()
        .expect("cannot run the C compiler `cc`");
    assert!(
        output.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    program
}

#[test]
fn a_c_program_downloads_with_ledbatpp_chosen_by_name() {
    let scratch = Scratch::new("quiche-lbe-ffi-download");
    let dir = scratch.path();
    let args = ServerArgs::loopback(None);
    // The C client verifies the server's certificate against the one the
    // server generated (what `quic-bulk server --write-cert` writes).
    let ca = dir.join("server.pem");
    match &args.certificate {
        Certificate::Generated(cert) => cert.write_pem(&ca).unwrap(),
        other => panic!("ServerArgs::loopback makes a certificate to trust, not {other:?}"),
    }
    let server = quic_bulk::server::bind(&args).unwrap().spawn();
    let addr = server.local_addr();
    let qlog = dir.join("client.sqlog");

    let output = Command::new(program())
        .arg(addr.ip().to_string())
        .arg(addr.port().to_string())
        .arg(DOWNLOAD_BYTES.to_string())
        .arg(&ca)
        .arg(&qlog)
        .output()
        .unwrap();
    server.stop().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "download failed: {stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("downloaded {DOWNLOAD_BYTES} bytes with ledbatpp\n")
    );

    // The client's own sender ran LEDBAT++: its window starts at two
    // packets in slow start (quiche's CUBIC starts at ten).
    let events = qlog_events(&qlog);
    let first_window = events
        .iter()
        .filter(|(n, _)| n == "quic:recovery_metrics_updated")
        .find_map(|(_, d)| d["congestion_window"].as_u64());
    let first_state = events
        .iter()
        .filter(|(n, _)| n == "quic:congestion_state_updated")
        .find_map(|(_, d)| d["new"].as_str().map(String::from));
    assert_eq!(first_window, Some(2 * 1350), "{events:?}");
    assert_eq!(first_state.as_deref(), Some("slow_start"));
}

#[test]
fn the_c_program_rejects_bad_arguments_with_one_line() {
    for (args, message) in [
        (
            &["127.0.0.1", "1"][..],
            "download: error: usage: download ADDRESS PORT BYTES CA_PEM [QLOG_PATH]\n",
        ),
        (
            &["localhost", "1", "5", "ca.pem"][..],
            "download: error: ADDRESS 'localhost' is not an IPv4 address\n",
        ),
        (
            &["127.0.0.1", "70000", "5", "ca.pem"][..],
            "download: error: PORT '70000' is not a port (1 to 65535)\n",
        ),
        (
            &["127.0.0.1", "443", "5k", "ca.pem"][..],
            "download: error: BYTES '5k' is not a whole number\n",
        ),
    ] {
        let output = Command::new(program()).args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), message);
    }
    // A CA file that cannot be loaded stops it before it sends anything.
    let output = Command::new(program())
        .args(["127.0.0.1", "443", "5", "/nonexistent/ca.pem"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "download: error: cannot load the CA certificate /nonexistent/ca.pem\n"
    );
}
