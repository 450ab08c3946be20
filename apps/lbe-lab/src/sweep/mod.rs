//! Sweeps: a grid of scenarios run in the simulator (or in real time), with
//! results that shard across machines and merge back.
//!
//! A sweep file is a scenario file (see [`crate::scenario`]) in which any
//! value of `[link]`, `[analysis]` or a `[[flow]]` may be a list: the grid
//! is every combination of the lists. `seeds = N` (or a list) repeats each
//! combination with seeds 1..=N. `[[figure]]` tables say what to plot.
//!
//! ```toml
//! name = "solo-rate-vs-rtt"
//! seeds = 8
//! [link]
//! rate = "20mbit"
//! rtt = ["10ms", "20ms", "50ms"]
//! buffer = ["500ms", "30ms"]
//! [[flow]]
//! cc = "ledbatpp"
//! stop = "300s"
//! [[figure]]
//! name = "rate-vs-rtt"
//! x = "link.rtt"              # an axis
//! y = "flow1.goodput_mbps"    # a metric (below)
//! series = ["link.buffer"]    # one line per value (default: the other axes)
//! title = "LEDBAT++ alone"
//! log_x = true
//! reference = [[10, 18.0], [20, 18.1]]   # the paper's points, same units
//! reference_label = "seed 000 Fig. 2"
//! where = { "link.buffer" = "500ms" }    # only these runs (optional)
//! ```
//!
//! Axes are named `link.KEY`, `analysis.KEY`, `flowN.KEY` (N from 1) and
//! `seed`. Metrics: `utilization`, `utilization_of_max`, `jain_index`,
//! `total_goodput_mbps`, `refill_s` (with `[analysis] refill_after`:
//! seconds from then until the bulk flows still running took the link
//! back), and per bulk flow `flowN.goodput_mbps`,
//! `flowN.share`, `flowN.queue_mean_ms`, `flowN.queue_p95_ms`,
//! `flowN.lost_packets`, `flowN.took_s` (a flow of `bytes` that finished:
//! seconds from its start to its last byte acknowledged), `flowN.steady_s`
//! (with `[analysis] steady_queue`: seconds from its start to its steady
//! state); per workload flow (web, ping, video, cbr) the
//! dotted keys of its `summary.json` figures, `flowN.fct_s.p95`,
//! `flowN.added_delay_ms.p95`, `flowN.stall_s`, and with `--baseline`
//! `flowN.baseline.…` and `flowN.harm.…` (a wrong key is refused with the
//! list of the flow's keys).
//!
//! A whole sweep (or a merge of its shards) also writes `report.html`:
//! its axes, its figures and, with workload flows, a foreground section
//! of CDFs with one line per bulk controller ([`sweep_sections`]), drawn
//! from the samples each run keeps in `results.json` (a web flow's
//! completion times, a ping flow's added delays).
//!
//! Runs are numbered in grid order (the last axis, `seed`, fastest).
//! `--shard I/N` runs those whose number is I modulo N (I from 0, as
//! Kubernetes' `JOB_COMPLETION_INDEX`; a Slurm array passes
//! `$SLURM_ARRAY_TASK_ID`), and [`merge`] puts shards back together: the
//! merged `results.json` is byte for byte the unsharded one.
//!
//! The parts, each built on those before it: `spec` (the axes and
//! `[[figure]]`s a file declares and `results.json` repeats), `results`
//! (`results.json`), `metrics` (a figure's metric: its name checked, its
//! value in a run), `grid` (the file read and checked, each point of its
//! grid a scenario), `report` (`report.html`), `output` (what a sweep
//! writes), `merge` (shards put back together) and `exec` (running the
//! points).

mod exec;
mod grid;
mod merge;
mod metrics;
mod output;
mod report;
mod results;
mod spec;

pub use exec::run;
pub use exec::run_sim;
pub use exec::Baselines;
pub use exec::Options;
pub use grid::load;
pub use grid::parse;
pub use grid::Sweep;
pub use merge::merge;
pub use metrics::metric;
pub use output::csv;
pub use output::figure_points;
pub use output::numeric;
pub use report::report;
pub use report::sweep_sections;
pub use report::WITHOUT_BULK;
pub use results::FlowResult;
pub use results::Results;
pub use results::RunResult;
pub use results::Shard;
pub use results::WorkloadResult;
pub use spec::Axis;
pub use spec::FigureSpec;
