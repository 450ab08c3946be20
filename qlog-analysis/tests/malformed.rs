//! Malformed input: each case has its stated behaviour, never a panic.
//!
//! | input                                   | behaviour                                    |
//! |-----------------------------------------|----------------------------------------------|
//! | missing file                            | error "FILE: cannot open: ..."               |
//! | a directory                             | error "FILE: cannot open: is a directory"    |
//! | empty file                              | error "FILE:1: empty file, not a qlog"       |
//! | garbage                                 | error "FILE:1: not a qlog file: ..."         |
//! | wrong JSON type in a used field         | the field skipped; one warning per kind "FILE:LINE: warning: EVENT: field `data.X` is not ..." |
//! | no event with a numeric `time`          | error "FILE:LINE: no usable qlog event in the file; ..." |
//! | truncated last record (killed run)      | warning "FILE:LINE: warning: last record is cut short ..." |
//! | truncated record followed by more       | the record skipped, warning "FILE:LINE: warning: a record cut short ..." |
//! | syntax error in a record                | the record skipped, warning "FILE:LINE: warning: a record that is not valid JSON ..." |
//! | syntax error after the name of an event the analysis does not use, in quiche's layout (`{"time":N,"name":"...",`) | counted as an unused event, not checked further |
//! | first record is an event                | warning "FILE:1: warning: no qlog header record ...", events read |
//! | plain JSON truncated inside events      | warning, the events before are kept          |
//! | plain JSON with a wrong type            | the field skipped, warning naming the event's line |
//! | a record longer than 16 MiB             | error "FILE:LINE: record longer than 16 MiB ..." |

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
    let a = analyze([fixture("wrong-type.sqlog")], &Options::default()).unwrap();
    let w: Vec<String> = a.warnings.iter().map(|w| w.to_string()).collect();
    // The header is line 1, the metrics event line 3: its window is
    // skipped, its RTT kept.
    assert_eq!(
        w,
        vec![format!(
            "{}:3: warning: quic:recovery_metrics_updated: field `data.congestion_window` is not a non-negative integer; skipped it",
            fixture("wrong-type.sqlog").display()
        )]
    );
    assert_eq!(a.flows[0].rtt_samples, 1);
    assert!(a.flows[0].series.cwnd_bytes.is_empty());
}

#[test]
fn wrong_type_in_time() {
    // The only event has no numeric time: nothing usable.
    let e = err_of("wrong-time-type.sqlog");
    let s = one_line(&e);
    assert_eq!(e.line(), Some(2), "{s}");
    assert!(
        s.ends_with("wrong-time-type.sqlog:2: no usable qlog event in the file; the first record skipped: an event without a numeric `time`"),
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
fn truncated_record_in_the_middle_is_skipped() {
    let a = analyze([fixture("cut-in-middle.sqlog")], &Options::default()).unwrap();
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    assert!(a.warnings[0].to_string().ends_with(
        "cut-in-middle.sqlog:5: warning: a record cut short before the next one; skipped it"
    ));
    // The cut packet (pn 1) is gone; the ACK still delivers pn 0's 1000 bytes.
    assert_eq!(a.flows[0].total_bytes, 1000);
}

#[test]
fn syntax_error() {
    let a = analyze([fixture("bad-json.sqlog")], &Options::default()).unwrap();
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    assert!(a.warnings[0]
        .to_string()
        .ends_with("bad-json.sqlog:4: warning: a record that is not valid JSON; skipped it"));
    // The records after the bad one are read.
    assert_eq!(a.flows[0].events, 2);
}

#[test]
fn event_first() {
    let a = analyze([fixture("event-first.sqlog")], &Options::default()).unwrap();
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    assert!(a.warnings[0].to_string().contains(
        "event-first.sqlog:1: warning: no qlog header record: the first record is an event"
    ));
    assert_eq!(a.flows[0].events, 3);
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
    let a = analyze([fixture("wrong-type.qlog")], &Options::default()).unwrap();
    let text = std::fs::read_to_string(fixture("wrong-type.qlog")).unwrap();
    // The warning names the line where the bad event starts (its `{`).
    let lines: Vec<&str> = text.lines().collect();
    let bad = lines.iter().position(|l| l.contains("\"fast\"")).unwrap();
    let bad_line = lines[..bad].iter().rposition(|l| l.trim() == "{").unwrap() as u64 + 1;
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    assert_eq!(a.warnings[0].line, Some(bad_line));
    assert!(a.warnings[0]
        .message
        .contains("field `data.latest_rtt` is not a finite number"));
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

/// A reader that yields a header record, then the start of an event whose
/// text never ends (2 GiB of `a`), without holding it anywhere.
fn endless_record(head: &'static [u8]) -> impl std::io::BufRead {
    use std::io::Read;
    std::io::BufReader::new(head.chain(std::io::repeat(b'a').take(2 << 30)))
}

#[test]
fn a_two_gib_record_is_an_error_not_a_memory_blowup() {
    let path = std::path::Path::new("huge.sqlog");
    for (head, format, line) in [
        (
            &b"\x1e{\"trace\":{}}\n\x1e{\"time\":0,\"name\":\""[..],
            "JSON-SEQ",
            2,
        ),
        (&b"{\"trace\":{}}\n{\"time\":0,\"name\":\""[..], "NDJSON", 2),
        (
            &b"{\"traces\":[{\"events\":[{\"time\":0,\"name\":\""[..],
            "JSON",
            1,
        ),
    ] {
        let e =
            qlog_analysis::reader::read_qlog_from(endless_record(head), path, &mut |_e: Event| {})
                .expect_err(format);
        let s = one_line(&e);
        assert_eq!(e.line(), Some(line), "{format}: {s}");
        assert!(s.starts_with("huge.sqlog:"), "{s}");
        assert!(s.contains("longer than 16 MiB"), "{format}: {s}");
    }
}
