//! A sweep's `report.html` (simulator): its foreground section draws one
//! CDF line per bulk controller, pooling every seed of a point, and with
//! `--baseline` a line without the bulk flows; a merge of shards writes
//! the same report; a sweep without workloads has no foreground section.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use lbe_lab::sweep::Options;
use lbe_lab::sweep::Results;
use lbe_workload::figures::WorkloadFigures;

/// Two bulk controllers, a web and a ping flow, two seeds: four 10 s
/// points and two baselines (the controllers' points of one seed share
/// one), about 2 s of CPU.
const SWEEP: &str = r#"
name = "foreground-report"
seeds = 2
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "500ms"
[analysis]
from = "2s"
to = "10s"
[[flow]]
name = "bulk"
cc = ["cubic", "fixed:packets=2"]
stop = "10s"
[[flow]]
name = "web"
kind = "web"
arrivals = "2/s"
size = "50kB"
start = "1s"
stop = "10s"
[[flow]]
name = "ping"
kind = "ping"
stop = "10s"
"#;

fn run(sweep: &str, dir: &std::path::Path, shard: Option<&str>, baseline: bool) -> Results {
    let file = dir.join("sweep.toml");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(&file, sweep).unwrap();
    let sweep = lbe_lab::sweep::load(&file).unwrap();
    let options = Options {
        jobs: 2,
        shard: shard.map(|s| s.parse().unwrap()),
        real: false,
        baseline,
    };
    let stop = Arc::new(AtomicBool::new(false));
    lbe_lab::sweep::run(&sweep, &dir.join("out"), &options, &stop, &|_| {}).unwrap()
}

/// The rows of the table under the figure `id`: (line, samples, max),
/// the max as the report prints it.
fn cdf_rows(html: &str, id: &str) -> Vec<(String, usize, String)> {
    let start = html
        .find(&format!("<figure id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no figure {id}"));
    let rest = &html[start..];
    let table = &rest[rest.find("<table>").unwrap()..rest.find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row
                .split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    &c[..c.find("</td>").unwrap()]
                })
                .collect();
            (
                cells[0].to_string(),
                cells[1].parse().unwrap(),
                cells[4].to_string(),
            )
        })
        .collect()
}

/// Per controller, the ping flow's replies in the window summed over the
/// seeds (`sent - lost`: the added delays its figures summarise) and the
/// largest `added_delay_ms.max`; the same for the baselines, one per seed.
fn ping_expected(results: &Results) -> Vec<(String, usize, String)> {
    let mut rows: Vec<(String, usize, f64)> = Vec::new();
    let mut baselines: Vec<(String, usize, f64)> = Vec::new();
    for r in &results.runs {
        let w = r.workloads.iter().find(|w| w.name == "ping").unwrap();
        let got = |f: &WorkloadFigures| match f {
            WorkloadFigures::Ping {
                added_delay_ms,
                sent,
                lost,
                ..
            } => (sent - lost, added_delay_ms.max.unwrap()),
            other => panic!("not a ping's figures: {other:?}"),
        };
        let (n, max) = got(&w.figures);
        let cc = r.flows[0].cc.clone();
        match rows.iter_mut().find(|x| x.0 == cc) {
            Some(x) => (x.1, x.2) = (x.1 + n, x.2.max(max)),
            None => rows.push((cc, n, max)),
        }
        let seed = r.params["seed"].clone();
        if !baselines.iter().any(|b| b.0 == seed) {
            let (n, max) = got(w.baseline.as_ref().unwrap());
            baselines.push((seed, n, max));
        }
    }
    let base = baselines
        .iter()
        .fold((0, f64::MIN), |(n, m), b| (n + b.1, m.max(b.2)));
    rows.push(("without bulk flows".into(), base.0, base.1));
    rows.into_iter()
        .map(|(l, n, max)| (l, n, format!("{max:.4}")))
        .collect()
}

