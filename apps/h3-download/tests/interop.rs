//! Interop with an independent HTTP/3 implementation, aioquic (from
//! PyPI): its client downloads from h3-serve, and h3-fetch downloads from
//! a server built on it (the scripts are in `tests/aioquic/`).
//!
//! The tests make their own virtualenv under cargo's target tmp dir and
//! pip-install aioquic there, once (`h3_download::aioquic`, which
//! `lbe-lab` uses too). They are skipped, with a message
//! saying so, only when PyPI cannot be reached.

mod common;

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::sync::OnceLock;

use common::*;
use h3_download::aioquic::Aioquic;
use h3_download::aioquic::AioquicServer;
use h3_download::aioquic::InstallError;

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/aioquic")
}

/// aioquic in the tests' virtualenv (`h3_download::aioquic`); `None` if
/// PyPI is out of reach.
fn aioquic() -> Option<Aioquic> {
    static AIOQUIC: OnceLock<Option<Aioquic>> = OnceLock::new();
    AIOQUIC
        .get_or_init(|| {
            let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aioquic-venv");
            match Aioquic::install(&venv) {
                Ok(a) => Some(a),
                Err(InstallError::PypiUnreachable(e)) => {
                    eprintln!("SKIPPED: aioquic interop tests: {e}");
                    None
                }
                Err(InstallError::Failed(e)) => panic!("{e}"),
            }
        })
        .clone()
}

fn python() -> Option<PathBuf> {
    aioquic().map(|a| a.python)
}

/// Runs the aioquic client; its JSON summary.
fn aioquic_get(python: &Path, url: &str, out: &Path, headers: &[&str]) -> serde_json::Value {
    let mut cmd = Command::new(python);
    cmd.arg(scripts().join("client.py")).arg(url).arg(out);
    for h in headers {
        cmd.args(["--header", h]);
    }
    let run: Run = cmd.output().unwrap().into();
    run.json()
}

/// The aioquic file server on a free port, and the file its self-signed
/// certificate is written to (beside `root`), for h3-fetch's `--ca`.
fn aioquic_server(root: &Path, extra: &[&str]) -> (AioquicServer, String) {
    let cert = root.with_file_name("aioquic-cert.pem");
    let cert = cert.to_str().unwrap().to_string();
    let mut args = vec!["--cert-out", cert.as_str()];
    args.extend_from_slice(extra);
    let server = aioquic()
        .expect("aioquic is installed")
        .server(root, &args, Stdio::inherit())
        .unwrap();
    (server, cert)
}

#[test]
fn aioquic_client_downloads_from_h3_serve() {
    let Some(python) = python() else { return };
    let s = Scratch::new("h3-download-interop-client");
    let (root, qlogs, out) = (s.dir("root"), s.dir("qlog"), s.dir("out"));
    let data = content(8 * MB, 21);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    let sha = sha256_hex(&data);
    let mut server = TestServer::start(&root, |a| a.qlog_dir = Some(qlogs.clone()));

    let j = aioquic_get(&python, &server.url("/f.bin"), &out.join("a"), &[]);
    assert_eq!(j["status"], 200);
    assert_eq!(j["bytes"], 8 * MB);
    assert_eq!(j["sha256"], sha.as_str());
    assert!(std::fs::read(out.join("a")).unwrap() == data);
    // The digest h3-serve offers is the one aioquic's bytes have.
    let offered =
        h3_download::fields::parse_repr_digest(j["headers"]["repr-digest"].as_str().unwrap())
            .unwrap();
    assert_eq!(h3_download::digest::hex(&offered), sha);

    // Another client's `priority: u=7` makes its connection background too.
    let j = aioquic_get(
        &python,
        &server.url("/f.bin"),
        &out.join("b"),
        &["priority: u=7"],
    );
    assert_eq!(j["sha256"], sha.as_str());

    // And its range requests get the right bytes.
    let j = aioquic_get(
        &python,
        &server.url("/f.bin"),
        &out.join("c"),
        &["range: bytes=1000-1999"],
    );
    assert_eq!(j["status"], 206);
    assert_eq!(
        j["headers"]["content-range"],
        format!("bytes 1000-1999/{}", 8 * MB)
    );
    assert!(std::fs::read(out.join("c")).unwrap() == data[1000..2000]);

    server.stop();
    assert_eq!(qlogs_named(&qlogs, "h3-server-ledbatpp").len(), 1);
    assert_eq!(qlogs_named(&qlogs, "h3-server-cubic").len(), 2);
}

