//! What a sweep writes: `results.json`, `results.csv` and, for a whole
//! sweep, `report.html` and each `[[figure]]`'s SVG and CSV in `figures/`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::sweep::metrics::metric;
use crate::sweep::report::report;
use crate::sweep::results::Results;
use crate::sweep::results::RunResult;
use crate::sweep::results::WorkloadResult;
use crate::sweep::spec::FigureSpec;

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x}"))
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
/// break, as `--cc` specs with several keys do.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: a row per run, the axes then the figures.
pub fn csv(results: &Results) -> String {
    let mut s = String::from("index");
    for a in &results.axes {
        let _ = write!(s, ",{}", field(&a.name));
    }
    s.push_str(",utilization,utilization_of_max,jain_index,refill_s");
    let first = results.runs.first();
    let workloads: Vec<(usize, Vec<String>)> = first.map_or_else(Vec::new, |r| {
        r.workloads
            .iter()
            .map(|w| (w.flow, w.leaves().into_iter().map(|(k, _)| k).collect()))
            .collect()
    });
    for n in first.map_or_else(Vec::new, RunResult::bulk_positions) {
        for m in [
            "cc",
            "goodput_bps",
            "share",
            "queue_mean_ms",
            "queue_p95_ms",
            "lost_packets",
            "took_s",
            "steady_s",
        ] {
            let _ = write!(s, ",flow{n}.{m}");
        }
    }
    for (n, paths) in &workloads {
        for m in paths {
            let _ = write!(s, ",flow{n}.{m}");
        }
    }
    s.push('\n');
    for r in &results.runs {
        let _ = write!(s, "{}", r.index);
        for a in &results.axes {
            let _ = write!(
                s,
                ",{}",
                field(r.params.get(&a.name).map_or("", String::as_str))
            );
        }
        let _ = write!(
            s,
            ",{},{},{},{}",
            opt(r.utilization),
            opt(r.utilization_of_max),
            opt(r.jain_index),
            opt(r.refill_s)
        );
        for f in &r.flows {
            let _ = write!(
                s,
                ",{},{},{},{},{},{},{},{}",
                field(&f.cc),
                f.goodput_bps,
                opt(f.share),
                opt(f.queue_mean_ms),
                opt(f.queue_p95_ms),
                f.lost_packets,
                opt(f.took_s),
                opt(f.steady_s)
            );
        }
        for (n, paths) in &workloads {
            // Each workload's figures read once per run, not once per column.
            let leaves = r
                .workloads
                .iter()
                .find(|w| w.flow == *n)
                .map(WorkloadResult::leaves)
                .unwrap_or_default();
            for m in paths {
                let v = leaves.iter().find(|(k, _)| k == m).and_then(|(_, v)| *v);
                let _ = write!(s, ",{}", opt(v));
            }
        }
        s.push('\n');
    }
    s
}

/// The points of a figure: per series, per x, mean/min/max of y over the
/// runs that share them.
pub fn figure_points(results: &Results, f: &FigureSpec) -> Vec<qlog_analysis::xy::XySeries> {
    let series_axes: Vec<String> = match &f.series {
        Some(s) => s.clone(),
        None => results
            .axes
            .iter()
            .map(|a| a.name.clone())
            .filter(|n| n != &f.x && n != "seed" && !f.filter.iter().flatten().any(|(a, _)| a == n))
            .collect(),
    };
    let xs = results
        .axes
        .iter()
        .find(|a| a.name == f.x)
        .map(|a| a.values.clone())
        .unwrap_or_default();
    let mut groups: BTreeMap<String, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    for r in &results.runs {
        let wanted = f
            .filter
            .iter()
            .flatten()
            .all(|(a, v)| r.params.get(a) == Some(v));
        if !wanted {
            continue;
        }
        let key = series_axes
            .iter()
            .map(|a| format!("{a}={}", r.params.get(a).map_or("", String::as_str)))
            .collect::<Vec<_>>()
            .join(" ");
        let Some(xv) = r.params.get(&f.x) else {
            continue;
        };
        let Some(xi) = xs.iter().position(|v| v == xv) else {
            continue;
        };
        if let Some(y) = metric(r, &f.y).filter(|y| y.is_finite()) {
            groups
                .entry(key)
                .or_default()
                .entry(xi)
                .or_default()
                .push(y);
        }
    }
    groups
        .into_iter()
        .map(|(label, by_x)| qlog_analysis::xy::XySeries {
            label: if label.is_empty() { f.y.clone() } else { label },
            points: by_x
                .into_iter()
                .map(|(xi, ys)| {
                    let x = numeric(&xs[xi]).unwrap_or(xi as f64);
                    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
                    let min = ys.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (x, mean, min, max)
                })
                .collect(),
        })
        .collect()
}

/// The unit [`numeric`] puts an axis value in, for an axis label.
fn unit_of(v: &str) -> &'static str {
    if v.parse::<f64>().is_ok() {
        ""
    } else if lbe_units::parse_duration(v).is_ok() {
        " (ms)"
    } else if lbe_units::parse_rate(v).is_ok() {
        " (Mbit/s)"
    } else {
        ""
    }
}

