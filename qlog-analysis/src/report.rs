//! One self-contained HTML page for a run directory: the scenario (from
//! `summary.json` and/or a scenario `.toml`), the figures across flows, a
//! table of figures, and every plot inline as SVG.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::analysis::{self, Analysis, FlowInput, Options};
use crate::error::{Error, Result, Warning};
use crate::plot::{self, PlotOptions};
use crate::units::{format_bytes, format_rate};

/// What a run directory holds.
#[derive(Debug, Clone, Default)]
pub struct RunDir {
    /// The run directory.
    pub dir: PathBuf,
    /// `summary.json`, parsed (as written by `lbe-lab`).
    pub summary: Option<serde_json::Value>,
    /// The scenario file: its path, text and parsed table.
    pub scenario: Option<(PathBuf, String, Option<toml::Table>)>,
    /// The qlog files to analyse.
    pub qlogs: Vec<PathBuf>,
}

fn is_qlog(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    name.ends_with(".sqlog") || name.ends_with(".qlog")
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if depth > 0 {
                walk(&p, depth - 1, out);
            }
        } else if is_qlog(&p) {
            out.push(p);
        }
    }
}

/// Look at a run directory: `summary.json`, the first `*.toml`, the qlogs
/// (those `summary.json` lists if it lists any, else every `*.sqlog` /
/// `*.qlog` up to three levels down).
pub fn scan_dir(dir: &Path) -> Result<RunDir> {
    let meta = std::fs::metadata(dir).map_err(|source| Error::Open {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(Error::Invalid(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let mut run = RunDir {
        dir: dir.to_path_buf(),
        ..Default::default()
    };
    let summary_path = dir.join("summary.json");
    if summary_path.exists() {
        let text = std::fs::read_to_string(&summary_path).map_err(|source| Error::Read {
            path: summary_path.clone(),
            source,
        })?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Malformed {
            path: summary_path.clone(),
            line: e.line() as u64,
            message: format!("bad summary.json: {e}"),
        })?;
        run.summary = Some(v);
    }
    let mut tomls: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|source| Error::Read {
            path: dir.to_path_buf(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    tomls.sort();
    if let Some(p) = tomls.into_iter().next() {
        let text = std::fs::read_to_string(&p).map_err(|source| Error::Read {
            path: p.clone(),
            source,
        })?;
        let table = text.parse::<toml::Table>().ok();
        run.scenario = Some((p, text, table));
    }
    // qlogs named by summary.json, if present there.
    if let Some(flows) = run
        .summary
        .as_ref()
        .and_then(|s| s.get("flows"))
        .and_then(|f| f.as_array())
    {
        for f in flows {
            if let Some(q) = f.get("qlog").and_then(|q| q.as_str()) {
                let p = PathBuf::from(q);
                let candidates = [
                    p.clone(),
                    dir.join(&p),
                    dir.join(p.file_name().unwrap_or_default()),
                ];
                if let Some(found) = candidates.into_iter().find(|c| c.is_file()) {
                    run.qlogs.push(found);
                }
            }
        }
    }
    if run.qlogs.is_empty() {
        walk(dir, 3, &mut run.qlogs);
    }
    Ok(run)
}

fn num(v: Option<&serde_json::Value>) -> Option<f64> {
    v.and_then(|x| x.as_f64())
}

fn toml_str<'a>(t: &'a toml::Table, section: &str, key: &str) -> Option<&'a str> {
    t.get(section)?.as_table()?.get(key)?.as_str()
}

/// The window and link rate a run directory implies (summary.json first,
/// then the scenario's `[analysis]` and `[link]`).
pub fn options_for(run: &RunDir) -> Options {
    let mut o = Options::default();
    if let Some(s) = &run.summary {
        o.from_s = num(s.pointer("/window/from_s"));
        o.to_s = num(s.pointer("/window/to_s"));
        o.link_rate_bps = num(s.pointer("/link/rate_bps"));
    }
    if let Some((_, _, Some(t))) = &run.scenario {
        let dur = |k| toml_str(t, "analysis", k).and_then(|v| crate::units::parse_duration(v).ok());
        o.from_s = o.from_s.or_else(|| dur("from"));
        o.to_s = o.to_s.or_else(|| dur("to"));
        o.link_rate_bps = o
            .link_rate_bps
            .or_else(|| toml_str(t, "link", "rate").and_then(|v| crate::units::parse_rate(v).ok()));
    }
    o
}

/// HTML-escape text.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const CSS: &str = r#"
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1d1d1f;
       max-width: 1100px; margin: 24px auto; padding: 0 20px; line-height: 1.45; background: #fff; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 20px; margin-top: 34px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.sub { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 10px 0; font-size: 14px; }
th, td { border: 1px solid #d8d8d8; padding: 4px 9px; text-align: right; }
th { background: #f3f5f8; }
td.l, th.l { text-align: left; }
.kv td:first-child { text-align: left; color: #444; background: #fafafa; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 10px; font-size: 13px; overflow-x: auto; }
h1, p { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
figure { margin: 22px 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
/* On a phone's width a figure scaled to the page would draw its 10-11 px
   labels at 4 px: keep it at its own size and let the figure scroll. */
@media (max-width: 760px) { figure svg { max-width: none; } }
figcaption { font-size: 14px; color: #444; margin-top: 4px; }
.warn { color: #8a5300; font-size: 14px; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin-right: 6px; }
"#;

const SWATCHES: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn opt_ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "–".into())
}

fn flows_table(a: &Analysis, out: &mut String) {
    out.push_str(
        "<div class=scroll><table><tr><th class=l>flow</th><th class=l>role</th><th>goodput</th><th>share</th><th>bytes</th>\
         <th>RTT min / mean / p95 / p99 (ms)</th><th>RTT above base mean / p95 (ms)</th><th>lost pkts</th>\
         <th>slowdowns</th><th>in Jain</th></tr>\n",
    );
    for f in &a.flows {
        let s = &f.summary;
        let _ = writeln!(
            out,
            "<tr><td class=l><span class=swatch style=\"background:{}\"></span>{}</td><td class=l>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{} / {} / {} / {}</td><td>{} / {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            SWATCHES[f.index % SWATCHES.len()],
            esc(&f.label),
            f.role,
            esc(&format_rate(s.goodput_bps)),
            f.share.map(|x| format!("{:.1}%", x * 100.0)).unwrap_or_else(|| "–".into()),
            esc(&format_bytes(s.bytes)),
            opt_ms(s.rtt_ms.min),
            opt_ms(s.rtt_ms.mean),
            opt_ms(s.rtt_ms.p95),
            opt_ms(s.rtt_ms.p99),
            opt_ms(s.queuing_delay_ms.mean),
            opt_ms(s.queuing_delay_ms.p95),
            s.lost_packets,
            f.slowdowns,
            if f.active_whole_window { "yes" } else { "no" },
        );
    }
    out.push_str("</table></div>\n");
}

/// Build the report page for a run directory. `overrides` replace what the
/// directory implies (window, link rate) when set.
pub fn build(
    dir: &Path,
    overrides: &Options,
    plot_opts: &PlotOptions,
    sections: &[Section],
) -> Result<(String, Vec<Warning>)> {
    let run = scan_dir(dir)?;
    if run.qlogs.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: no .sqlog or .qlog files found",
            dir.display()
        )));
    }
    let mut opts = options_for(&run);
    opts.from_s = overrides.from_s.or(opts.from_s);
    opts.to_s = overrides.to_s.or(opts.to_s);
    opts.link_rate_bps = overrides.link_rate_bps.or(opts.link_rate_bps);
    opts.time_base = overrides.time_base;
    let inputs: Vec<FlowInput> = run.qlogs.iter().map(FlowInput::new).collect();
    let a = analysis::analyze(inputs, &opts)?;
    let source = format!("{} qlog file(s)", run.qlogs.len());
    render(dir, &run, a, &source, plot_opts, sections)
}

/// Build the report page for a run whose flows were analysed in memory (a
/// simulator's): `dir` holds its `summary.json` and `scenario.toml`, which
/// the page shows as for a real run.
pub fn build_from_analysis(
    dir: &Path,
    a: Analysis,
    source: &str,
    plot_opts: &PlotOptions,
    sections: &[Section],
) -> Result<(String, Vec<Warning>)> {
    let run = scan_dir(dir)?;
    render(dir, &run, a, source, plot_opts, sections)
}

/// A section a caller adds to the report, after the figures (the lab's
/// foreground workloads): its anchor, heading and HTML body (the caller
/// escapes what it puts in).
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// Its anchor (`report.html#ID`).
    pub id: String,
    /// Its heading.
    pub title: String,
    /// Its body, HTML as it is written into the page.
    pub html: String,
}

/// A page's start, up to and including `<body>`, in the report's style:
/// for the run report and for pages built of [`Section`]s (a sweep's).
/// `title` is text (escaped here).
pub fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{}</style></head><body>\n",
        esc(title),
        CSS
    )
}

/// Appends `sections` as the report writes them: each an `<h2>` with its
/// anchor, then its body.
pub fn write_sections(out: &mut String, sections: &[Section]) {
    for sec in sections {
        let _ = writeln!(
            out,
            "<h2 id=\"{}\">{}</h2>\n{}",
            esc(&sec.id),
            esc(&sec.title),
            sec.html
        );
    }
}

fn render(
    dir: &Path,
    run: &RunDir,
    mut a: Analysis,
    source: &str,
    plot_opts: &PlotOptions,
    sections: &[Section],
) -> Result<(String, Vec<Warning>)> {
    let all = a.flows.len();
    let senders = a.sender_indices();
    let dropped = all - senders.len();
    a.retain_flows(&senders);
    let figures = plot::figures(&a, None, plot_opts)?;

    let name = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    let mut h = page_start(&format!("{name} – qlog-analysis report"));
    let _ = writeln!(h, "<h1>Run report: {}</h1>", esc(&name));
    let _ = writeln!(
        h,
        "<p class=sub>{} flow(s) from {}{}; figures computed by qlog-analysis over the window below.</p>",
        a.flows.len(),
        esc(source),
        if dropped > 0 { format!(", {dropped} receiver-side trace(s) left out") } else { String::new() }
    );

    // Scenario.
    h.push_str("<h2 id=scenario>Scenario</h2>\n<div class=scroll><table class=kv>\n");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=l>{}</td></tr>",
            esc(k),
            esc(&v)
        );
    };
    if let Some(s) = &run.summary {
        if let Some(r) = num(s.pointer("/link/rate_bps")) {
            kv("link rate", format_rate(r));
        }
        // lbe-lab's `emulated_rtt_ms` (`rtt_ms` in summaries before it).
        let rtt = s
            .pointer("/link/emulated_rtt_ms")
            .or(s.pointer("/link/rtt_ms"));
        if let Some(r) = num(rtt) {
            kv("base RTT", format!("{r} ms"));
        }
        if let Some(b) = num(s.pointer("/link/buffer_ms")) {
            kv("buffer", format!("{b} ms"));
        }
    } else if let Some((_, _, Some(t))) = &run.scenario {
        for key in ["rate", "rtt", "buffer", "loss"] {
            if let Some(v) = t.get("link").and_then(|l| l.get(key)) {
                kv(
                    &format!("link {key}"),
                    v.to_string().trim_matches('"').to_string(),
                );
            }
        }
    }
    kv(
        "window",
        format!(
            "{:.2} s – {:.2} s ({:.2} s)",
            a.window.from_s,
            a.window.to_s,
            a.window.duration_s()
        ),
    );
    kv("total goodput", format_rate(a.total_goodput_bps));
    kv(
        "utilisation",
        a.utilization
            .map(|u| format!("{u:.3}"))
            .unwrap_or_else(|| "– (link rate unknown)".into()),
    );
    if let (Some(m), Some(u)) = (a.max_goodput_bps, a.utilization_of_max) {
        kv(
            "utilisation of the largest goodput",
            format!(
                "{u:.3} (the link carries at most {} of goodput)",
                format_rate(m)
            ),
        );
    }
    kv(
        "Jain's fairness index",
        a.jain_index
            .map(|j| {
                format!(
                    "{j:.3} over {} flow(s) active for the whole window",
                    a.jain_flows.len()
                )
            })
            .unwrap_or_else(|| "– (no flow active for the whole window)".into()),
    );
    if let Some(s) = &run.summary {
        if let (Some(u), Some(j)) = (num(s.get("utilization")), num(s.get("jain_index"))) {
            kv(
                "summary.json says",
                format!("utilisation {u:.3}, Jain {j:.3}"),
            );
        }
    }
    h.push_str("</table></div>\n");
    flows_table(&a, &mut h);
    if let Some((p, text, _)) = &run.scenario {
        let _ = writeln!(
            h,
            "<p>Scenario file <code>{}</code>:</p><pre>{}</pre>",
            esc(&p.file_name().unwrap_or_default().to_string_lossy()),
            esc(text.trim_end())
        );
    }
    if !a.warnings.is_empty() {
        h.push_str("<p class=warn>Warnings:<br>");
        for w in &a.warnings {
            let _ = write!(h, "{}<br>", esc(&w.to_string()));
        }
        h.push_str("</p>\n");
    }

    // Table of figures.
    h.push_str("<h2 id=figures>Figures</h2>\n<div class=scroll><table><tr><th>#</th><th class=l>figure</th><th class=l>shows</th></tr>\n");
    for (i, f) in figures.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=l><a href=\"#fig-{}\">{}</a></td><td class=l>{}</td></tr>",
            i + 1,
            esc(&f.name),
            esc(&f.title),
            esc(&f.caption)
        );
    }
    h.push_str("</table></div>\n");
    for (i, f) in figures.iter().enumerate() {
        let svg = f.svg.trim_start_matches(|c| c != '<');
        let svg = match svg.find("<svg") {
            Some(k) => &svg[k..],
            None => svg,
        };
        let _ = writeln!(
            h,
            "<figure id=\"fig-{}\">{}\n<figcaption><b>Figure {}.</b> {}</figcaption></figure>",
            esc(&f.name),
            svg,
            i + 1,
            esc(&f.caption)
        );
    }
    write_sections(&mut h, sections);
    let files: Vec<String> = a
        .flows
        .iter()
        .map(|f| format!("{}: {}", esc(&f.label), esc(&f.qlog.display().to_string())))
        .collect();
    let _ = writeln!(
        h,
        "<h2 id=sources>Sources</h2><p style=\"font-size:13px\">{}</p>",
        files.join("<br>")
    );
    h.push_str("</body></html>\n");
    Ok((h, a.warnings.clone()))
}
