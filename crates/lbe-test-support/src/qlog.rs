//! Reading JSON-SEQ qlogs (RFC 7464 records, as quiche writes them) without
//! the qlog crate's types: the events' names and data as JSON.

use std::path::Path;
use std::path::PathBuf;

/// `(name, data)` of every event in a JSON-SEQ qlog, in order (the first
/// record, the header, left out; a record that is not JSON, e.g. one cut
/// short at the end, skipped).
pub fn qlog_events(path: &Path) -> Vec<(String, serde_json::Value)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .skip(1)
        .filter_map(|r| serde_json::from_str::<serde_json::Value>(r).ok())
        .map(|v| {
            (
                v["name"].as_str().unwrap_or("").to_string(),
                v["data"].clone(),
            )
        })
        .collect()
}

/// The `new` states of every `quic:congestion_state_updated` event, in order.
pub fn cc_states(path: &Path) -> Vec<String> {
    qlog_events(path)
        .into_iter()
        .filter(|(n, _)| n == "quic:congestion_state_updated")
        .map(|(_, d)| d["new"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The `.sqlog` files in `dir` whose names contain `part`, sorted.
pub fn qlogs_named(dir: &Path, part: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".sqlog") && name.contains(part)
        })
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scratch;

    const QLOG: &str = "\u{1e}{\"qlog_version\":\"0.3\"}\n\
        \u{1e}{\"time\":1,\"name\":\"quic:congestion_state_updated\",\"data\":{\"new\":\"slow_start\"}}\n\
        \u{1e}{\"time\":2,\"name\":\"quic:packet_sent\",\"data\":{\"raw\":{\"length\":1200}}}\n\
        \u{1e}{\"time\":3,\"name\":\"quic:congestion_state_updated\",\"data\":{\"new\":\"congestion_avoidance\"}}\n\
        \u{1e}{\"time\":4,\"name\":\"quic:packet_se";

    #[test]
    fn events_and_states_in_order_header_and_cut_record_left_out() {
        let s = Scratch::new("lbe-test-support-qlog");
        let f = s.file("a-server.sqlog", QLOG);
        let names: Vec<String> = qlog_events(&f).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "quic:congestion_state_updated",
                "quic:packet_sent",
                "quic:congestion_state_updated"
            ]
        );
        assert_eq!(qlog_events(&f)[1].1["raw"]["length"], 1200);
        assert_eq!(cc_states(&f), ["slow_start", "congestion_avoidance"]);
    }

    #[test]
    fn qlogs_named_picks_sqlog_files_by_name_sorted() {
        let s = Scratch::new("lbe-test-support-qlogs-named");
        for name in [
            "b-server.sqlog",
            "a-server.sqlog",
            "a-client.sqlog",
            "server.txt",
        ] {
            s.file(name, "");
        }
        assert_eq!(
            qlogs_named(s.path(), "server"),
            [s.join("a-server.sqlog"), s.join("b-server.sqlog")]
        );
        assert!(qlogs_named(s.path(), "h3").is_empty());
    }
}
