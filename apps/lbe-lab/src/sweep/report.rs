//! `report.html` of a whole sweep: its axes, its figures and the
//! foreground section of its workload flows' CDFs.

use std::fmt::Write as _;

use qlog_analysis::report::esc;
use qlog_analysis::report::Section;

use crate::foreground::cdf_figure;
use crate::foreground::foreground_section;
use crate::foreground::sample_kind;
use crate::foreground::CdfLine;
use crate::foreground::SECTION_ID;
use crate::sweep::results::Results;
use crate::sweep::results::RunResult;

/// `report.html` of a whole sweep: its axes, its `[[figure]]`s (the SVGs
/// in `figures/`) and the foreground section ([`sweep_sections`]).
pub fn report(results: &Results) -> Result<String, String> {
    let mut h = qlog_analysis::report::page_start(&format!("{} – sweep report", results.sweep));
    let _ = writeln!(
        h,
        "<h1>Sweep report: {}</h1>\n<p class=sub>{} runs ({}){}.</p>",
        esc(&results.sweep),
        results.runs.len(),
        if results.mode == "sim" {
            "simulated"
        } else {
            "real time"
        },
        if results.has_baselines() {
            ", with baselines"
        } else {
            ""
        }
    );
    h.push_str("<h2 id=axes>Axes</h2>\n<div class=scroll><table class=kv>\n");
    for a in &results.axes {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=l>{}</td></tr>",
            esc(&a.name),
            esc(&a.values.join(", "))
        );
    }
    h.push_str("</table></div>\n<p>Every run's figures are in <code>results.csv</code> and <code>results.json</code>.</p>\n");
    if !results.figures.is_empty() {
        h.push_str("<h2 id=figures>Figures</h2>\n");
        for f in &results.figures {
            let _ = writeln!(
                h,
                "<figure id=\"fig-{0}\"><img src=\"figures/{0}.svg\" alt=\"{1}\">\
                 <figcaption>{1}: {2} against {3} (<a href=\"figures/{0}.csv\">data</a>).</figcaption></figure>",
                esc(&f.name),
                esc(f.title.as_deref().unwrap_or(&f.name)),
                esc(&f.y),
                esc(&f.x)
            );
        }
    }
    qlog_analysis::report::write_sections(&mut h, &sweep_sections(results)?);
    h.push_str("</body></html>\n");
    Ok(h)
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
pub fn sweep_sections(results: &Results) -> Result<Vec<Section>, String> {
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
    groups: &[(String, Vec<&RunResult>)],
    controller: &dyn Fn(&RunResult) -> String,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::results::FlowResult;
    use crate::sweep::results::WorkloadResult;
    use crate::sweep::spec::Axis;
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
            refill_s: None,
            flows: vec![FlowResult {
                name: "bulk".into(),
                cc: cc.into(),
                goodput_bps: 1e6,
                share: None,
                queue_mean_ms: None,
                queue_p95_ms: None,
                lost_packets: 0,
                took_s: None,
                steady_s: None,
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
}
