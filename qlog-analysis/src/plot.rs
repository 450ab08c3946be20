//! SVG figures (plotters): one figure per metric, every flow on it,
//! labelled by controller; the analysis window is shaded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::Analysis;
use crate::error::{Error, Result};
use crate::flow::FlowAnalysis;
use crate::series::{Points, SeriesBuilder};

/// One rendered figure.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem (`goodput`, `cwnd`...).
    pub name: String,
    /// The title drawn above the plot.
    pub title: String,
    /// What the figure shows, one sentence.
    pub caption: String,
    /// The figure as a self-contained SVG document.
    pub svg: String,
}

/// How to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    /// Goodput averaging bin; default: about 150 bins over the run, rounded
    /// to 0.1/0.2/0.25/0.5/1/2/5/10 s.
    pub goodput_bin_s: Option<f64>,
    /// Width of each figure, pixels.
    pub width: u32,
    /// Height of each time-series figure, pixels.
    pub height: u32,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            goodput_bin_s: None,
            width: 1000,
            height: 420,
        }
    }
}

/// Tableau 10: distinguishable, colour-blind friendly.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn flow_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Fixed colours for the state names our controllers and quiche report
/// (LEDBAT++'s, `lbe_cc::ledbatpp::STATE_NAMES`, with `profile=full`'s
/// phases of congestion avoidance: filling, yielded, quiet).
fn fixed_state_color(state: &str) -> Option<RGBColor> {
    Some(match state {
        "slow_start" => RGBColor(166, 216, 84),
        "conservative_slow_start" => RGBColor(102, 194, 165),
        "congestion_avoidance" => RGBColor(141, 160, 203),
        "recovery" => RGBColor(252, 141, 98),
        "slowdown" => RGBColor(228, 26, 28),
        "ramp_up" => RGBColor(255, 217, 47),
        "backoff" => RGBColor(231, 138, 195),
        "filling" => RGBColor(27, 158, 119),
        "yielded" => RGBColor(117, 112, 179),
        "quiet" => RGBColor(189, 189, 189),
        _ => return None,
    })
}

/// The colour of a state's band: its fixed one, else one of the palette.
fn state_color(state: &str, fallback: usize) -> RGBColor {
    fixed_state_color(state).unwrap_or(PALETTE[(fallback + 3) % PALETTE.len()])
}

fn nice_bin(span_s: f64) -> f64 {
    let want = span_s / 150.0;
    for b in [0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0] {
        if want <= b {
            return b;
        }
    }
    60.0
}

/// Thin a series to about `buckets` buckets over `span` for drawing.
fn thin(points: &Points, span_s: f64, buckets: f64) -> Points {
    if points.len() as f64 <= buckets * 4.0 || span_s <= 0.0 {
        return points.clone();
    }
    let mut s = SeriesBuilder::new(span_s / buckets);
    for &(t, v) in points {
        s.push(t, v);
    }
    s.finish()
}

fn out_err(name: &str, e: impl std::fmt::Display) -> Error {
    Error::Output {
        path: PathBuf::from(format!("{name}.svg")),
        message: e.to_string(),
    }
}

/// A legend entry: a line (dashed or not) or a filled box.
enum Mark {
    Line(RGBColor, bool),
    Box(RGBColor),
}

fn legend_width(labels: &[String]) -> u32 {
    let chars = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    (chars * 7 + 48).clamp(110, 330)
}

/// Draw a legend in its own area (right of the chart), so it never hides data.
fn draw_legend(
    area: &DrawingArea<SVGBackend, Shift>,
    entries: &[(String, Mark)],
) -> Result<(), Box<dyn std::error::Error>> {
    let top = 48;
    for (i, (label, mark)) in entries.iter().enumerate() {
        let y = top + 22 * i as i32;
        match mark {
            Mark::Line(c, dashed) => {
                if *dashed {
                    for k in 0..3 {
                        area.draw(&PathElement::new(
                            vec![(6 + 8 * k, y), (11 + 8 * k, y)],
                            c.stroke_width(2),
                        ))?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(6, y), (28, y)], c.stroke_width(3)))?;
                }
            }
            Mark::Box(c) => {
                area.draw(&Rectangle::new([(8, y - 6), (26, y + 6)], c.filled()))?;
            }
        }
        area.draw(&Text::new(
            label.clone(),
            (36, y - 5),
            ("sans-serif", 13).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}

struct Line<'a> {
    label: &'a str,
    color: RGBColor,
    points: Points,
}

