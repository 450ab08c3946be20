//! `docs/data/NAME.csv` from the sweeps' `results.json`: the rows a
//! table shows, each the mean of its runs' metrics.

use std::collections::HashMap;

use crate::docs_tables::csv::Csv;
use crate::docs_tables::spec::RowsSpec;
use crate::sweep::Results;
use crate::sweep::RunResult;

/// A sweep's axes by name, for an error that lists them.
fn axis_names(res: &Results) -> String {
    res.axes
        .iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Run `r`'s value of key `key`: its axis value, or for `flowN.cc` (a
/// column of `results.csv`) the bulk flow's controller when it is fixed.
fn key_value(r: &RunResult, key: &str) -> Option<String> {
    if let Some(v) = r.params.get(key) {
        return Some(v.clone());
    }
    let n: usize = key
        .strip_suffix(".cc")?
        .strip_prefix("flow")?
        .parse()
        .ok()?;
    let i = r.bulk_positions().iter().position(|&p| p == n)?;
    r.flows.get(i).map(|f| f.cc.clone())
}

/// The `[reference]` of a table: the keys a run and its reference share,
/// and the reference sweeps' results.
pub struct Reference<'a> {
    pub on: &'a [String],
    pub results: &'a [Results],
}

/// Each reference run by its values of `on`.
struct RefIndex<'a> {
    on: Vec<String>,
    runs: HashMap<Vec<String>, &'a RunResult>,
}

impl<'a> RefIndex<'a> {
    fn new(reference: Option<&Reference<'a>>) -> Result<Self, String> {
        let Some(reference) = reference else {
            return Ok(RefIndex {
                on: Vec::new(),
                runs: HashMap::new(),
            });
        };
        let mut runs: HashMap<Vec<String>, &'a RunResult> = HashMap::new();
        for res in reference.results {
            for r in &res.runs {
                let key = on_values(r, reference.on, res)?;
                if runs.contains_key(&key) {
                    return Err(format!(
                        "reference sweep '{}': two runs with {} (its 'on' keys must tell its runs apart)",
                        res.sweep,
                        describe(reference.on, &key)
                    ));
                }
                runs.insert(key, r);
            }
        }
        Ok(RefIndex {
            on: reference.on.to_vec(),
            runs,
        })
    }

    /// `r`'s reference run (checked to exist before any is asked for).
    fn of(&self, r: &RunResult) -> Option<&'a RunResult> {
        let key: Vec<String> = self
            .on
            .iter()
            .map(|k| key_value(r, k))
            .collect::<Option<_>>()?;
        self.runs.get(&key).copied()
    }
}

/// Run `r`'s values of `keys` (of sweep `res`, for the error).
fn on_values(r: &RunResult, keys: &[String], res: &Results) -> Result<Vec<String>, String> {
    keys.iter()
        .map(|k| {
            key_value(r, k).ok_or_else(|| {
                format!(
                    "sweep '{}': key '{k}' is neither one of its axes ({}) nor a bulk flow's flowN.cc",
                    res.sweep,
                    axis_names(res)
                )
            })
        })
        .collect()
}