/// An axis value as a number for an x axis: durations in ms, rates in
/// Mbit/s, else the number itself.
pub fn numeric(v: &str) -> Option<f64> {
    if let Ok(x) = v.parse::<f64>() {
        return Some(x);
    }
    if let Ok(d) = lbe_units::parse_duration(v) {
        return Some(d.as_secs_f64() * 1e3);
    }
    if let Ok(r) = lbe_units::parse_rate(v) {
        return Some(r as f64 / 1e6);
    }
    None
}

pub(super) fn write(results: &Results, out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let put = |name: &str, body: String| {
        let p = out.join(name);
        std::fs::write(&p, body).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    put(
        "results.json",
        serde_json::to_string_pretty(results).expect("results serialize") + "\n",
    )?;
    put("results.csv", csv(results))?;
    // Figures and the report only for a whole sweep: a shard has a part
    // of every line.
    if results.shard.is_some() {
        return Ok(());
    }
    put("report.html", report(results)?)?;
    if results.figures.is_empty() {
        return Ok(());
    }
    let dir = out.join("figures");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for f in &results.figures {
        let series = figure_points(results, f);
        let mut table = format!("series,{},{} mean,min,max\n", f.x, f.y);
        for s in &series {
            for p in &s.points {
                let _ = writeln!(table, "{},{},{},{},{}", field(&s.label), p.0, p.1, p.2, p.3);
            }
        }
        if let Some(refs) = &f.reference {
            let label = field(f.reference_label.as_deref().unwrap_or("reference"));
            for (x, y) in refs {
                let _ = writeln!(table, "{label},{x},{y},,");
            }
        }
        std::fs::write(dir.join(format!("{}.csv", f.name)), table)
            .map_err(|e| format!("cannot write figure {}: {e}", f.name))?;
        let unit = results
            .axes
            .iter()
            .find(|a| a.name == f.x)
            .and_then(|a| a.values.first())
            .map_or("", |v| unit_of(v));
        let chart = qlog_analysis::xy::XyChart {
            title: f.title.clone().unwrap_or_else(|| f.name.clone()),
            x_desc: format!("{}{unit}", f.x),
            y_desc: f.y.clone(),
            series,
            reference: f.reference.clone().map(|r| {
                (
                    f.reference_label
                        .clone()
                        .unwrap_or_else(|| "reference".into()),
                    r,
                )
            }),
            log_x: f.log_x,
        };
        match qlog_analysis::xy::draw(&chart, 900, 480) {
            Ok(svg) => std::fs::write(dir.join(format!("{}.svg", f.name)), svg)
                .map_err(|e| format!("cannot write figure {}: {e}", f.name))?,
            Err(e) => return Err(format!("figure {}: {e}", f.name)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::field;
    use super::metric;
    use super::RunResult;
    use super::WorkloadResult;
    use crate::sweep::results::FlowResult;
    use lbe_workload::figures::WorkloadFigures;

    /// Flows: cbr, bulk a, cbr, bulk b: flow2 is a, flow4 is b.
    #[test]
    fn flow_n_names_the_scenarios_nth_flow_whatever_its_kind() {
        let bulk = |name: &str, goodput_bps: f64| FlowResult {
            name: name.into(),
            cc: "cubic".into(),
            goodput_bps,
            share: None,
            queue_mean_ms: None,
            queue_p95_ms: None,
            lost_packets: 0,
            took_s: None,
            steady_s: None,
        };
        let cbr = |flow: usize, goodput_bps: f64| WorkloadResult {
            flow,
            name: format!("cbr{flow}"),
            kind: "cbr".into(),
            figures: WorkloadFigures::Cbr {
                goodput_bps,
                sent_packets: 10,
                received_packets: 10,
                lost_packets: 0,
                loss: 0.0,
            },
            baseline: None,
            harm: None,
            samples: Vec::new(),
            baseline_samples: None,
        };
        let r = RunResult {
            index: 0,
            params: Default::default(),
            utilization: None,
            utilization_of_max: None,
            jain_index: None,
            refill_s: None,
            flows: vec![bulk("a", 2e6), bulk("b", 4e6)],
            workloads: vec![cbr(1, 1e6), cbr(3, 3e6)],
        };
        assert_eq!(r.bulk_positions(), [2, 4]);
        let m = |y: &str| metric(&r, y);
        assert_eq!(m("flow1.goodput_bps"), Some(1e6));
        assert_eq!(m("flow2.goodput_mbps"), Some(2.0));
        assert_eq!(m("flow3.goodput_bps"), Some(3e6));
        assert_eq!(m("flow4.goodput_mbps"), Some(4.0));
        assert_eq!(m("flow5.goodput_mbps"), None);
        let csv = super::csv(&super::Results {
            sweep: "s".into(),
            mode: "sim".into(),
            engine: Some("quiche".into()),
            runs_total: 1,
            axes: Vec::new(),
            figures: Vec::new(),
            shard: None,
            runs: vec![r],
        });
        let header = csv.lines().next().unwrap();
        assert!(
            header.contains(",flow2.cc,") && header.contains(",flow4.cc,"),
            "{header}"
        );
        assert!(!header.contains(",flow1.cc,"), "{header}");
    }

    #[test]
    fn csv_fields_with_commas_or_quotes_are_quoted() {
        assert_eq!(field("ledbatpp"), "ledbatpp");
        assert_eq!(
            field("ledbat:target=5ms,decrease_gain=10"),
            "\"ledbat:target=5ms,decrease_gain=10\""
        );
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
    }
}