struct Chart<'a> {
    name: &'a str,
    title: &'a str,
    y_desc: &'a str,
    x_range: (f64, f64),
    window: (f64, f64),
    lines: Vec<Line<'a>>,
    /// Horizontal reference lines (value, label).
    hlines: Vec<(f64, String)>,
}

fn draw_lines(chart: &Chart, opts: &PlotOptions) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (opts.width, opts.height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| out_err(chart.name, e))?;
        let mut entries: Vec<(String, Mark)> = chart
            .lines
            .iter()
            .map(|l| (l.label.to_string(), Mark::Line(l.color, false)))
            .collect();
        entries.extend(
            chart
                .hlines
                .iter()
                .map(|h| (h.1.clone(), Mark::Line(RGBColor(60, 60, 60), true))),
        );
        let labels: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
        let (left, right) =
            root.split_horizontally(opts.width.saturating_sub(legend_width(&labels)));
        draw_lines_on(&left, chart).map_err(|e| out_err(chart.name, e))?;
        draw_legend(&right, &entries).map_err(|e| out_err(chart.name, e))?;
        root.present().map_err(|e| out_err(chart.name, e))?;
    }
    Ok(svg)
}

fn draw_lines_on(
    root: &DrawingArea<SVGBackend, Shift>,
    c: &Chart,
) -> Result<(), Box<dyn std::error::Error>> {
    let (x0, x1) = c.x_range;
    let mut y_max = c
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .chain(c.hlines.iter().map(|h| h.0))
        .fold(0.0f64, f64::max);
    let y_min = c
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::min);
    if y_max <= y_min {
        y_max = y_min + 1.0;
    }
    let y_max = y_max * 1.08;
    let mut chart = ChartBuilder::on(root)
        .caption(c.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y_min..y_max)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(c.y_desc)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()?;
    // The analysis window.
    let (w0, w1) = (c.window.0.max(x0), c.window.1.min(x1));
    if w1 > w0 && (w0 > x0 || w1 < x1) {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(w0, y_min), (w1, y_max)],
            RGBColor(70, 130, 180).mix(0.07).filled(),
        )))?;
    }
    let dash = |v: f64, color: RGBColor| {
        let n = 120;
        (0..n).step_by(2).map(move |k| {
            let a = x0 + (x1 - x0) * k as f64 / n as f64;
            let b = x0 + (x1 - x0) * (k + 1) as f64 / n as f64;
            PathElement::new(vec![(a, v), (b, v)], color.stroke_width(2))
        })
    };
    for l in &c.lines {
        chart.draw_series(LineSeries::new(
            l.points.iter().copied(),
            l.color.stroke_width(2),
        ))?;
    }
    for (v, _) in &c.hlines {
        chart.draw_series(dash(*v, RGBColor(60, 60, 60)))?;
    }
    Ok(())
}

fn state_bands(
    a: &Analysis,
    flows: &[&FlowAnalysis],
    x: (f64, f64),
    opts: &PlotOptions,
) -> Result<String> {
    let mut svg = String::new();
    {
        let height = (110 + 46 * flows.len() as u32).max(200);
        let root = SVGBackend::with_string(&mut svg, (opts.width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| out_err("states", e))?;
        let mut names: Vec<String> = Vec::new();
        for f in flows {
            for iv in &f.series.states {
                if !names.contains(&iv.state) {
                    names.push(iv.state.clone());
                }
            }
        }
        let colors: BTreeMap<String, RGBColor> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (n.clone(), state_color(n, k)))
            .collect();
        let entries: Vec<(String, Mark)> = colors
            .iter()
            .map(|(n, c)| (n.clone(), Mark::Box(*c)))
            .collect();
        let labels: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
        let (left, right) =
            root.split_horizontally(opts.width.saturating_sub(legend_width(&labels)));
        draw_states_on(&left, a, flows, x, &colors).map_err(|e| out_err("states", e))?;
        draw_legend(&right, &entries).map_err(|e| out_err("states", e))?;
        root.present().map_err(|e| out_err("states", e))?;
    }
    Ok(svg)
}

