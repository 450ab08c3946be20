//! Malformed input: each case has its stated behaviour, never a panic.
//!
//! | input                                   | behaviour                                    |
//! |-----------------------------------------|----------------------------------------------|
//! | missing file                            | error "FILE: cannot open: ..."               |
//! | a directory                             | error "FILE: cannot open: is a directory"    |
//! | empty file                              | error "FILE:1: empty file, not a qlog"       |
//! | garbage                                 | error "FILE:1: not a qlog file: ..."         |
//! | wrong JSON type in a known field        | error "FILE:LINE: EVENT: invalid type ... (field `data.X`)" |
//! | wrong JSON type in `time`               | error "FILE:LINE: bad event record: ..."     |
//! | truncated last record (killed run)      | warning "FILE:LINE: warning: last record is cut short ..." |
//! | truncated record followed by more       | error "FILE:LINE: record ends before ..."    |
//! | syntax error in a record                | error "FILE:LINE: bad event record: ..."     |
//! | first record is an event                | error "FILE:1: the first record is an event, not a qlog header" |
//! | plain JSON truncated inside events      | warning, the events before are kept          |
//! | plain JSON with a wrong type            | error naming the event's line                |

use std::path::PathBuf;

use qlog_analysis::reader::{read_qlog, Event};
use qlog_analysis::{analyze, Error, Options};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn err_of(name: &str) -> Error {
    analyze([fixture(name)], &Options::default()).expect_err(name)
}

fn one_line(e: &Error) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "multi-line error: {s}");
    s
}

#[test]
fn missing_file() {
    let e = err_of("no-such-file.sqlog");
    let s = one_line(&e);
    assert!(matches!(e, Error::Open { .. }));
    assert!(s.contains("no-such-file.sqlog: cannot open:"), "{s}");
}

#[test]
fn directory() {
    let e = analyze([fixture("")], &Options::default()).unwrap_err();
    assert!(one_line(&e).contains("is a directory"), "{e}");
}

#[test]
fn empty_file() {
    let e = err_of("empty.sqlog");
    assert!(matches!(e, Error::Empty { .. }));
    assert!(
        one_line(&e).ends_with("empty.sqlog:1: empty file, not a qlog"),
        "{e}"
    );
}

#[test]
fn garbage() {
    let e = err_of("garbage.sqlog");
    assert_eq!(e.line(), Some(1));
    assert!(
        one_line(&e).contains("garbage.sqlog:1: not a qlog file"),
        "{e}"
    );
}

#[test]
fn wrong_type_in_known_field() {
    let e = err_of("wrong-type.sqlog");
    let s = one_line(&e);
    // The header is line 1, the metrics event line 3.
    assert_eq!(e.line(), Some(3), "{s}");
    assert!(
        s.contains(
            "wrong-type.sqlog:3: quic:recovery_metrics_updated: invalid type: string \"big\""
        ),
        "{s}"
    );
    assert!(s.contains("congestion_window"), "{s}");
}

#[test]
fn wrong_type_in_time() {
    let e = err_of("wrong-time-type.sqlog");
    let s = one_line(&e);
    assert_eq!(e.line(), Some(2), "{s}");
    assert!(
        s.contains("bad event record: invalid type: string \"soon\", expected f64"),
        "{s}"
    );
}

#[test]
fn truncated_last_record_is_a_warning() {
    let a = analyze([fixture("truncated.sqlog")], &Options::default()).unwrap();
    assert_eq!(a.warnings.len(), 1);
    let w = a.warnings[0].to_string();
    assert!(
        w.contains("truncated.sqlog:8: warning: last record is cut short"),
        "{w}"
    );
    // Everything before the cut counts: the first ACK delivered 2000 bytes.
    assert_eq!(a.flows[0].total_bytes, 2000);
    assert_eq!(a.flows[0].rtt_samples, 1);
}

#[test]
fn truncated_record_in_the_middle_is_an_error() {
    let e = err_of("cut-in-middle.sqlog");
    let s = one_line(&e);
    assert_eq!(e.line(), Some(5), "{s}");
    assert!(s.contains("record ends before its JSON value does"), "{s}");
}

#[test]
fn syntax_error() {
    let e = err_of("bad-json.sqlog");
    let s = one_line(&e);
    assert_eq!(e.line(), Some(4), "{s}");
    assert!(s.contains("bad-json.sqlog:4: bad event record:"), "{s}");
}

#[test]
fn event_first() {
    let e = err_of("event-first.sqlog");
    assert!(
        one_line(&e).contains(":1: the first record is an event, not a qlog header"),
        "{e}"
    );
}

#[test]
fn plain_json_truncated() {
    let a = analyze([fixture("truncated.qlog")], &Options::default()).unwrap();
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    assert!(a.warnings[0]
        .to_string()
        .contains("file ends inside the events array"));
    // Cut just before the packet_lost event (t = 1.2 s): 2000 + 1000 bytes acked.
    assert_eq!(a.flows[0].total_bytes, 3000);
}

#[test]
fn plain_json_wrong_type() {
    let e = err_of("wrong-type.qlog");
    let s = one_line(&e);
    let text = std::fs::read_to_string(fixture("wrong-type.qlog")).unwrap();
    let bad_line = text.lines().position(|l| l.contains("\"fast\"")).unwrap() as u64 + 1;
    assert_eq!(e.line(), Some(bad_line), "{s}");
    assert!(
        s.contains("invalid type: string \"fast\", expected f32"),
        "{s}"
    );
    assert!(s.contains("latest_rtt"), "{s}");
}

/// Random bytes, and every prefix of a good file, never panic.
#[test]
fn prefixes_and_noise_never_panic() {
    let good = std::fs::read(fixture("flow-a-server-ledbatpp.sqlog")).unwrap();
    let json = std::fs::read(fixture("flow-a-server-ledbatpp.qlog")).unwrap();
    let dir = std::env::temp_dir().join(format!("qa-prefix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.sqlog");
    for data in [&good, &json] {
        for cut in (0..data.len()).step_by(11) {
            std::fs::write(&path, &data[..cut]).unwrap();
            // Either a result or an error, and a prefix is at worst a warning
            // once the header is complete.
            let _ = analyze([&path], &Options::default());
        }
    }
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for round in 0..200 {
        let mut data = good.clone();
        for _ in 0..(1 + round % 5) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % data.len() as u64) as usize;
            data[i] = (x >> 32) as u8;
        }
        std::fs::write(&path, &data).unwrap();
        let _ = analyze([&path], &Options::default());
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reader_counts_and_lines() {
    let mut lines = Vec::new();
    let stats = read_qlog(fixture("flow-a-server-ledbatpp.sqlog"), &mut |e: Event| {
        lines.push(e.line)
    })
    .unwrap();
    assert_eq!(stats.traces, 1);
    // 26 events: one (parameters_set) only envelope-checked.
    assert_eq!(stats.decoded_events, 25);
    assert_eq!(stats.other_events, 1);
    assert_eq!(lines.first(), Some(&3));
    assert_eq!(lines.last(), Some(&27));
    assert_eq!(
        stats.bytes,
        std::fs::metadata(fixture("flow-a-server-ledbatpp.sqlog"))
            .unwrap()
            .len()
    );
}
