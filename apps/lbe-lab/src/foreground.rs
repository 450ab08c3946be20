//! The report's "Foreground" section (docs/foreground.md): what the
//! workload flows felt beside the bulk flows and, with `--baseline`,
//! without them. A table of each workload flow's figures (with, without,
//! harm), and for web and ping flows the CDF of what their figures
//! summarise (completion times, added delays), one line with the bulk
//! flows and one without. A sweep's report ([`crate::sweep`]) draws its
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

/// The label of the line of a sweep's runs without their bulk flows.
pub const WITHOUT_BULK: &str = "without bulk flows";

/// A sweep's foreground section (none without a workload flow): per
/// workload flow and per combination of the axes other than the bulk
/// flows' `cc` and `seed`, a web flow's completion-time CDF and a ping
/// flow's added-delay CDF with one line per bulk controller (the `cc` of
/// the point's bulk flows, `a + b` for several) pooling the samples of
/// all its seeds, and with `--baseline` a line without the bulk flows
/// (the baselines' samples, each distinct baseline once: the simulator's
/// points that share one count it once); a video flow's stalls as a table.
pub fn sweep_sections(results: &crate::sweep::Results) -> Result<Vec<Section>, String> {
    use crate::sweep::RunResult;
    // The workload flows in scenario order, as the runs name them.
    let mut flows: Vec<(usize, String, String)> = Vec::new();
    for w in results.runs.iter().flat_map(|r| &r.workloads) {
        if !flows.iter().any(|f| f.0 == w.flow) {
            flows.push((w.flow, w.name.clone(), w.kind.clone()));
        }
    }
    if flows.is_empty() {
        return Ok(Vec::new());
    }
    flows.sort_by_key(|f| f.0);
    // The axes a figure's lines are drawn by: the bulk flows' `cc`.
    let by_line = |axis: &str| {
        axis == "seed"
            || axis
                .strip_prefix("flow")
                .and_then(|a| a.strip_suffix(".cc"))
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| !flows.iter().any(|f| f.0 == n))
    };
    let group_of = |r: &RunResult| -> String {
        results
            .axes
            .iter()
            .filter(|a| !by_line(&a.name))
            .map(|a| {
                format!(
                    "{}={}",
                    a.name,
                    r.params.get(&a.name).map_or("", String::as_str)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let controller = |r: &RunResult| -> String {
        if r.flows.is_empty() {
            return "no bulk flow".to_string();
        }
        r.flows
            .iter()
            .map(|f| f.cc.as_str())
            .collect::<Vec<_>>()
            .join(" + ")
    };
    // Groups in grid order of their first run.
    let mut groups: Vec<(String, Vec<&RunResult>)> = Vec::new();
    for r in &results.runs {
        let g = group_of(r);
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, runs)) => runs.push(r),
            None => groups.push((g, vec![r])),
        }
    }
    let mut h = format!(
        "<p>What the workload flows felt, pooled over each point's seeds: one line per bulk \
         controller{}; per workload flow and per combination of the other axes, a CDF \
         (web, ping) or a table (video).</p>\n",
        if results.has_baselines() {
            ", and the same workloads without the bulk flows (<code>--baseline</code>)"
        } else {
            " (run the sweep with <code>--baseline</code> for the line without the bulk flows)"
        }
    );
    for (flow, name, kind) in &flows {
        if kind == "video" {
            video_table(&mut h, *flow, name, &groups, &controller);
            continue;
        }
        let Some((what, unit)) = sample_kind(kind) else {
            continue;
        };
        for (g, (key, runs)) in groups.iter().enumerate() {
            let mut lines: Vec<CdfLine> = Vec::new();
            let mut baselines: Vec<&Vec<f64>> = Vec::new();
            for r in runs {
                let Some(w) = r.workloads.iter().find(|w| w.flow == *flow) else {
                    continue;
                };
                let label = controller(r);
                match lines.iter_mut().find(|l| l.label == label) {
                    Some(l) => l.samples.extend(&w.samples),
                    None => lines.push(CdfLine {
                        label,
                        samples: w.samples.clone(),
                    }),
                }
                if let Some(b) = &w.baseline_samples {
                    if !baselines.contains(&b) {
                        baselines.push(b);
                    }
                }
            }
            if !baselines.is_empty() {
                lines.push(CdfLine {
                    label: WITHOUT_BULK.to_string(),
                    samples: baselines.into_iter().flatten().copied().collect(),
                });
            }
            let title = match key.is_empty() {
                true => format!("{name}: {what} CDF"),
                false => format!("{name}: {what} CDF, {key}"),
            };
            let figure = cdf_figure(
                &format!("fig-{SECTION_ID}-flow{flow}-{g}"),
                &title,
                (what, unit),
                &lines,
                &format!("the {what}s of {name}, every seed of a line's points pooled."),
            )?;
            h.push_str(&figure.unwrap_or_default());
        }
    }
    Ok(foreground_section(h))
}

