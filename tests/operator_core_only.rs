//! An operator's set-up, step by step as docs/adopting.md gives it: a
//! cargo project of its own outside this workspace, with quiche 0.30.0
//! patched with `patches/core` only (`scripts/quiche-src.sh --only core`)
//! in its `[patch.crates-io]` and `quiche-lbe` without features, builds a
//! server that sends a download with LEDBAT++ chosen by name
//! (`tests/operator/download.rs`). It runs: the server's first congestion
//! window is LEDBAT++'s two packets, and the download completes. `cargo
//! tree -i quiche` shows the core-patched copy as the only quiche.
//!
//! The project lives under `<target>/tmp/operator-core/` and builds into a
//! target directory of its own, `<target>/operator-core/`, kept between
//! runs. Not the workspace's: cargo names a path package's files by its
//! name, version, features and profile, not by where its source is, so the
//! core-only quiche would be built into the files of the workspace's fully
//! patched one, and a build beside this test (this run's own doctests) then
//! compiled against the core alone (seen: E0407 on `on_one_way_delay`).
//! BoringSSL is not built again: boring-sys takes the repository's one build
//! of it, `target/boringssl` (`scripts/boringssl.sh`; boring-sys's own
//! `BORING_BSSL_PATH`, the way every build here takes it), which saved the
//! minutes a build of its own took. Its Cargo.lock starts from the
//! workspace's, so it builds `--offline` with the crates the workspace's
//! build fetched; every step is bounded.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::time::Duration;
use std::time::Instant;

use lbe_test_support::fresh_dir;

/// The bound on the operator project's build, lock waits included.
const BUILD_BOUND: Duration = Duration::from_secs(30 * 60);
/// The bound on its run (a 4 MB download on loopback).
const RUN_BOUND: Duration = Duration::from_secs(120);
const BYTES: u64 = 4_000_000;
/// The workspace's `[profile.release]` table (its header and settings): the
/// operator project builds as the workspace does.
fn workspace_release_profile(root: &Path) -> String {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut lines = manifest.lines().skip_while(|l| *l != "[profile.release]");
    let header = lines.next().expect("the workspace has a [profile.release]");
    let settings = lines.take_while(|l| !l.is_empty() && !l.starts_with(['#', '[']));
    std::iter::once(header)
        .chain(settings)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The operator project's Cargo.toml: quiche from crates.io, replaced by
/// the core-patched copy; quiche-lbe by path,
/// without its features; the workspace's release profile.
fn operator_manifest(root: &Path, quiche: &Path, profile: &str) -> String {
    format!(
        r#"[package]
name = "lbe-operator-download"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
quiche = "=0.30.0"
quiche-lbe = {{ path = "{root}", default-features = false }}

[patch.crates-io]
quiche = {{ path = "{quiche}" }}

{profile}
[workspace]
"#,
        root = root.display(),
        quiche = quiche.display(),
    )
}

/// The repository's BoringSSL, built once by `scripts/boringssl.sh` (a
/// step of `make test`): `lib/` holds `libcrypto.a` and `libssl.a`,
/// `include/` the headers.
fn repository_boringssl(root: &Path) -> PathBuf {
    let dir = root.join("target/boringssl");
    assert!(
        dir.join("lib/libcrypto.a").is_file() && dir.join("include/openssl/ssl.h").is_file(),
        "{} holds no BoringSSL build: run `make boringssl` (scripts/boringssl.sh) first",
        dir.display()
    );
    dir
}

/// Runs `command` to its end or kills it after `bound`. Its output is read
/// while it runs (a child writing more than a pipe holds would otherwise
/// wait for a reader for ever: cargo's JSON messages do).
fn run_bounded(command: &mut Command, bound: Duration) -> Output {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes)
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > bound {
            child.kill().unwrap();
            child.wait().unwrap();
            let stderr = stderr.join().unwrap().unwrap_or_default();
            panic!(
                "{command:?} did not finish in {bound:?}:\n{}",
                String::from_utf8_lossy(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    Output {
        status,
        stdout: stdout.join().unwrap().unwrap(),
        stderr: stderr.join().unwrap().unwrap(),
    }
}

fn check(command: &mut Command, bound: Duration) -> String {
    let output = run_bounded(command, bound);
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn an_operator_serves_a_download_with_ledbatpp_on_quiche_with_the_core_patches_alone() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let work = fresh_dir(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("operator-core"));
    // CARGO_TARGET_TMPDIR is <target>/tmp; the project's own target
    // directory sits beside it (module docs).
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("operator-core");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());

    // 1. quiche 0.30.0 with patches/core only.
    let patched = work.join("quiche-core");
    check(
        Command::new(root.join("scripts/quiche-src.sh"))
            .arg("--out")
            .arg(&patched)
            .args(["--only", "core"]),
        BUILD_BOUND,
    );
    let quiche = patched.join("quiche-0.30.0");
    let congestion = quiche.join("src/recovery/congestion");
    assert!(congestion.join("custom.rs").is_file(), "core 0001");
    assert!(congestion.join("registry.rs").is_file(), "core 0006");
    assert!(
        !congestion.join("builtin.rs").exists(),
        "ext 0003 is not core"
    );
    assert!(
        !quiche.join("src/clock.rs").exists(),
        "lab 0007 is not core"
    );

    // 2. The operator's project: its manifest, its program, a lock of its
    // own (started from the workspace's, see the module docs).
    let project = work.join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let profile = workspace_release_profile(&root);
    std::fs::write(
        project.join("Cargo.toml"),
        operator_manifest(&root, &quiche, &profile),
    )
    .unwrap();
    std::fs::copy(
        root.join("tests/operator/download.rs"),
        project.join("src/main.rs"),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();

    // 3. Build it, on the repository's BoringSSL.
    let boringssl = repository_boringssl(&root);
    let manifest = project.join("Cargo.toml");
    check(
        Command::new(&cargo)
            .args(["build", "--release", "--offline", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target)
            .env("BORING_BSSL_PATH", &boringssl),
        BUILD_BOUND,
    );

    // 4. The only quiche in it is the core-patched copy, and quiche-lbe
    // uses it.
    let tree = check(
        Command::new(&cargo)
            .args([
                "tree",
                "--offline",
                "-e",
                "normal",
                "-i",
                "quiche",
                "--manifest-path",
            ])
            .arg(&manifest),
        RUN_BOUND,
    );
    let first = tree.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("quiche v0.30.0 ({})", quiche.display()),
        "{tree}"
    );
    assert!(
        tree.lines()
            .any(|l| l.contains(&format!("quiche-lbe v0.1.0 ({})", root.display()))),
        "{tree}"
    );

    // 5. Run it: LEDBAT++'s initial window is two packets ("LEDBAT++ sender
    // limits the initial window to 2 packets", draft -01 §4.1), and the
    // download completes; `cubic:rollback=off` needs the lab patches.
    let line = check(
        Command::new(target.join("release/lbe-operator-download"))
            .arg(quiche.join("examples/cert.crt"))
            .arg(quiche.join("examples/cert.key"))
            .arg(BYTES.to_string()),
        RUN_BOUND,
    );
    assert_eq!(
        line.trim_end(),
        format!(
            "first_cwnd={} max_datagram_size=1200 received={BYTES} rollback_off=--cc 'cubic:rollback=off': {}",
            2 * 1200,
            quiche_lbe::spec::ROLLBACK_NEEDS_THE_FEATURE
        )
    );
}
