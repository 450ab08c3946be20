//! The report in a real browser: a lab report (`lbe-lab run --sim` of a
//! small scenario → `report.html`), a sweep's figures (`lbe-lab sweep`
//! → `figures/*.svg`) and a sweep's `report.html` with its foreground
//! section's CDFs (`lbe-lab sweep --baseline`) opened in headless Chromium through Playwright
//! (`tests/browser/check_report.py`), at a desktop width (1280 px) and a
//! phone's (390 px). Checked: the page loads with no console error, no
//! uncaught exception and no failed request; every figure is drawn (a
//! non-empty box) with a titled, ticked x axis (≥ 3 numeric ticks), a
//! ticked y axis (≥ 3, except the controller-state bands, which label each
//! flow instead) and plotted shapes; at the phone's width nothing makes
//! the page scroll sideways, no HTML text is below 12 px and no figure
//! text is drawn below 9 px.
//!
//! Chromium is Debian's `chromium` package (`scripts/check-deps.sh`
//! installs it); Playwright comes from PyPI into a virtualenv of its own
//! (`lbe_app_kit::python_venv`, as aioquic's), driving that Chromium
//! (`executable_path`; Playwright's own browser download is never used).
//! A missing Chromium fails the test with how to install it; only an
//! unreachable PyPI (nothing can install Playwright then) skips it, as the
//! aioquic interop tests do.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use lbe_app_kit::python_venv;
use lbe_app_kit::python_venv::InstallError;
use lbe_test_support::scenario_text::link;
use lbe_test_support::scenario_text::named_flow;
use lbe_test_support::scenario_text::window;
use serde_json::Value;

/// The Playwright release the check is written against.
const PLAYWRIGHT: &str = "playwright==1.65.2";

/// Debian's chromium package installs its browser here.
const CHROMIUM: &str = "/usr/bin/chromium";

/// Narrowest a phone's text may be, in CSS pixels.
const MIN_HTML_FONT_PX: f64 = 12.0;
/// Smallest a figure's label may be drawn, in CSS pixels.
const MIN_FIGURE_FONT_PX: f64 = 9.0;

/// A small scenario: 10 s of LEDBAT++ and then CUBIC on 20 Mbit/s, with
/// web downloads and a ping beside them (run with `--baseline`, for the
/// report's foreground section).
fn small_scenario() -> String {
    link("20mbit", "50ms", "200ms")
        + &window("4s", "10s")
        + &named_flow("background", "ledbatpp", "0s", "10s")
        + &named_flow("foreground", "cubic", "3s", "10s")
        + "[[flow]]\nname = \"web\"\nkind = \"web\"\narrivals = \"2/s\"\nsize = \"100kB\"\nstop = \"10s\"\n\
           [[flow]]\nname = \"ping\"\nkind = \"ping\"\nstop = \"10s\"\n"
}

/// A small sweep: LEDBAT++ alone at three base RTTs, two seeds, one figure.
const SWEEP: &str = r#"
name = "browser-check"
seeds = 2
[link]
rate = "10mbit"
rtt = ["20ms", "50ms", "100ms"]
buffer = "200ms"
[analysis]
from = "2s"
to = "8s"
[[flow]]
cc = ["ledbatpp", "cdg"]
stop = "8s"
[[figure]]
name = "solo-goodput"
title = "Alone on 10 Mbit/s"
x = "link.rtt"
y = "flow1.goodput_mbps"
series = ["flow1.cc"]
"#;

/// A small sweep with workloads: two bulk controllers beside a web and a
/// ping flow, with `--baseline`, for the sweep report's foreground section.
const FOREGROUND_SWEEP: &str = r#"
name = "browser-check-foreground"
[link]
rate = "20mbit"
rtt = "50ms"
buffer = "200ms"
[analysis]
from = "2s"
to = "8s"
[[flow]]
cc = ["cubic", "ledbatpp"]
stop = "8s"
[[flow]]
name = "web"
kind = "web"
arrivals = "2/s"
size = "100kB"
stop = "8s"
[[flow]]
name = "ping"
kind = "ping"
stop = "8s"
"#;