#[test]
fn a_sweeps_report_draws_a_cdf_line_per_controller_and_merges_the_same() {
    let scratch = lbe_test_support::Scratch::new("lbe-sweep-report");
    let whole = run(SWEEP, &scratch.join("whole"), None, true);
    let html = std::fs::read_to_string(scratch.join("whole/out/report.html")).unwrap();
    assert!(html.contains("<h2 id=\"foreground\">Foreground</h2>"));

    // The ping flow (flow3): one line per controller pooling both seeds'
    // replies, and one without the bulk flows counting each seed's
    // baseline once (the two controllers' points share it).
    let ping = cdf_rows(&html, "fig-foreground-flow3-0");
    assert_eq!(ping, ping_expected(&whole));
    let labels: Vec<&str> = ping.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(labels, ["cubic", "fixed:packets=2", "without bulk flows"]);
    // 8 s of window at one request per 100 ms, both seeds, none lost.
    assert!(ping.iter().all(|r| r.1 == 160), "{ping:?}");
    // Beside CUBIC the 500 ms buffer fills: the largest added delay is
    // about the buffer; the others stay near the base RTT.
    let max = |i: usize| ping[i].2.parse::<f64>().unwrap();
    assert!(max(0) > 400.0 && max(1) < 50.0 && max(2) < 50.0, "{ping:?}");

    // The web flow (flow2): the same lines, each its seeds' finished
    // downloads in the window.
    let web = cdf_rows(&html, "fig-foreground-flow2-0");
    let finished = |cc: Option<&str>| -> usize {
        whole
            .runs
            .iter()
            .filter(|r| cc.is_none_or(|c| r.flows[0].cc == c))
            .map(|r| {
                let w = r.workloads.iter().find(|w| w.name == "web").unwrap();
                let f = match cc {
                    Some(_) => &w.figures,
                    None => w.baseline.as_ref().unwrap(),
                };
                match f {
                    WorkloadFigures::Web { fct_s, .. } => fct_s.n,
                    other => panic!("not a web flow's figures: {other:?}"),
                }
            })
            .sum()
    };
    let web_n: Vec<(&str, usize)> = web.iter().map(|r| (r.0.as_str(), r.1)).collect();
    assert_eq!(
        web_n,
        [
            ("cubic", finished(Some("cubic"))),
            ("fixed:packets=2", finished(Some("fixed:packets=2"))),
            // Every run's baseline counted: each controller's points
            // share them, so halve the sum.
            ("without bulk flows", finished(None) / 2),
        ]
    );
    assert!(web_n[0].1 > 10, "{web_n:?}");
    // The figures' legends name the lines too.
    let svg_of = |id: &str| {
        let s = &html[html.find(&format!("<figure id=\"{id}\">")).unwrap()..];
        s[..s.find("</svg>").unwrap()].to_string()
    };
    for id in ["fig-foreground-flow2-0", "fig-foreground-flow3-0"] {
        let svg = svg_of(id);
        // The SVG writes a text element's text on a line of its own.
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        for label in ["cubic", "fixed:packets=2", "without bulk flows"] {
            assert!(texts.contains(&label), "{id}: no legend '{label}'");
        }
    }

    // Shards write no report; their merge writes the whole sweep's.
    run(SWEEP, &scratch.join("s0"), Some("0/2"), true);
    run(SWEEP, &scratch.join("s1"), Some("1/2"), true);
    assert!(!scratch.join("s0/out/report.html").exists());
    lbe_lab::sweep::merge(
        &[scratch.join("s0/out"), scratch.join("s1/out")],
        &scratch.join("merged"),
    )
    .unwrap();
    let merged = std::fs::read_to_string(scratch.join("merged/report.html")).unwrap();
    assert_eq!(merged, html);
}

#[test]
fn without_baseline_there_is_no_line_without_the_bulk_flows() {
    let text = SWEEP.replace("seeds = 2", "seeds = 1");
    let scratch = lbe_test_support::Scratch::new("lbe-sweep-report-no-baseline");
    let results = run(&text, &scratch.join("a"), None, false);
    let html = std::fs::read_to_string(scratch.join("a/out/report.html")).unwrap();
    let ping = cdf_rows(&html, "fig-foreground-flow3-0");
    let labels: Vec<&str> = ping.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(labels, ["cubic", "fixed:packets=2"]);
    // With one seed a line is its point's samples: its max is the
    // point's figure.
    let max = match &results.runs[0].workloads[1].figures {
        WorkloadFigures::Ping { added_delay_ms, .. } => added_delay_ms.max.unwrap(),
        other => panic!("not a ping's figures: {other:?}"),
    };
    assert_eq!(ping[0].2, format!("{max:.4}"));
    assert!(html.contains("run the sweep with <code>--baseline</code>"));
}

#[test]
fn a_sweep_without_workloads_has_no_foreground_section() {
    let text = r#"
name = "bulk-only"
[link]
rate = "10mbit"
rtt = "20ms"
buffer = "100ms"
[[flow]]
cc = ["cubic", "ledbatpp"]
stop = "3s"
[[figure]]
name = "goodput"
x = "flow1.cc"
y = "flow1.goodput_mbps"
"#;
    let scratch = lbe_test_support::Scratch::new("lbe-sweep-report-bulk");
    run(text, &scratch.join("b"), None, false);
    let html = std::fs::read_to_string(scratch.join("b/out/report.html")).unwrap();
    assert!(html.contains("<h1>Sweep report: bulk-only</h1>"), "{html}");
    assert!(html.contains("<td class=l>cubic, ledbatpp</td>"), "{html}");
    assert!(html.contains("<img src=\"figures/goodput.svg\""), "{html}");
    assert!(!html.contains("id=\"foreground\""), "{html}");
}