#[test]
fn h3_fetch_downloads_and_resumes_from_aioquic() {
    if aioquic().is_none() {
        return;
    }
    let s = Scratch::new("h3-download-interop-server");
    let (root, out) = (s.dir("root"), s.dir("out"));
    let data = content(8 * MB, 22);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    let (server, ca) = aioquic_server(&root, &[]);
    // Downloaded, then resumed from a part file of 3 MB.
    fetch_then_resume(&server.url("/f.bin"), &ca, &out, &data, 3 * MB);

    let r = fetch(&[
        &server.url("/nope"),
        "-o",
        out.join("x").to_str().unwrap(),
        "--ca",
        &ca,
    ]);
    assert!(r.error_line("h3-fetch").contains("404 Not Found"));
}

/// A certificate made by another TLS stack (Python's cryptography):
/// trusted with `--ca` under each of its names, refused without it, and
/// refused for a name it does not carry.
#[test]
fn h3_fetch_verifies_a_certificate_from_aioquic() {
    if aioquic().is_none() {
        return;
    }
    let s = Scratch::new("h3-download-interop-verify");
    let (root, out) = (s.dir("root"), s.dir("out"));
    std::fs::write(root.join("f"), b"trusted").unwrap();
    let (server, ca) = aioquic_server(&root, &[]);
    let target = out.join("f");
    let t = target.to_str().unwrap();
    // The certificate names localhost, 127.0.0.1 and ::1.
    for host in ["localhost", "127.0.0.1"] {
        let url = format!("https://{host}:{}/f", server.port);
        let j = fetch(&[&url, "-o", t, "--ca", &ca, "--json"]).json();
        assert_eq!(j["size"], 7);
        assert_eq!(std::fs::read(&target).unwrap(), b"trusted");
        std::fs::remove_file(&target).unwrap();
        // Not trusted without it: unknown_ca, as for our own server.
        let r = fetch(&[&url, "-o", t]);
        assert_eq!(
            r.error_line("h3-fetch"),
            format!(
                "h3-fetch: error: the server's certificate for {host} did not verify: self \
                 signed certificate (TLS alert 48, unknown_ca); use --ca PATH to trust that \
                 certificate or its CA, or -k/--insecure to skip verification"
            )
        );
        assert!(!target.exists());
    }
    // -k: no verification, a warning.
    let url = server.url("/f");
    let r = fetch(&[&url, "-o", t, "-k", "--json"]);
    assert!(
        r.stderr.starts_with("h3-fetch: warning: not verifying"),
        "{}",
        r.stderr
    );
    assert_eq!(r.json()["size"], 7);
}

#[test]
fn h3_fetch_refuses_bad_data_from_aioquic() {
    if aioquic().is_none() {
        return;
    }
    let s = Scratch::new("h3-download-interop-bad");
    let (root, out) = (s.dir("root"), s.dir("out"));
    std::fs::write(root.join("f.bin"), content(2 * MB, 23)).unwrap();
    let target = out.join("f.bin");
    let t = target.to_str().unwrap();

    // A digest that does not match: nothing is kept.
    let (server, ca) = aioquic_server(&root, &["--bad-digest"]);
    let r = fetch(&[&server.url("/f.bin"), "-o", t, "--ca", &ca]);
    let line = r.error_line("h3-fetch");
    assert!(
        line.contains("does not match the server's SHA-256"),
        "{line}"
    );
    assert!(std::fs::read_dir(&out).unwrap().next().is_none());
    drop(server);

    // A body shorter than its content-length: not renamed, but resumable.
    let (server, ca) = aioquic_server(&root, &["--truncate", "1000000"]);
    let r = fetch(&[&server.url("/f.bin"), "-o", t, "--ca", &ca]);
    let line = r.error_line("h3-fetch");
    assert!(
        line.contains("ended after 1000000 of 2000000 bytes") && line.contains("--resume"),
        "{line}"
    );
    assert!(!target.exists());
    assert_eq!(
        std::fs::metadata(out.join("f.bin.part")).unwrap().len(),
        1_000_000
    );
}
