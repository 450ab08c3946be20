//! The report's "Foreground" section (docs/foreground.md): what the
//! workload flows felt beside the bulk flows and, with `--baseline`,
//! without them. A table of each workload flow's figures (with, without,
//! harm), and for web and ping flows the CDF of what their figures
//! summarise (completion times, added delays), one line with the bulk
//! flows and one without. A sweep's report (`sweep/report.rs`) draws its
//! CDFs with the same [`cdf_figure`].

use std::fmt::Write as _;

use qlog_analysis::report::esc;
use qlog_analysis::report::Section;
use qlog_analysis::xy::XyChart;
use qlog_analysis::xy::XySeries;

use lbe_workload::figures::nearest_rank;

use crate::workload::numeric_leaves;
use crate::workload::WorkloadSummary;

/// The section's anchor in report.html.
pub const SECTION_ID: &str = "foreground";

/// The report's extra sections for `workloads`: the foreground section,
/// none without a workload flow.
pub fn sections(workloads: &[WorkloadSummary]) -> Result<Vec<Section>, String> {
    if workloads.is_empty() {
        return Ok(Vec::new());
    }
    let mut h = String::from(
        "<p>The workload flows' figures over the analysis window, beside the bulk flows \
         and, with <code>--baseline</code>, without them (the same workloads, seed and \
         arrivals).</p>\n<div class=scroll><table><tr><th class=l>flow</th><th class=l>figure</th>\
         <th>with the bulk flows</th><th>without</th></tr>\n",
    );
    let value = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{:.4}", x));
    for w in workloads {
        let with = leaves(&w.figures);
        let without = w.baseline.as_ref().map(leaves);
        for (i, (path, v)) in with.iter().enumerate() {
            let b = without
                .as_ref()
                .and_then(|b| b.iter().find(|(p, _)| p == path))
                .map(|(_, x)| *x);
            let _ = writeln!(
                h,
                "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td></tr>",
                if i == 0 {
                    format!("{} ({})", esc(&w.name), w.kind)
                } else {
                    String::new()
                },
                esc(path),
                value(*v),
                b.map_or("–".to_string(), value)
            );
        }
        for (path, v) in w.harm.as_ref().map(leaves).unwrap_or_default() {
            let _ = writeln!(
                h,
                "<tr><td class=l></td><td class=l><b>harm.{}</b></td><td colspan=2><b>{}</b></td></tr>",
                esc(&path),
                value(v)
            );
        }
    }
    h.push_str("</table></div>\n");
    for w in workloads {
        let Some((what, unit)) = sample_kind(w.kind) else {
            continue;
        };
        let lines = [
            CdfLine {
                label: "with the bulk flows".to_string(),
                samples: w.samples.clone(),
            },
            CdfLine {
                label: "without (baseline)".to_string(),
                samples: w.baseline_samples.clone().unwrap_or_default(),
            },
        ];
        let figure = cdf_figure(
            &format!("fig-{SECTION_ID}-{}", w.id),
            &format!("{}: {what} CDF", w.name),
            (what, unit),
            &lines,
            &format!(
                "the {what}s of {} (summary.json's figures are their percentiles), with the \
                 bulk flows and without.",
                w.name
            ),
        )?;
        h.push_str(&figure.unwrap_or_default());
    }
    Ok(foreground_section(h))
}

/// What a workload kind's samples are, for a CDF: `(what, unit)`, a web
/// flow's completion times in s, a ping flow's added delays in ms; `None`
/// for the kinds without samples (video, cbr).
pub fn sample_kind(kind: &str) -> Option<(&'static str, &'static str)> {
    match kind {
        "web" => Some(("completion time", "s")),
        "ping" => Some(("added delay", "ms")),
        _ => None,
    }
}

/// Whether a CDF of samples from `min` to `max` gets a logarithmic x
/// axis: `max` at least 10 and two powers of ten within `[min, max]`.
fn log_axis(min: f64, max: f64) -> bool {
    min > 0.0 && max >= 10.0 && max >= 10f64.powf(min.log10().ceil() + 1.0)
}

/// One line of a CDF figure: its legend label and the samples it pools.
#[derive(Clone, Debug, PartialEq)]
pub struct CdfLine {
    pub label: String,
    pub samples: Vec<f64>,
}

