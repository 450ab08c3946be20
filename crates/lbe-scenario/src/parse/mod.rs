//! Reading a scenario file and checking it, section by section: the link
//! ([`link`]), the flows ([`flow`], with each flow's kind in [`kind`] and
//! the workloads' settings in [`workload`]), the analysis window (and
//! its steady-state queue and refill time) and the ports. Every error names the file and
//! the line ([`source`]).

mod change;
mod flow;
mod keys;
mod kind;
mod link;
mod source;
mod workload;

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use source::Source;

use crate::model::{Flow, Link, Ports, Scenario};
use crate::netem::netem_paths;
use crate::raw::{RawAnalysis, RawPorts, RawScenario};
use toml::Spanned;

/// Reads and checks a scenario file.
pub fn load(path: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(path, &text)
}

/// A toml error's message on one line, as every error of ours (toml's can
/// span lines: "invalid string\nexpected ...").
pub fn toml_message(e: &toml::de::Error) -> String {
    let lines: Vec<&str> = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("; ")
}

/// A toml error in `text` as our one-line errors give it: `file:LINE:
/// message` ([`toml_message`]), the line where toml's span starts (1
/// without one). Scenarios, sweeps and the docs' table files share it.
pub fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> String {
    let line = e.span().map_or(1, |s| {
        Source {
            path: Path::new(file),
            text,
        }
        .line_of(s.start)
    });
    format!("{file}:{line}: {}", toml_message(e))
}

/// Checks a scenario's text; `path` only names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, String> {
    let src = Source { path, text };
    let raw: RawScenario =
        toml::from_str(text).map_err(|e| toml_error(&path.display().to_string(), text, &e))?;

    let link_span = raw.link.span();
    let raw_link = raw.link.into_inner();
    let link = link::link(&src, link_span.clone(), &raw_link)?;
    let window = window(&src, raw.analysis.as_ref())?;
    // An optional duration of `[analysis]`, `key` naming it in errors.
    let analysis_duration = |key: &str, field: fn(&RawAnalysis) -> Option<&Spanned<String>>| {
        raw.analysis
            .as_ref()
            .and_then(field)
            .map(|v| src.value(v, &format!("analysis {key}"), lbe_units::parse_duration))
            .transpose()
    };
    let steady_queue = analysis_duration("steady_queue", |a| a.steady_queue.as_ref())?;
    let refill_after = analysis_duration("refill_after", |a| a.refill_after.as_ref())?;

    if raw.flow.is_empty() {
        return Err(src.error(link_span, "the scenario has no [[flow]]"));
    }
    let flows = flow::flows(&src, &raw.flow, link.rtt, raw_link.pacing)?;
    let ports = ports(&src, link_span, raw.ports.as_ref(), &link, &flows)?;
    // A run whose every flow stops at a time ends at the last of them.
    if let Some(end) = flows.iter().map(|f| f.stop()).collect::<Option<Vec<_>>>() {
        let end = end.into_iter().max().unwrap_or_default();
        change::within_run(&src, &raw_link, &link.changes, end)?;
    }

    Ok(Scenario {
        link,
        window,
        steady_queue,
        refill_after,
        ports,
        flows,
        seed: raw.seed,
    })
}

/// The analysis window (`[analysis]`), `to` after `from`.
fn window(
    src: &Source,
    analysis: Option<&RawAnalysis>,
) -> Result<Option<(Duration, Duration)>, String> {
    Ok(match analysis {
        Some(a) => {
            let from = src.value(&a.from, "analysis from", lbe_units::parse_duration)?;
            let to = src.value(&a.to, "analysis to", lbe_units::parse_duration)?;
            if to <= from {
                return Err(src.error(a.to.span(), "analysis 'to' must be after 'from'"));
            }
            Some((from, to))
        }
        None => None,
    })
}

/// The fixed ports (`[ports]`); with both set, the server's must not be
/// among lbe-netem's ([`netem_paths`]).
fn ports(
    src: &Source,
    link_span: Range<usize>,
    raw: Option<&RawPorts>,
    link: &Link,
    flows: &[Flow],
) -> Result<Ports, String> {
    let ports = Ports {
        server: raw
            .and_then(|p| p.server.as_ref())
            .map_or(0, |p| *p.get_ref()),
        netem: raw
            .and_then(|p| p.netem.as_ref())
            .map_or(0, |p| *p.get_ref()),
    };
    if ports.server != 0 && ports.netem != 0 {
        let paths = netem_paths(link, flows).len() as u32;
        let netem_ports = u32::from(ports.netem)..u32::from(ports.netem) + paths;
        if netem_ports.contains(&u32::from(ports.server)) || netem_ports.end > 65536 {
            let span = raw
                .and_then(|p| p.server.as_ref())
                .map_or(link_span, |p| p.span());
            return Err(src.error(
                span,
                format!(
                    "ports overlap: the server's {} is among lbe-netem's {}..{} (one per base RTT of quic-bulk flows, one per h3 or workload flow)",
                    ports.server,
                    netem_ports.start,
                    netem_ports.end - 1
                ),
            ));
        }
    }
    Ok(ports)
}

#[cfg(test)]
mod tests;
