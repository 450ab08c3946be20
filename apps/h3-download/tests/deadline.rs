//! h3-fetch --background --deadline against h3-serve over 127.0.0.1: the
//! `lbe-deadline` request field, the deadline-aware sender's
//! `lbe-time-in-levels` trailer, the --json fields, and bad input.

mod common;

use common::*;
use h3_download::client::request;

#[test]
fn a_background_download_with_a_deadline_reports_it_met_and_the_time_per_level() {
    let s = Scratch::new("h3-download-deadline");
    let (root, out) = (s.dir("root"), s.dir("out"));
    let data = content(4 * MB, 21);
    std::fs::write(root.join("f.bin"), &data).unwrap();
    // The default --deadline-cc (ledbatpp:profile=full) sends it.
    let server = TestServer::start(&root, |_| {});
    let target = out.join("f.bin");
    let j = fetch_to(
        server.ca(),
        &server.url("/f.bin"),
        &target,
        &["--background", "--deadline", "10s", "--json"],
    )
    .json();
    assert!(std::fs::read(&target).unwrap() == data);
    assert_eq!(j["deadline_s"], 10.0);
    assert_eq!(j["met"], true);
    // The server steers a deadline: no receiver-side cap.
    assert_eq!(j["lbe"], "sender");
    assert!(j["receiver_window"].is_null(), "{j}");
    assert_eq!(j["finished_s"], j["duration_s"]);
    // On loopback the download is far ahead of schedule: level 0 only.
    let levels: Vec<f64> = j["time_in_levels_s"]
        .as_array()
        .expect("time_in_levels_s")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(levels.len(), 7, "{levels:?}");
    assert!(levels[0] > 0.0, "{levels:?}");
    assert!(levels[1..].iter().all(|t| *t == 0.0), "{levels:?}");

    // Without --deadline the JSON has none of the deadline fields.
    let j = fetch_to(
        server.ca(),
        &server.url("/f.bin"),
        &out.join("g.bin"),
        &["--background", "--json"],
    )
    .json();
    for key in ["deadline_s", "finished_s", "met", "time_in_levels_s"] {
        assert!(j.get(key).is_none(), "{key} in {j}");
    }
}

#[test]
fn the_server_answers_a_deadline_with_a_trailer_and_ignores_a_malformed_one() {
    let s = Scratch::new("h3-download-deadline-field");
    let root = s.dir("root");
    let data = content(MB, 22);
    std::fs::write(root.join("f"), &data).unwrap();
    let server = TestServer::start(&root, |a| a.background_cc = "cdg".parse().unwrap());
    let get =
        |fields: &[(&str, &str)]| request(server.addr, &server.trust, "GET", "/f", fields).unwrap();

    let r = get(&[("priority", "u=7"), ("lbe-deadline", "60000")]);
    assert_eq!(r.status, 200);
    assert!(r.body == data);
    assert_eq!(r.trailers.len(), 1, "{:?}", r.trailers);
    assert_eq!(r.trailers[0].0, "lbe-time-in-levels");
    assert_eq!(r.trailers[0].1.split(',').count(), 7, "{:?}", r.trailers);

    // A malformed deadline, or one on a foreground request, is ignored
    // (the server logs a warning): the file as without it, no trailer.
    for fields in [
        [("priority", "u=7"), ("lbe-deadline", "soon")],
        [("priority", "u=7"), ("lbe-deadline", "0")],
        [("priority", "u=3"), ("lbe-deadline", "60000")],
    ] {
        let r = get(&fields);
        assert_eq!(r.status, 200, "{fields:?}");
        assert!(r.body == data, "{fields:?}");
        assert!(r.trailers.is_empty(), "{fields:?}: {:?}", r.trailers);
    }
}

#[test]
fn deadline_command_line_errors() {
    let r = fetch_nowhere(&["--deadline", "10m"]);
    let line = r.error_line("h3-fetch");
    assert!(line.contains("--background"), "{line}");
    assert_eq!(r.code, Some(2));
    for (value, expected) in [
        ("0ms", "'0ms' is out of range: from 1ms to 3600s"),
        (
            "2h",
            "bad duration '2h': at most 1 hour (3600s) is supported",
        ),
        ("soon", "bad duration 'soon'"),
    ] {
        let r = fetch_nowhere(&["--background", "--deadline", value]);
        let line = r.error_line("h3-fetch");
        assert!(line.contains(expected), "{line}");
        assert_eq!(r.code, Some(2));
    }
    // The receiver's cap would hold a deadline transfer to LEDBAT++'s
    // window: --deadline takes --lbe sender only.
    for mode in ["receiver", "both"] {
        let r = fetch_nowhere(&["--background", "--deadline", "10m", "--lbe", mode]);
        assert_eq!(
            r.error_line("h3-fetch"),
            format!(
                "h3-fetch: error: --deadline is met by the server's controller, and --lbe {mode} \
                 would cap it at the receiver: use --lbe sender (the default with --deadline) \
                 (see --help)"
            )
        );
        assert_eq!(r.code, Some(2));
    }
}
