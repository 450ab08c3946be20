//! The human summary table printed by `qlog-analysis summary`.

use std::fmt::Write;

use crate::analysis::Analysis;
use crate::units::{format_bytes, format_rate};

fn ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into())
}

/// Render the analysis as a plain-text table.
pub fn summary_table(a: &Analysis) -> String {
    let mut out = String::new();
    let w = &a.window;
    let _ = write!(
        out,
        "window {:.3} s .. {:.3} s ({:.3} s)",
        w.from_s,
        w.to_s,
        w.duration_s()
    );
    if let Some(r) = a.link_rate_bps {
        let _ = write!(out, ", link {}", format_rate(r));
    }
    out.push('\n');
    let header = [
        "flow",
        "role",
        "goodput",
        "share",
        "bytes",
        "rtt min/mean/p50/p95/p99 ms",
        "rtt-base mean/p95 ms",
        "lost",
        "slowdowns",
        "jain",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for f in &a.flows {
        let s = &f.summary;
        let r = &s.rtt_ms;
        rows.push(vec![
            f.label.clone(),
            f.role.to_string(),
            format_rate(s.goodput_bps),
            f.share
                .map(|x| format!("{:.1}%", x * 100.0))
                .unwrap_or_else(|| "-".into()),
            format_bytes(s.bytes),
            format!(
                "{}/{}/{}/{}/{}",
                ms(r.min),
                ms(r.mean),
                ms(r.p50),
                ms(r.p95),
                ms(r.p99)
            ),
            format!(
                "{}/{}",
                ms(s.queuing_delay_ms.mean),
                ms(s.queuing_delay_ms.p95)
            ),
            s.lost_packets.to_string(),
            f.slowdowns.to_string(),
            if f.active_whole_window { "yes" } else { "no" }.into(),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    let _ = write!(out, "total goodput {}", format_rate(a.total_goodput_bps));
    if let Some(u) = a.utilization {
        let _ = write!(out, ", utilisation {u:.3}");
    }
    if let (Some(m), Some(u)) = (a.max_goodput_bps, a.utilization_of_max) {
        let _ = write!(
            out,
            " ({u:.3} of the {} the link can carry as goodput)",
            format_rate(m)
        );
    }
    match a.jain_index {
        Some(j) => {
            let _ = write!(
                out,
                ", Jain's index {j:.3} over {} flow(s) active for the whole window",
                a.jain_flows.len()
            );
        }
        None => {
            let _ = write!(out, ", Jain's index: no flow active for the whole window");
        }
    }
    out.push('\n');
    for f in &a.flows {
        if f.state_time_s.is_empty() {
            continue;
        }
        let states: Vec<String> = f
            .state_time_s
            .iter()
            .map(|(s, t)| {
                format!(
                    "{s} {t:.2} s ({}x)",
                    f.state_entries.get(s).copied().unwrap_or(0)
                )
            })
            .collect();
        let _ = writeln!(out, "states of {}: {}", f.label, states.join(", "));
    }
    out
}
