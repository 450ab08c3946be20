//! `lbe-fuzz`: seeded, time-budgeted fuzzing of every parser of outside
//! input in the workspace, on stable Rust (`make fuzz FUZZ_SECONDS=600`).
//!
//! Targets (each gets an equal share of the budget):
//!
//! | target   | parser                                                             |
//! |----------|--------------------------------------------------------------------|
//! | qlog     | `qlog_analysis::reader::read_qlog_from` feeding a `FlowAnalyzer`   |
//! | cc-spec  | `quiche_lbe::CcSpec::from_str` (the `--cc` grammar)                |
//! | units    | `lbe_units::parse_size` / `parse_rate` / `parse_duration`          |
//! | scenario | `lbe_lab::scenario::parse` (scenario files)                        |
//! | sweep    | `lbe_lab::sweep::parse` (sweep files: grids of scenarios)          |
//! | h3-fields| h3-serve's `range`, `priority`, `:path` (`Root::join`), `content-range`, `repr-digest`, etags; h3-fetch's URL |
//! | part-meta| h3-fetch's `FILE.part.meta` (`PartMeta`, as `fetch.rs` loads it)   |
//!
//! Properties checked on every case: no panic; an error is one line (for
//! grammars whose errors quote the input, when the input has no line
//! break); the file readers' errors name the file
//! (`fuzz.sqlog:LINE: ...`, `fuzz.toml:LINE: ...`). Memory is
//! bounded by the readers' own caps (a qlog record is at most 16 MiB), and
//! inputs here stay below a few MiB.
//!
//! Environment: `FUZZ_SECONDS` (total budget, default 60), `FUZZ_SEED`
//! (default 1), `FUZZ_TARGETS` (comma-separated subset). A failing input is
//! written to `target/fuzz-failures/TARGET-N.bin` and the exit status is 1.

mod gen;

use std::io::Cursor;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gen::{mutate, token_string, Rng, ODD_NUMBERS};
use h3_download::fetch::PartMeta;
use qlog_analysis::flow::FlowAnalyzer;
use qlog_analysis::reader::{read_qlog_from, Event};

/// What one case found wrong (a panic is caught separately).
type Verdict = Result<(), String>;

fn one_line(what: &str, message: &str) -> Verdict {
    if message.contains(['\n', '\r']) {
        Err(format!("{what} error is not one line: {message:?}"))
    } else {
        Ok(())
    }
}

/// For grammars whose errors quote the input: one line when the input has
/// no line break (with one, the quote brings it along; not checked).
fn one_line_but_quoted(what: &str, input: &str, message: &str) -> Verdict {
    if input.contains(['\n', '\r']) {
        Ok(())
    } else {
        one_line(what, message)
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file under `dir` (recursively) with one of `exts`.
fn files(dir: &Path, exts: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                stack.push(p);
            } else if exts.iter().any(|e| p.extension().is_some_and(|x| x == *e)) {
                if let Ok(data) = std::fs::read(&p) {
                    out.push(data);
                }
            }
        }
    }
    out
}

// ------------------------------------------------------------------ qlog

const QLOG_TOKENS: &[&str] = &[
    "\u{1e}",
    "\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"time\":",
    "\"name\":",
    "\"data\":",
    "\"quic:packet_sent\"",
    "\"transport:packet_received\"",
    "\"recovery:metrics_updated\"",
    "\"quic:packet_lost\"",
    "\"quic:congestion_state_updated\"",
    "\"frames\":[",
    "{\"frame_type\":\"stream\",\"stream_id\":0,\"offset\":",
    "{\"frame_type\":\"ack\",\"acked_ranges\":[[0,",
    "\"header\":{\"packet_type\":\"1RTT\",\"packet_number\":",
    "\"raw\":{\"length\":",
    "\"length\":",
    "\"latest_rtt\":",
    "\"cwnd\":",
    "\"cf_lost_packets\":{\"total\":",
    "\"traces\":[",
    "\"events\":[",
    "\"trace\":{\"vantage_point\":{\"type\":\"server\"},\"common_fields\":{\"reference_time\":",
    "\"time_format\":\"relative_to_previous_event\"",
    "\"time_format\":\"absolute\"",
    "null",
    "true",
    "\"\\ud800\"",
];