/// `k1 = v1, k2 = v2`.
fn describe(keys: &[String], values: &[String]) -> String {
    keys.iter()
        .zip(values)
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Metric `m` of run `r`: a sweep's metric, `ref.M` (M of `r`'s reference
/// run) or `A/B` (A over B, each of those; none when B is 0).
fn value(r: &RunResult, m: &str, refs: &RefIndex) -> Option<f64> {
    if let Some((a, b)) = m.split_once('/') {
        let (a, b) = (value(r, a, refs)?, value(r, b, refs)?);
        return (b != 0.0).then(|| a / b);
    }
    match m.strip_prefix("ref.") {
        Some(m) => crate::sweep::metric(refs.of(r)?, m),
        None => crate::sweep::metric(r, m),
    }
}

/// The rows `rows` keeps of `results` (one per sweep, in the table's
/// order): the keys, the mean of each metric over the row's runs (empty
/// when no run has it) and `runs`, the number of runs. With a
/// `reference`, every kept run must have its reference run.
pub fn extract(
    rows: &RowsSpec,
    results: &[Results],
    reference: Option<&Reference>,
) -> Result<Csv, String> {
    let refs = RefIndex::new(reference)?;
    let mut groups: Vec<(Vec<String>, Vec<&RunResult>)> = Vec::new();
    for res in results {
        if res.shard.is_some() || res.runs.len() != res.runs_total {
            return Err(format!(
                "sweep '{}': {} of its {} runs (a shard: merge the shards first, `lbe-lab merge`)",
                res.sweep,
                res.runs.len(),
                res.runs_total
            ));
        }
        for axis in rows.filter.keys() {
            if !res.axes.iter().any(|a| &a.name == axis) {
                return Err(format!(
                    "sweep '{}': 'where' names '{axis}', not one of its axes ({})",
                    res.sweep,
                    axis_names(res)
                ));
            }
        }
        for r in &res.runs {
            if !rows.filter.iter().all(|(a, v)| r.params.get(a) == Some(v)) {
                continue;
            }
            let key = on_values(r, &rows.keys, res)?;
            if reference.is_some() && refs.of(r).is_none() {
                return Err(format!(
                    "sweep '{}': run {} ({}) has no run of the reference sweeps with the same values",
                    res.sweep,
                    r.index,
                    describe(&refs.on, &on_values(r, &refs.on, res)?)
                ));
            }
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, runs)) => runs.push(r),
                None => groups.push((key, vec![r])),
            }
        }
    }
    if groups.is_empty() {
        return Err("no run of the sweeps passes 'where'".into());
    }
    for m in &rows.metrics {
        let any = groups
            .iter()
            .flat_map(|(_, runs)| runs)
            .any(|r| value(r, m, &refs).is_some());
        if !any {
            return Err(format!(
                "metric '{m}' has no value in any run (a sweep's metric name: utilization, utilization_of_max, jain_index, total_goodput_mbps, refill_s, flowN.goodput_mbps, flowN.share, flowN.queue_mean_ms, flowN.queue_p95_ms, flowN.lost_packets, flowN.took_s, flowN.steady_s, or a workload flow's figure)"
            ));
        }
    }
    // Grouped by `order_by`: stable, each value where it first appears.
    for k in rows.order_by.iter().rev() {
        let col = rows.keys.iter().position(|x| x == k).expect("checked");
        let mut seen: Vec<String> = Vec::new();
        for (key, _) in &groups {
            if !seen.contains(&key[col]) {
                seen.push(key[col].clone());
            }
        }
        groups.sort_by_key(|(key, _)| seen.iter().position(|v| *v == key[col]));
    }
    // Each group's figures: per metric its mean (and with `range` its
    // lowest and highest), then its runs.
    let figures = |runs: &[&RunResult]| -> Vec<String> {
        let mut row = Vec::new();
        for m in &rows.metrics {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|r| value(r, m, &refs))
                .filter(|v| v.is_finite())
                .collect();
            let shown = |v: f64| match values.is_empty() {
                true => String::new(),
                false => format!("{v}"),
            };
            row.push(shown(values.iter().sum::<f64>() / values.len() as f64));
            if rows.range {
                row.push(shown(values.iter().copied().fold(f64::INFINITY, f64::min)));
                row.push(shown(
                    values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ));
            }
        }
        row.push(runs.len().to_string());
        row
    };
    let mut names: Vec<String> = Vec::new();
    for m in &rows.metrics {
        names.push(m.clone());
        if rows.range {
            names.push(format!("{m}.min"));
            names.push(format!("{m}.max"));
        }
    }
    names.push("runs".into());
    if rows.pivot.is_empty() {
        let mut header: Vec<String> = rows.keys.clone();
        header.extend(names);
        let out = groups
            .into_iter()
            .map(|(key, runs)| {
                let mut row = key;
                row.extend(figures(&runs));
                row
            })
            .collect();
        return Ok(Csv { header, rows: out });
    }
    // Pivoted: a row per value of the other keys, the figures of each
    // value of the pivot keys side by side (`METRIC@VALUE`).
    let is_pivot: Vec<bool> = rows.keys.iter().map(|k| rows.pivot.contains(k)).collect();
    let split = |key: &[String]| -> (Vec<String>, String) {
        let (mut row, mut col) = (Vec::new(), Vec::new());
        for (v, p) in key.iter().zip(&is_pivot) {
            match p {
                true => col.push(rows.pivot_names.get(v).unwrap_or(v).clone()),
                false => row.push(v.clone()),
            }
        }
        (row, col.join(","))
    };
    let mut values: Vec<String> = Vec::new();
    let mut row_keys: Vec<Vec<String>> = Vec::new();
    for (key, _) in &groups {
        let (r, c) = split(key);
        if !values.contains(&c) {
            values.push(c);
        }
        if !row_keys.contains(&r) {
            row_keys.push(r);
        }
    }
    let mut header: Vec<String> = rows
        .keys
        .iter()
        .zip(&is_pivot)
        .filter(|(_, p)| !**p)
        .map(|(k, _)| k.clone())
        .collect();
    for v in &values {
        header.extend(names.iter().map(|n| format!("{n}@{v}")));
    }
    let mut out: Vec<Vec<String>> = row_keys
        .iter()
        .map(|r| {
            let mut row = r.clone();
            row.resize(header.len(), String::new());
            row
        })
        .collect();
    let width = names.len();
    for (key, runs) in &groups {
        let (r, c) = split(key);
        let i = row_keys.iter().position(|x| *x == r).expect("collected");
        let at =
            row_keys[i].len() + values.iter().position(|x| *x == c).expect("collected") * width;
        for (j, f) in figures(runs).into_iter().enumerate() {
            out[i][at + j] = f;
        }
    }
    Ok(Csv { header, rows: out })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Axis;
    use crate::sweep::FlowResult;

    fn flow(cc: &str, goodput_bps: f64, share: f64) -> FlowResult {
        FlowResult {
            name: cc.into(),
            cc: cc.into(),
            goodput_bps,
            share: Some(share),
            queue_mean_ms: None,
            queue_p95_ms: None,
            lost_packets: 0,
            took_s: None,
            steady_s: None,
        }
    }

    fn run(index: usize, buffer: &str, seed: &str, u: f64, flows: Vec<FlowResult>) -> RunResult {
        RunResult {
            index,
            params: [
                ("link.buffer".to_string(), buffer.to_string()),
                ("seed".to_string(), seed.to_string()),
            ]
            .into(),
            utilization: None,
            utilization_of_max: Some(u),
            jain_index: None,
            refill_s: None,
            flows,
            workloads: Vec::new(),
        }
    }

    fn results(name: &str, runs: Vec<RunResult>) -> Results {
        Results {
            sweep: name.into(),
            mode: "sim".into(),
            engine: Some("quiche".into()),
            runs_total: runs.len(),
            axes: vec![
                Axis {
                    name: "link.buffer".into(),
                    values: vec!["100ms".into(), "50ms".into()],
                },
                Axis {
                    name: "seed".into(),
                    values: vec!["1".into(), "2".into()],
                },
            ],
            figures: Vec::new(),
            shard: None,
            runs,
        }
    }

    fn spec(keys: &[&str], metrics: &[&str], order_by: &[&str]) -> RowsSpec {
        RowsSpec {
            keys: keys.iter().map(|s| s.to_string()).collect(),
            metrics: metrics.iter().map(|s| s.to_string()).collect(),
            filter: Default::default(),
            order_by: order_by.iter().map(|s| s.to_string()).collect(),
            range: false,
            pivot: Vec::new(),
            pivot_names: Default::default(),
        }
    }

    #[test]
    fn rows_average_the_seeds_and_interleave_two_sweeps_by_order_by() {
        // (index, buffer, seed, utilization, LEDBAT's and Reno's goodput
        // and share)
        let pair_runs = [
            (0, "100ms", "1", 1.0, [(1e6, 0.25), (3e6, 0.75)]),
            (1, "100ms", "2", 0.5, [(2e6, 0.5), (2e6, 0.5)]),
            (2, "50ms", "1", 0.5, [(1e6, 0.5), (1e6, 0.5)]),
            (3, "50ms", "2", 0.5, [(1e6, 0.5), (1e6, 0.5)]),
        ];
        let pair = results(
            "pair",
            pair_runs
                .iter()
                .map(|&(index, buffer, seed, utilization, [ledbat, reno])| {
                    let flows = vec![
                        flow("ledbat", ledbat.0, ledbat.1),
                        flow("reno", reno.0, reno.1),
                    ];
                    run(index, buffer, seed, utilization, flows)
                })
                .collect(),
        );
        let alone = results(
            "alone",
            vec![
                run(0, "100ms", "1", 1.0, vec![flow("reno", 4e6, 1.0)]),
                run(1, "50ms", "1", 0.75, vec![flow("reno", 3e6, 1.0)]),
            ],
        );
        let keys = ["link.buffer", "flow1.cc"];
        let metrics = ["utilization_of_max", "flow2.share", "flow1.goodput_mbps"];
        let csv = extract(
            &spec(&keys, &metrics, &["link.buffer"]),
            &[pair, alone],
            None,
        )
        .unwrap();
        assert_eq!(
            csv.to_text(),
            "link.buffer,flow1.cc,utilization_of_max,flow2.share,flow1.goodput_mbps,runs\n\
             100ms,ledbat,0.75,0.625,1.5,2\n\
             100ms,reno,1,,4,1\n\
             50ms,ledbat,0.5,0.5,1,2\n\
             50ms,reno,0.75,,3,1\n"
        );
    }

    #[test]
    fn a_pivot_puts_each_value_in_columns_with_the_lowest_and_highest() {
        let pair = results(
            "pair",
            [
                ("100ms", "1", 1.0),
                ("100ms", "2", 0.5),
                ("50ms", "1", 0.5),
                ("50ms", "2", 0.25),
            ]
            .iter()
            .enumerate()
            .map(|(i, &(buffer, seed, u))| run(i, buffer, seed, u, vec![flow("ledbat", 1e6, 1.0)]))
            .collect(),
        );
        let alone = results(
            "alone",
            vec![
                run(0, "100ms", "1", 0.75, vec![flow("reno", 4e6, 1.0)]),
                run(1, "50ms", "1", 0.5, vec![flow("reno", 3e6, 1.0)]),
                run(2, "100ms", "1", 0.125, vec![flow("cubic", 3e6, 1.0)]),
            ],
        );
        let mut rows = spec(&["flow1.cc", "link.buffer"], &["utilization_of_max"], &[]);
        rows.range = true;
        rows.pivot = vec!["link.buffer".into()];
        rows.pivot_names = [("100ms".to_string(), "big".to_string())].into();
        let csv = extract(&rows, &[pair, alone], None).unwrap();
        assert_eq!(
            csv.to_text(),
            "flow1.cc,\
             utilization_of_max@big,utilization_of_max.min@big,utilization_of_max.max@big,runs@big,\
             utilization_of_max@50ms,utilization_of_max.min@50ms,utilization_of_max.max@50ms,runs@50ms\n\
             ledbat,0.75,0.5,1,2,0.375,0.25,0.5,2\n\
             reno,0.75,0.75,0.75,1,0.5,0.5,0.5,1\n\
             cubic,0.125,0.125,0.125,1,,,,\n"
        );
    }

    /// Each run's reference run shares its `on` values (here the buffer
    /// and the seed); `ref.M` is its M, `A/B` a ratio taken run by run
    /// before the mean, the lowest and the highest.
    #[test]
    fn a_reference_sweep_gives_ref_metrics_and_ratios_run_by_run() {
        let one = |i: usize, buffer: &str, seed: &str, goodput: f64| {
            run(i, buffer, seed, 1.0, vec![flow("ledbat", goodput, 1.0)])
        };
        let beside = results(
            "beside",
            vec![
                one(0, "100ms", "1", 1e6),
                one(1, "100ms", "2", 3e6),
                one(2, "50ms", "1", 2e6),
                one(3, "50ms", "2", 2e6),
            ],
        );
        let alone = results(
            "alone",
            vec![
                one(0, "50ms", "2", 8e6),
                one(1, "100ms", "1", 4e6),
                one(2, "100ms", "2", 4e6),
                one(3, "50ms", "1", 2e6),
            ],
        );
        let on = ["link.buffer".to_string(), "seed".to_string()];
        let reference = Reference {
            on: &on,
            results: std::slice::from_ref(&alone),
        };
        let metrics = [
            "flow1.goodput_mbps",
            "ref.flow1.goodput_mbps",
            "flow1.goodput_mbps/ref.flow1.goodput_mbps",
        ];
        let mut rows = spec(&["link.buffer"], &metrics, &[]);
        rows.range = true;
        let csv = extract(&rows, std::slice::from_ref(&beside), Some(&reference)).unwrap();
        assert_eq!(
            csv.to_text(),
            "link.buffer,\
             flow1.goodput_mbps,flow1.goodput_mbps.min,flow1.goodput_mbps.max,\
             ref.flow1.goodput_mbps,ref.flow1.goodput_mbps.min,ref.flow1.goodput_mbps.max,\
             flow1.goodput_mbps/ref.flow1.goodput_mbps,flow1.goodput_mbps/ref.flow1.goodput_mbps.min,flow1.goodput_mbps/ref.flow1.goodput_mbps.max,\
             runs\n\
             100ms,2,1,3,4,4,4,0.5,0.25,0.75,2\n\
             50ms,2,2,2,5,2,8,0.625,0.25,1,2\n"
        );
        // A run without its reference, and a reference that two runs share.
        let short = results("alone", alone.runs[..3].to_vec());
        let reference = Reference {
            on: &on,
            results: std::slice::from_ref(&short),
        };
        assert_eq!(
            extract(&rows, std::slice::from_ref(&beside), Some(&reference)).unwrap_err(),
            "sweep 'beside': run 2 (link.buffer = 50ms, seed = 1) has no run of the reference sweeps with the same values"
        );
        let on_buffer = ["link.buffer".to_string()];
        let reference = Reference {
            on: &on_buffer,
            results: std::slice::from_ref(&alone),
        };
        assert_eq!(
            extract(&rows, std::slice::from_ref(&beside), Some(&reference)).unwrap_err(),
            "reference sweep 'alone': two runs with link.buffer = 100ms (its 'on' keys must tell its runs apart)"
        );
    }

    #[test]
    fn shards_unknown_keys_and_metrics_are_refused() {
        let one = || {
            results(
                "s",
                vec![run(0, "100ms", "1", 0.9, vec![flow("reno", 1e6, 1.0)])],
            )
        };
        let mut shard = one();
        shard.runs_total = 4;
        assert_eq!(
            extract(
                &spec(&["seed"], &["utilization_of_max"], &[]),
                &[shard],
                None
            )
            .unwrap_err(),
            "sweep 's': 1 of its 4 runs (a shard: merge the shards first, `lbe-lab merge`)"
        );
        assert_eq!(
            extract(&spec(&["link.rtt"], &["utilization_of_max"], &[]), &[one()], None).unwrap_err(),
            "sweep 's': key 'link.rtt' is neither one of its axes (link.buffer, seed) nor a bulk flow's flowN.cc"
        );
        let e = extract(&spec(&["seed"], &["flow2.share"], &[]), &[one()], None).unwrap_err();
        assert!(
            e.starts_with("metric 'flow2.share' has no value in any run"),
            "{e}"
        );
        let mut filtered = spec(&["seed"], &["utilization_of_max"], &[]);
        filtered.filter.insert("link.rate".into(), "10mbit".into());
        assert_eq!(
            extract(&filtered, &[one()], None).unwrap_err(),
            "sweep 's': 'where' names 'link.rate', not one of its axes (link.buffer, seed)"
        );
    }
}
