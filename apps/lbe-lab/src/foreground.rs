//! The report's "Foreground" section (docs/foreground.md): what the
//! workload flows felt beside the bulk flows and, with `--baseline`,
//! without them. A table of each workload flow's figures (with, without,
//! harm), and for web and ping flows the CDF of what their figures
//! summarise (completion times, added delays), one line with the bulk
//! flows and one without.

use std::fmt::Write as _;

use qlog_analysis::report::esc;
use qlog_analysis::report::Section;
use qlog_analysis::xy::XyChart;
use qlog_analysis::xy::XySeries;

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
        let Some((what, unit)) = (match w.kind {
            "web" => Some(("completion time", "s")),
            "ping" => Some(("added delay", "ms")),
            _ => None,
        }) else {
            continue;
        };
        let mut series = Vec::new();
        for (label, samples) in [
            ("with the bulk flows", Some(&w.samples)),
            ("without (baseline)", w.baseline_samples.as_ref()),
        ] {
            if let Some(line) = samples.and_then(|s| cdf(label, s)) {
                series.push(line);
            }
        }
        if series.is_empty() {
            continue;
        }
        let title = format!("{}: {what} CDF", w.name);
        let chart = XyChart {
            title: title.clone(),
            x_desc: format!("{what} ({unit})"),
            y_desc: "fraction at or below".to_string(),
            series,
            reference: None,
            log_x: false,
        };
        let svg = qlog_analysis::xy::draw(&chart, 720, 400).map_err(|e| e.to_string())?;
        let id = format!("fig-{SECTION_ID}-{}", w.id);
        let _ = writeln!(
            h,
            "<figure id=\"{id}\">{svg}\n<figcaption>{}: the {what}s of {} (summary.json's \
             figures are their percentiles), with the bulk flows and without.</figcaption></figure>",
            esc(&title),
            esc(&w.name)
        );
    }
    Ok(vec![Section {
        id: SECTION_ID.to_string(),
        title: "Foreground".to_string(),
        html: h,
    }])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cdf_puts_the_kth_smallest_at_k_over_n() {
        let c = cdf("x", &[3.0, 1.0, 2.0, 2.0]).unwrap();
        let points: Vec<(f64, f64)> = c.points.iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(points, [(1.0, 0.25), (2.0, 0.5), (2.0, 0.75), (3.0, 1.0)]);
        assert!(cdf("x", &[]).is_none());
    }
}
