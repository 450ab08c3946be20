//! Merging a sweep's shards back into the whole sweep's results.

use std::path::Path;

use crate::sweep::output::write;
use crate::sweep::results::Results;

/// Combines shards: the same sweep, every run exactly once.
pub fn merge(inputs: &[impl AsRef<Path>], out: &Path) -> Result<Results, String> {
    let mut merged: Option<Results> = None;
    for dir in inputs {
        let path = dir.as_ref().join("results.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let r: Results = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a sweep's results.json: {e}", path.display()))?;
        match &mut merged {
            None => merged = Some(r),
            Some(m) => {
                if (&m.sweep, &m.mode, m.runs_total, &m.axes, &m.figures)
                    != (&r.sweep, &r.mode, r.runs_total, &r.axes, &r.figures)
                {
                    return Err(format!(
                        "{}: a different sweep ('{}', {} runs) from the first ('{}', {} runs)",
                        path.display(),
                        r.sweep,
                        r.runs_total,
                        m.sweep,
                        m.runs_total
                    ));
                }
                if m.engine != r.engine {
                    return Err(format!(
                        "{}: run on engine {} where the first shard ran on {}",
                        path.display(),
                        r.engine.as_deref().unwrap_or("none (real time)"),
                        m.engine.as_deref().unwrap_or("none (real time)")
                    ));
                }
                m.runs.extend(r.runs);
            }
        }
    }
    let mut m = merged.ok_or("merge needs at least one directory")?;
    m.runs.sort_by_key(|r| r.index);
    if let Some(w) = m.runs.windows(2).find(|w| w[0].index == w[1].index) {
        return Err(format!("run {} appears in more than one shard", w[0].index));
    }
    let have: Vec<usize> = m.runs.iter().map(|r| r.index).collect();
    let missing: Vec<usize> = (0..m.runs_total)
        .filter(|i| have.binary_search(i).is_err())
        .collect();
    if !missing.is_empty() {
        let first: Vec<String> = missing.iter().take(10).map(|i| i.to_string()).collect();
        return Err(format!(
            "{} of {} runs missing (first: {}); merge every shard",
            missing.len(),
            m.runs_total,
            first.join(", ")
        ));
    }
    m.shard = None;
    write(&m, out)?;
    Ok(m)
}