/// A sweep's video flow: per group and bulk controller, its stalls over
/// the runs (and without the bulk flows, each distinct baseline once).
fn video_table(
    h: &mut String,
    flow: usize,
    name: &str,
    groups: &[(String, Vec<&crate::sweep::RunResult>)],
    controller: &dyn Fn(&crate::sweep::RunResult) -> String,
) {
    use lbe_workload::figures::WorkloadFigures;
    let _ = writeln!(
        h,
        "<p>{}: its stalls beside each bulk controller (the total over the runs), its \
         stall time and its startup time (means over the runs).</p>\n<div class=scroll><table><tr><th class=l>points</th>\
         <th class=l>bulk controller</th><th>runs</th><th>stalls (total)</th>\
         <th>stall_s (mean)</th><th>startup_s (mean)</th></tr>",
        esc(name)
    );
    for (key, runs) in groups {
        // (label, figures of its runs), in order of first appearance.
        let mut rows: Vec<(String, Vec<&WorkloadFigures>)> = Vec::new();
        let mut baselines: Vec<&WorkloadFigures> = Vec::new();
        for r in runs {
            let Some(w) = r.workloads.iter().find(|w| w.flow == flow) else {
                continue;
            };
            let label = controller(r);
            match rows.iter_mut().find(|(l, _)| *l == label) {
                Some((_, f)) => f.push(&w.figures),
                None => rows.push((label, vec![&w.figures])),
            }
            if let Some(b) = &w.baseline {
                if !baselines.contains(&b) {
                    baselines.push(b);
                }
            }
        }
        if !baselines.is_empty() {
            rows.push((WITHOUT_BULK.to_string(), baselines));
        }
        for (label, figures) in rows {
            let (mut stalls, mut stall_s, mut startup, mut started) = (0u64, 0.0, 0.0, 0usize);
            for f in &figures {
                if let WorkloadFigures::Video {
                    stalls: n,
                    stall_s: s,
                    startup_s,
                    ..
                } = f
                {
                    stalls += u64::from(*n);
                    stall_s += s;
                    if let Some(t) = startup_s {
                        startup += t;
                        started += 1;
                    }
                }
            }
            let n = figures.len();
            let _ = writeln!(
                h,
                "<tr><td class=l>{}</td><td class=l>{}</td><td>{n}</td><td>{stalls}</td>\
                 <td>{:.3}</td><td>{}</td></tr>",
                esc(key),
                esc(&label),
                stall_s / n as f64,
                if started == 0 {
                    "–".to_string()
                } else {
                    format!("{:.3}", startup / started as f64)
                }
            );
        }
    }
    h.push_str("</table></div>\n");
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
fn foreground_section(html: String) -> Vec<Section> {
    vec![Section {
        id: SECTION_ID.to_string(),
        title: "Foreground".to_string(),
        html,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Axis;
    use crate::sweep::FlowResult;
    use crate::sweep::Results;
    use crate::sweep::RunResult;
    use crate::sweep::WorkloadResult;
    use lbe_workload::figures::WorkloadFigures;

    /// A sweep's point: bulk flow `cc`, a ping flow (flow2) with `ping`
    /// as its samples and `base` as its baseline's, a video flow (flow3)
    /// with `stalls` (and none in its baseline).
    fn point(
        index: usize,
        rtt: &str,
        cc: &str,
        seed: u32,
        ping: &[f64],
        base: &[f64],
        stalls: u32,
    ) -> RunResult {
        let video = |stalls: u32| WorkloadFigures::Video {
            stalls,
            stall_s: f64::from(stalls),
            startup_s: Some(1.0),
            chunks: 5,
            failed: 0,
        };
        let ping_figures = WorkloadFigures::Cbr {
            goodput_bps: 0.0,
            sent_packets: 0,
            received_packets: 0,
            lost_packets: 0,
            loss: 0.0,
        };
        RunResult {
            index,
            params: [
                ("link.rtt", rtt),
                ("flow1.cc", cc),
                ("seed", &seed.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            utilization: None,
            utilization_of_max: None,
            jain_index: None,
            flows: vec![FlowResult {
                name: "bulk".into(),
                cc: cc.into(),
                goodput_bps: 1e6,
                share: None,
                queue_mean_ms: None,
                queue_p95_ms: None,
                lost_packets: 0,
            }],
            workloads: vec![
                WorkloadResult {
                    flow: 2,
                    name: "ping".into(),
                    kind: "ping".into(),
                    // Only the samples matter to the CDFs.
                    figures: ping_figures.clone(),
                    baseline: Some(ping_figures),
                    harm: None,
                    samples: ping.to_vec(),
                    baseline_samples: Some(base.to_vec()),
                },
                WorkloadResult {
                    flow: 3,
                    name: "video".into(),
                    kind: "video".into(),
                    figures: video(stalls),
                    baseline: Some(video(0)),
                    harm: None,
                    samples: Vec::new(),
                    baseline_samples: None,
                },
            ],
        }
    }

    /// Lines by the bulk flow's `cc`, one figure per other axis value,
    /// seeds pooled, a shared baseline counted once, video stalls summed.
    #[test]
    fn a_sweeps_section_draws_a_line_per_controller_per_other_axis_value() {
        let axis = |name: &str, values: &[&str]| Axis {
            name: name.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let runs = vec![
            point(0, "20ms", "cubic", 1, &[30.0, 10.0], &[1.0], 2),
            point(1, "20ms", "cubic", 2, &[20.0], &[2.0], 1),
            point(2, "20ms", "cdg", 1, &[5.0], &[1.0], 0),
            point(3, "20ms", "cdg", 2, &[6.0], &[2.0], 0),
            point(4, "50ms", "cubic", 1, &[40.0], &[3.0], 3),
            point(5, "50ms", "cubic", 2, &[41.0], &[3.0], 0),
            point(6, "50ms", "cdg", 1, &[7.0], &[3.0], 0),
            point(7, "50ms", "cdg", 2, &[8.0], &[3.0], 0),
        ];
        let results = Results {
            sweep: "s".into(),
            mode: "sim".into(),
            engine: Some("quiche".into()),
            runs_total: runs.len(),
            axes: vec![
                axis("link.rtt", &["20ms", "50ms"]),
                axis("flow1.cc", &["cubic", "cdg"]),
                axis("seed", &["1", "2"]),
            ],
            figures: Vec::new(),
            shard: None,
            runs,
        };
        let sections = sweep_sections(&results).unwrap();
        let h = &sections[0].html;
        let rows = |id: &str| -> Vec<String> {
            let rest = &h[h.find(&format!("<figure id=\"{id}\">")).unwrap()..];
            let table = &rest[..rest.find("</table>").unwrap()];
            table
                .split("<tr>")
                .skip(2)
                .map(|r| r.trim().to_string())
                .collect()
        };
        assert_eq!(
            rows("fig-foreground-flow2-0"),
            [
                "<td class=l>cubic</td><td>3</td><td>20.0000</td><td>30.0000</td><td>30.0000</td></tr>",
                "<td class=l>cdg</td><td>2</td><td>5.0000</td><td>6.0000</td><td>6.0000</td></tr>",
                "<td class=l>without bulk flows</td><td>2</td><td>1.0000</td><td>2.0000</td><td>2.0000</td></tr>",
            ]
        );
        // Both seeds' baselines at 50 ms happen to be the same samples:
        // counted once.
        assert_eq!(
            rows("fig-foreground-flow2-1")[2],
            "<td class=l>without bulk flows</td><td>1</td><td>3.0000</td><td>3.0000</td><td>3.0000</td></tr>"
        );
        assert!(h.contains("ping: added delay CDF, link.rtt=20ms"));
        assert!(h.contains("ping: added delay CDF, link.rtt=50ms"));
        assert!(!h.contains("fig-foreground-flow2-2"));
        for row in [
            "<tr><td class=l>link.rtt=20ms</td><td class=l>cubic</td><td>2</td><td>3</td><td>1.500</td><td>1.000</td></tr>",
            "<tr><td class=l>link.rtt=20ms</td><td class=l>cdg</td><td>2</td><td>0</td><td>0.000</td><td>1.000</td></tr>",
            "<tr><td class=l>link.rtt=50ms</td><td class=l>without bulk flows</td><td>1</td><td>0</td><td>0.000</td><td>1.000</td></tr>",
        ] {
            assert!(h.contains(row), "no {row} in {h}");
        }
    }

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
