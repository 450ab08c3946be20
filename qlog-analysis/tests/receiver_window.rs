//! The receive window that `quiche_lbe::receiver` records in a client's
//! qlog (`recovery_metrics_updated` with `lbe_receiver_window`): read into
//! a series and drawn as its own figure, only for traces that have one.

use std::path::PathBuf;

use qlog_analysis::plot::{self, PlotOptions};
use qlog_analysis::{analyze, Options};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn receiver_window_records_become_a_series_and_a_figure() {
    let base = std::fs::read_to_string(fixture("flow-a-server-ledbatpp.sqlog")).unwrap();
    let records = [(1000.0, 2700), (3000.0, 40500)]
        .iter()
        .map(|(t, w)| {
            format!(
                "\u{1e}{{\"time\":{t},\"name\":\"quic:recovery_metrics_updated\",\"data\":{{\"lbe_receiver_window\":{w},\"lbe_receiver_state\":\"slow_start\"}}}}\n"
            )
        })
        .collect::<String>();
    let dir = std::env::temp_dir().join(format!("qa-rxwin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let with = dir.join("flow-a-server-ledbatpp.sqlog");
    std::fs::write(&with, format!("{base}{records}")).unwrap();

    let a = analyze([&with], &Options::default()).unwrap();
    let series = &a.flows[0].series.receiver_window_bytes;
    assert_eq!(
        series.iter().map(|p| p.1).collect::<Vec<_>>(),
        [2700.0, 40500.0]
    );
    assert!(series[0].0 < series[1].0);
    let names: Vec<String> = plot::figures(&a, None, &PlotOptions::default())
        .unwrap()
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert!(names.iter().any(|n| n == "receiver_window"), "{names:?}");

    // Without the records: no series, no figure.
    let a = analyze(
        [fixture("flow-a-server-ledbatpp.sqlog")],
        &Options::default(),
    )
    .unwrap();
    assert!(a.flows[0].series.receiver_window_bytes.is_empty());
    let names: Vec<String> = plot::figures(&a, None, &PlotOptions::default())
        .unwrap()
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert!(!names.iter().any(|n| n == "receiver_window"), "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `flow-a-server-ledbatpp.sqlog` with `recovery_metrics_updated` events
/// carrying these `lbe_delay_signal` values appended, in a temporary
/// directory: the trace's path.
fn with_delay_signals(dir_tag: &str, signals: &[&str]) -> (PathBuf, PathBuf) {
    let base = std::fs::read_to_string(fixture("flow-a-server-ledbatpp.sqlog")).unwrap();
    let records = signals
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "\u{1e}{{\"time\":{},\"name\":\"quic:recovery_metrics_updated\",\"data\":{{\"lbe_delay_signal\":{s}}}}}\n",
                1000 * (i + 1)
            )
        })
        .collect::<String>();
    let dir = std::env::temp_dir().join(format!("qa-signal-{dir_tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("flow-a-server-ledbatpp.sqlog");
    std::fs::write(&path, format!("{base}{records}")).unwrap();
    (dir, path)
}

#[test]
fn the_delay_signal_is_the_last_one_the_trace_names() {
    let (dir, path) = with_delay_signals("switch", &["\"rtt\"", "\"owd\""]);
    let a = analyze([&path], &Options::default()).unwrap();
    assert_eq!(a.flows[0].delay_signal.as_deref(), Some("owd"));
    let json = serde_json::to_value(&a.flows[0]).unwrap();
    assert_eq!(json["delay_signal"], "owd");
    std::fs::remove_dir_all(&dir).unwrap();

    // A trace without it (any other stack's, or quiche's own controllers)
    // has no `delay_signal` key at all.
    let a = analyze(
        [fixture("flow-a-server-ledbatpp.sqlog")],
        &Options::default(),
    )
    .unwrap();
    assert_eq!(a.flows[0].delay_signal, None);
    let json = serde_json::to_value(&a.flows[0]).unwrap();
    assert!(json.get("delay_signal").is_none(), "{json}");
}

#[test]
fn a_delay_signal_that_is_not_a_string_is_an_error_naming_the_field() {
    let (dir, path) = with_delay_signals("bad", &["7"]);
    let e = analyze([&path], &Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("field `data.lbe_delay_signal` must be a string, found 7"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