fn lab(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_lbe-lab"))
        .args(args)
        .output()
        .expect("run lbe-lab");
    assert!(
        out.status.success(),
        "lbe-lab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Playwright virtualenv's python, or `None` (with why) if PyPI is
/// out of reach.
fn playwright_python() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("playwright-venv");
    match python_venv::install(
        &venv,
        PLAYWRIGHT,
        "import playwright.sync_api",
        "playwright",
    ) {
        Ok(python) => Some(python),
        Err(InstallError::PypiUnreachable(e)) => {
            eprintln!("skipped: {e}");
            None
        }
        Err(InstallError::Failed(e)) => panic!("{e}"),
    }
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// Asserts what a reader sees of one opened page (or figure) `view`.
fn check_view(what: &str, view: &Value, phone: bool) {
    let errors = view["errors"].as_array().unwrap();
    assert!(errors.is_empty(), "{what}: browser errors: {errors:?}");
    let figures = view["figures"].as_array().unwrap();
    assert!(!figures.is_empty(), "{what}: no figure drawn");
    for f in figures {
        let id = f["id"].as_str().unwrap_or("");
        let fig = format!("{what}, figure '{id}'");
        assert!(
            num(&f["width"]) > 100.0 && num(&f["height"]) > 50.0,
            "{fig}: drawn {}×{} px",
            f["width"],
            f["height"]
        );
        let x_ticks = f["x_ticks"].as_array().unwrap();
        assert!(x_ticks.len() >= 3, "{fig}: x axis ticks {x_ticks:?}");
        let titles = f["titles"].as_array().unwrap();
        assert!(titles.len() >= 2, "{fig}: no axis titles ({titles:?})");
        if id != "fig-states" {
            let y_ticks = f["y_ticks"].as_array().unwrap();
            assert!(y_ticks.len() >= 3, "{fig}: y axis ticks {y_ticks:?}");
        }
        assert!(num(&f["shapes"]) >= 3.0, "{fig}: nothing plotted");
    }
    let layout = &view["layout"];
    let svg_font = num(&layout["min_svg_font_px"]);
    assert!(
        svg_font >= MIN_FIGURE_FONT_PX,
        "{what}: figure text drawn at {svg_font:.1} px ('{}'), below {MIN_FIGURE_FONT_PX} px",
        layout["min_svg_font_text"]
    );
    if let Some(html_font) = layout["min_html_font_px"].as_f64() {
        assert!(
            html_font >= MIN_HTML_FONT_PX,
            "{what}: text at {html_font} px ('{}'), below {MIN_HTML_FONT_PX} px",
            layout["min_html_font_text"]
        );
    }
    if phone {
        let (scroll, viewport) = (num(&layout["scroll_width"]), num(&layout["viewport_width"]));
        assert!(
            scroll <= viewport,
            "{what}: the page is {scroll} px wide on a {viewport} px screen (scrolls sideways)"
        );
    }
}

#[test]
fn lab_and_sweep_reports_render_in_chromium_at_desktop_and_phone_width() {
    assert!(
        Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium; \
         make test's scripts/check-deps.sh does it as root)"
    );
    let Some(python) = playwright_python() else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-in-browser");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("small.toml");
    std::fs::write(&scenario, small_scenario()).unwrap();
    let sweep = dir.join("browser-check.toml");
    std::fs::write(&sweep, SWEEP).unwrap();
    let foreground_sweep = dir.join("browser-check-foreground.toml");
    std::fs::write(&foreground_sweep, FOREGROUND_SWEEP).unwrap();
    let run_out = dir.join("run");
    let sweep_out = dir.join("sweep");
    let foreground_out = dir.join("foreground-sweep");
    lab(&[
        "run",
        "--sim",
        scenario.to_str().unwrap(),
        "--out",
        run_out.to_str().unwrap(),
        "--baseline",
    ]);
    lab(&[
        "sweep",
        sweep.to_str().unwrap(),
        "--out",
        sweep_out.to_str().unwrap(),
    ]);
    lab(&[
        "sweep",
        foreground_sweep.to_str().unwrap(),
        "--out",
        foreground_out.to_str().unwrap(),
        "--baseline",
    ]);
    let sweep_report = foreground_out.join("report.html");
    let report = run_out.join("report.html");
    let figure = sweep_out.join("figures/solo-goodput.svg");
    assert!(report.is_file() && figure.is_file());

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/check_report.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(CHROMIUM)
        .arg(&report)
        .arg(&sweep_report)
        .arg("--svg")
        .arg(&figure)
        .output()
        .expect("run check_report.py");
    assert!(
        out.status.success(),
        "check_report.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).expect("check_report.py's JSON");
    eprintln!("{}", serde_json::to_string_pretty(&result).unwrap());

    let page = &result["pages"][0];
    for (width, phone) in [("desktop", false), ("phone", true)] {
        let view = &page[width];
        check_view(&format!("report.html at {width} width"), view, phone);
        // The report's six plots (goodput, cwnd, bytes in flight, RTT,
        // RTT above base and controller states) and the foreground
        // section's two CDFs (web completion times, ping added delay).
        assert_eq!(view["figures"].as_array().unwrap().len(), 8, "{width}");
        assert!(view["title"]
            .as_str()
            .unwrap()
            .contains("qlog-analysis report"));
    }
    // The sweep's report: its foreground section's two CDFs (web
    // completion times, ping added delay), each with a line per
    // controller and one without the bulk flows.
    let page = &result["pages"][1];
    for (width, phone) in [("desktop", false), ("phone", true)] {
        let view = &page[width];
        check_view(
            &format!("the sweep's report.html at {width} width"),
            view,
            phone,
        );
        assert_eq!(view["figures"].as_array().unwrap().len(), 2, "{width}");
        assert!(view["title"].as_str().unwrap().contains("sweep report"));
    }
    let svg = &result["svgs"][0];
    check_view("the sweep's figure", svg, false);
    // Both controllers are drawn as lines, and the x axis is the base RTT.
    let titles = svg["figures"][0]["titles"].to_string();
    for want in ["ledbatpp", "cdg", "link.rtt"] {
        assert!(
            titles.contains(want),
            "sweep figure: no '{want}' in {titles}"
        );
    }
}
