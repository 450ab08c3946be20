//! Tables in docs/ generated from committed data (`lbe-lab docs-tables`,
//! `make docs-tables`; the format is in docs/lbe-lab.md, "Tables in docs/
//! from data").
//!
//! A page marks a table's place with two lines,
//!
//! ```text
//! <!-- table: NAME -->
//! <!-- /table -->
//! ```
//!
//! and everything between them is generated from `docs/data/`:
//! `NAME.toml` (the sweeps behind the table, which of their results it
//! keeps, its columns), `NAME.csv` (the rows it shows, columns named by
//! the sweep's metric names, written by `lbe-lab docs-data` from the
//! sweeps' `results.json`), `NAME.measured.toml` (what measured them, for
//! the caption) and, where the seed paper states numbers, `NAME.seed.csv`
//! (the seed's figures as it prints them, with their `source`).
//! [`process`] regenerates every marked table of a docs directory, or
//! with `check` says which differ from their data.

pub mod csv;
mod data;
pub mod render;
pub mod spec;
pub mod template;

use std::path::Path;
use std::path::PathBuf;

pub use data::extract;
pub use data::Reference;
pub use render::Measured;

use csv::Csv;
use spec::TableSpec;

/// A table's description and data, read from a docs directory's `data/`.
#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub spec: TableSpec,
    pub data: Csv,
    pub seed: Option<Csv>,
    pub measured: Measured,
}

fn read(p: &Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

/// The description of table `name` in `data_dir` (`NAME.toml`).
pub fn load_spec(data_dir: &Path, name: &str) -> Result<TableSpec, String> {
    let p = data_dir.join(format!("{name}.toml"));
    spec::parse(&p.display().to_string(), &read(&p)?)
}

/// Table `name` from `data_dir`: its description, its data, what
/// measured it and the seed's numbers if it has them.
pub fn load_table(data_dir: &Path, name: &str) -> Result<Table, String> {
    let spec = load_spec(data_dir, name)?;
    let csv_file = |suffix: &str| -> Result<Option<Csv>, String> {
        let p = data_dir.join(format!("{name}{suffix}"));
        match p.exists() {
            false => Ok(None),
            true => Csv::parse(&p.display().to_string(), &read(&p)?).map(Some),
        }
    };
    let data = csv_file(".csv")?.ok_or_else(|| {
        format!(
            "no {} (measure it: scripts/paper-figures.sh --only {name})",
            data_dir.join(format!("{name}.csv")).display()
        )
    })?;
    let seed = csv_file(".seed.csv")?;
    let mp = data_dir.join(format!("{name}.measured.toml"));
    if !mp.exists() {
        return Err(format!(
            "no {} (written with {name}.csv by lbe-lab docs-data)",
            mp.display()
        ));
    }
    let measured: Measured = toml::from_str(&read(&mp)?)
        .map_err(|e| format!("{}: {}", mp.display(), crate::scenario::toml_message(&e)))?;
    Ok(Table {
        name: name.to_string(),
        spec,
        data,
        seed,
        measured,
    })
}

impl Table {
    /// The lines between the table's markers.
    pub fn render(&self) -> Result<Vec<String>, String> {
        render::render(
            &self.name,
            &self.spec,
            &self.data,
            self.seed.as_ref(),
            &self.measured,
        )
    }
}

const START: &str = "<!-- table: ";
const END: &str = "<!-- /table -->";

/// A marked table in a page: its name, the line of its start marker
/// (from 1) and the lines between the markers (0-based, end exclusive).
#[derive(Clone, Debug, PartialEq)]
struct Region {
    name: String,
    line: usize,
    body: std::ops::Range<usize>,
}

/// The marked tables of a page (markers in fenced code blocks are text,
/// not markers); `page` names it in errors.
fn regions(page: &str, lines: &[&str]) -> Result<Vec<Region>, String> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize)> = None;
    let mut fence = false;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        if let Some(rest) = t.strip_prefix(START) {
            let name = rest.strip_suffix("-->").map(str::trim).unwrap_or("");
            let ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
            if !ok {
                return Err(format!(
                    "{page}:{}: a table marker is `<!-- table: NAME -->` with NAME of letters, digits, '.', '_' or '-'",
                    i + 1
                ));
            }
            if let Some((n, at)) = &open {
                return Err(format!(
                    "{page}:{}: table {name} starts inside table {n} (line {at}), which has no `{END}`",
                    i + 1
                ));
            }
            open = Some((name.to_string(), i + 1));
        } else if t == END {
            let Some((name, at)) = open.take() else {
                return Err(format!("{page}:{}: `{END}` without a table marker", i + 1));
            };
            out.push(Region {
                name,
                line: at,
                body: at..i,
            });
        }
    }
    if let Some((name, at)) = open {
        return Err(format!("{page}:{at}: table {name}: no `{END}` after it"));
    }
    Ok(out)
}