fn draw_states_on(
    root: &DrawingArea<SVGBackend, Shift>,
    a: &Analysis,
    flows: &[&FlowAnalysis],
    (x0, x1): (f64, f64),
    colors: &BTreeMap<String, RGBColor>,
) -> Result<(), Box<dyn std::error::Error>> {
    let n = flows.len();
    let labels: Vec<String> = flows.iter().map(|f| f.label.clone()).collect();
    let label_width = labels.iter().map(|l| l.len()).max().unwrap_or(4) as u32 * 8 + 20;
    let mut chart = ChartBuilder::on(root)
        .caption("Controller state", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(label_width.clamp(60, 320))
        .build_cartesian_2d(x0..x1, 0.0..n as f64)?;
    let labels_for_axis = labels.clone();
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .disable_y_mesh()
        .y_labels(n.max(1) * 2 + 1)
        .y_label_formatter(&move |y: &f64| {
            let k = (y - 0.5).round();
            if (y - (k + 0.5)).abs() < 1e-6 && k >= 0.0 && (k as usize) < labels_for_axis.len() {
                labels_for_axis[n - 1 - k as usize].clone()
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    for (row, f) in flows.iter().enumerate() {
        let y_top = (n - row) as f64 - 0.15;
        let y_bottom = (n - row - 1) as f64 + 0.15;
        for iv in &f.series.states {
            let color = colors.get(&iv.state).copied().unwrap_or(BLACK);
            let (s, e) = (iv.start_s.max(x0), iv.end_s.min(x1));
            if e > s {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(s, y_bottom), (e, y_top)],
                    color.filled(),
                )))?;
            }
        }
    }
    // The window's edges.
    for edge in [a.window.from_s, a.window.to_s] {
        if edge > x0 && edge < x1 {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(edge, 0.0), (edge, n as f64)],
                RGBColor(40, 40, 40).stroke_width(1),
            )))?;
        }
    }
    Ok(())
}