fn qlog_seeds() -> Vec<Vec<u8>> {
    let mut seeds = files(
        &workspace().join("qlog-analysis/tests/fixtures"),
        &["sqlog", "qlog"],
    );
    // Large seeds: their first 16 kB (the rest is more of the same).
    for s in &mut seeds {
        s.truncate(16 * 1024);
    }
    seeds.push(b"\x1e{\"trace\":{}}\n".to_vec());
    seeds.push(b"{\"qlog_format\":\"NDJSON\",\"trace\":{}}\n{\"time\":1,\"name\":\"quic:packet_sent\",\"data\":{}}\n".to_vec());
    seeds
}

/// Interleave the records (split at 0x1E or newlines) of two inputs.
fn splice_records(rng: &mut Rng, a: &[u8], b: &[u8]) -> Vec<u8> {
    let split = |d: &[u8]| -> Vec<Vec<u8>> {
        let sep = if d.contains(&0x1e) { 0x1e } else { b'\n' };
        d.split(|&c| c == sep)
            .map(|r| {
                let mut v = vec![sep];
                v.extend_from_slice(r);
                v
            })
            .collect()
    };
    let (ra, rb) = (split(a), split(b));
    let mut out = Vec::new();
    for _ in 0..(ra.len() + rb.len()).min(200) {
        let from = if rng.chance(2) { &ra } else { &rb };
        if !from.is_empty() {
            out.extend_from_slice(&from[rng.below(from.len())]);
        }
    }
    out
}

fn qlog_input(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    match rng.below(10) {
        0 => (0..rng.below(512)).map(|_| rng.next() as u8).collect(),
        1 => {
            let a = rng_pick_clone(rng, seeds);
            let b = rng_pick_clone(rng, seeds);
            splice_records(rng, &a, &b)
        }
        2 => token_string(rng, QLOG_TOKENS, 200).into_bytes(),
        _ => {
            let seed = rng_pick_clone(rng, seeds);
            mutate(rng, &seed, seeds, QLOG_TOKENS)
        }
    }
}

fn rng_pick_clone(rng: &mut Rng, xs: &[Vec<u8>]) -> Vec<u8> {
    rng.pick(xs).clone()
}

fn qlog_case(data: &[u8]) -> Verdict {
    let mut flow = FlowAnalyzer::new(0.0, None, None, 0.005);
    let mut flow_error = None;
    let mut sink = |e: Event| {
        if let Err(m) = flow.event(&e) {
            flow_error.get_or_insert(m);
        }
    };
    let result = read_qlog_from(Cursor::new(data), Path::new("fuzz.sqlog"), &mut sink);
    if let Some(m) = flow_error {
        one_line("flow", &m)?;
    }
    let (from, to) = flow.extent();
    let _ = flow.finish(from.min(to), to.max(from));
    match result {
        Ok(stats) => {
            for w in &stats.warnings {
                one_line("warning", &w.to_string())?;
            }
            Ok(())
        }
        Err(e) => {
            let s = e.to_string();
            one_line("qlog", &s)?;
            if s.starts_with("fuzz.sqlog") {
                Ok(())
            } else {
                Err(format!("qlog error does not name the file: {s}"))
            }
        }
    }
}

// ------------------------------------------------------------------ --cc

const CC_TOKENS: &[&str] = &[
    "ledbatpp",
    "ledbat",
    "cdg",
    "cubic",
    "reno",
    "bbr2",
    "fixed",
    ":",
    ",",
    "=",
    " ",
    "target",
    "gain",
    "g",
    "rollback",
    "on",
    "off",
    "ss_exit",
    "slowdown",
    "decrease_constant",
    "window",
    "ms",
    "s",
    "us",
    "25",
    "0.5",
    "-1",
    "1e309",
    "NaN",
    "inf",
    "18446744073709551616",
    "+",
];

fn cc_case(text: &str) -> Verdict {
    match text.parse::<quiche_lbe::CcSpec>() {
        Ok(spec) => {
            // A parsed spec renders and re-parses.
            let again = spec.as_str().parse::<quiche_lbe::CcSpec>();
            match again {
                Ok(_) => Ok(()),
                Err(e) => Err(format!(
                    "spec {:?} parsed but its text does not: {e}",
                    spec.as_str()
                )),
            }
        }
        Err(e) => one_line_but_quoted("--cc", text, &e.to_string()),
    }
}

// ------------------------------------------------------------------ units