/// The Markdown pages under `docs` (its subdirectories too, but not
/// `data/`), sorted.
pub fn pages(docs: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut dirs = vec![docs.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| format!("cannot list {}: {e}", d.display()))?;
        for e in entries {
            let p = e
                .map_err(|e| format!("cannot list {}: {e}", d.display()))?
                .path();
            if p.is_dir() {
                if p != docs.join("data") {
                    dirs.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The tables described in `docs/data/` (`NAME.toml`; not
/// `NAME.measured.toml` nor a lab table's `NAME.lab.toml`), sorted.
pub fn table_names(docs: &Path) -> Result<Vec<String>, String> {
    let data = docs.join("data");
    if !data.exists() {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = std::fs::read_dir(&data)
        .map_err(|e| format!("cannot list {}: {e}", data.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".toml")
                .filter(|s| !s.ends_with(".measured") && !s.ends_with(".lab"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    Ok(names)
}

/// What [`process`] found.
#[derive(Debug, Default, PartialEq)]
pub struct Report {
    /// One line each: a page or table that could not be generated.
    pub errors: Vec<String>,
    /// One line per table whose page differs from what its data gives:
    /// page, line, table and the first differing line (with `check`;
    /// without it these tables were rewritten).
    pub differs: Vec<String>,
    /// The marked tables seen.
    pub tables: usize,
    /// The pages rewritten (without `check`).
    pub rewritten: Vec<PathBuf>,
}

/// Regenerates every marked table of the pages under `docs` from
/// `docs/data/`; with `check`, changes nothing and reports each table
/// that differs. A table's data that no page shows is an error.
pub fn process(docs: &Path, check: bool) -> Result<Report, String> {
    let mut report = Report::default();
    let data_dir = docs.join("data");
    let mut shown: Vec<String> = Vec::new();
    for page in pages(docs)? {
        let name = page.display().to_string();
        let text = read(&page)?;
        let lines: Vec<&str> = text.lines().collect();
        let regions = match regions(&name, &lines) {
            Ok(r) => r,
            Err(e) => {
                report.errors.push(e);
                continue;
            }
        };
        let mut out: Vec<String> = Vec::new();
        let mut copied = 0;
        let mut changed = false;
        for r in regions {
            report.tables += 1;
            shown.push(r.name.clone());
            out.extend(lines[copied..r.body.start].iter().map(|l| l.to_string()));
            copied = r.body.start;
            let generated = match load_table(&data_dir, &r.name).and_then(|t| t.render()) {
                Ok(g) => g,
                Err(e) => {
                    report
                        .errors
                        .push(format!("{name}:{}: table {}: {e}", r.line, r.name));
                    continue;
                }
            };
            let old = &lines[r.body.clone()];
            let first_diff = (0..old.len().max(generated.len()))
                .find(|&i| old.get(i).copied() != generated.get(i).map(String::as_str));
            if let Some(i) = first_diff {
                changed = true;
                let show =
                    |l: Option<&str>| l.map_or("(nothing)".to_string(), |l| format!("`{l}`"));
                report.differs.push(format!(
                    "{name}:{}: table {} differs from docs/data/{}.csv: the page has {}, the data gives {}",
                    r.body.start + i + 1,
                    r.name,
                    r.name,
                    show(old.get(i).copied()),
                    show(generated.get(i).map(String::as_str)),
                ));
            }
            out.extend(generated);
            copied = r.body.end;
        }
        if changed && !check {
            out.extend(lines[copied..].iter().map(|l| l.to_string()));
            let mut new = out.join("\n");
            if text.ends_with('\n') {
                new.push('\n');
            }
            std::fs::write(&page, new).map_err(|e| format!("cannot write {name}: {e}"))?;
            report.rewritten.push(page);
        }
    }
    for t in table_names(docs)? {
        if !shown.contains(&t) {
            report.errors.push(format!(
                "{}: no page has `<!-- table: {t} -->`",
                data_dir.join(format!("{t}.toml")).display()
            ));
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_found_outside_code_fences_and_bad_markers_name_the_line() {
        let page = [
            "text",
            "<!-- table: a -->",
            "| old |",
            "<!-- /table -->",
            "```",
            "<!-- table: in-code -->",
            "```",
            "<!-- table: b.c -->",
            "<!-- /table -->",
        ];
        assert_eq!(
            regions("p.md", &page).unwrap(),
            [
                Region {
                    name: "a".into(),
                    line: 2,
                    body: 2..3
                },
                Region {
                    name: "b.c".into(),
                    line: 8,
                    body: 8..8
                },
            ]
        );
        assert_eq!(
            regions("p.md", &["<!-- table: a -->", "x"]).unwrap_err(),
            "p.md:1: table a: no `<!-- /table -->` after it"
        );
        assert_eq!(
            regions("p.md", &["x", "<!-- /table -->"]).unwrap_err(),
            "p.md:2: `<!-- /table -->` without a table marker"
        );
        assert_eq!(
            regions("p.md", &["<!-- table: a b -->"]).unwrap_err(),
            "p.md:1: a table marker is `<!-- table: NAME -->` with NAME of letters, digits, '.', '_' or '-'"
        );
        assert_eq!(
            regions("p.md", &["<!-- table: a -->", "<!-- table: b -->"]).unwrap_err(),
            "p.md:2: table b starts inside table a (line 1), which has no `<!-- /table -->`"
        );
    }
}