/// Render every figure for the flows at `indices` (all flows if `None`).
pub fn figures(a: &Analysis, indices: Option<&[usize]>, opts: &PlotOptions) -> Result<Vec<Figure>> {
    let all: Vec<usize> = (0..a.flows.len()).collect();
    let indices = indices.unwrap_or(&all);
    let flows: Vec<&FlowAnalysis> = indices.iter().filter_map(|&i| a.flows.get(i)).collect();
    let x0 = flows
        .iter()
        .map(|f| f.start_s)
        .fold(f64::INFINITY, f64::min)
        .min(a.window.from_s);
    let x1 = flows
        .iter()
        .map(|f| f.last_event_s.max(f.end_s))
        .fold(f64::NEG_INFINITY, f64::max)
        .max(a.window.to_s);
    let (x0, x1) = if x0.is_finite() && x1.is_finite() && x1 > x0 {
        (x0, x1)
    } else {
        (0.0, 1.0)
    };
    let x0 = if x0 > 0.0 && x0 < 0.05 * (x1 - x0) {
        0.0
    } else {
        x0
    };
    let span = x1 - x0;
    let window = (a.window.from_s, a.window.to_s);
    let bin = opts.goodput_bin_s.unwrap_or_else(|| nice_bin(span));
    let buckets = opts.width as f64;
    let colored = |f: &FlowAnalysis, pts: Points| Line {
        label: "",
        color: flow_color(f.index),
        points: pts,
    };
    let mut out = Vec::new();

    // Goodput.
    let mut lines = Vec::new();
    for f in &flows {
        let pts = f
            .series
            .delivered
            .rate_bps(bin)
            .into_iter()
            .map(|(t, v)| (t, v / 1e6))
            .collect();
        lines.push(Line {
            label: &f.label,
            ..colored(f, pts)
        });
    }
    let mut hlines = Vec::new();
    if let Some(r) = a.link_rate_bps {
        hlines.push((
            r / 1e6,
            format!("link rate {:.3} Mbit/s", r / 1e6).replace(".000 ", " "),
        ));
    }
    let title = format!("Goodput (acknowledged application bytes, {bin} s bins)");
    out.push(Figure {
        name: "goodput".into(),
        caption: format!(
            "Application bytes acknowledged per {bin} s bin, per flow; shaded: the analysis window [{:.1} s, {:.1} s).",
            window.0, window.1
        ),
        svg: draw_lines(
            &Chart { name: "goodput", title: &title, y_desc: "goodput (Mbit/s)", x_range: (x0, x1), window, lines, hlines },
            opts,
        )?,
        title,
    });

    // Congestion window, bytes in flight (kB), RTT (ms) and the receive
    // window a receiver-side LEDBAT++ granted (kB): one line per flow,
    // nothing else drawn. The receiver window only for the traces that
    // have one (`h3-fetch --lbe receiver` or `both`), and only if any does.
    for (name, title, caption, y_desc, divisor, only_flows_with_it, pick) in [
        (
            "cwnd",
            "Congestion window",
            "Congestion window reported in recovery_metrics_updated, per flow.",
            "kB",
            1e3,
            false,
            (|f: &FlowAnalysis| &f.series.cwnd_bytes) as fn(&FlowAnalysis) -> &Points,
        ),
        (
            "bytes_in_flight",
            "Bytes in flight",
            "Bytes in flight reported in recovery_metrics_updated, per flow.",
            "kB",
            1e3,
            false,
            |f: &FlowAnalysis| &f.series.bytes_in_flight,
        ),
        (
            "rtt",
            "Round-trip time (latest sample)",
            "latest_rtt of every RTT sample, per flow.",
            "RTT (ms)",
            1.0,
            false,
            |f: &FlowAnalysis| &f.series.latest_rtt_ms,
        ),
        (
            "receiver_window",
            "Receiver window",
            "The receive window a receiver-side LEDBAT++ granted (lbe_receiver_window in recovery_metrics_updated), per flow.",
            "kB",
            1e3,
            true,
            |f: &FlowAnalysis| &f.series.receiver_window_bytes,
        ),
    ] {
        let drawn: Vec<_> = flows
            .iter()
            .filter(|f| !only_flows_with_it || !pick(f).is_empty())
            .collect();
        if only_flows_with_it && drawn.is_empty() {
            continue;
        }
        let lines = drawn
            .iter()
            .map(|f| Line {
                label: &f.label,
                ..colored(
                    f,
                    thin(pick(f), span, buckets)
                        .into_iter()
                        .map(|(t, v)| (t, v / divisor))
                        .collect(),
                )
            })
            .collect();
        out.push(Figure {
            name: name.into(),
            title: title.into(),
            caption: caption.into(),
            svg: draw_lines(
                &Chart {
                    name,
                    title,
                    y_desc,
                    x_range: (x0, x1),
                    window,
                    lines,
                    hlines: Vec::new(),
                },
                opts,
            )?,
        });
    }

    // RTT above base, with the controllers' queuing-delay targets.
    let lines = flows
        .iter()
        .map(|f| Line {
            label: &f.label,
            ..colored(f, thin(&f.series.rtt_above_base_ms, span, buckets))
        })
        .collect();
    let mut targets: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &flows {
        if let Some(t) = f.target_ms {
            let who =
                f.cc.as_deref()
                    .map(crate::naming::cc_name)
                    .unwrap_or(&f.label)
                    .to_string();
            let v = targets.entry(format!("{t}")).or_default();
            if !v.contains(&who) {
                v.push(who);
            }
        }
    }
    let hlines = targets
        .iter()
        .map(|(t, who)| {
            (
                t.parse::<f64>().unwrap_or(0.0),
                format!("target {t} ms ({})", who.join(", ")),
            )
        })
        .collect();
    out.push(Figure {
        name: "queuing_delay".into(),
        title: "RTT above base (latest RTT − the trace's smallest)".into(),
        caption: "latest_rtt minus the flow's smallest RTT sample; dashed: the controllers' delay targets.".into(),
        svg: draw_lines(
            &Chart {
                name: "queuing_delay",
                title: "RTT above base (latest RTT − the trace's smallest)",
                y_desc: "RTT above base (ms)",
                x_range: (x0, x1),
                window,
                lines,
                hlines,
            },
            opts,
        )?,
    });

    // Controller states.
    out.push(Figure {
        name: "states".into(),
        title: "Controller state".into(),
        caption: "Time in each congestion_state_updated state, one row per flow; vertical lines: the window's edges."
            .into(),
        svg: state_bands(a, &flows, (x0, x1), opts)?,
    });
    Ok(out)
}

/// Write every figure as `DIR/<name>.svg`; return the paths.
pub fn write_figures(
    a: &Analysis,
    indices: Option<&[usize]>,
    dir: &Path,
    opts: &PlotOptions,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Output {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut paths = Vec::new();
    for fig in figures(a, indices, opts)? {
        let path = dir.join(format!("{}.svg", fig.name));
        std::fs::write(&path, fig.svg.as_bytes()).map_err(|e| Error::Output {
            path: path.clone(),
            message: e.to_string(),
        })?;
        paths.push(path);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ledbatpp_state_has_a_colour_of_its_own() {
        let names = lbe_cc::ledbatpp::STATE_NAMES;
        let colors: Vec<RGBColor> = names
            .iter()
            .map(|n| fixed_state_color(n).unwrap_or_else(|| panic!("{n} has no colour")))
            .collect();
        for (i, c) in colors.iter().enumerate() {
            for (j, d) in colors.iter().enumerate().skip(i + 1) {
                assert_ne!(c, d, "{} and {}", names[i], names[j]);
            }
        }
        assert_eq!(state_color("filling", 0), RGBColor(27, 158, 119));
        assert_eq!(state_color("unheard_of", 0), PALETTE[3]);
    }
}
