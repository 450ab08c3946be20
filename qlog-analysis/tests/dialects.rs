//! The same transfer in other clothes: NDJSON instead of JSON-SEQ, split
//! `category`/`event` names, no vantage point, unknown frames, deltas.

use std::path::{Path, PathBuf};

use qlog_analysis::reader::{read_qlog, Event, Format};
use qlog_analysis::{analyze, FlowAnalysis, Options, Role};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn quic_go_server() -> PathBuf {
    let dir = fixture("stacks/quic-go");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_server.sqlog"))
        .unwrap()
}

/// `text` written to a fresh file named `name`, under cargo's scratch
/// directory for this package's tests (`target/tmp/`, overwritten by the
/// next run rather than left in /tmp per process).
fn write(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("qa-dialects");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn only(path: &Path) -> (FlowAnalysis, Vec<String>) {
    let a = analyze([path], &Options::default()).unwrap();
    let w = a.warnings.iter().map(|w| w.to_string()).collect();
    (a.flows.into_iter().next().unwrap(), w)
}

#[test]
fn ndjson_gives_the_same_figures_as_json_seq() {
    let seq = std::fs::read_to_string(fixture("flow-a-server-ledbatpp.sqlog")).unwrap();
    let nd = write("flow-a-server-ledbatpp.ndqlog", &seq.replace('\u{1e}', ""));
    let mut n = 0;
    let stats = read_qlog(&nd, &mut |_e: Event| n += 1).unwrap();
    assert_eq!(stats.format, Format::NdJson);
    assert_eq!((stats.decoded_events, stats.other_events), (25, 1));
    let (a, wa) = only(&fixture("flow-a-server-ledbatpp.sqlog"));
    let (b, wb) = only(&nd);
    assert_eq!(a.summary, b.summary);
    assert_eq!((wa.len(), wb.len()), (0, 0));
}

#[test]
fn split_category_and_event_names() {
    let seq = std::fs::read_to_string(fixture("flow-a-server-ledbatpp.sqlog")).unwrap();
    let split = seq
        .replace("\"name\":\"quic:", "\"category\":\"quic\",\"event\":\"")
        .replace(
            "\"name\":\"recovery:",
            "\"category\":\"recovery\",\"event\":\"",
        );
    let p = write("split-server-ledbatpp.sqlog", &split);
    let (a, _) = only(&fixture("flow-a-server-ledbatpp.sqlog"));
    let (b, w) = only(&p);
    assert_eq!(a.summary, b.summary);
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn role_from_the_events_without_a_vantage_point() {
    let text = std::fs::read_to_string(quic_go_server()).unwrap();
    let without = text.replace("\"vantage_point\":{\"type\":\"server\"},", "");
    assert_ne!(text, without);
    // No role in the name either.
    let p = write("no-vantage.sqlog", &without);
    let (f, _) = only(&p);
    assert_eq!(f.role, Role::Server);
}

#[test]
fn unknown_frames_are_skipped_and_warned_once() {
    let text = std::fs::read_to_string(quic_go_server()).unwrap();
    let odd = text.replace(
        "{\"frame_type\":\"ack\",",
        "{\"frame_type\":\"teleport\"},{\"frame_type\":\"ack\",",
    );
    let n = odd.matches("teleport").count();
    assert!(n > 1);
    let p = write("odd-frames.sqlog", &odd);
    let (f, w) = only(&p);
    let (g, _) = only(&quic_go_server());
    // The figures do not change.
    assert_eq!(f.summary, g.summary);
    assert_eq!(f.stream_bytes, g.stream_bytes);
    // One warning per kind (event name and frame type), with the count.
    let count = |event: &str| {
        odd.lines()
            .filter(|l| l.contains(event))
            .map(|l| l.matches("teleport").count())
            .sum::<usize>()
    };
    let (sent, received) = (count("packet_sent"), count("packet_received"));
    assert_eq!(sent + received, n);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].ends_with(&format!(
            "warning: transport:packet_sent: unknown frame type `teleport`; skipped {sent} like it (the first here)"
        )),
        "{w:?}"
    );
    assert!(
        w[1].ends_with(&format!(
            "warning: transport:packet_received: unknown frame type `teleport`; skipped {received} like it (the first here)"
        )),
        "{w:?}"
    );
}

#[test]
fn a_bad_first_event_does_not_hide_the_good_ones() {
    let seq = std::fs::read_to_string(fixture("flow-a-server-ledbatpp.sqlog")).unwrap();
    let (header, events) = seq.split_at(seq[1..].find('\u{1e}').unwrap() + 1);
    let p = write(
        "bad-first-server-ledbatpp.sqlog",
        &format!("{header}\u{1e}{{bad\n{events}"),
    );
    let (a, _) = only(&fixture("flow-a-server-ledbatpp.sqlog"));
    let (b, w) = only(&p);
    assert_eq!(a.summary, b.summary);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].ends_with(":2: warning: a record that is not valid JSON; skipped it"),
        "{w:?}"
    );
}

#[test]
fn a_cut_short_header_is_an_error() {
    let p = write(
        "cut-header.sqlog",
        "\u{1e}{\"qlog_version\":\"0.3\",\"trace\":{",
    );
    let e = analyze([&p], &Options::default()).unwrap_err().to_string();
    assert!(
        e.ends_with("cut-header.sqlog:1: the qlog header record is cut short (file truncated?)"),
        "{e}"
    );
}