/// A CDF figure of `lines` (`<figure id>`, its SVG and a caption that
/// starts with `title`), then a table of each line's sample count and
/// nearest-rank p50, p95 and maximum. Lines without samples are left out;
/// `None` if none has any. `what_unit` is what the samples are and their
/// unit ([`sample_kind`]); `caption` is text, escaped here.
pub fn cdf_figure(
    id: &str,
    title: &str,
    (what, unit): (&str, &str),
    lines: &[CdfLine],
    caption: &str,
) -> Result<Option<String>, String> {
    let lines: Vec<&CdfLine> = lines.iter().filter(|l| !l.samples.is_empty()).collect();
    if lines.is_empty() {
        return Ok(None);
    }
    // A logarithmic x axis when the samples span two powers of ten, one
    // of them 10 or more (web downloads beside CUBIC take x30 as long as
    // alone: on a linear axis the other lines would be a vertical stroke
    // at its left). Narrower, the log axis would label one or two ticks
    // (1, 2): the plotting library labels the integers from 1 to 10 and
    // the powers of ten, not the tenths below 1.
    let all = lines.iter().flat_map(|l| &l.samples);
    let min = all.clone().copied().fold(f64::INFINITY, f64::min);
    let max = all.copied().fold(f64::NEG_INFINITY, f64::max);
    let log_x = log_axis(min, max);
    let chart = XyChart {
        title: title.to_string(),
        x_desc: format!(
            "{what} ({unit}{})",
            if log_x { ", logarithmic" } else { "" }
        ),
        y_desc: "fraction at or below".to_string(),
        series: lines
            .iter()
            .filter_map(|l| cdf(&l.label, &l.samples))
            .collect(),
        reference: None,
        log_x,
    };
    let svg = qlog_analysis::xy::draw(&chart, 720, 400).map_err(|e| e.to_string())?;
    let mut h = format!(
        "<figure id=\"{}\">{svg}\n<figcaption>{}: {}</figcaption></figure>\n\
         <div class=scroll><table><tr><th class=l>line</th><th>samples</th><th>p50 ({unit})</th>\
         <th>p95 ({unit})</th><th>max ({unit})</th></tr>\n",
        esc(id),
        esc(title),
        esc(caption)
    );
    for l in lines {
        let mut v = l.samples.clone();
        v.sort_by(f64::total_cmp);
        let at = |p: f64| nearest_rank(&v, p).map_or("–".to_string(), |x| format!("{x:.4}"));
        let _ = writeln!(
            h,
            "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&l.label),
            v.len(),
            at(0.5),
            at(0.95),
            at(1.0)
        );
    }
    h.push_str("</table></div>\n");
    Ok(Some(h))
}

/// A figures object's numeric leaves (figures and harm alike).
fn leaves(value: &impl serde::Serialize) -> Vec<(String, Option<f64>)> {
    numeric_leaves(&serde_json::to_value(value).unwrap_or_default())
}

/// An empirical CDF as a line: the k-th smallest of n samples at k/n.
fn cdf(label: &str, samples: &[f64]) -> Option<XySeries> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    Some(XySeries {
        label: label.to_string(),
        points: v
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                let y = (k + 1) as f64 / n;
                (x, y, y, y)
            })
            .collect(),
    })
}

/// The report's "Foreground" section holding `html` (a run's and a sweep's).
pub(crate) fn foreground_section(html: String) -> Vec<Section> {
    vec![Section {
        id: SECTION_ID.to_string(),
        title: "Foreground".to_string(),
        html,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The x axis turns logarithmic over two powers of ten reaching 10 or
    /// more (and never with a sample at or below 0).
    #[test]
    fn a_cdf_figures_x_axis_is_logarithmic_over_two_powers_of_ten() {
        let axis = |samples: &[f64]| {
            let line = CdfLine {
                label: "a".into(),
                samples: samples.to_vec(),
            };
            let h = cdf_figure("f", "t", ("delay", "ms"), &[line], "c")
                .unwrap()
                .unwrap();
            h.contains("delay (ms, logarithmic)")
        };
        assert!(axis(&[1.0, 10.0]));
        assert!(axis(&[0.25, 25.0]));
        assert!(axis(&[0.05, 500.0]));
        assert!(!axis(&[1.0, 9.9]));
        assert!(!axis(&[1.1, 99.0]));
        // Two powers of ten (0.1, 1) but no tick labelled between them.
        assert!(!axis(&[0.1, 2.5]));
        assert!(!axis(&[0.0, 10.0]));
        assert!(!axis(&[-1.0, 10.0]));
        assert!(cdf_figure("f", "t", ("d", "ms"), &[], "c")
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_cdf_puts_the_kth_smallest_at_k_over_n() {
        let c = cdf("x", &[3.0, 1.0, 2.0, 2.0]).unwrap();
        let points: Vec<(f64, f64)> = c.points.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(points, [(1.0, 0.25), (2.0, 0.5), (2.0, 0.75), (3.0, 1.0)]);
        assert!(cdf("x", &[]).is_none());
    }
}
