//! `--baseline`: a scenario's workloads run again without its bulk flows,
//! and each workload flow given those figures as its `baseline` and the
//! harm; real and simulated runs and sweeps alike.

use std::path::Path;

use crate::scenario::Scenario;
use crate::workload::WorkloadSummary;

/// The scenario of a `--baseline` run: `scenario` with every bulk flow
/// removed; an error unless it has both bulk and workload flows.
pub fn baseline_scenario(scenario: &Scenario, path: &Path) -> Result<Scenario, String> {
    scenario.without_bulk().ok_or_else(|| {
        format!(
            "{}: --baseline needs both bulk flows (quic-bulk, h3) and workload flows (web, ping, video, cbr)",
            path.display()
        )
    })
}

/// Gives each workload flow of `with` its figures in `without` (matched by
/// name) as `baseline`, and the harm.
pub fn add_baseline(with: &mut Vec<WorkloadSummary>, without: Vec<WorkloadSummary>) {
    for w in without {
        if let Some(i) = with.iter().position(|f| f.name == w.name) {
            let flow = with.remove(i);
            with.insert(i, flow.with_baseline(w));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lbe_workload::figures::Echo;
    use lbe_workload::figures::WorkloadFigures;

    use super::*;

    #[test]
    fn a_baseline_adds_its_figures_and_the_harm_by_name() {
        let text = "[link]\nrate = \"20mbit\"\nrtt = \"50ms\"\nbuffer = \"500ms\"\n\
                    [[flow]]\ncc = \"cubic\"\nstop = \"30s\"\n\
                    [[flow]]\nname = \"web\"\nkind = \"web\"\narrivals = \"1/s\"\nsize = \"500kB\"\nstop = \"30s\"\n\
                    [[flow]]\nname = \"ping\"\nkind = \"ping\"\nstop = \"30s\"\n";
        let s = crate::scenario::parse(std::path::Path::new("s.toml"), text).unwrap();
        let fct = |v: &[f64]| WorkloadFigures::Web {
            fct_s: lbe_workload::figures::Fct::of(v),
            unfinished: 0,
            failed: 0,
        };
        let echo = |ms: u64| Echo {
            sent_at: Duration::from_secs(1),
            rtt: Some(Duration::from_millis(ms)),
        };
        let ping = |ms: u64| {
            WorkloadFigures::ping(
                &[echo(ms)],
                s.flows[2].rtt,
                (Duration::ZERO, Duration::from_secs(30)),
            )
        };
        let mut with = vec![
            WorkloadSummary::new(&s.flows[1], fct(&[2.0, 3.0])),
            WorkloadSummary::new(&s.flows[2], ping(150)),
        ];
        let alone = s.without_bulk().unwrap();
        add_baseline(
            &mut with,
            vec![
                WorkloadSummary::new(&alone.flows[1], ping(51)),
                WorkloadSummary::new(&alone.flows[0], fct(&[1.0, 1.5])),
            ],
        );
        let json = serde_json::to_value(&with).unwrap();
        assert_eq!(
            json[0],
            serde_json::json!({
                "id": 2, "name": "web", "kind": "web", "cc": "cubic",
                "start_s": 0.0, "stop_s": 30.0,
                "fct_s": {"n": 2, "p50": 2.0, "p95": 3.0, "p99": 3.0, "mean": 2.5},
                "unfinished": 0, "failed": 0,
                "baseline": {
                    "fct_s": {"n": 2, "p50": 1.0, "p95": 1.5, "p99": 1.5, "mean": 1.25},
                    "unfinished": 0, "failed": 0
                },
                "harm": {"fct_p95_ratio": 2.0}
            })
        );
        assert_eq!(json[1]["kind"], "ping");
        assert!(json[1].get("cc").is_none());
        assert_eq!(json[1]["added_delay_ms"]["p95"], 100.0);
        assert_eq!(json[1]["baseline"]["added_delay_ms"]["p95"], 1.0);
        assert_eq!(
            json[1]["harm"],
            serde_json::json!({"added_delay_p95_ms": 99.0})
        );
    }
}