const UNIT_TOKENS: &[&str] = &[
    "0",
    "1",
    "7",
    "10",
    "375",
    ".",
    ".5",
    "e",
    "E3",
    "-",
    "+",
    " ",
    "b",
    "B",
    "kb",
    "kB",
    "KB",
    "KiB",
    "MB",
    "MiB",
    "GB",
    "GiB",
    "TB",
    "bit",
    "kbit",
    "mbit",
    "Mbit",
    "gbit",
    "bps",
    "kbps",
    "mbps",
    "Gbps",
    "s",
    "ms",
    "us",
    "µs",
    "ns",
    "min",
    "h",
    "d",
    "1e400",
    "18446744073709551616",
    "NaN",
    "inf",
    "_",
];

fn units_case(text: &str) -> Verdict {
    if let Err(e) = lbe_units::parse_size(text) {
        one_line_but_quoted("size", text, &e)?;
    }
    if let Err(e) = lbe_units::parse_rate(text) {
        one_line_but_quoted("rate", text, &e)?;
    }
    if let Err(e) = lbe_units::parse_duration(text) {
        one_line_but_quoted("duration", text, &e)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ scenario

const SCENARIO_TOKENS: &[&str] = &[
    "\n",
    "[link]\n",
    "[analysis]\n",
    "[[flow]]\n",
    "rate = ",
    "rtt = ",
    "buffer = ",
    "loss = ",
    "cc = ",
    "start = ",
    "stop = ",
    "duration = ",
    "from = ",
    "to = ",
    "\"20mbit\"",
    "\"50ms\"",
    "\"1.5bdp\"",
    "\"ledbatpp\"",
    "\"cubic:rollback=off\"",
    "kind = ",
    "server = ",
    "background = ",
    "lbe = ",
    "\"h3\"",
    "\"aioquic\"",
    "\"quiche-stock\"",
    "\"receiver\"",
    // Foreground workload flows.
    "\"web\"",
    "\"ping\"",
    "\"video\"",
    "\"cbr\"",
    "arrivals = ",
    "\"2/s\"",
    "\"0/s\"",
    "size = ",
    "sizes = ",
    "\"500kB\"",
    "interval = ",
    "chunk = ",
    "bitrate = ",
    "startup = ",
    "on = ",
    "off = ",
    "true",
    "0.5",
    "1e400",
    "-1",
    "\"\"",
    "=",
    "{",
    "}",
    "[",
    "]",
    "'",
    "\"\"\"",
];

fn scenario_case(text: &str) -> Verdict {
    match lbe_lab::scenario::parse(Path::new("fuzz.toml"), text) {
        Ok(_) => Ok(()),
        Err(e) => file_error("scenario", text, &e),
    }
}

/// An error about a file given as `fuzz.toml`: one line, naming the file.
fn file_error(kind: &str, text: &str, e: &str) -> Verdict {
    one_line_but_quoted(kind, text, e)?;
    if e.starts_with("fuzz.toml") {
        Ok(())
    } else {
        Err(format!("{kind} error does not name the file: {e}"))
    }
}

// ------------------------------------------------------------------ sweep

const SWEEP_TOKENS: &[&str] = &[
    "\n",
    "seeds = ",
    "seed = ",
    "name = ",
    "[link]\n",
    "[analysis]\n",
    "[[flow]]\n",
    "[[figure]]\n",
    "rate = ",
    "rtt = ",
    "start = ",
    "cc = ",
    "x = ",
    "y = ",
    "[\"1mbit\", \"2mbit\"]",
    "[\"0s\", \"2s\", \"5s\"]",
    "[1, 2, 3]",
    "[]",
    "10000",
    "10001",
    "0",
    "-1",
    "\"flow2.start\"",
    "\"link.rate\"",
    "\"share\"",
    "=",
    "[",
    "]",
    ",",
];

fn sweep_case(text: &str) -> Verdict {
    match lbe_lab::sweep::parse(Path::new("fuzz.toml"), text) {
        // Never empty: every axis has a value.
        Ok(sweep) if sweep.is_empty() => Err("a parsed sweep has no run".into()),
        Ok(_) => Ok(()),
        Err(e) => file_error("sweep", text, &e),
    }
}

// ------------------------------------------------------------------ h3

const H3_TOKENS: &[&str] = &[
    "bytes",
    "=",
    "-",
    ",",
    " ",
    "0",
    "1",
    "100",
    "18446744073709551615",
    "18446744073709551616",
    "*",
    "/",
    "u=",
    "i",
    "?",
    ";",
    "3",
    "7",
    "8",
    "-1",
    "\"",
    "W/",
    "sha-256=:",
    ":",
    "%2F",
    "%00",
    "..",
    ".",
    "%2e%2e",
    "/a",
    "?x=1",
    "#",
    "https://",
    "http://",
    "localhost",
    "[::1]",
    ":443",
    ":99999",
    "@",
    "\u{0}",
    "é",
];

fn h3_case(root: &h3_download::files::Root, text: &str, size: u64) -> Verdict {
    use h3_download::fields;
    let _ = fields::parse_range(text, size);
    let _ = fields::parse_content_range(text);
    let _ = fields::urgency(Some(text));
    let _ = fields::incremental(Some(text));
    let _ = fields::parse_repr_digest(text);
    let _ = fields::is_strong_etag(text);
    let _ = fields::etags_match_strongly(text, text);
    if let Ok(p) = root.join(text) {
        if !p.starts_with(root.path()) {
            return Err(format!(
                ":path {text:?} maps outside the root: {}",
                p.display()
            ));
        }
    }
    if let Err(e) = h3_download::fetch::parse_url(text) {
        one_line_but_quoted("url", text, &e.to_string())?;
    }
    Ok(())
}

// ------------------------------------------------------------------ part meta

fn part_meta_seeds() -> Vec<Vec<u8>> {
    let meta = PartMeta {
        url: "https://localhost:4433/file.bin".into(),
        etag: "\"sha-0123456789abcdef\"".into(),
        size: Some(1_000_000),
        repr_digest: Some("sha-256=:AAAA:".into()),
    };
    let mut line = serde_json::to_vec(&meta).unwrap();
    line.push(b'\n');
    let mut none = serde_json::to_vec(&PartMeta {
        size: None,
        repr_digest: None,
        ..meta
    })
    .unwrap();
    none.push(b'\n');
    vec![line, none]
}

fn part_meta_case(data: &[u8]) -> Verdict {
    // What fetch.rs's PartMeta::load does with the file's bytes.
    if let Ok(meta) = serde_json::from_slice::<PartMeta>(data) {
        // A loaded meta is stored the same way again.
        let text = serde_json::to_vec(&meta).map_err(|e| e.to_string())?;
        let back: PartMeta = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
        if back != meta {
            return Err("part meta does not round-trip".into());
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ driver

struct Outcome {
    cases: u64,
    failures: u64,
}

/// Run `case` on inputs from `input` until `deadline`; panics are caught
/// and count as failures, like a broken property.
fn drive(
    name: &str,
    deadline: Instant,
    rng: &mut Rng,
    panic_message: &Arc<Mutex<Option<String>>>,
    input: &mut dyn FnMut(&mut Rng) -> Vec<u8>,
    case: &dyn Fn(&[u8]) -> Verdict,
) -> Outcome {
    let mut out = Outcome {
        cases: 0,
        failures: 0,
    };
    let dir = workspace().join("target/fuzz-failures");
    while Instant::now() < deadline {
        let data = input(rng);
        out.cases += 1;
        let verdict = match panic::catch_unwind(AssertUnwindSafe(|| case(&data))) {
            Ok(v) => v,
            Err(_) => Err(format!(
                "panic: {}",
                panic_message.lock().unwrap().take().unwrap_or_default()
            )),
        };
        if let Err(why) = verdict {
            out.failures += 1;
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("{name}-{}.bin", out.failures));
            let _ = std::fs::write(&file, &data);
            let shown: String = String::from_utf8_lossy(&data).chars().take(160).collect();
            eprintln!(
                "lbe-fuzz: {name}: FAILED: {why}\n  input ({} bytes, saved to {}): {shown:?}",
                data.len(),
                file.display()
            );
        }
    }
    out
}

/// A TOML-ish input: one time in five a string of tokens, else a mutated
/// seed file.
fn toml_input(r: &mut Rng, seeds: &[Vec<u8>], tokens: &[&str]) -> Vec<u8> {
    if r.chance(5) {
        token_string(r, tokens, 40).into_bytes()
    } else {
        let s = r.pick(seeds).clone();
        mutate(r, &s, seeds, tokens)
    }
}

fn text_of(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

fn main() {
    let budget = std::env::var("FUZZ_SECONDS")
        .ok()
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .unwrap_or_else(|| {
                    eprintln!(
                        "lbe-fuzz: FUZZ_SECONDS={s:?}: expected a positive number of seconds"
                    );
                    std::process::exit(2)
                })
        })
        .unwrap_or(60.0);
    let seed = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(1);
    let all = [
        "qlog",
        "cc-spec",
        "units",
        "scenario",
        "sweep",
        "h3-fields",
        "part-meta",
    ];
    let chosen: Vec<&str> = match std::env::var("FUZZ_TARGETS") {
        Ok(list) => {
            let v: Vec<&str> = all
                .iter()
                .copied()
                .filter(|t| list.split(',').any(|x| x.trim() == *t))
                .collect();
            if v.is_empty() {
                eprintln!(
                    "lbe-fuzz: FUZZ_TARGETS={list:?}: expected some of {}",
                    all.join(",")
                );
                std::process::exit(2);
            }
            v
        }
        Err(_) => all.to_vec(),
    };

    // Panics are failures to report, not crashes: keep their message.
    let panic_message: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    {
        let slot = panic_message.clone();
        panic::set_hook(Box::new(move |info| {
            *slot.lock().unwrap() = Some(info.to_string().replace('\n', " "));
        }));
    }

    let share = Duration::from_secs_f64(budget / chosen.len() as f64);
    let qlog_seeds = qlog_seeds();
    let scenario_seeds = files(&workspace().join("scenarios"), &["toml"]);
    let sweep_seeds = files(&workspace().join("sweeps"), &["toml"]);
    let meta_seeds = part_meta_seeds();
    let root_dir = std::env::temp_dir().join(format!("lbe-fuzz-root-{}", std::process::id()));
    std::fs::create_dir_all(&root_dir).expect("temp dir");
    let root = h3_download::files::Root::new(&root_dir).expect("temp dir is a directory");

    println!(
        "lbe-fuzz: seed {seed}, {budget} s over {} target(s)",
        chosen.len()
    );
    let mut total_failures = 0;
    for (i, name) in chosen.iter().enumerate() {
        let mut rng = Rng::new(
            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .wrapping_add(i as u64 + 1),
        );
        let deadline = Instant::now() + share;
        let outcome = match *name {
            "qlog" => drive(
                name,
                deadline,
                &mut rng,
                &panic_message,
                &mut |r| qlog_input(r, &qlog_seeds),
                &qlog_case,
            ),
            "cc-spec" => drive(
                name,
                deadline,
                &mut rng,
                &panic_message,
                &mut |r| token_string(r, CC_TOKENS, 12).into_bytes(),
                &|d| cc_case(&text_of(d)),
            ),
            "units" => drive(
                name,
                deadline,
                &mut rng,
                &panic_message,
                &mut |r| token_string(r, UNIT_TOKENS, 6).into_bytes(),
                &|d| units_case(&text_of(d)),
            ),
            "scenario" => drive(
                name,
                deadline,
                &mut rng,
                &panic_message,
                &mut |r| toml_input(r, &scenario_seeds, SCENARIO_TOKENS),
                &|d| scenario_case(&text_of(d)),
            ),
            "sweep" => drive(
                name,
                deadline,
                &mut rng,
                &panic_message,
                &mut |r| toml_input(r, &sweep_seeds, SWEEP_TOKENS),
                &|d| sweep_case(&text_of(d)),
            ),
            "h3-fields" => drive(
                name,
                deadline,
                &mut rng,
                &panic_message,
                &mut |r| token_string(r, H3_TOKENS, 10).into_bytes(),
                &|d| {
                    let size = ODD_NUMBERS[d.len() % ODD_NUMBERS.len()]
                        .parse()
                        .unwrap_or(d.len() as u64);
                    h3_case(&root, &text_of(d), size)
                },
            ),
            "part-meta" => drive(
                name,
                deadline,
                &mut rng,
                &panic_message,
                &mut |r| {
                    let s = r.pick(&meta_seeds).clone();
                    mutate(
                        r,
                        &s,
                        &meta_seeds,
                        &["\"size\":", "\"etag\":", "null", "{", "}", ","],
                    )
                },
                &part_meta_case,
            ),
            _ => unreachable!("targets come from the list above"),
        };
        total_failures += outcome.failures;
        println!(
            "lbe-fuzz: {name:<10} {:>10} cases {:>4} failures",
            outcome.cases, outcome.failures
        );
    }
    std::fs::remove_dir_all(&root_dir).ok();
    if total_failures > 0 {
        println!("lbe-fuzz: {total_failures} failure(s); inputs in target/fuzz-failures/");
        std::process::exit(1);
    }
    println!("lbe-fuzz: no failures");
}
