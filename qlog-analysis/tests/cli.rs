//! The `qlog-analysis` binary: output, exit codes, one-line errors.

use std::path::PathBuf;
use std::process::{Command, Output};

use qlog_analysis::synth::{epoch_plus, write_sender_file, SynthFlow};

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qlog-analysis"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("qa-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn summary_json() {
    let o = run(&[
        "summary",
        &fixture("flow-a-server-ledbatpp.sqlog"),
        "--from",
        "1s",
        "--to",
        "5000ms",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["window"]["from_s"], 1.0);
    assert_eq!(v["flows"][0]["bytes"], 6000);
    assert_eq!(v["flows"][0]["goodput_bps"], 12000.0);
    assert_eq!(v["flows"][0]["lost_packets"], 1);
    assert_eq!(v["flows"][0]["slowdowns"], 2);
    assert_eq!(v["flows"][0]["cc"], "ledbatpp");
    assert!(v["utilization"].is_null());
    assert_eq!(v["jain_index"], 1.0);
}

#[test]
fn summary_table() {
    let files = [
        "jain-1-server-cubic.sqlog",
        "jain-2-server-ledbatpp.sqlog",
        "jain-3-server-cubic.sqlog",
    ]
    .map(fixture);
    let mut args = vec!["summary"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--from", "0s", "--to", "10s", "--rate", "64kbit"]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("ledbatpp"), "{out}");
    assert!(out.contains("cubic [jain-3]"), "{out}");
    assert!(out.contains("utilisation 0.550"), "{out}");
    assert!(out.contains("Jain's index 0.800 over 2 flow(s)"), "{out}");
}

#[test]
fn errors_are_one_line_with_file_and_line() {
    for (file, want) in [
        (
            "wrong-time-type.sqlog",
            "wrong-time-type.sqlog:2: no usable qlog event in the file",
        ),
        ("garbage.sqlog", "garbage.sqlog:1: not a qlog file"),
        ("empty.sqlog", "empty.sqlog:1: empty file"),
        ("no-such.sqlog", "no-such.sqlog: cannot open"),
    ] {
        let o = run(&["summary", &fixture(file)]);
        assert_eq!(o.status.code(), Some(1), "{file}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.starts_with("qlog-analysis: error: ") && e.contains(want),
            "{e}"
        );
    }
}

#[test]
fn bad_units_are_one_line_errors() {
    let f = fixture("flow-a-server-ledbatpp.sqlog");
    for args in [
        vec!["summary", &f, "--rate", "20"],
        vec!["summary", &f, "--from", "ten"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("bad rate") || e.contains("bad duration"), "{e}");
    }
}

#[test]
fn truncated_file_warns_and_succeeds() {
    let o = run(&["summary", &fixture("truncated.sqlog")]);
    assert!(o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("truncated.sqlog:8: warning: last record is cut short"),
        "{e}"
    );
}

#[test]
fn plot_writes_svgs() {
    let dir = tmpdir("plot");
    let files = [
        "jain-1-server-cubic.sqlog",
        "jain-2-server-ledbatpp.sqlog",
        "flow-a-server-ledbatpp.sqlog",
    ]
    .map(fixture);
    let out = dir.join("plots");
    let mut args = vec!["plot"];
    args.extend(files.iter().map(String::as_str));
    let out_s = out.display().to_string();
    args.extend(["--out", &out_s, "--rate", "64kbit", "--bin", "500ms"]);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for name in [
        "goodput",
        "cwnd",
        "bytes_in_flight",
        "rtt",
        "queuing_delay",
        "states",
    ] {
        let svg = std::fs::read_to_string(out.join(format!("{name}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(
            svg.contains("ledbatpp"),
            "{name}: legend names the controller"
        );
    }
    let q = std::fs::read_to_string(out.join("queuing_delay.svg")).unwrap();
    assert!(q.contains("target 60 ms (ledbatpp)"));
    let s = std::fs::read_to_string(out.join("states.svg")).unwrap();
    assert!(s.contains("slowdown") && s.contains("ramp_up"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn plot_shows_profile_full_phases() {
    let dir = tmpdir("plot-full");
    let file = fixture("flow-full-server-ledbatpp.sqlog");
    let out = dir.join("plots");
    let out_s = out.display().to_string();
    let o = run(&["plot", &file, "--out", &out_s, "--bin", "500ms"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = std::fs::read_to_string(out.join("states.svg")).unwrap();
    for state in [
        "slow_start",
        "filling",
        "slowdown",
        "ramp_up",
        "yielded",
        "quiet",
    ] {
        assert!(s.contains(state), "{state}");
    }
    // Their fixed colours (filling, yielded, quiet).
    for color in ["#1B9E77", "#7570B3", "#BDBDBD"] {
        assert!(s.to_uppercase().contains(color), "{color}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn report_is_self_contained() {
    let dir = tmpdir("report");
    write_sender_file(
        &SynthFlow {
            duration_s: 6.0,
            slowdown_every_s: 2.0,
            wall_clock: Some(epoch_plus(0.0)),
            ..Default::default()
        },
        &dir.join("1-server-ledbatpp.sqlog"),
    )
    .unwrap();
    write_sender_file(
        &SynthFlow {
            duration_s: 4.0,
            rate_bps: 5e6,
            wall_clock: Some(epoch_plus(1.0)),
            ..Default::default()
        },
        &dir.join("2-server-cubic.sqlog"),
    )
    .unwrap();
    std::fs::write(
        dir.join("scenario.toml"),
        "[link]\nrate = \"20mbit\"\nrtt = \"40ms\"\n[analysis]\nfrom = \"1s\"\nto = \"5s\"\n",
    )
    .unwrap();
    let html = dir.join("report.html");
    let o = run(&[
        "report",
        &dir.display().to_string(),
        "--out",
        &html.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<svg").count(), 6);
    assert!(page.contains("Figure 6."));
    assert!(page.contains("rate = &quot;20mbit&quot;"));
    assert!(page.contains("1.00 s – 5.00 s"));
    assert!(page.contains("utilisation"));
    for external in ["<script", "<link", "src=", "@import", "url("] {
        assert!(
            !page.contains(external),
            "report refers to something outside: {external}"
        );
    }
    // An empty directory is a clear error.
    let empty = tmpdir("report-empty");
    let o = run(&[
        "report",
        &empty.display().to_string(),
        "--out",
        &html.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no .sqlog or .qlog files found"));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&empty).ok();
}
